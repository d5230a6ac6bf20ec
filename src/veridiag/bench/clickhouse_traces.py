"""``query_traces`` over ClickHouse's ``otel_traces`` (issue 29): generated spans in the exporter's
table on the in-process engine, the whole tool timed end to end (``TraceQuery``: figures against
the baseline, calls per edge, callees' self time, slowest traces and their critical paths).

The spans are shaped like a microservice system's: a gateway calling a fixed tree of services
(some calls in parallel), skewed volumes, 1 % failed spans, and an incident — one service's own
work ten times longer for twenty minutes. The table is built once into the bench cache
(``tools.cache_folder``, the data directory the log bench uses: the engine opens one per process)
and reused, with its derived spans (``ClickHouseTraces.derive``, as ``data import-traces`` makes
them); building both is not timed here but kept beside it.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel

from veridiag.bench import embedded_traces
from veridiag.bench.span_shapes import GENERATOR_VERSION, VARIANTS, shaped_spans, timed_queries
from veridiag.bench.tools import StoreBuild, cache_folder
from veridiag.config import ClickHouseSettings
from veridiag.tools.backends.clickhouse_traces import ClickHouseTraces


class TracesBuild(StoreBuild):
    """A cached table's build: its import, then ``ClickHouseTraces.derive`` (None: not yet)."""

    derive_seconds: float | None = None


def store(spans: int, folder: Path) -> tuple[ClickHouseTraces, TracesBuild]:
    table = f"spans_g{GENERATOR_VERSION}_{spans}"
    record = folder / f"clickhouse-{table}.json"
    traces = ClickHouseTraces(ClickHouseSettings(traces_table=table), folder / "clickhouse")
    build = TracesBuild.model_validate_json(record.read_text()) if record.exists() else None
    client = traces.client()
    if build is None:
        for stale in (
            f"{table}_veridiag_days",
            f"{table}_veridiag_spans",
            f"{table}_veridiag_traces",
            f"{table}_trace_id_ts_mv",
            f"{table}_trace_id_ts",
            table,
        ):
            client.command(f"DROP TABLE IF EXISTS `{stale}`")
        started = time.perf_counter()
        written = traces.add_spans(shaped_spans(spans), known=False)  # a new table: nothing to find twice
        client.command(f"OPTIMIZE TABLE `{table}` FINAL")  # merged parts, as a day-old table is
        client.command(f"OPTIMIZE TABLE `{table}_trace_id_ts` FINAL")
        build = TracesBuild(lines=written.added, import_seconds=round(time.perf_counter() - started, 2))
    started = time.perf_counter()
    # A table built before the derived spans, or derived under another derivation: derived now.
    if traces.derive() or build.derive_seconds is None:
        for derived in ("spans", "traces"):  # merged parts, as a day-old table's are
            client.command(f"OPTIMIZE TABLE `{table}_veridiag_{derived}` FINAL")
        build = build.model_copy(update={"derive_seconds": round(time.perf_counter() - started, 2)})
        record.write_text(build.model_dump_json())
    return traces, build


class TracesBench(BaseModel):
    """``query_traces`` p50/p99 over the ClickHouse table of ``clickhouse_spans`` spans (and of
    ``clickhouse_spans_10m`` when run), and what building each table took; the same over the
    embedded file of ``embedded_spans`` spans imported as ``data import-traces`` does, when run."""

    clickhouse_spans: int
    clickhouse_query_traces_p50_ms: float
    clickhouse_query_traces_p99_ms: float
    clickhouse_import_seconds: float
    #: ``ClickHouseTraces.derive`` over the table's day (self times and calls, ours beside it).
    clickhouse_derive_seconds: float | None = None
    clickhouse_spans_10m: int | None = None
    clickhouse_10m_p50_ms: float | None = None
    clickhouse_10m_p99_ms: float | None = None
    clickhouse_import_10m_seconds: float | None = None
    clickhouse_derive_10m_seconds: float | None = None
    embedded_spans: int | None = None
    embedded_query_traces_p50_ms: float | None = None
    embedded_query_traces_p99_ms: float | None = None
    embedded_import_seconds: float | None = None
    runs: int
    #: Every variant answered ``ok`` with spans in its window.
    all_ok: bool


def _measure(spans: int, folder: Path, repeats: int) -> tuple[dict[str, float], TracesBuild, bool]:
    traces, build = store(spans, folder)
    try:
        times, ok = timed_queries(traces, repeats)
    finally:
        traces.close()
    return times, build, ok


def run(
    spans: int = 1_000_000,
    large_spans: int | None = None,
    repeats: int = 5,
    cache: Path | None = None,
    embedded_spans: int | None = None,
) -> TracesBench:
    folder = cache or cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    embedded, embedded_build, embedded_ok = (
        embedded_traces.measure(embedded_spans, folder, repeats) if embedded_spans else (None, None, True)
    )
    times, build, ok = _measure(spans, folder, repeats)
    large, large_build, large_ok = _measure(large_spans, folder, repeats) if large_spans else (None, None, True)
    return TracesBench(
        clickhouse_spans=build.lines,
        clickhouse_query_traces_p50_ms=times["p50_ms"],
        clickhouse_query_traces_p99_ms=times["p99_ms"],
        clickhouse_import_seconds=build.import_seconds,
        clickhouse_derive_seconds=build.derive_seconds,
        clickhouse_spans_10m=large_build.lines if large_build else None,
        clickhouse_10m_p50_ms=large["p50_ms"] if large else None,
        clickhouse_10m_p99_ms=large["p99_ms"] if large else None,
        clickhouse_import_10m_seconds=large_build.import_seconds if large_build else None,
        clickhouse_derive_10m_seconds=large_build.derive_seconds if large_build else None,
        embedded_spans=embedded_build.lines if embedded_build else None,
        embedded_query_traces_p50_ms=embedded["p50_ms"] if embedded else None,
        embedded_query_traces_p99_ms=embedded["p99_ms"] if embedded else None,
        embedded_import_seconds=embedded_build.import_seconds if embedded_build else None,
        runs=VARIANTS * repeats,
        all_ok=ok and large_ok and embedded_ok,
    )
