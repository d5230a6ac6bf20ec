"""Load on the HTTP service: N concurrent ``POST /api/v1/chat`` against one uvicorn server with
a fresh SQLite file (or a given PostgreSQL database), offline engine. Correctness first — every
request answered, every session stored once, none mixed (each response's session holds that
request's own question) — then latency and throughput.

Baselines, in the same run and on the same server's assembly: the same requests one at a time
through the API, and the same diagnoses (the same questions, in the same order) run in-process
one after another the way ``veridiag ask`` runs them — half before the concurrent load and half
after, so a machine getting busier or a store getting larger weighs on both sides alike. The
ratio of the two says what serving costs; the diagnoses' own cost is the pipeline's.

Beside it, the idle memory of ``veridiag serve``: a subprocess on a free port, its resident
set read once ``/healthz`` answers — on a new home (the first start loads the demo and indexes
the runbooks) and on the same home restarted.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import httpx2
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy.engine import make_url

from veridiag.api import create_app
from veridiag.api.local import LocalServer
from veridiag.bench.stats import percentile
from veridiag.config import Settings
from veridiag.contracts.answer import AnswerDocument
from veridiag.contracts.json import JsonObject
from veridiag.pipeline.factory import Assembly
from veridiag.pipeline.report import answer_document
from veridiag.tools.demo import bundled_environment

_TEMPLATES = [question for incident in bundled_environment().incidents for question in incident.questions]
#: How long a ``veridiag serve`` may take to answer ``/healthz`` (a first start loads the demo).
SERVE_STARTUP_SECONDS = 300.0


class Result(NamedTuple):
    question: str
    #: 200 for an in-process run; 0 when the request got no answer at all.
    status: int
    #: The answer document's JSON as it arrived; None when the status was not 200.
    document: JsonObject | None
    seconds: float


class ServeMemory(BaseModel):
    """Resident memory (MB) of an idle ``veridiag serve``; None where ``/proc`` is not there."""

    idle_rss_mb: float | None
    idle_rss_first_start_mb: float | None
    idle_rss_samples_mb: list[float]


class LoadRun(BaseModel):
    """One fresh server: correctness counts, then latency and throughput."""

    errors: int
    sessions_lost: int
    sessions_mixed: int
    sessions_stored: int
    sessions_expected: int
    p50_ms: float
    p99_ms: float
    requests_per_s: float
    wall_s: float
    baseline_sequential_p50_ms: float
    baseline_sequential_requests_per_s: float
    #: Absent when the run made no in-process diagnoses.
    inprocess_p50_ms: float | None = Field(default=None, exclude_if=lambda value: value is None)
    inprocess_p99_ms: float | None = Field(default=None, exclude_if=lambda value: value is None)
    inprocess_sessions_per_s: float
    api_to_inprocess_ratio: float | None


class ApiBench(BaseModel):
    """Medians over the runs (correctness counts summed), the idle memory, and every run."""

    concurrent_requests: int
    runs: int
    engine: str
    store: str
    errors: int
    sessions_lost: int
    sessions_mixed: int
    p50_ms: float | None
    p99_ms: float | None
    requests_per_s: float | None
    baseline_sequential_p50_ms: float | None
    baseline_sequential_requests_per_s: float | None
    inprocess_requests: int
    inprocess_sessions_per_s: float | None
    inprocess_p50_ms: float | None
    inprocess_p99_ms: float | None
    api_to_inprocess_ratio: float | None
    idle_rss_mb: float | None
    idle_rss_first_start_mb: float | None
    idle_rss_samples_mb: list[float]
    per_run: list[LoadRun]


def _questions(count: int, run: str) -> list[str]:
    """Distinct questions (a request tag keeps them apart) over every demo scenario, zh and en."""
    return [f"{_TEMPLATES[i % len(_TEMPLATES)]} [r{run}-q{i}]" for i in range(count)]


async def _fire(url: str, questions: list[str], concurrent: bool) -> list[Result]:
    limits = httpx2.Limits(max_connections=len(questions), max_keepalive_connections=len(questions))
    async with httpx2.AsyncClient(base_url=url, timeout=600, limits=limits) as client:

        async def one(question: str) -> Result:
            started = time.perf_counter()
            try:
                response = await client.post("/api/v1/chat", json={"query": question})
                body: JsonObject | None = response.json() if response.status_code == 200 else None
                return Result(question, response.status_code, body, time.perf_counter() - started)
            except httpx2.HTTPError:
                return Result(question, 0, None, time.perf_counter() - started)

        if concurrent:
            return list(await asyncio.gather(*(one(q) for q in questions)))
        return [await one(q) for q in questions]


def _in_process(assembly: Assembly, questions: list[str]) -> list[Result]:
    """The diagnoses as ``veridiag ask --json`` runs them: the pipeline, stored, the document."""
    results: list[Result] = []
    for question in questions:
        started = time.perf_counter()
        document = answer_document(assembly.pipeline.run(question, source="bench"), assembly.engine)
        results.append(Result(question, 200, document.model_dump(mode="json"), time.perf_counter() - started))
    return results


class _Checked(NamedTuple):
    errors: int
    #: Answered but not stored, or stored twice.
    sessions_lost: int
    #: Stored with another request's question or answer.
    sessions_mixed: int


def _check(assembly: Assembly, results: list[Result]) -> _Checked:
    """Errors, lost sessions (answered but not stored / stored twice), mixed sessions."""
    store = assembly.store
    answered = [(result.question, _document(result.document)) for result in results if result.document]
    errors = sum(1 for result in results if result.status != 200 or result.document is None)
    errors += sum(1 for _question, document in answered if document is None)
    documents = [(question, document) for question, document in answered if document is not None]
    ids = [document.session_id for _question, document in documents]
    lost = len(ids) - len(set(ids))
    mixed = 0
    for question, document in documents:
        stored = store.get_session(document.session_id)
        if stored is None or stored.status != "completed":
            lost += 1
        elif stored.query != question or stored.final_answer != document.final_answer:
            mixed += 1
    return _Checked(errors, lost, mixed)


def _document(body: JsonObject | None) -> AnswerDocument | None:
    """The answer document a 200 carried; None when it is not one (counted as an error)."""
    try:
        return AnswerDocument.model_validate(body)
    except ValidationError:
        return None


def _latency(results: list[Result]) -> tuple[float, float]:
    """p50 and p99 (ms)."""
    latencies = [result.seconds * 1000 for result in results]
    return round(statistics.median(latencies), 1), round(percentile(latencies, 0.99), 1)


def _one_run(
    requests: int, baseline_requests: int, inprocess_requests: int, run: int, database_url: str | None
) -> LoadRun:
    # A shared database holds other sessions: this run's questions carry a fresh tag to count by.
    tag = f"{secrets.token_hex(4)}x{run}"
    inprocess_questions = _questions(inprocess_requests, f"{tag}i")
    before, after = inprocess_questions[: inprocess_requests // 2], inprocess_questions[inprocess_requests // 2 :]
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home), database_url=database_url)
        with LocalServer(create_app(settings)) as server:
            assembly: Assembly = server.app.state.assembly
            asyncio.run(_fire(server.url, _questions(2, f"{tag}w"), concurrent=False))  # warm caches and the DB
            baseline = asyncio.run(_fire(server.url, _questions(baseline_requests, f"{tag}b"), concurrent=False))
            inprocess = _in_process(assembly, before)
            started = time.perf_counter()
            loaded = asyncio.run(_fire(server.url, _questions(requests, f"{tag}c"), concurrent=True))
            wall = time.perf_counter() - started
            inprocess += _in_process(assembly, after)
            checks = _check(assembly, loaded + baseline + inprocess)
            stored = assembly.store.count_sessions(search=f"[r{tag}")
    requests_per_s = requests / wall
    inprocess_per_s = len(inprocess) / sum(result.seconds for result in inprocess) if inprocess else 0.0
    p50, p99 = _latency(loaded)
    inprocess_p50, inprocess_p99 = _latency(inprocess) if inprocess else (None, None)
    return LoadRun(
        errors=checks.errors,
        sessions_lost=checks.sessions_lost,
        sessions_mixed=checks.sessions_mixed,
        sessions_stored=stored,
        sessions_expected=requests + baseline_requests + inprocess_requests + 2,
        p50_ms=p50,
        p99_ms=p99,
        requests_per_s=round(requests_per_s, 2),
        wall_s=round(wall, 2),
        baseline_sequential_p50_ms=_latency(baseline)[0],
        baseline_sequential_requests_per_s=round(len(baseline) / sum(result.seconds for result in baseline), 2),
        inprocess_p50_ms=inprocess_p50,
        inprocess_p99_ms=inprocess_p99,
        inprocess_sessions_per_s=round(inprocess_per_s, 2),
        api_to_inprocess_ratio=round(requests_per_s / inprocess_per_s, 3) if inprocess_per_s else None,
    )


def run(
    requests: int = 200,
    runs: int = 3,
    baseline_requests: int = 10,
    *,
    database_url: str | None = None,
    inprocess_requests: int | None = None,
    serve_restarts: int | None = None,
) -> ApiBench:
    """Median over ``runs`` fresh servers; correctness counts are summed over all runs.

    ``inprocess_requests`` defaults to ``requests`` (the same diagnoses), ``serve_restarts``
    (idle-memory samples after the first start) to ``runs``; 0 measures no idle memory."""
    inprocess = requests if inprocess_requests is None else inprocess_requests
    results = [_one_run(requests, baseline_requests, inprocess, run, database_url) for run in range(runs)]

    def median(values: list[float | None], digits: int = 2) -> float | None:
        measured = [value for value in values if value is not None]
        return round(float(statistics.median(measured)), digits) if measured else None

    memory = serve_idle_rss(runs if serve_restarts is None else serve_restarts)
    return ApiBench(
        concurrent_requests=requests,
        runs=runs,
        engine="offline",
        store=make_url(database_url).get_backend_name() if database_url else "sqlite",
        errors=sum(r.errors for r in results),
        sessions_lost=sum(r.sessions_lost + r.sessions_expected - r.sessions_stored for r in results),
        sessions_mixed=sum(r.sessions_mixed for r in results),
        p50_ms=median([r.p50_ms for r in results]),
        p99_ms=median([r.p99_ms for r in results]),
        requests_per_s=median([r.requests_per_s for r in results]),
        baseline_sequential_p50_ms=median([r.baseline_sequential_p50_ms for r in results]),
        baseline_sequential_requests_per_s=median([r.baseline_sequential_requests_per_s for r in results]),
        inprocess_requests=inprocess,
        inprocess_sessions_per_s=median([r.inprocess_sessions_per_s for r in results]),
        inprocess_p50_ms=median([r.inprocess_p50_ms for r in results]),
        inprocess_p99_ms=median([r.inprocess_p99_ms for r in results]),
        api_to_inprocess_ratio=median([r.api_to_inprocess_ratio for r in results], digits=3),
        idle_rss_mb=memory.idle_rss_mb,
        idle_rss_first_start_mb=memory.idle_rss_first_start_mb,
        idle_rss_samples_mb=memory.idle_rss_samples_mb,
        per_run=results,
    )


def serve_idle_rss(restarts: int = 3) -> ServeMemory:
    """Resident memory (MB) of an idle ``veridiag serve``: the first start on a new home, then
    the median of ``restarts`` starts on that home. None where ``/proc`` is not there."""
    if restarts < 1 or not Path("/proc/self/status").exists():
        return ServeMemory(idle_rss_mb=None, idle_rss_first_start_mb=None, idle_rss_samples_mb=[])
    with tempfile.TemporaryDirectory(prefix="veridiag-bench-serve-") as home:
        first = _serve_rss(Path(home))
        samples = [_serve_rss(Path(home)) for _ in range(restarts)]
    return ServeMemory(
        idle_rss_mb=round(statistics.median(samples), 1),
        idle_rss_first_start_mb=round(first, 1),
        idle_rss_samples_mb=[round(s, 1) for s in samples],
    )


def _serve_rss(home: Path) -> float:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "VERIDIAG_HOME": str(home)}
    command = [sys.executable, "-m", "veridiag", "serve", "--port", str(port)]
    with _process(command, env) as server:
        deadline = time.monotonic() + SERVE_STARTUP_SECONDS
        while not _healthy(f"http://127.0.0.1:{port}/healthz"):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"veridiag serve did not start (exit status {server.poll()})")
            time.sleep(0.1)
        return resident_mb(server.pid)


@contextmanager
def _process(command: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield server
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _healthy(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=5).status_code == 200
    except httpx2.HTTPError:
        return False


def resident_mb(pid: int) -> float:
    """``VmRSS`` of a Linux process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise LookupError(f"no VmRSS for process {pid}")
