"""``query_traces`` over ClickHouse's ``otel_traces`` (issue 29) on the real engine (in-process
chdb, no mock) with the OTel exporter's DDL: the same output as the embedded file from the same
spans (Nezha's TrainTicket span CSVs through the span reader, and generated span trees), the
table as the exporter writes it, bound parameters, and bad input said, never a crash.

The engine opens one data directory per process, so every test here shares one (``chdb_path``)
and keeps to its own table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.ports import free_port
from veridiag.analysis.traces import CallCount, SpanFilter, TraceSpan
from veridiag.cli.app import app
from veridiag.config import ClickHouseSettings, Settings
from veridiag.ingest.kubernetes import workload_of
from veridiag.ingest.spanfiles import SpanFileReport, read_span_file
from veridiag.tools.args import QueryTracesArgs
from veridiag.tools.backends import TraceBackend, TraceReadError, clickhouse_traces, otel_traces
from veridiag.tools.backends.clickhouse_traces import ClickHouseTraces
from veridiag.tools.backends.embedded import EmbeddedEnvironment, SpanRow
from veridiag.tools.backends.otel_traces import DERIVATION, EXPORTER_TRACES_DDL, derivation_comment
from veridiag.tools.factory import build_toolbox
from veridiag.tools.records import TraceEvidence
from veridiag.tools.spans import TraceQuery

FIXTURE = Path(__file__).parent / "fixtures" / "nezha" / "trainticket" / "trace"
#: Nezha's TrainTicket span CSVs of 2023-01-29 (09:30, 10:04–10:06, 11:20), every trace whose id
#: starts with 0 (whole traces: a sixteenth of the day's files).
NEZHA = sorted((Path(__file__).parent / "fixtures" / "nezha_spans").glob("*.csv"))
T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
T0_NS = int(T0.timestamp()) * 10**9
MS = 10**6


def backend(path: Path, table: str) -> ClickHouseTraces:
    return ClickHouseTraces(ClickHouseSettings(traces_table=table), path)


def nezha_rows(path: Path) -> list[SpanRow]:
    """One file's spans as ``data import-traces`` reads them (a pod's spans are its workload's)."""
    rows = []
    for span in read_span_file(path, report=SpanFileReport()):
        service = workload_of(span.owner) if span.owner_kind == "pod" else span.owner
        rows.append(SpanRow(*span[:3], service, span.operation, span.start_ns, span.end_ns, span.error))
    return rows


@pytest.fixture(scope="module")
def both(
    chdb_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[EmbeddedEnvironment, ClickHouseTraces]]:
    env = EmbeddedEnvironment(tmp_path_factory.mktemp("embedded") / "e.db", load_demo=False)
    traces = backend(chdb_path, "nezha_traces")
    added = 0
    for path in NEZHA:
        rows = nezha_rows(path)
        env.add_spans(rows, source=path.name, reach_key=str(path))
        added += traces.add_spans(rows).added
    assert added == env.span_summary()[0]  # type: ignore[index]
    yield env, traces
    traces.close()
    env.close()


def run(backend: TraceBackend, **args: Any) -> tuple[str, str, list[Any]]:
    out = TraceQuery(backend, now=datetime(2023, 1, 29, 15, tzinfo=UTC)).run(QueryTracesArgs.model_validate(args))
    return out.status, out.text, [e.model_dump() for e in out.evidence if isinstance(e, TraceEvidence)]


def nezha_windows() -> list[tuple[str, str]]:
    """Five minutes around the first file's minute and the last's (a baseline a day back or
    none), the travel page's slow minutes, and an hour."""
    windows = []
    for path in {NEZHA[0], NEZHA[-1]}:
        hour, minute = (int(x) for x in path.name.split("_")[:2])
        at = datetime(2023, 1, 29, hour, minute, tzinfo=UTC)
        windows.append(((at - timedelta(minutes=2)).isoformat(), (at + timedelta(minutes=3)).isoformat()))
    windows += [("2023-01-29T10:03:00Z", "2023-01-29T10:07:00Z"), ("2023-01-29T10:00:00Z", "2023-01-29T11:00:00Z")]
    return windows


