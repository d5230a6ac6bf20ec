"""The survey at scale: a question without a time over a home of 200 services' week.

``write_wide_home`` writes what a user with a large estate imports: one wide pod CSV (a row a
service a step, three metric columns, as Nezha's ``*_metric.csv``) and a call graph (a tree,
199 edges), with one planted fault — ``fault_service``'s CPU climbs late on the last day and
its callers' latency follows. ``home`` imports them once into a cached embedded file (the
commands a user runs); ``run`` times ``rank_suspects`` over the whole week and the offline
``ask`` of "which service is the culprit?", each repeated (median), beside a baseline measured
in the same run: one SQL read of every point the survey reads (the floor of reading them).
"""

from __future__ import annotations

import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

from veridiag.bench.startup import _veridiag, _wall_ms
from veridiag.bench.tools import cache_folder
from veridiag.ingest.batch import import_dependency_files, import_metric_files
from veridiag.text.render import iso
from veridiag.tools.args import RankSuspectsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, _schema
from veridiag.tools.records import SuspectEvidence
from veridiag.tools.suspects import SuspectSearch

#: Bump when ``write_wide_home`` writes other data: cached homes are named after it.
GENERATOR_VERSION = 1
START = datetime(2025, 3, 3, tzinfo=UTC)
#: Where the planted fault is, as a share of the services (svc137 of 200).
FAULT_AT = 137 / 200
QUESTION = "which service is the culprit?"
_COLUMNS = ("CpuUsageRate(%)", "MemoryUsageRate(%)", "PodServerLatencyP90(s)")
_POD_LETTERS = "bcdfghjklmnpqrstvwxz2456789"


def service_name(index: int) -> str:
    return f"svc{index:03d}"


def fault_service(services: int) -> str:
    return service_name(int(services * FAULT_AT))


def parent_of(index: int) -> int:
    """The caller of service ``index`` in the call tree (service 0 is the entry)."""
    return (index - 1) // 3


