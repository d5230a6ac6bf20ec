"""Runs the registered benchmarks and collects one JSON document."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias

from pydantic import BaseModel

from veridiag.bench import api, gatekeeper, log_import, pipeline, sessions, startup, survey, tools
from veridiag.bench.goals import check_goals
from veridiag.contracts.json import JsonObject

#: What one benchmark reports: a typed model, or its JSON (the benchmarks not typed yet).
BenchResult: TypeAlias = BaseModel | JsonObject


@dataclass(frozen=True)
class BenchOptions:
    #: Few repetitions: a smoke run, not a measurement.
    quick: bool = False
    #: A database for the benchmarks that store sessions (``api``); None: a fresh SQLite file.
    database_url: str | None = None
    #: What a long benchmark is doing now (``rca``: building the baseline's environment, the day).
    progress: Callable[[str], None] | None = None


def _api(options: BenchOptions) -> api.ApiBench:
    if options.quick:
        return api.run(requests=40, runs=1, baseline_requests=3, database_url=options.database_url)
    return api.run(database_url=options.database_url)


def _tools(options: BenchOptions) -> JsonObject:
    """Queries over cached 1 M / 10 M line stores, runbooks, and a fresh 10 M line import in a
    child process (``import_10m_*``; quick: 50 k lines): the two reports as one."""
    if options.quick:
        queried, imported = tools.run(lines=20_000, runbooks=100, repeats=3, large_lines=None), log_import.run(50_000)
    else:
        queried, imported = tools.run(), log_import.run()
    return {**queried.model_dump(mode="json"), **imported.model_dump(mode="json")}


def _clickhouse(options: BenchOptions) -> BaseModel:
    """SQLite next to ClickHouse over cached 1 M / 10 M line stores (the veridiag[clickhouse] extra)."""
    from veridiag.bench import clickhouse  # the client library and the engine: only for this one

    return clickhouse.run(lines=20_000, repeats=2) if options.quick else clickhouse.run(large_lines=10_000_000)


def _traces(options: BenchOptions) -> BaseModel:
    """``query_traces`` over the embedded file of 1 M spans (imported as ``data import-traces``
    does) and over ClickHouse ``otel_traces`` of cached 1 M / 10 M span tables (the
    veridiag[clickhouse] extra; issue 29)."""
    from veridiag.bench import clickhouse_traces  # the client library and the engine: only for this one

    if options.quick:
        return clickhouse_traces.run(spans=20_000, repeats=2, embedded_spans=20_000)
    return clickhouse_traces.run(large_spans=10_000_000, embedded_spans=1_000_000)


def _rca(options: BenchOptions) -> BaseModel:
    """veridiag and RCAEval's BARO / n-sigma naming the culprit of the Nezha fault injections."""
    from veridiag.bench import rca  # the pipeline and the baseline's driver: only for this one

    return rca.run(quick=options.quick, progress=options.progress)


#: name → run with the given options.
BENCHMARKS: dict[str, Callable[[BenchOptions], BenchResult]] = {
    "gatekeeper": lambda o: gatekeeper.run(repeats=10, baseline_repeats=1) if o.quick else gatekeeper.run(),
    "pipeline": lambda o: pipeline.run(sessions=5) if o.quick else pipeline.run(),
    "tools": _tools,
    "api": _api,
    "startup": lambda o: startup.run(repeats=3) if o.quick else startup.run(),
    "sessions": lambda o: sessions.run(sessions=2_000, repeats=20) if o.quick else sessions.run(),
    "clickhouse": _clickhouse,
    "traces": _traces,
    "rca": _rca,
    "survey": lambda o: survey.run(services=20, days=2, repeats=1) if o.quick else survey.run(),
}


def _detail(name: str, progress: Callable[[str], None] | None) -> Callable[[str], None] | None:
    if progress is None:
        return None
    return lambda text: progress(f"{name}: {text}")


class Machine(BaseModel):
    python: str
    cpus: int | None
    platform: str


def machine() -> Machine:
    return Machine(python=platform.python_version(), cpus=os.cpu_count(), platform=platform.platform())


def run_benchmarks(
    only: list[str] | None = None,
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
    database_url: str | None = None,
) -> JsonObject:
    """One JSON document: each benchmark's report under its name, then ``machine`` and ``goals``."""
    names = only or list(BENCHMARKS)
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        raise KeyError(f"unknown benchmark {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    results: JsonObject = {}
    for name in names:
        if progress:
            progress(name)
        options = BenchOptions(quick=quick, database_url=database_url, progress=_detail(name, progress))
        report = BENCHMARKS[name](options)
        results[name] = report.model_dump(mode="json") if isinstance(report, BaseModel) else report
    results["machine"] = machine().model_dump()
    results["goals"] = [check.model_dump() for check in check_goals(results)]
    return results
