"""``query_traces`` over ClickHouse's ``otel_traces`` (issue 29): generated spans in the exporter's
table on the in-process engine, the whole tool timed end to end (``TraceQuery``: figures against
the baseline, calls per edge, callees' self time, slowest traces and their critical paths).

The spans are shaped like a microservice system's: a gateway calling a fixed tree of services
(some calls in parallel), skewed volumes, 1 % failed spans, and an incident — one service's own
work ten times longer for twenty minutes. The table is built once into the bench cache
(``tools.cache_folder``, the data directory the log bench uses: the engine opens one per process)
and reused; building it is not timed here but kept beside it.
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from pydantic import BaseModel

from veridiag.bench.stats import summary, time_runs
from veridiag.bench.tools import StoreBuild, cache_folder
from veridiag.config import ClickHouseSettings
from veridiag.tools.args import QueryTracesArgs
from veridiag.tools.backends.clickhouse_traces import ClickHouseTraces
from veridiag.tools.backends.embedded import SpanRow
from veridiag.tools.spans import TraceQuery

START = datetime(2026, 7, 7, 0, 0, tzinfo=UTC)
#: Bump when ``shaped_spans`` writes other spans: cached tables are named after it.
GENERATOR_VERSION = 1
#: Who calls whom: each service's callees (the gateway is every trace's root).
CALLS = {
    "gateway": ["travel", "order", "user", "route"],
    "travel": ["route", "price", "seat", "train"],
    "order": ["price", "user", "payment", "db-order"],
    "route": ["db-route"],
    "price": ["db-price"],
    "seat": ["db-seat", "config"],
    "train": ["db-train"],
    "payment": ["db-payment", "notify"],
    "user": ["db-user", "auth"],
    "auth": [],
    "config": [],
    "notify": [],
}
#: Own work per service (ms, mean of an exponential).
OWN_MS = {"gateway": 2.0, "travel": 6.0, "order": 8.0, "route": 3.0, "price": 2.0, "seat": 4.0, "payment": 12.0}
INCIDENT = ("seat", START + timedelta(hours=10), START + timedelta(hours=10, minutes=20))
SERVICES = sorted({*CALLS, *(callee for callees in CALLS.values() for callee in callees)})
#: Variants timed (service, window), each ``repeats`` times.
VARIANTS = 8
_MS = 10**6


def shaped_spans(spans: int, seed: int = 29) -> Iterator[SpanRow]:
    """About ``spans`` spans over one day, trace by trace in time order."""
    rng = random.Random(seed)
    per_trace = 9  # about the trees' mean size with the calls below
    traces = max(1, spans // per_trace)
    step = 86_400 * 10**9 // traces
    begin = int(START.timestamp()) * 10**9
    written = 0
    for number in range(traces):
        at = begin + number * step + rng.randrange(step)
        trace_id = f"{rng.getrandbits(128):032x}"
        rows: list[SpanRow] = []
        _span(rng, rows, trace_id, "", service="gateway", at=at, depth=0)
        written += len(rows)
        yield from rows
        if written >= spans:
            return


def _span(
    rng: random.Random, rows: list[SpanRow], trace_id: str, parent: str, *, service: str, at: int, depth: int
) -> int:
    """One span of ``service`` starting at ``at`` and its calls; its end."""
    span_id = f"{rng.getrandbits(64):016x}"
    index = len(rows)
    rows.append(SpanRow(trace_id, span_id, parent, service, "", at, at, None))
    own = rng.expovariate(1 / OWN_MS.get(service, 1.0)) * _MS
    if service == INCIDENT[0] and int(INCIDENT[1].timestamp()) * 10**9 <= at < int(INCIDENT[2].timestamp()) * 10**9:
        own *= 10
    cursor = at + int(own / 2)
    callees = [c for c in CALLS.get(service, []) if rng.random() < 0.6] if depth < 4 else []
    parallel = len(callees) > 1 and rng.random() < 0.3
    ends = [cursor]
    for callee in callees:
        end = _span(rng, rows, trace_id, span_id, service=callee, at=cursor + 50_000, depth=depth + 1)
        ends.append(end)
        if not parallel:
            cursor = end
    end = max(ends) + int(own / 2)
    operation = f"GET /api/{service}" if depth == 0 or rng.random() < 0.7 else f"POST /api/{service}/update"
    rows[index] = SpanRow(trace_id, span_id, parent, service, operation, at, end, rng.random() < 0.01)
    return end


def store(spans: int, folder: Path) -> tuple[ClickHouseTraces, StoreBuild]:
    table = f"spans_g{GENERATOR_VERSION}_{spans}"
    record = folder / f"clickhouse-{table}.json"
    traces = ClickHouseTraces(ClickHouseSettings(traces_table=table), folder / "clickhouse")
    build = StoreBuild.model_validate_json(record.read_text()) if record.exists() else None
    if build is None:
        client = traces.client()
        for stale in (f"{table}_trace_id_ts_mv", f"{table}_trace_id_ts", table):
            client.command(f"DROP TABLE IF EXISTS `{stale}`")
        started = time.perf_counter()
        written = traces.add_spans(shaped_spans(spans), known=False)  # a new table: nothing to find twice
        client.command(f"OPTIMIZE TABLE `{table}` FINAL")  # merged parts, as a day-old table is
        client.command(f"OPTIMIZE TABLE `{table}_trace_id_ts` FINAL")
        build = StoreBuild(lines=written.added, import_seconds=round(time.perf_counter() - started, 2))
        record.write_text(build.model_dump_json())
    return traces, build


def variants(seed: int = 7) -> list[QueryTracesArgs]:
    """Busy services over a ten-minute window or an hour, the incident's among them."""
    rng = random.Random(seed)
    found = [QueryTracesArgs(service=INCIDENT[0], start=INCIDENT[1].isoformat(), end=INCIDENT[2].isoformat())]
    while len(found) < VARIANTS:
        at = START + timedelta(hours=rng.randint(2, 22), minutes=rng.choice([0, 10, 30]))
        length = rng.choice([timedelta(minutes=10), timedelta(hours=1)])
        service = rng.choice(["gateway", "travel", "order", "route", "seat", "price", "user"])
        found.append(QueryTracesArgs(service=service, start=at.isoformat(), end=(at + length).isoformat()))
    return found


