"""Load on the HTTP service: N concurrent ``POST /api/v1/chat`` against one uvicorn server with
a fresh SQLite file (or a given PostgreSQL database), offline engine. Correctness first — every
request answered, every session stored once, none mixed (each response's session holds that
request's own question) — then latency and throughput. The baseline, in the same run: the same
requests one at a time."""

from __future__ import annotations

import asyncio
import secrets
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
from sqlalchemy.engine import make_url

from veridiag.api import create_app
from veridiag.api.local import LocalServer
from veridiag.config import Settings
from veridiag.tools.demo import bundled_environment

_TEMPLATES = [question for incident in bundled_environment().incidents for question in incident.questions]


def _questions(count: int, run: str) -> list[str]:
    """Distinct questions (a request tag keeps them apart) over every demo scenario, zh and en."""
    return [f"{_TEMPLATES[i % len(_TEMPLATES)]} [r{run}-q{i}]" for i in range(count)]


async def _fire(
    url: str, questions: list[str], concurrent: bool
) -> list[tuple[str, int, dict[str, Any] | None, float]]:
    limits = httpx2.Limits(max_connections=len(questions), max_keepalive_connections=len(questions))
    async with httpx2.AsyncClient(base_url=url, timeout=600, limits=limits) as client:

        async def one(question: str) -> tuple[str, int, dict[str, Any] | None, float]:
            started = time.perf_counter()
            try:
                response = await client.post("/api/v1/chat", json={"query": question})
                body = response.json() if response.status_code == 200 else None
                return question, response.status_code, body, time.perf_counter() - started
            except httpx2.HTTPError:
                return question, 0, None, time.perf_counter() - started

        if concurrent:
            return list(await asyncio.gather(*(one(q) for q in questions)))
        return [await one(q) for q in questions]


def _check(server: LocalServer, results: list[tuple[str, int, dict[str, Any] | None, float]]) -> dict[str, int]:
    """Errors, lost sessions (answered but not stored / stored twice), mixed sessions."""
    store = server.app.state.assembly.store
    errors = sum(1 for _q, status, body, _t in results if status != 200 or body is None)
    ids = [body["session_id"] for _q, _s, body, _t in results if body]
    lost = len(ids) - len(set(ids))
    mixed = 0
    for question, _status, body, _t in results:
        if not body:
            continue
        stored = store.get_session(body["session_id"])
        if stored is None or stored.status != "completed":
            lost += 1
        elif stored.query != question or stored.final_answer != body["final_answer"]:
            mixed += 1
    return {"errors": errors, "sessions_lost": lost, "sessions_mixed": mixed}


def _one_run(requests: int, baseline_requests: int, run: int, database_url: str | None) -> dict[str, Any]:
    # A shared database holds other sessions: this run's questions carry a fresh tag to count by.
    tag = f"{secrets.token_hex(4)}x{run}"
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home), database_url=database_url)
        with LocalServer(create_app(settings)) as server:
            asyncio.run(_fire(server.url, _questions(2, f"{tag}w"), concurrent=False))  # warm caches and the DB
            baseline = asyncio.run(_fire(server.url, _questions(baseline_requests, f"{tag}b"), concurrent=False))
            started = time.perf_counter()
            loaded = asyncio.run(_fire(server.url, _questions(requests, f"{tag}c"), concurrent=True))
            wall = time.perf_counter() - started
            checks = _check(server, loaded + baseline)
            stored = server.app.state.assembly.store.count_sessions(search=f"[r{tag}")
    latencies = sorted(t * 1000 for _q, _s, _b, t in loaded)
    return {
        **checks,
        "sessions_stored": stored,
        "sessions_expected": requests + baseline_requests + 2,
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 1),
        "requests_per_s": round(requests / wall, 2),
        "wall_s": round(wall, 2),
        "baseline_sequential_p50_ms": round(statistics.median(t * 1000 for *_x, t in baseline), 1),
        "baseline_sequential_requests_per_s": round(len(baseline) / sum(t for *_x, t in baseline), 2),
    }


def run(
    requests: int = 200, runs: int = 3, baseline_requests: int = 10, database_url: str | None = None
) -> dict[str, Any]:
    """Median over ``runs`` fresh servers; correctness counts are summed over all runs."""
    results = [_one_run(requests, baseline_requests, run, database_url) for run in range(runs)]

    def median(key: str) -> float:
        return round(float(statistics.median(r[key] for r in results)), 2)

    return {
        "concurrent_requests": requests,
        "runs": runs,
        "engine": "offline",
        "store": make_url(database_url).get_backend_name() if database_url else "sqlite",
        "errors": sum(r["errors"] for r in results),
        "sessions_lost": sum(r["sessions_lost"] + r["sessions_expected"] - r["sessions_stored"] for r in results),
        "sessions_mixed": sum(r["sessions_mixed"] for r in results),
        "p50_ms": median("p50_ms"),
        "p99_ms": median("p99_ms"),
        "requests_per_s": median("requests_per_s"),
        "baseline_sequential_p50_ms": median("baseline_sequential_p50_ms"),
        "baseline_sequential_requests_per_s": median("baseline_sequential_requests_per_s"),
        "per_run": results,
    }
