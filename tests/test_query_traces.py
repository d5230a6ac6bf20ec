"""``query_traces`` (issue 29): self time and critical paths (``analysis/traces.py``), the
figures against the service's own baseline, the call graph per edge, the slowest traces, no
data and unknown services, the runner recording it, and the Gatekeeper grounding its lines."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tests.builders import SESSION, binding, claim, invocation, v2
from veridiag.analysis.traces import (
    SpanFilter,
    TimedSpan,
    TraceSpan,
    by_operation,
    covered,
    critical_path,
    quantiles,
    self_times,
)
from veridiag.config import Settings
from veridiag.contracts import InMemoryInvocations
from veridiag.contracts.invocation import InvocationRecord
from veridiag.gatekeeper import Gatekeeper
from veridiag.pipeline.factory import assemble
from veridiag.pipeline.service import DiagnosisResult
from veridiag.store import SessionStore
from veridiag.text.render import parse_value
from veridiag.tools.args import QueryTracesArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, LogRow, SpanRow
from veridiag.tools.records import TraceEvidence
from veridiag.tools.runner import Toolbox, ToolRunner
from veridiag.tools.spans import TraceQuery, _slow, trace_id_in

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=UTC)
MS = 10**6


def ns(moment: datetime, plus_ms: float = 0) -> int:
    return int(moment.timestamp()) * 10**9 + int(plus_ms * MS)


# --- self time and the critical path, on generated traces -----------------------------------


@st.composite
def traces(draw: st.DrawFn) -> list[TraceSpan]:
    """A tree of spans, children anywhere inside (or overlapping past) their parent."""
    count = draw(st.integers(1, 25))
    spans: list[TraceSpan] = []
    for index in range(count):
        if index == 0:
            start, length, parent = 0, draw(st.integers(1, 10_000)), ""
        else:
            owner = spans[draw(st.integers(0, index - 1))]
            start = draw(st.integers(owner.start_ns, owner.end_ns))
            inside = draw(st.booleans())
            room = owner.end_ns - start
            length = draw(st.integers(0, room)) if inside or room == 0 else draw(st.integers(0, 2 * room + 5))
            parent = owner.span_id
        spans.append(
            TraceSpan(
                trace_id="t",
                span_id=f"s{index}",
                parent_id=parent,
                service=f"svc{index % 3}",
                operation=f"op{index % 2}",
                start_ns=start,
                end_ns=start + length,
            )
        )
    return spans


def nested(spans: list[TraceSpan]) -> bool:
    by_id = {s.span_id: s for s in spans}
    return all(
        by_id[s.parent_id].start_ns <= s.start_ns and s.end_ns <= by_id[s.parent_id].end_ns
        for s in spans
        if s.parent_id
    )


@settings(max_examples=200, deadline=None)
@given(traces())
def test_self_time_lies_between_zero_and_the_duration_and_adds_up_to_what_the_root_covers(
    spans: list[TraceSpan],
) -> None:
    owns = self_times(TimedSpan(s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in spans)
    for span in spans:
        assert 0 <= owns[span.span_id] <= span.duration_ns
    if nested(spans):
        # children inside their parents: each span's own time is what its children leave uncovered
        leaves_cover = {
            s.span_id: s.duration_ns
            - covered([(c.start_ns, c.end_ns) for c in spans if c.parent_id == s.span_id], s.start_ns, s.end_ns)
            for s in spans
        }
        assert leaves_cover == owns


@settings(max_examples=200, deadline=None)
@given(traces())
def test_the_critical_paths_shares_add_up_to_the_roots_duration(spans: list[TraceSpan]) -> None:
    path = critical_path(spans)
    assert path, "a trace has a path"
    assert sum(h.critical_ms for h in path) == pytest.approx(spans[0].duration_ns / MS, abs=1e-6)
    for hop in path:
        assert 0 <= hop.critical_ms <= hop.duration_ms + 1e-9
        assert 0 <= hop.self_ms <= hop.duration_ms + 1e-9
    merged = by_operation(path)
    assert sum(h.spans for h in merged) == len(path)
    assert sum(h.critical_ms for h in merged) == pytest.approx(sum(h.critical_ms for h in path))


#: A hop as a path line writes it: its time on the path, its span's duration when the self
#: time is more than that, its self time.
HOP_FIGURES = re.compile(r"(?P<on>\S+ms) \((?:span (?P<span>\S+ms), )?self (?P<own>\S+ms)\)")


@settings(max_examples=200, deadline=None)
@given(traces())
def test_a_hops_self_time_never_reads_as_more_than_its_span(spans: list[TraceSpan]) -> None:
    """A span beside a sibling that holds the request up (overlapping children) is on the path
    for part of its run; its self time is of the whole run, so the line states the span it is
    within rather than a self time above the only figure shown."""
    scaled = [s.model_copy(update={"start_ns": s.start_ns * 1000, "end_ns": s.end_ns * 1000}) for s in spans]
    where = SpanFilter(service="svc0", start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(1970, 1, 2, tzinfo=UTC))
    slow = _slow(1, scaled, where)
    for line in (slow.path_line, slow.heaviest_line or ""):
        for hop in HOP_FIGURES.finditer(line):
            own, bound = parse_value(hop["own"], "ms"), parse_value(hop["span"] or hop["on"], "ms")
            assert own is not None and bound is not None and own <= bound, line


def test_overlapping_children_count_once_and_a_late_async_child_is_clipped() -> None:
    spans = [
        TimedSpan("root", "", 0, 100),
        TimedSpan("a", "root", 10, 50),
        TimedSpan("b", "root", 30, 60),  # overlaps a: 10–60 is covered once
        TimedSpan("late", "root", 90, 500),  # runs past the root's end: 90–100 only
        TimedSpan("grand", "a", 10, 50),
    ]
    owns = self_times(spans)
    assert owns == {"root": 100 - 50 - 10, "a": 0, "b": 30, "late": 410, "grand": 40}


def test_the_critical_path_walks_back_through_sequential_calls() -> None:
    def span(span_id: str, parent: str, service: str, start: int, end: int) -> TraceSpan:
        return TraceSpan(
            trace_id="t",
            span_id=span_id,
            parent_id=parent,
            service=service,
            operation="op",
            start_ns=start * MS,
            end_ns=end * MS,
        )

    spans = [
        span("root", "", "front", 0, 100),
        span("db", "root", "db", 5, 45),  # first call, sequential
        span("cache", "root", "cache", 10, 20),  # beside db: never holds the request up
        span("slow", "root", "slow", 50, 95),
    ]
    path = critical_path(spans)
    assert [(h.service, h.critical_ms) for h in path] == [("front", 15.0), ("db", 40.0), ("slow", 45.0)]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=200))
def test_percentiles_are_numpys_and_the_statistics_modules_inclusive_ones(values: list[float]) -> None:
    p50, p90, p99 = quantiles(values, (0.5, 0.9, 0.99))
    assert p50 == pytest.approx(float(np.percentile(values, 50)))
    assert p99 == pytest.approx(float(np.percentile(values, 99)))
    if len(values) > 1:
        assert p90 == pytest.approx(statistics.quantiles(values, n=10, method="inclusive")[-1])
        assert p50 == pytest.approx(statistics.median(values))


# --- the tool on a small store ---------------------------------------------------------------


def trace_rows(trace: str, at: datetime, *, api_ms: float, db_ms: float, error: bool | None = None) -> list[SpanRow]:
    """A gateway → api → db trace: the api's own work ``api_ms``, the db call ``db_ms``."""
    start = ns(at)
    total = int((api_ms + db_ms) * MS)
    return [
        SpanRow(trace, f"{trace}-g", "", "gateway", "GET /trips", start, start + total + 2 * MS),
        SpanRow(trace, f"{trace}-a", f"{trace}-g", "api", "queryTrips", start + MS, start + total + MS, error),
        SpanRow(trace, f"{trace}-d", f"{trace}-a", "db", "SELECT", start + 2 * MS, start + int((db_ms + 2) * MS)),
    ]