def test_the_nezha_spans_give_the_embedded_files_output_for_every_service_and_window(
    both: tuple[EmbeddedEnvironment, ClickHouseTraces],
) -> None:
    env, traces = both
    services = env.trace_services()
    assert traces.trace_services() == services and len(services) > 5
    compared = with_spans = 0
    for service in services:
        assert traces.span_extent(service) == env.span_extent(service)
        for start, end in nezha_windows():
            embedded = run(env, service=service, start=start, end=end, limit=5)
            clickhouse = run(traces, service=service, start=start, end=end, limit=5)
            assert clickhouse == embedded, (service, start)
            compared += 1
            with_spans += embedded[0] == "ok"
    assert with_spans > 2 * len(services), "the windows hold spans"
    # a travel question: self time, callers and callees, slowest traces all present
    status, text, _ = run(traces, service="ts-travel-service", start="2023-01-29T10:00:00Z", end="2023-01-29T10:10:00Z")
    assert status == "ok" and "self time p90" in text and "call ts-" in text and "critical path" in text, text


def test_an_operation_narrows_the_spans_alike(both: tuple[EmbeddedEnvironment, ClickHouseTraces]) -> None:
    env, traces = both
    window = {"start": "2023-01-29T09:00:00Z", "end": "2023-01-29T15:00:00Z"}
    operations = {s.operation for s in nezha_rows(NEZHA[0]) if s.service == "ts-gateway-service"}
    for operation in sorted(operations)[:4]:
        args = {"service": "ts-gateway-service", "operation": operation, **window}
        assert run(traces, **args) == run(env, **args)
    nothing = run(traces, service="ts-gateway-service", operation="no such op", **window)
    assert nothing[0] == "no_data" and nothing == run(
        env, service="ts-gateway-service", operation="no such op", **window
    )


@contextmanager
def _refused(why: str, *builders: str) -> Iterator[None]:
    """Reads built by these SQL builders fail the test."""
    with ExitStack() as stack:
        for name in builders:
            stack.enter_context(mock.patch.object(clickhouse_traces, name, side_effect=AssertionError(why)))
        yield


def scan_refused() -> AbstractContextManager[None]:
    """Figures or traces' spans read from the exporter's table fail the test: only the derived
    spans may answer."""
    return _refused("read the exporter's table", "figures_sql", "spans_sql")


def test_derived_spans_answer_alike_and_a_day_changed_since_is_read_again(chdb_path: Path, tmp_path: Path) -> None:
    """``derive`` writes self times and calls beside the exporter's table: the output stays the
    embedded file's, from the derived rows alone, and a span inserted after them is counted."""
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    traces = backend(chdb_path, "derived_traces")
    try:
        for path in NEZHA:
            rows = nezha_rows(path)
            env.add_spans(rows, source=path.name, reach_key=str(path))
            traces.add_spans(rows)
        before = run(traces, service="ts-travel-service", start="2023-01-29T10:00:00Z", end="2023-01-29T10:10:00Z")
        assert traces.derive() == ["2023-01-29"] and traces.derive() == [], "derived once, until it changes"
        with scan_refused():
            for service in env.trace_services():
                for start, end in nezha_windows():
                    args = {"service": service, "start": start, "end": end, "limit": 5}
                    assert run(traces, **args) == run(env, **args), (service, start)
            after = run(traces, service="ts-travel-service", start="2023-01-29T10:00:00Z", end="2023-01-29T10:10:00Z")
        assert after == before
        # whether the derived rows are current is read once per call (its callees' figures too), and again
        # by the next call
        travel = {"service": "ts-travel-service", "start": "2023-01-29T10:00:00Z", "end": "2023-01-29T10:10:00Z"}
        with mock.patch.object(ClickHouseTraces, "_fresh", autospec=True, side_effect=ClickHouseTraces._fresh) as fresh:
            assert run(traces, **travel) == run(traces, **travel) == before
        assert "callee " in before[1] and fresh.call_count == 2
        # a late span of the day: the day is read from the exporter's table again, then derived again
        root = next(r for r in nezha_rows(NEZHA[1]) if r.service == "ts-travel-service")
        late = [
            SpanRow(
                root.trace_id, "late-span", root.span_id, "ts-late-service", "GET /", root.start_ns, root.end_ns, True
            )
        ]
        env.add_spans(late, source="late", reach_key="late")
        traces.add_spans(late)
        args = {"service": "ts-travel-service", "start": "2023-01-29T10:00:00Z", "end": "2023-01-29T10:10:00Z"}
        changed = run(traces, **args)
        assert changed == run(env, **args) and "ts-late-service" in changed[1] and changed != before
        assert traces.derive() == ["2023-01-29"]
        with scan_refused():
            assert run(traces, **args) == changed
        # rows deleted in place leave the parts' row counts as they were: such a day is never derived
        traces.client().command("DELETE FROM derived_traces WHERE SpanId = 'late-span'")
        assert traces.derive() == ["2023-01-29"] and run(traces, **args) == before
        traces.client().command("DELETE FROM derived_traces WHERE SpanId = {s:String}", parameters={"s": root.span_id})
        with mock.patch.object(ClickHouseTraces, "_fresh", return_value=False):
            scanned = run(traces, **args)
        assert run(traces, **args) == scanned != before
    finally:
        traces.close()
        env.close()


