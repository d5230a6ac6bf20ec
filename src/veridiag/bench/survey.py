"""The survey at scale: a question without a time over a home of 200 services' week.

``write_wide_home`` writes what a user with a large estate imports: one wide pod CSV (a row a
service a step, three metric columns, as Nezha's ``*_metric.csv``) and a call graph (a tree,
199 edges), with one planted fault — ``FAULT_SERVICE``'s CPU climbs late on the last day and
its callers' latency follows. ``home`` imports them once into a cached embedded file (the
commands a user runs); ``run`` times ``rank_suspects`` over the whole week and the offline
``ask`` of "which service is the culprit?", each repeated (median), beside a baseline measured
in the same run: one SQL read of every point the survey reads (the floor of reading them).
"""

from __future__ import annotations

import math
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import BaseModel

from veridiag.bench.tools import cache_folder
from veridiag.tools.backends.embedded import EmbeddedEnvironment

#: Bump when ``write_wide_home`` writes other data: cached homes are named after it.
GENERATOR_VERSION = 1
START = datetime(2025, 3, 3, tzinfo=UTC)
FAULT_SERVICE = "svc137"
QUESTION = "which service is the culprit?"
_COLUMNS = ("CpuUsageRate(%)", "MemoryUsageRate(%)", "PodServerLatencyP90(s)")


def service_name(index: int) -> str:
    return f"svc{index:03d}"


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
    faulty = int(FAULT_SERVICE[3:])
    callers = set()
    node = faulty
    while node > 0:
        node = parent_of(node)
        callers.add(node)
    levels = [(rng.uniform(10, 40), rng.uniform(20, 60), rng.uniform(0.005, 0.05)) for _ in range(services)]
    # Kubernetes' pod suffix alphabet, so the pod names read back as their workloads.
    pods = [f"{service_name(i)}-6cfdd55578-{''.join(rng.choices('bcdfghjklmnpqrstvwxz2456789', k=5))}" for i in range(services)]
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