@pytest.fixture
def env(tmp_path: Path) -> EmbeddedEnvironment:
    """An hour of baseline (api's own work 5 ms, db 10 ms, no errors), then ten minutes in which
    api's own work is 50 ms and 1 span in 4 fails; db unchanged."""
    environment = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    rows: list[SpanRow] = []
    for minute in range(60):
        for k in range(4):
            at = T0 - timedelta(hours=1) + timedelta(minutes=minute, seconds=k * 10)
            rows += trace_rows(f"b{minute}-{k}", at, api_ms=5, db_ms=10, error=False)
    for minute in range(10):
        for k in range(4):
            at = T0 + timedelta(minutes=minute, seconds=k * 10)
            rows += trace_rows(f"w{minute}-{k}", at, api_ms=50, db_ms=10, error=k == 0)
    environment.add_spans(rows, source="fixture", reach_key="fixture")
    return environment


def run(env: EmbeddedEnvironment, **args: object) -> tuple[str, str, TraceEvidence | None]:
    given = {"start": "2026-03-01T10:00:00Z", "end": "2026-03-01T10:10:00Z", **args}
    output = TraceQuery(env, now=T0 + timedelta(hours=1)).run(QueryTracesArgs.model_validate(given))
    records = [e for e in output.evidence if isinstance(e, TraceEvidence)]
    return output.status, output.text, records[0] if records else None