# --- the derived tables: their derivation, a process running beside a derive, a derive with nothing new --


def daily_calls(first: datetime, days: int) -> list[SpanRow]:
    """Each day from ``first`` on, an ``api`` span calling ``db`` twice (one failed)."""
    rows = []
    for day in range(days):
        start = ns_of(first + timedelta(days=day))
        rows.append(SpanRow(f"d{day}", f"d{day}-a", "", "api", "GET /", start, start + 90 * MS, False))
        for call in range(2):
            child = start + (10 + 30 * call) * MS
            span = SpanRow(f"d{day}", f"d{day}-b{call}", f"d{day}-a", "db", "q", child, child + 20 * MS, call == 1)
            rows.append(span)
    return rows


def ns_of(moment: datetime) -> int:
    return int(moment.timestamp()) * 10**9


DAILY = datetime(2023, 1, 20, 10, tzinfo=UTC)
#: Both days of ``versioned``'s spans, as ``query_traces`` is asked about them.
TWO_DAYS = {"service": "api", "start": "2023-01-20T00:00:00Z", "end": "2023-01-22T00:00:00Z"}


def derived_refused() -> AbstractContextManager[None]:
    """Figures or traces' spans read from the derived tables fail the test: only the exporter's
    table may answer."""
    return _refused("read the derived spans", "derived_figures_sql", "derived_spans_sql")


@pytest.fixture(scope="module")
def versioned(chdb_path: Path) -> Iterator[tuple[ClickHouseTraces, tuple[str, str, list[Any]]]]:
    """Two days of calls, derived, and what the exporter's table alone answers about them."""
    traces = backend(chdb_path, "versioned_traces")
    traces.add_spans(daily_calls(DAILY, 2))
    with derived_refused():
        scanned = run(traces, **TWO_DAYS)
    assert scanned[0] == "ok" and "call api → db" in scanned[1], scanned
    assert traces.derive() == ["2023-01-20", "2023-01-21"]
    yield traces, scanned
    traces.close()