class TracesBench(BaseModel):
    """``query_traces`` p50/p99 over the ClickHouse table of ``clickhouse_spans`` spans (and of
    ``clickhouse_spans_10m`` when run), and what building each table took."""

    clickhouse_spans: int
    clickhouse_query_traces_p50_ms: float
    clickhouse_query_traces_p99_ms: float
    clickhouse_import_seconds: float
    clickhouse_spans_10m: int | None = None
    clickhouse_10m_p50_ms: float | None = None
    clickhouse_10m_p99_ms: float | None = None
    clickhouse_import_10m_seconds: float | None = None
    runs: int
    #: Every variant answered ``ok`` with spans in its window.
    all_ok: bool


def _measure(spans: int, folder: Path, repeats: int) -> tuple[dict[str, float], StoreBuild, bool]:
    traces, build = store(spans, folder)
    query = TraceQuery(traces, now=START + timedelta(days=1))
    ok = all(query.run(args).status == "ok" for args in variants())
    gc.collect()
    gc.freeze()  # as a server freezes what it built before it serves
    samples: list[float] = []
    try:
        for args in variants():
            samples += time_runs(partial(query.run, args), repeats, warmup=1)
    finally:
        gc.unfreeze()
        traces.close()
    return summary(samples), build, ok


def run(
    spans: int = 1_000_000, large_spans: int | None = None, repeats: int = 5, cache: Path | None = None
) -> TracesBench:
    folder = cache or cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    times, build, ok = _measure(spans, folder, repeats)
    large, large_build, large_ok = _measure(large_spans, folder, repeats) if large_spans else (None, None, True)
    return TracesBench(
        clickhouse_spans=build.lines,
        clickhouse_query_traces_p50_ms=times["p50_ms"],
        clickhouse_query_traces_p99_ms=times["p99_ms"],
        clickhouse_import_seconds=build.import_seconds,
        clickhouse_spans_10m=large_build.lines if large_build else None,
        clickhouse_10m_p50_ms=large["p50_ms"] if large else None,
        clickhouse_10m_p99_ms=large["p99_ms"] if large else None,
        clickhouse_import_10m_seconds=large_build.import_seconds if large_build else None,
        runs=VARIANTS * repeats,
        all_ok=ok and large_ok,
    )