def test_the_service_whose_own_work_grew_shows_it_against_its_baseline(env: EmbeddedEnvironment) -> None:
    status, text, found = run(env, service="api")
    assert status == "ok" and found is not None
    lines = text.splitlines()
    assert lines[0] == "query_traces service=api start=2026-03-01T10:00:00Z end=2026-03-01T10:10:00Z"
    assert lines[1].startswith("window 2026-03-01T10:00:00Z – 2026-03-01T10:10:00Z; baseline 2026-03-01T09:00:00Z")
    assert "api spans: 40 in the window, 240 in the baseline" in lines
    assert "api errors: 10 of 40 spans (25%) in the window, 0 of 240 spans (0%) in the baseline" in lines
    assert "api self time p90: 50ms in the window, 5ms in the baseline (×10.00)" in lines
    assert "api duration p50: 60ms in the window, 15ms in the baseline (×4.00)" in lines
    own = found.figure("self_p90")
    assert own is not None and own.factor == 10.0 and own.line in lines
    assert "call gateway → api: 40 calls, 10 errors in the window; 240 calls, 0 errors in the baseline" in lines
    assert (
        "call api → db: 40 calls, errors not stated in the window; 240 calls, errors not stated in the baseline"
        in lines
    )
    assert "callee db self time p90: 10ms in the window, 10ms in the baseline (×1.00)" in lines
    assert [f.service for f in found.callees] == ["db"]
    assert len(found.slowest) == 3
    first = found.slowest[0]
    assert first.line.startswith("trace 1 w") and "api span 60ms, trace 62ms" in first.line
    assert first.heaviest is not None and first.heaviest.service == "api"
    assert first.heaviest_line == "trace 1 most time on its critical path: api:queryTrips 50ms of 62ms (self 50ms)"
    assert all(line in lines for t in found.slowest for line in (t.line, t.path_line))


def test_a_service_that_only_waits_on_its_callee_keeps_its_own_time(env: EmbeddedEnvironment) -> None:
    _status, text, found = run(env, service="gateway")
    assert found is not None
    assert "gateway self time p90: 2ms in the window, 2ms in the baseline (×1.00)" in text.splitlines()
    duration = found.figure("duration_p90")
    assert duration is not None and duration.factor is not None and duration.factor > 3
    callee = found.callees[0]
    assert callee.service == "api" and callee.factor == 10.0


def test_an_operation_narrows_the_spans_and_one_it_lacks_finds_none(env: EmbeddedEnvironment) -> None:
    status, text, _found = run(env, service="api", operation="queryTrips")
    assert status == "ok" and "operation=queryTrips" in text
    status, text, found = run(env, service="api", operation="nothing")
    assert status == "no_data" and found is None and "operation 'nothing'" in text