#: What another veridiag leaves: tables made before versions (no ``Derivation`` column, no
#: comment), tables another derivation made and derived, days another marked in ours.
OTHERS = st.one_of(
    st.just(("unversioned", 0)),
    st.tuples(st.sampled_from(["made", "marked"]), st.integers(0, 2**32 - 1).filter(lambda n: n != DERIVATION)),
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(other=OTHERS)
def test_what_another_derivation_wrote_is_not_read_until_derived_again(
    versioned: tuple[ClickHouseTraces, tuple[str, str, list[Any]]], chdb_path: Path, other: tuple[str, int]
) -> None:
    """Rows another derivation wrote are never read as current, by a process that read ours
    before or one started after: the exporter's table answers, a derive stopped midway changes
    nothing, and the next one derives every day again."""
    traces, scanned = versioned
    kind, derivation = other
    days = "versioned_traces_veridiag_days"
    with scan_refused():
        assert run(traces, **TWO_DAYS) == scanned
    if kind == "unversioned":
        traces.client().command(f"ALTER TABLE {days} DROP COLUMN Derivation")
        traces.client().command(f"ALTER TABLE {days} MODIFY COMMENT ''")
    else:
        if kind == "made":
            traces.client().command(f"ALTER TABLE {days} MODIFY COMMENT '{derivation_comment(derivation)}'")
        traces.client().command(
            f"INSERT INTO {days} SELECT Day, argMax(Partitions, Version), argMax(Counts, Version), "
            f"argMax(Blocks, Version), max(Version) + 1, {{v:UInt32}} FROM {days} GROUP BY Day",
            parameters={"v": derivation},
        )
    started_after = backend(chdb_path, "versioned_traces")
    try:
        with derived_refused():
            assert run(traces, **TWO_DAYS) == scanned, f"read as derived ({kind})"
            assert run(started_after, **TWO_DAYS) == scanned, f"read as derived by a new process ({kind})"
    finally:
        started_after.close()
    with mock.patch.object(clickhouse_traces, "_GRACE_SECONDS", 0):
        interrupted = mock.patch.object(clickhouse_traces, "derive_sql", side_effect=TraceReadError("interrupted"))
        with interrupted, pytest.raises(TraceReadError):
            traces.derive()
        with derived_refused():
            assert run(traces, **TWO_DAYS) == scanned
        assert traces.derive() == ["2023-01-20", "2023-01-21"]
    with scan_refused():
        assert run(traces, **TWO_DAYS) == scanned


def test_a_derive_interrupted_midway_leaves_its_day_read_from_the_exporters_table(chdb_path: Path) -> None:
    """A day is read as derived only once all its rows are in: a derive stopped after some of
    them (the third of a day's four statements failing, its spans in) leaves the day to the exporter's table, and
    the next derive does it whole."""
    traces = backend(chdb_path, "interrupted_traces")
    try:
        traces.add_spans(daily_calls(DAILY, 1))
        with derived_refused():
            scanned = run(traces, **TWO_DAYS)
        real = otel_traces.derive_sql
        calls = iter(range(100))

        def second_fails(*args: Any) -> str:
            if next(calls) == 2:
                raise TraceReadError("interrupted")
            return real(*args)

        stopped = mock.patch.object(clickhouse_traces, "derive_sql", side_effect=second_fails)
        with stopped, pytest.raises(TraceReadError):
            traces.derive()
        assert traces.client().query("SELECT count() FROM interrupted_traces_veridiag_spans").result_rows[0][0] > 0
        with derived_refused():
            assert run(traces, **TWO_DAYS) == scanned
        assert traces.derive() == ["2023-01-20"]
        with scan_refused():
            assert run(traces, **TWO_DAYS) == scanned
    finally:
        traces.close()


def test_a_backend_made_before_a_derive_reads_its_tables_and_stops_when_they_are_dropped(chdb_path: Path) -> None:
    """A server started before the first derive (a CronJob's, in another process) reads the
    derived spans once they are there, without a restart, and the exporter's table again once
    they are gone (dropped by a derive of another derivation), never an error."""
    serving = backend(chdb_path, "noticed_traces")
    serving.add_spans(daily_calls(DAILY, 1))
    deriving = backend(chdb_path, "noticed_traces")
    try:
        with derived_refused():
            scanned = run(serving, **TWO_DAYS)
        assert not serving.layout.derived
        assert deriving.derive() == ["2023-01-20"]
        with scan_refused():
            assert run(serving, **TWO_DAYS) == scanned, "the derived tables made since are not read"
        deriving.client().command("DROP TABLE noticed_traces_veridiag_days")
        deriving.client().command("DROP TABLE noticed_traces_veridiag_spans")
        with derived_refused():
            assert run(serving, **TWO_DAYS) == scanned
    finally:
        serving.close()
        deriving.close()


def statements(traces: ClickHouseTraces) -> list[str]:
    """Every statement ``traces`` sends from now on (the patch lasts as the object does)."""
    sent: list[str] = []
    client = traces.client()
    for name in ("query", "command"):
        real = getattr(client, name)

        def counted(sql: str, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            sent.append(sql)
            return _real(sql, *args, **kwargs)

        setattr(client, name, counted)
    return sent


@pytest.mark.parametrize("days", [1, 6])
def test_a_derive_with_nothing_new_costs_the_same_few_statements_however_many_days(chdb_path: Path, days: int) -> None:
    """What a CronJob runs every few minutes: with every day current, a handful of statements,
    not one or more a day, and none that writes."""
    traces = backend(chdb_path, f"idle_traces_{days}")
    try:
        traces.add_spans(daily_calls(DAILY, days))
        assert len(traces.derive()) == days
        sent = statements(traces)
        assert traces.derive() == []
        assert len(sent) <= 4, sent
        assert not [sql for sql in sent if sql.lstrip().upper().startswith(("INSERT", "ALTER", "DROP"))], sent
    finally:
        traces.close()


# --- generated span trees -------------------------------------------------------------------


@st.composite
def forests(draw: st.DrawFn) -> list[SpanRow]:
    """A few traces of spans over four services, children inside, across or past their parent
    (overlapping, asynchronous, out-living it), each stating a status or not."""
    rows: list[SpanRow] = []
    for number in range(draw(st.integers(1, 6))):
        trace = f"t{number}"
        begin = int(T0.timestamp()) * 10**9 + draw(st.integers(0, 20 * 60)) * 10**9
        spans: list[tuple[str, int, int]] = []
        for index in range(draw(st.integers(1, 12))):
            if index == 0:
                start, parent = begin, ""
                length = draw(st.integers(1, 500)) * MS
            else:
                owner_id, owner_start, owner_end = spans[draw(st.integers(0, index - 1))]
                start = draw(st.integers(owner_start - 2 * MS, owner_end))
                length = draw(st.integers(0, 300)) * MS + draw(st.integers(0, 999))
                parent = owner_id
            span_id = f"{trace}-s{index}"
            spans.append((span_id, start, start + length))
            error = draw(st.sampled_from([None, False, True]))
            service = draw(st.sampled_from(["api", "cart", "db", "pay"]))
            operation = draw(st.sampled_from(["GET /", "POST /pay"]))
            rows.append(SpanRow(trace, span_id, parent, service, operation, start, start + length, error))
    return rows


@pytest.fixture(scope="module")
def twins(chdb_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ClickHouseTraces]]:
    traces = backend(chdb_path, "generated_traces")
    traces.create_tables()
    yield tmp_path_factory.mktemp("generated"), traces
    traces.close()


def order(span: TraceSpan) -> tuple[int, str]:
    return span.start_ns, span.span_id


def edge_key(edge: CallCount) -> tuple[str, str]:
    return edge.caller, edge.callee


@st.composite
def late_children(draw: st.DrawFn, rows: list[SpanRow]) -> SpanRow:
    """A span written after the others: a child of one of them, of any service."""
    parent = draw(st.sampled_from(rows))
    start = draw(st.integers(parent.start_ns - 2 * MS, parent.end_ns))
    service = draw(st.sampled_from(["api", "cart", "db", "pay"]))
    return SpanRow(
        parent.trace_id, "late", parent.span_id, service, "GET /", start, start + draw(st.integers(0, 300)) * MS, None
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    rows=forests(),
    within=st.sampled_from([(0, 30), (5, 12), (10, 11)]),
    top=st.sampled_from([1, 2, 3, 64]),
    lookup=st.booleans(),
)
def test_generated_traces_give_the_same_figures_calls_and_slowest_traces(
    twins: tuple[Path, ClickHouseTraces],
    data: st.DataObject,
    *,
    rows: list[SpanRow],
    within: tuple[int, int],
    top: int,
    lookup: bool,
) -> None:
    """``top``: the longest spans read to choose the slowest traces (few: every span grouped
    instead); ``lookup``: the trace id lookup table used, or the spans around the chosen ones."""
    folder, traces = twins
    late = data.draw(late_children(rows))
    traces.client().command("TRUNCATE TABLE generated_traces")
    traces.client().command("TRUNCATE TABLE generated_traces_trace_id_ts")
    path = folder / "e.db"
    for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    env = EmbeddedEnvironment(path, load_demo=False)
    try:
        env.add_spans(rows, source="generated", reach_key="generated")
        assert traces.add_spans(rows).added == len(rows)
        start, end = (T0 + timedelta(minutes=m) for m in within)
        filters = [
            SpanFilter(service=service, operation=operation, start=start, end=end)
            for service in ["api", "cart", "db", "pay"]
            for operation in [None, "GET /"]
        ]
        # all filters in one statement each (the batched reads query_traces uses)
        assert_same_figures(env, traces, filters)
        with chosen_by(traces, top, lookup):
            assert_same_slowest(env, traces, filters[::2])
        # the same from the derived spans alone, and again once a late child changed the day
        traces.derive()
        with scan_refused():
            assert_same_figures(env, traces, filters)
            with chosen_by(traces, top, lookup):
                assert_same_slowest(env, traces, filters[::2])
        # any trace's spans in any bounds: the spans by trace hold the exporter's rows
        starts: dict[str, list[int]] = {}
        for row in rows:
            starts.setdefault(row.trace_id, []).append(row.start_ns)
        bounds = {  # each cutting through its trace's spans: from near one of their starts
            trace_id: (first, first + data.draw(st.integers(0, 600)) * MS)
            for trace_id in data.draw(st.lists(st.sampled_from([*starts, "absent"]), min_size=1, unique=True))
            for first in [
                data.draw(st.sampled_from(starts.get(trace_id, [T0_NS]))) + data.draw(st.integers(-3, 3)) * MS
            ]
        }
        days = ["2026-01-01", T0.date().isoformat()]
        exported, derived = (
            traces._rows(build(traces.layout, bound, bounds, *extra), bound.params)
            for build, extra in ((otel_traces.spans_sql, ()), (otel_traces.derived_spans_sql, (days,)))
            for bound in [otel_traces.Bound()]
        )
        assert exported == derived
        env.add_spans([late], source="late", reach_key="late")
        traces.add_spans([late])
        assert_same_figures(env, traces, filters)
    finally:
        env.close()


@contextmanager
def chosen_by(traces: ClickHouseTraces, top: int, lookup: bool) -> Iterator[None]:
    """The slowest traces chosen from ``top`` longest spans, their spans found through the lookup
    table or around the chosen spans."""
    with (
        mock.patch.object(clickhouse_traces, "_TOP_SPANS", top),
        mock.patch.object(traces, "_layout", replace(traces.layout, lookup=lookup)),
    ):
        yield


def assert_same_slowest(env: EmbeddedEnvironment, traces: ClickHouseTraces, filters: list[SpanFilter]) -> None:
    for where in filters:
        assert [sorted(trace, key=order) for trace in traces.slowest_traces(where, 3)] == [
            sorted((span.model_copy(update={"self_ns": None}) for span in trace), key=order)
            for trace in env.slowest_traces(where, 3)
        ], where


def assert_same_figures(env: EmbeddedEnvironment, traces: ClickHouseTraces, filters: list[SpanFilter]) -> None:
    for where, ours, edges in zip(
        filters, traces.span_stats_many(filters), traces.call_counts_many(filters), strict=True
    ):
        for key, value in env.span_stats(where).model_dump().items():
            assert ours.model_dump()[key] == pytest.approx(value, abs=1e-6), (where, key)
        assert sorted(edges, key=edge_key) == sorted(env.call_counts(where), key=edge_key), where


# --- the table as the exporter writes it, and bad input -----------------------------------


def test_a_table_the_exporter_wrote_reads_its_status_codes_and_columns(chdb_path: Path) -> None:
    traces = backend(chdb_path, "exporter_traces")
    client = traces.client()
    client.command(EXPORTER_TRACES_DDL.format(table="`default`.`exporter_traces`"))
    columns = {
        name for (name,) in client.query("SELECT name FROM system.columns WHERE table = 'exporter_traces'").result_rows
    }
    assert {"Events.Timestamp", "Links.TraceId", "ResourceAttributes", "SpanAttributes", "StatusMessage"} <= columns
    names = [
        "Timestamp",
        "TraceId",
        "SpanId",
        "ParentSpanId",
        "SpanName",
        "SpanKind",
        "ServiceName",
        "Duration",
        "StatusCode",
    ]
    rows: list[list[Any]] = []
    for n in range(8):
        at = T0 + timedelta(minutes=n)
        code = ["Error", "Ok", "Unset", "STATUS_CODE_ERROR"][n % 4]
        rows.append([at, f"tr{n}", f"a{n}", "", "GET /cart", "Server", "api", (20 + n) * MS, code])
        rows.append(
            [at + timedelta(milliseconds=5), f"tr{n}", f"b{n}", f"a{n}", "SELECT", "Client", "db", 10 * MS, "Unset"]
        )
    client.insert("exporter_traces", rows, column_names=names)
    status, text, _ = run(traces, service="api", start=T0.isoformat(), end=(T0 + timedelta(minutes=10)).isoformat())
    assert status == "ok", text
    assert "api errors: 4 of 8 spans (50%)" in text, text
    assert "call api → db: 8 calls, 0 errors in the window" in text, text
    # api's own time: its duration less db's 10 ms
    assert "api self time p50: 13.5ms" in text, text
    traces.close()


HOSTILE = ["it's", "'; DROP TABLE nezha_traces; --", "{p0:String}", "连接超时"]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_values_are_bound_never_formatted(
    both: tuple[EmbeddedEnvironment, ClickHouseTraces], hostile: str
) -> None:
    _env, traces = both
    status, text, _ = run(traces, service=hostile, start="2023-01-29T09:00:00Z", end="2023-01-29T15:00:00Z")
    assert status == "error" and "services with spans: ts-" in text, text
    status, text, _ = run(
        traces,
        service="ts-gateway-service",
        operation=hostile,
        start="2023-01-29T09:00:00Z",
        end="2023-01-29T15:00:00Z",
    )
    assert status == "no_data", text
    assert "ts-gateway-service" in traces.trace_services(), "the table is still there"


def test_a_missing_table_is_an_error_saying_which_and_how_to_make_it(chdb_path: Path) -> None:
    status, text, evidence = run(backend(chdb_path, "no_such_traces"), service="api")
    assert status == "error" and not evidence
    assert "no table default.no_such_traces" in text and "import-traces --store clickhouse" in text, text


def test_columns_of_another_type_are_an_error_naming_them(chdb_path: Path) -> None:
    traces = backend(chdb_path, "odd_traces")
    traces.client().command(
        "CREATE TABLE odd_traces (Timestamp DateTime, TraceId String, SpanId String, ParentSpanId String, "
        "SpanName String, ServiceName String, Duration String) ENGINE = MergeTree ORDER BY Timestamp"
    )
    status, text, _ = run(traces, service="api")
    assert status == "error", text
    assert (
        "column Timestamp is DateTime, not DateTime64" in text and "column Duration is String, not an integer" in text
    )
    assert "no column StatusCode (status_code)" in text, text
    renamed = ClickHouseTraces(
        ClickHouseSettings(traces_table="odd_traces", trace_columns={"duration": "Elapsed"}), chdb_path
    )
    assert "no column Elapsed (duration)" in run(renamed, service="api")[1]


def test_a_server_that_does_not_answer_is_an_error_not_an_empty_answer(tmp_path: Path) -> None:
    settings = ClickHouseSettings(url=f"http://127.0.0.1:{free_port()}", timeout_seconds=2)
    status, text, evidence = run(ClickHouseTraces(settings, tmp_path), service="api")
    assert status == "error" and not evidence and text.startswith("query_traces error: clickhouse:"), text


def test_tools_traces_clickhouse_reads_the_configured_table(
    both: tuple[EmbeddedEnvironment, ClickHouseTraces], chdb_path: Path, tmp_path: Path
) -> None:
    env, _traces = both
    config = Settings(
        home=tmp_path / "home",
        embedded={"load_demo": False},
        tools={"traces": "clickhouse"},
        clickhouse={"path": chdb_path, "traces_table": "nezha_traces"},
    )
    toolbox = build_toolbox(config)
    try:
        assert isinstance(toolbox.traces, ClickHouseTraces)
        args = QueryTracesArgs(service="ts-travel-service", start="2023-01-29T10:00:00Z", end="2023-01-29T10:10:00Z")
        out = toolbox.call("query_traces", args)
        assert out.status == "ok" and out.retrieval_details["backend"] == "clickhouse"
        assert out.text == run(env, **args.model_dump())[1]
    finally:
        toolbox.close()
    assert not Settings(home=tmp_path / "h2", tools={"traces": "clickhouse"}).live_backends
    assert Settings(
        home=tmp_path / "h3", tools={"traces": "clickhouse"}, clickhouse={"url": "http://ch:8123"}
    ).live_backends


def test_import_traces_into_clickhouse_from_the_cli_is_idempotent_and_a_held_directory_is_said(
    both: tuple[EmbeddedEnvironment, ClickHouseTraces], chdb_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _env, _traces = both
    monkeypatch.setenv("VERIDIAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("VERIDIAG_EMBEDDED__LOAD_DEMO", "false")
    monkeypatch.setenv("VERIDIAG_CLICKHOUSE__PATH", str(chdb_path))
    monkeypatch.setenv("VERIDIAG_CLICKHOUSE__TRACES_TABLE", "cli_traces")
    command = ["data", "import-traces", str(FIXTURE), "--store", "clickhouse", "--json"]
    first = CliRunner().invoke(app, command)
    assert first.exit_code == 0, first.output
    spans = len(nezha_rows(FIXTURE / "09_30_trace.csv"))
    assert f'"imported": {spans}' in first.output, first.output
    again = CliRunner().invoke(app, command)
    assert again.exit_code == 0 and '"imported": 0' in again.output and f'"duplicates": {spans}' in again.output
    stored = backend(chdb_path, "cli_traces")
    assert "ts-gateway-service" in stored.trace_services()
    assert stored.span_extent("ts-gateway-service") is not None
    with scan_refused():  # the import derived the day
        window = {"start": "2023-01-29T09:25:00Z", "end": "2023-01-29T09:35:00Z"}
        assert run(stored, service="ts-gateway-service", **window)[0] == "ok"
    stored.close()
    # derive-traces (a CronJob for an exporter-fed table): nothing to do, then a day it changed
    current = CliRunner().invoke(app, ["data", "derive-traces"])
    assert current.exit_code == 0 and "0 day(s) derived (every day was current) in " in current.stdout, current.output
    assert "deriving" not in current.stderr
    late = backend(chdb_path, "cli_traces")
    late.client().command("DROP TABLE IF EXISTS cli_traces_veridiag_days")
    late.close()
    again_derived = CliRunner().invoke(app, ["data", "derive-traces", "--json"])
    assert again_derived.exit_code == 0, again_derived.output
    assert json.loads(again_derived.stdout).items() >= {"table": "cli_traces", "derived_days": ["2023-01-29"]}.items()
    assert "cli_traces: deriving 2023-01-29 (1/1)" in again_derived.stderr
    # This process holds chdb_path open: another one is told so, by pid.
    environ = {**os.environ, "VERIDIAG_CLICKHOUSE__PATH": str(chdb_path)}
    refused = subprocess.run(
        [sys.executable, "-m", "veridiag", "data", "import-traces", str(FIXTURE), "--store", "clickhouse"],
        env=environ,
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode != 0
    assert f"in use by PID: {os.getpid()}" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_bench_times_query_traces_over_a_generated_table(tmp_path: Path) -> None:
    """In a child process: the engine there opens the bench's own data directory."""
    script = (
        "import sys; from pathlib import Path; from veridiag.bench import clickhouse_traces; "
        "print(clickhouse_traces.run(spans=20_000, repeats=1, cache=Path(sys.argv[1]), embedded_spans=20_000)"
        ".model_dump_json())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=False, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["all_ok"], "every variant's window holds spans"
    assert report["clickhouse_spans"] >= 20_000 and report["clickhouse_query_traces_p99_ms"] > 0
    assert report["runs"] == 8 and report["clickhouse_10m_p99_ms"] is None
    assert (tmp_path / "clickhouse-spans_g1_20000.json").exists(), "the table is built once and kept"
    # the embedded file of the same spans, imported as `data import-traces` imports a CSV
    assert report["embedded_spans"] == report["clickhouse_spans"] and report["embedded_import_seconds"] > 0
    assert report["embedded_query_traces_p99_ms"] > 0
    assert list(tmp_path.glob("spans-g1-s*-20000.json")), "the embedded file is built once and kept"


def test_a_trace_read_by_its_id_is_the_embedded_files(both: tuple[EmbeddedEnvironment, ClickHouseTraces]) -> None:
    env, traces = both
    window = SpanFilter(
        service="ts-travel-service",
        start=datetime(2023, 1, 29, 10, tzinfo=UTC),
        end=datetime(2023, 1, 29, 11, tzinfo=UTC),
    )
    chosen = [trace[0].trace_id for trace in env.slowest_traces(window, 3)]
    assert chosen
    for trace_id in chosen:
        ours = traces.trace(trace_id.upper())  # as a log line may write it
        assert sorted(ours, key=order) == sorted(
            (s.model_copy(update={"self_ns": None}) for s in env.trace(trace_id)), key=order
        )
        args = {
            "service": "ts-travel-service",
            "trace_id": trace_id,
            "start": "2023-01-29T09:00:00Z",
            "end": "2023-01-29T12:00:00Z",
        }
        assert run(traces, **args) == run(env, **args)
    assert traces.trace("0" * 32) == []
    missing = run(
        traces, service="ts-travel-service", trace_id="0" * 32, start="2023-01-29T09:00:00Z", end="2023-01-29T12:00:00Z"
    )
    assert missing[0] == "no_data" and "no span of trace" in missing[1]