def write_wide_home(
    folder: Path, *, services: int = 200, days: int = 7, step_minutes: int = 5, seed: int = 26
) -> tuple[Path, Path]:
    """Writes ``metrics.csv`` and ``dependency.csv`` into ``folder``; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    fault = START + timedelta(days=days - 1, hours=14)
    faulty = int(services * FAULT_AT)
    callers = set()
    node = faulty
    while node > 0:
        node = parent_of(node)
        callers.add(node)
    levels = [(rng.uniform(10, 40), rng.uniform(20, 60), rng.uniform(0.005, 0.05)) for _ in range(services)]
    # Kubernetes' pod suffix alphabet, so the pod names read back as their workloads.
    pods = [
        f"{service_name(i)}-6cfdd55578-{''.join(rng.choices('bcdfghjklmnpqrstvwxz2456789', k=5))}"
        for i in range(services)
    ]
    metrics = folder / "metrics.csv"
    with metrics.open("w", encoding="utf-8") as out:
        out.write("Time,PodName," + ",".join(_COLUMNS) + "\n")
        steps = days * 24 * 60 // step_minutes
        for step in range(steps):
            moment = START + timedelta(minutes=step * step_minutes)
            stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
            daily = 1 + 0.3 * math.sin(2 * math.pi * (moment.hour * 60 + moment.minute) / 1440)
            into = (moment - fault).total_seconds() / 60
            for index in range(services):
                cpu, memory, latency = levels[index]
                cpu *= daily * rng.uniform(0.9, 1.1)
                memory *= rng.uniform(0.98, 1.02)
                latency *= daily * rng.uniform(0.85, 1.15)
                if 0 <= into < 60 and index == faulty:
                    cpu = min(99.0, cpu * 4)
                    latency *= 6
                elif 5 <= into < 60 and index in callers:
                    latency *= 3
                pod = pods[index]
                out.write(f"{stamp},{pod},{cpu:.3f},{memory:.3f},{latency:.5f}\n")
    edges = folder / "dependency.csv"
    edges.write_text(
        "Source,Target,Weight\n"
        + "".join(f"{service_name(parent_of(i))},{service_name(i)},1\n" for i in range(1, services)),
        encoding="utf-8",
    )
    return metrics, edges


class HomeBuild(BaseModel):
    """Written beside a cached home once it is complete; a home without it is built again."""

    services: int
    days: int
    points: int
    edges: int
    import_seconds: float


def home(folder: Path, *, services: int = 200, days: int = 7) -> tuple[Path, HomeBuild]:
    """A home (``VERIDIAG_HOME``) holding the generated files, imported as ``data import-metrics``
    and ``data import-dependencies`` import them; built once into ``folder``."""
    where = folder / f"survey-g{GENERATOR_VERSION}-s{_schema.VERSION}-{services}x{days}d"
    record = where / "build.json"
    if record.exists():
        return where, HomeBuild.model_validate_json(record.read_text())
    shutil.rmtree(where, ignore_errors=True)
    metrics, edges = write_wide_home(where / "files", services=services, days=days)
    env = EmbeddedEnvironment(where / "home" / "embedded.db", load_demo=False)
    started = time.perf_counter()
    points = import_metric_files(env, [metrics]).imported
    calls = import_dependency_files(env, [edges]).imported
    seconds = time.perf_counter() - started
    env.close()
    shutil.rmtree(where / "files")
    build = HomeBuild(services=services, days=days, points=points, edges=calls, import_seconds=round(seconds, 1))
    record.write_text(build.model_dump_json())
    return where, build


class SurveyBench(BaseModel):
    """Medians (ms) over ``repeats`` rounds; each round times the three one after another, so
    load from other processes falls on all alike."""

    services: int
    points: int
    #: ``veridiag ask QUESTION`` in a fresh process (offline engine), wall time.
    ask_ms: float
    #: ``rank_suspects`` over the week in this process, wall time.
    survey_ms: float
    #: The baseline: one SQL read of every point the survey reads, nothing made of them.
    read_floor_ms: float
    survey_per_read_floor: float
    #: The survey's first suspect, and whether the answer names the planted culprit.
    first_suspect: str
    answer_names_culprit: bool
    repeats: int
    load_1m: float


def run(*, services: int = 200, days: int = 7, repeats: int = 5, cache: Path | None = None) -> SurveyBench:
    where, build = home(cache or cache_folder(), services=services, days=days)
    with tempfile.TemporaryDirectory(prefix="veridiag-survey-") as tmp:
        copy = Path(tmp) / "home"
        shutil.copytree(where / "home", copy)  # the sessions the asks store stay out of the cache
        env_vars = {key: value for key, value in os.environ.items() if not key.startswith("VERIDIAG_")}
        env_vars |= {"VERIDIAG_HOME": str(copy), "VERIDIAG_ENGINE": "offline"}
        ask = [*_veridiag(), "ask", QUESTION]
        embedded = EmbeddedEnvironment(copy / "embedded.db", load_demo=False)
        end = embedded.data_end()
        assert end is not None
        args = RankSuspectsArgs(start=iso(end - timedelta(days=7)), end=iso(end))
        search = SuspectSearch(embedded, embedded, embedded, now=embedded.now())
        keys = [(s, m) for s, m, _u in embedded.metrics()]
        answer = _answer(ask, copy, env_vars)  # warm-up: bytecode, the page cache
        samples: dict[str, list[float]] = {"ask": [], "survey": [], "floor": []}
        first = ""
        for _ in range(repeats):
            samples["ask"].append(_wall_ms(ask, copy, env_vars))
            started = time.perf_counter()
            output = search.run(args)
            samples["survey"].append((time.perf_counter() - started) * 1000)
            ranked = [s.service for e in output.evidence if isinstance(e, SuspectEvidence) for s in e.suspects]
            first = ranked[0] if ranked else ""
            samples["floor"].append(_read_all(embedded, keys, end - timedelta(days=7), end))
        embedded.close()
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return SurveyBench(
        services=build.services,
        points=build.points,
        ask_ms=round(medians["ask"], 1),
        survey_ms=round(medians["survey"], 1),
        read_floor_ms=round(medians["floor"], 1),
        survey_per_read_floor=round(medians["survey"] / medians["floor"], 2),
        first_suspect=first,
        answer_names_culprit=fault_service(services) in answer,
        repeats=repeats,
        load_1m=round(os.getloadavg()[0], 2),
    )


def _answer(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    import subprocess

    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def _read_all(env: EmbeddedEnvironment, keys: list[tuple[str, str]], start: datetime, end: datetime) -> float:
    """Milliseconds to fetch every point of ``keys`` in ``[start, end)``, one query a series."""
    conn = env._connection()
    started = time.perf_counter()
    for service, metric in keys:
        conn.execute(
            "SELECT ts, value FROM metric_point WHERE service=? AND metric=? AND ts >= ? AND ts < ? ORDER BY ts",
            (service, metric, int(start.timestamp() * 1000), int(end.timestamp() * 1000)),
        ).fetchall()
    return (time.perf_counter() - started) * 1000


if __name__ == "__main__":  # python -m veridiag.bench.survey FOLDER: write the files only
    write_wide_home(Path(sys.argv[1]))