def test_an_empty_window_is_no_data_saying_where_the_spans_are(env: EmbeddedEnvironment) -> None:
    status, text, found = run(env, service="api", start="2026-03-02T10:00:00Z", end="2026-03-02T11:00:00Z")
    assert status == "no_data" and found is None
    assert text == (
        "query_traces: no spans of api in 2026-03-02T10:00:00Z – 2026-03-02T11:00:00Z; "
        "api's spans start 2026-03-01T09:00:00Z – 2026-03-01T10:09:30Z"
    )


def test_an_unknown_service_is_an_error_naming_the_services_with_spans(env: EmbeddedEnvironment) -> None:
    status, text, _found = run(env, service="billing")
    assert status == "error"
    assert text == "query_traces error: no spans of service 'billing'; services with spans: api, db, gateway"


def test_a_store_without_spans_and_a_toolbox_without_a_trace_backend_fail_closed(tmp_path: Path) -> None:
    empty = EmbeddedEnvironment(tmp_path / "empty.db", load_demo=False)
    status, text, _found = run(empty, service="api")
    assert status == "error" and "no spans are stored" in text
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    toolbox = Toolbox(logs=empty, metrics=empty, knowledge=empty, changes=empty)
    result = ToolRunner(store, toolbox, store.create_session("t").id).run("query_traces", {"service": "api"})
    assert result.status == "error" and "no trace backend" in result.output.text
    refused = ToolRunner(store, toolbox, store.create_session("t").id).run("query_traces", {})
    assert refused.status == "error" and "service" in refused.output.text


def test_the_baseline_reaches_back_a_day_when_the_hour_before_holds_no_span(env: EmbeddedEnvironment) -> None:
    _status, text, found = run(env, service="api", start="2026-03-01T11:30:00Z", end="2026-03-01T12:00:00Z")
    assert found is None  # nothing in that window
    later = SpanFilter(service="api", start=T0 + timedelta(hours=3), end=T0 + timedelta(hours=3, minutes=10))
    env.add_spans(trace_rows("late", later.start, api_ms=5, db_ms=10, error=False), source="late", reach_key="late")
    status, text, found = run(env, service="api", start="2026-03-01T13:00:00Z", end="2026-03-01T13:10:00Z")
    assert status == "ok" and found is not None
    assert found.baseline_start == T0 + timedelta(hours=3) - timedelta(hours=24)
    assert "api spans: 1 in the window, 280 in the baseline" in text.splitlines()


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 599_999), st.integers(1, 5_000), st.one_of(st.none(), st.booleans())),
        min_size=1,
        max_size=60,
    )
)
def test_figures_match_numpy_on_random_spans(spans: list[tuple[int, int, bool | None]]) -> None:
    with __import__("tempfile").TemporaryDirectory() as folder:
        env = EmbeddedEnvironment(Path(folder) / "e.db", load_demo=False)
        rows = [
            SpanRow(f"t{i}", f"s{i}", "", "api", "op", ns(T0, at), ns(T0, at) + length * 1000, error)
            for i, (at, length, error) in enumerate(spans)
        ]
        env.add_spans(rows, source="r", reach_key="r")
        stats = env.span_stats(SpanFilter(service="api", start=T0, end=T0 + timedelta(minutes=10)))
        env.close()
    durations = [length / 1000 for _at, length, _e in spans]
    assert stats.spans == len(spans)
    assert stats.duration_p90 == pytest.approx(float(np.percentile(durations, 90)))
    assert stats.self_p50 == pytest.approx(float(np.percentile(durations, 50)))  # no children: all own time
    stated = [e for _at, _l, e in spans if e is not None]
    assert stats.errors == (sum(stated) if stated else None)
    assert stats.stated == len(stated)


# --- the runner records it, the Gatekeeper grounds its lines -------------------------------


def test_the_runner_records_the_output_and_the_gatekeeper_grounds_a_quoted_line(
    env: EmbeddedEnvironment, tmp_path: Path
) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 'store.db'}")
    toolbox = Toolbox(logs=env, metrics=env, knowledge=env, changes=env, traces=env)
    args = {"service": "api", "start": "2026-03-01T10:00:00Z", "end": "2026-03-01T10:10:00Z"}
    result = ToolRunner(store, toolbox, store.create_session("t").id).run("query_traces", args)
    assert result.status == "ok"
    line = "api self time p90: 50ms in the window, 5ms in the baseline (×10.00)"
    assert line in result.output.text.splitlines()
    stored = invocation(
        901, "query_traces", result.output.text, arguments=args, retrieval_details=result.output.retrieval_details
    )
    invocations = InMemoryInvocations([stored])

    def verdict(text: str, excerpt: str) -> list[str]:
        made = claim(text=text, bindings=[binding([901], excerpt, tool_name="query_traces")])
        report = Gatekeeper().validate(v2([made]), session_id=SESSION, invocations=invocations)
        return list(report.result.failed_rules)

    assert verdict("api 的自身耗时 p90 在窗口内为 50ms，基线为 5ms", line) == []
    assert verdict("api self time p90 was 50ms in the window against 5ms before", line) == []
    assert "claim.entity_grounding" in verdict("api 的自身耗时 p90 在窗口内为 80ms，基线为 5ms", line)


# --- the offline engine reads the spans and cites them --------------------------------------


def asked(
    tmp_path: Path, question: str, spans: list[SpanRow], logs: Sequence[LogRow] = ()
) -> tuple[DiagnosisResult, list[InvocationRecord]]:
    """``question`` through the offline pipeline on a home holding only ``spans`` and ``logs``."""
    settings = Settings(home=tmp_path / "home", embedded={"load_demo": False})
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    env.add_spans(spans, source="fixture", reach_key="fixture")
    if logs:
        env.add_logs(logs)
    env.close()
    assembly = assemble(settings)
    try:
        result = assembly.pipeline.run(question)
        return result, assembly.store.list_invocations(result.session_id)
    finally:
        assembly.close()


def slow_api(minutes: range = range(90, 100)) -> list[SpanRow]:
    """Two hours of gateway → api → db traces before 10:30, api's own work 50 ms in ``minutes``."""
    rows: list[SpanRow] = []
    for minute in range(120):
        for k in range(4):
            at = T0 - timedelta(hours=1, minutes=30) + timedelta(minutes=minute, seconds=k * 10)
            rows += trace_rows(f"t{minute}-{k}", at, api_ms=50 if minute in minutes else 5, db_ms=10, error=None)
    return rows


def test_the_offline_answer_cites_the_span_lines_of_the_service_whose_own_time_grew(tmp_path: Path) -> None:
    result, calls = asked(tmp_path, "why is the trips page slow at 10:05 on 2026-03-01?", slow_api())
    traced = [c for c in calls if c.tool_name == "query_traces" and c.status == "ok"]
    assert traced, [c.tool_name for c in calls]
    api = next(c for c in traced if c.arguments.get("service") == "api")
    line = next(x for x in api.output.splitlines() if x.startswith("api self time p90:"))
    assert "(×" in line
    assert "api" in result.answer and "self time" in result.answer, result.answer


@pytest.mark.parametrize(
    "question", ["why is the trips page slow at 10:05 on 2026-03-01?", "2026-03-01 10:05 行程页面为什么慢？"]
)
def test_every_span_claim_of_the_offline_answer_passes_in_either_language(tmp_path: Path, question: str) -> None:
    """A span claim says only what its lines state, in Chinese as in English: "最慢的链路" (the
    slowest trace) quotes the line that says what the traces are ranked by."""
    result, calls = asked(tmp_path, question, slow_api())
    assert result.record is not None
    traced = {c.id for c in calls if c.tool_name == "query_traces"}
    checks = result.record.verifier_evaluation.claim_checks
    on_spans = [c for c in checks if any(set(ref.source_invocation_ids) & traced for ref in c.evidence_refs)]
    assert on_spans
    assert all(c.verification == "direct_observation" for c in on_spans), [
        (c.claim_id, c.verification, c.detail) for c in on_spans
    ]


# --- one trace by its id (a log line's TraceID) -------------------------------------------------


def test_one_trace_by_its_id_says_where_the_request_went_and_what_the_service_called(env: EmbeddedEnvironment) -> None:
    with pytest.raises(ValidationError):  # a trace id is hex: anything else is refused before a read
        run(env, service="api", trace_id="w3-0")
    rows = trace_rows("ab" * 16, T0 + timedelta(minutes=3), api_ms=50, db_ms=10, error=True)
    env.add_spans(rows, source="fixture", reach_key="fixture-2")
    status, text, found = run(env, service="api", trace_id="AB" * 16)
    assert status == "ok" and found is not None, text
    assert found.trace_id == "ab" * 16 and found.trace_spans == 3
    assert found.reached == ["gateway", "api", "db"] and found.called == ["db"]
    assert f"api in trace {'ab' * 16}: 1 span; calls to other services: db" in text
    assert f"trace {'ab' * 16} spans stating an error: api:queryTrips" in text
    status, text, found = run(env, service="db", trace_id="ab" * 16)
    assert found is not None and found.called == [] and "calls to other services: none" in text
    status, text, _ = run(env, service="api", trace_id="cd" * 16)
    assert status == "no_data" and "no span of trace" in text


@given(
    key=st.sampled_from(["TraceID", "trace_id", "traceId", "trace.id", "trace-id", "TRACE_ID"]),
    sep=st.sampled_from([": ", "=", ":", '": "', " = "]),
    digits=st.sampled_from([16, 32]),
    hexes=st.text(alphabet="0123456789abcdefABCDEF", min_size=32, max_size=32),
    before=st.text(alphabet="abc xyz[]:", max_size=20),
)
def test_a_trace_id_is_read_from_a_line_whatever_its_key_is_spelt(
    key: str, sep: str, digits: int, hexes: str, before: str
) -> None:
    wanted = hexes[:digits]
    quote = '"' if sep.startswith('"') else ""
    line = f"{before} {quote}{key}{sep}{wanted}{quote} SpanID: 0123456789abcdef done"
    assert trace_id_in(line) == wanted.lower()
    assert trace_id_in(line.replace(wanted, wanted[:12])) is None  # too short to be one


def test_the_offline_answer_reads_the_trace_of_the_new_error_lines(tmp_path: Path) -> None:
    """api starts failing at 10:05: its new ERROR lines state their trace ids; the answer reads
    one of those traces whole and says where the request went, citing the log line and the spans."""
    spans: list[SpanRow] = []
    logs: list[LogRow] = []
    for minute in range(120):
        for k in range(4):
            at = T0 - timedelta(hours=1, minutes=30) + timedelta(minutes=minute, seconds=k * 10)
            trace = f"{minute:04x}{k:04x}".rjust(32, "e")
            failing = minute >= 95
            spans += trace_rows(trace, at, api_ms=5, db_ms=10)[: 2 if failing else 3]
            text = f"TraceID: {trace} SpanID: {trace[:16]} " + (
                "IllegalStateException: No instances available for db" if failing else "queried trips"
            )
            logs.append(LogRow(at, "api", "ERROR" if failing else "INFO", text, text, trace_id=trace))
    result, calls = asked(tmp_path, "why is the trips page failing at 10:05 on 2026-03-01?", spans, logs)
    looked_up = [c for c in calls if c.tool_name == "query_traces" and c.arguments.get("trace_id")]
    assert looked_up and looked_up[0].status == "ok", [(c.tool_name, c.arguments) for c in calls]
    assert "calls to other services: none" in (looked_up[0].output or "")
    assert result.record is not None
    checks = result.record.verifier_evaluation.claim_checks
    on_trace = [c for c in checks if any(looked_up[0].id in ref.source_invocation_ids for ref in c.evidence_refs)]
    assert [c.verification for c in on_trace] == ["direct_observation"], on_trace
    assert "called no other service" in result.answer or "没有调用其他服务" in result.answer
