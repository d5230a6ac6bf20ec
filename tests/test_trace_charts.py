"""Span figures (issue 29 item 4): a trace's waterfall rows (``analysis/traces.py`` ``waterfall``)
hold every span once under its parent with the critical path's stretches; the records kept with
a ``query_traces`` call (``tools/drawn.py``) are the output's own; the SVG builders
(``api/trace_charts.py``) draw every span once inside the track, the critical path marked and
self time visible, for any generated tree; the call graph lists every call once, suspects marked."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_query_traces import T0, run, trace_rows
from veridiag.analysis.traces import TimedSpan, TraceSpan, critical_path, self_times, uncovered, waterfall
from veridiag.api.evidence import trace_words
from veridiag.api.trace_charts import (
    AXIS,
    FALLBACK_LABEL,
    NARROW_LABEL,
    ROW,
    WIDE_LABEL,
    GraphEdge,
    GraphNode,
    ServiceGraph,
    _labels,
    graph_svg,
    merged_graph,
    outline,
    shortened,
    text_width,
    waterfall_svg,
)
from veridiag.tools.backends.embedded import EmbeddedEnvironment, SpanRow
from veridiag.tools.drawn import (
    Drawn,
    DrawnCall,
    DrawnGraph,
    DrawnService,
    DrawnSpan,
    DrawnTrace,
    drawn_records,
    read_drawn,
    stored_form,
)
from veridiag.tools.records import TraceEvidence

SVG = "{http://www.w3.org/2000/svg}"
MS = 10**6
WORDS = {lang: trace_words(lang) for lang in ("en", "zh")}


@st.composite
def span_trees(draw: st.DrawFn) -> list[TraceSpan]:
    """One trace: a root, then spans under any earlier one — inside it or running past its end —
    services and operations from small alphabets (Chinese among them), some stating an error; at
    times a span whose parent was never captured."""
    count = draw(st.integers(1, 40))
    names = st.sampled_from(["gateway", "api", "db", "ts-preserve-other-service", "支付服务", "a"])
    spans: list[TraceSpan] = []
    for index in range(count):
        if index == 0:
            start, length, parent = 0, draw(st.integers(0, 10**9)), ""
        else:
            owner = spans[draw(st.integers(0, index - 1))]
            start = draw(st.integers(owner.start_ns, owner.end_ns))
            room = owner.end_ns - start
            length = draw(st.integers(0, room)) if draw(st.booleans()) or room == 0 else draw(st.integers(0, 2 * room))
            parent = "lost" if draw(st.integers(0, 12)) == 0 else owner.span_id
        spans.append(
            TraceSpan(
                trace_id="t",
                span_id=f"s{index}",
                parent_id=parent,
                service=draw(names),
                operation=draw(st.sampled_from(["GET /trips", "SELECT ts.orders", "HTTP POST", "查询", ""])),
                start_ns=start,
                end_ns=start + length,
                error=draw(st.sampled_from([None, False, True])),
            )
        )
    return spans


def drawn_trace(spans: list[TraceSpan]) -> DrawnTrace:
    """The trace as ``tools/drawn.py`` keeps it (to the microsecond)."""
    rows = waterfall(spans)
    first, last = min(s.start_ns for s in spans), max(s.end_ns for s in spans)
    return DrawnTrace(
        line=0,
        trace_id="t",
        at=datetime(2026, 3, 1, tzinfo=UTC),
        trace_ms=round((last - first) / MS, 3),
        spans=[
            DrawnSpan(
                parent=r.parent,
                depth=r.depth,
                service=r.service,
                operation=r.operation,
                start=round(r.start_ms, 3),
                duration=round(r.duration_ms, 3),
                own=round(r.self_ms, 3),
                error=r.error,
                critical=[(round(a, 3), round(b, 3)) for a, b in r.critical],
            )
            for r in rows
        ],
    )


def rows_of(svg: str) -> list[ET.Element]:
    return ET.fromstring(svg).findall(f"{SVG}g")


def shares(rect: ET.Element) -> tuple[float, float]:
    found = dict(re.findall(r"--(\w+):([0-9.]+)", rect.get("style", "")))
    return float(found["s"]), float(found["w"])


# --- the rows ---------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(span_trees())
def test_every_span_is_one_row_under_its_parent_and_the_path_covers_the_root(spans: list[TraceSpan]) -> None:
    rows = waterfall(spans)
    assert len(rows) == len(spans)
    assert Counter((r.service, r.operation, round(r.duration_ms, 6)) for r in rows) == Counter(
        (s.service, s.operation, round(s.duration_ns / MS, 6)) for s in spans
    )
    for index, row in enumerate(rows):
        if row.parent is None:
            assert row.depth == 0
        else:
            assert row.parent < index and row.depth == rows[row.parent].depth + 1
            parent = rows[row.parent]
            assert parent.start_ms <= row.start_ms + 1e-9  # a child starts inside its parent
        assert row.start_ms >= 0 and 0 <= row.self_ms <= row.duration_ms + 1e-9
        for a, b in row.critical:
            assert row.start_ms - 1e-9 <= a < b <= row.start_ms + row.duration_ms + 1e-9
    # the critical path's stretches are the hops' shares, and together the root's duration
    path = critical_path(spans)
    assert sum(r.critical_ms for r in rows) == pytest.approx(sum(h.critical_ms for h in path), abs=1e-6)
    assert sorted(round(r.critical_ms, 6) for r in rows if r.critical) == sorted(round(h.critical_ms, 6) for h in path)
    stretches = sorted(s for r in rows for s in r.critical)
    assert all(a[1] <= b[0] + 1e-9 for a, b in pairwise(stretches)), "no overlap"


@settings(max_examples=150, deadline=None)
@given(span_trees())
def test_self_time_is_what_the_children_leave_uncovered(spans: list[TraceSpan]) -> None:
    owns = self_times(TimedSpan(s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in spans)
    for span in spans:
        kids = [(c.start_ns, c.end_ns) for c in spans if c.parent_id == span.span_id]
        gaps = uncovered(span.start_ns, span.end_ns, kids)
        assert sum(b - a for a, b in gaps) == owns[span.span_id]
        assert all(span.start_ns <= a < b <= span.end_ns for a, b in gaps)


def test_a_cycle_of_parent_ids_is_drawn_once_each_and_ends() -> None:
    spans = [
        TraceSpan(trace_id="t", span_id="a", parent_id="b", service="x", operation="o", start_ns=0, end_ns=10),
        TraceSpan(trace_id="t", span_id="b", parent_id="a", service="y", operation="o", start_ns=2, end_ns=8),
    ]
    rows = waterfall(spans)
    assert [r.service for r in rows] == ["x", "y"] and rows[1].parent == 0


# --- the waterfall --------------------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(span_trees(), st.sampled_from(["en", "zh"]))
def test_every_span_is_drawn_once_inside_the_track_with_the_critical_path_marked(
    spans: list[TraceSpan], lang: str
) -> None:
    trace = drawn_trace(spans)
    svg = waterfall_svg(trace, WORDS[lang], chart_id="w", title="t")
    root = ET.fromstring(svg)
    height = float(root.get("height", "0"))
    assert root.get("role") == "img" and root.find(f"{SVG}title") is not None and root.find(f"{SVG}desc") is not None
    assert "nan" not in svg.lower().replace("dominant", "")
    rows = rows_of(svg)
    assert len(rows) == len(trace.spans)
    for index, (row, span) in enumerate(zip(rows, trace.spans, strict=True)):
        assert row.get("data-row") == str(index) and row.get("data-service") == span.service
        bars = [r for r in row.iter(f"{SVG}rect") if "wf-span" in r.get("class", "")]
        assert len(bars) == 1, "each span one bar"
        for rect in row.iter(f"{SVG}rect"):
            start, width = shares(rect)
            assert start >= 0 and start + width <= 1 + 1e-4, "inside the track"
            x, w = float(rect.get("x", "").rstrip("%")), float(rect.get("width", "").rstrip("%"))
            assert x >= 100 * FALLBACK_LABEL - 1e-3 and x + w <= 100 + 1e-3
            y, h = float(rect.get("y", "")), float(rect.get("height", ""))
            assert y >= AXIS - 4 and y + h <= height
        marked = [r for r in row.iter(f"{SVG}rect") if r.get("class") == "wf-cp"]
        assert ("wf-critical" in row.get("class", "")) == bool(span.critical) == bool(marked)
        total = max(trace.trace_ms, *(s.start + s.duration for s in trace.spans)) or 1.0
        assert sum(shares(r)[1] for r in marked) * total == pytest.approx(span.critical_ms, abs=1e-3 * total + 1e-6)
        drawn_self = sum(shares(r)[1] for r in row.iter(f"{SVG}rect") if r.get("class") == "wf-self") * total
        children = [(c.start, c.start + c.duration) for c in trace.spans if c.parent == index]
        own = sum(b - a for a, b in uncovered(span.start, span.start + span.duration, children))
        assert drawn_self == pytest.approx(own, abs=1e-3 * total + 1e-3), "self time visible as solid stretches"
        assert ("wf-error" in row.get("class", "")) == bool(span.error)
        assert (row.find(f"{SVG}title") is not None) and span.service in (row.findtext(f"{SVG}title") or "")


@settings(max_examples=80, deadline=None)
@given(span_trees())
def test_the_label_columns_hold_their_labels(spans: list[TraceSpan]) -> None:
    trace = drawn_trace(spans)
    labels, layout = _labels(trace)
    assert layout.narrow <= NARROW_LABEL + 1 and layout.wide <= WIDE_LABEL + 1
    assert layout.height == AXIS + ROW * len(spans) + 4
    for span, label in zip(trace.spans, labels, strict=True):
        indent = 6 * min(span.depth, 10)
        assert indent + text_width(label.narrow) <= layout.narrow
        operation = 6 + text_width(label.operation) if label.operation else 0
        assert indent + text_width(label.wide) + operation <= layout.wide
        for service in (label.wide, label.narrow):
            assert service == span.service or (service.endswith("…") and span.service.startswith(service[:-1]))
        assert text_width(label.wide) >= text_width(label.narrow)


def test_a_long_name_is_shortened_to_its_room_and_han_characters_count_wide() -> None:
    assert shortened("ts-verification-code-service", 1000) == "ts-verification-code-service"
    cut = shortened("ts-verification-code-service", 100)
    assert cut.endswith("…") and text_width(cut) <= 100
    assert text_width("支付") > text_width("ab") * 1.5


def test_the_axis_ticks_are_round_ms_within_the_trace() -> None:
    trace = drawn_trace(
        [TraceSpan(trace_id="t", span_id="r", parent_id="", service="a", operation="o", start_ns=0, end_ns=1042 * MS)]
    )
    root = ET.fromstring(waterfall_svg(trace, WORDS["en"], chart_id="w", title="t"))
    ticks = [t.text for t in root.iter(f"{SVG}text") if "wf-tick" in t.get("class", "")]
    assert ticks == ["0ms", "500ms", "1000ms"]


# --- the records kept with a query_traces call ---------------------------------------------------


@pytest.fixture
def env(tmp_path: Path) -> EmbeddedEnvironment:
    """An hour of baseline, then ten minutes in which api's own work grew ten times and 1 span in
    4 fails (``tests/test_query_traces.py``'s shop)."""
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


def test_the_kept_trace_and_graph_are_the_outputs_own_and_mark_the_service_that_grew(
    env: EmbeddedEnvironment,
) -> None:
    status, text, evidence = run(env, service="api")
    assert status == "ok" and isinstance(evidence, TraceEvidence)
    drawn = drawn_records("query_traces", text, [evidence])
    assert drawn is not None and drawn.omitted == 0
    lines = text.split("\n")
    slowest = evidence.slowest[0]
    assert drawn.trace is not None and lines[drawn.trace.line] == slowest.line
    assert drawn.trace.path_line is not None and lines[drawn.trace.path_line] == slowest.path_line
    assert [(s.service, s.operation) for s in drawn.trace.spans] == [
        ("gateway", "GET /trips"),
        ("api", "queryTrips"),
        ("db", "SELECT"),
    ]
    assert [s.parent for s in drawn.trace.spans] == [None, 0, 1]
    assert sum(s.critical_ms for s in drawn.trace.spans) == pytest.approx(drawn.trace.trace_ms, abs=0.01)
    assert drawn.graph is not None
    for call in drawn.graph.calls:
        assert lines[call.line] == next(
            e.line for e in evidence.calls if (e.caller, e.callee) == (call.caller, call.callee)
        )
    by_service = {s.service: s for s in drawn.graph.services}
    assert by_service["api"].suspect, "api's own time grew ×10 and it fails"
    assert not by_service["db"].suspect, "db only kept its pace"
    assert lines[by_service["api"].line].startswith("api self time p90:")
    # stored and read back as the pages read it
    again = read_drawn(stored_form(drawn))
    assert again == drawn


def test_the_kept_names_are_the_redacted_ones() -> None:
    spans = [
        TraceSpan(
            trace_id="t",
            span_id="r",
            parent_id="",
            service="api",
            operation="GET /x?token=s3cr3t",
            start_ns=0,
            end_ns=MS,
        ),
    ]
    from veridiag.tools.records import SlowTrace

    trace = SlowTrace(
        rank=1,
        trace_id="t",
        at=T0,
        span_ms=1,
        trace_ms=1,
        line="trace 1 t",
        path_line="trace 1 path",
        spans=waterfall(spans),
    )
    evidence = TraceEvidence(
        service="api", start=T0, end=T0, baseline_start=T0, baseline_end=T0, slowest=[trace], line="window"
    )
    drawn = drawn_records(
        "query_traces", "window\ntrace 1 t\ntrace 1 path", [evidence], clean=lambda s: s.replace("s3cr3t", "[REDACTED]")
    )
    assert drawn is not None and drawn.trace is not None
    assert drawn.trace.spans[0].operation == "GET /x?token=[REDACTED]"


def test_a_trace_over_the_cap_keeps_its_first_rows_and_counts_the_rest() -> None:
    from veridiag.tools import drawn as drawn_module
    from veridiag.tools.records import SlowTrace

    spans = [
        TraceSpan(
            trace_id="t",
            span_id=f"s{i}",
            parent_id="s0" if i else "",
            service="a",
            operation="o",
            start_ns=i,
            end_ns=10**9,
        )
        for i in range(drawn_module.MAX_SPANS + 7)
    ]
    trace = SlowTrace(
        rank=1, trace_id="t", at=T0, span_ms=1, trace_ms=1, line="trace 1 t", path_line="p", spans=waterfall(spans)
    )
    evidence = TraceEvidence(
        service="a", start=T0, end=T0, baseline_start=T0, baseline_end=T0, slowest=[trace], line="w"
    )
    drawn = drawn_records("query_traces", "w\ntrace 1 t\np", [evidence])
    assert drawn is not None and drawn.trace is not None and read_drawn(stored_form(drawn)) is not None
    assert len(drawn.trace.spans) == drawn_module.MAX_SPANS and drawn.trace.more == 7


# --- the call graph --------------------------------------------------------------------------


@st.composite
def graphs(draw: st.DrawFn) -> ServiceGraph:
    services = [f"svc-{i}" for i in range(draw(st.integers(1, 12)))]
    pairs = draw(st.lists(st.tuples(st.sampled_from(services), st.sampled_from(services)), max_size=30, unique=True))
    edges = [
        GraphEdge(
            caller=a,
            callee=b,
            calls=draw(st.integers(0, 500)),
            errors=draw(st.none() | st.integers(0, 5)),
            invocation_id=1,
        )
        for a, b in pairs
        if a != b
    ]
    nodes = [GraphNode(service=s, suspect=draw(st.booleans())) for s in services]
    return ServiceGraph(nodes=nodes, edges=edges)


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_the_outline_lists_every_call_once_and_every_service(graph: ServiceGraph) -> None:
    rows = outline(graph)
    listed = [(r.edge.caller, r.edge.callee) for r in rows if r.edge is not None]
    assert sorted(listed) == sorted((e.caller, e.callee) for e in graph.edges)
    first = [r.service for r in rows if not r.again]
    assert sorted(first) == sorted(n.service for n in graph.nodes), "each service once in full"
    for index, row in enumerate(rows):
        if row.edge is not None:
            assert row.parent is not None and row.parent < index and rows[row.parent].service == row.edge.caller
            assert row.service == row.edge.callee and row.depth == rows[row.parent].depth + 1
    svg = graph_svg(graph, WORDS["en"], chart_id="g", title="graph")
    root = ET.fromstring(svg)
    groups = root.findall(f"{SVG}g")
    assert len(groups) == len(rows)
    suspects = {g.get("data-service") for g in groups if "sg-suspect" in g.get("class", "")}
    assert suspects == {n.service for n in graph.nodes if n.suspect}
    for group in groups:
        box, label = group.find(f"{SVG}rect"), group.find(f"{SVG}text")
        assert box is not None and label is not None
        # the box holds its label as the estimate measures it
        assert float(label.get("x", "0")) + text_width(label.text or "") <= float(box.get("x", "0")) + float(
            box.get("width", "0")
        )


def test_merged_graphs_keep_the_first_statement_of_an_edge_and_any_suspect() -> None:
    first = DrawnGraph(
        service="api",
        calls=[
            DrawnCall(line=3, caller="gateway", callee="api", calls=40),
            DrawnCall(line=4, caller="api", callee="db", calls=80),
        ],
        services=[DrawnService(line=2, service="api", self_p90=50, baseline_self_p90=5, factor=10, suspect=True)],
    )
    second = DrawnGraph(
        service="db",
        calls=[DrawnCall(line=3, caller="api", callee="db", calls=79, errors=2)],
        services=[DrawnService(line=2, service="db", self_p90=10, baseline_self_p90=10, factor=1)],
    )
    graph = merged_graph([(4, first), (9, second)])
    assert [(e.caller, e.callee, e.calls, e.invocation_id) for e in graph.edges] == [
        ("gateway", "api", 40, 4),
        ("api", "db", 80, 4),
    ]
    assert graph.suspects == ["api"]
    nodes = {n.service: n for n in graph.nodes}
    assert nodes["db"].invocation_ids == [4, 9] and nodes["db"].self_p90 == 10
    svg = graph_svg(graph, WORDS["zh"], chart_id="g", title="服务调用图")
    desc = ET.fromstring(svg).findtext(f"{SVG}desc") or ""
    assert "自身耗时或错误上升: api" in desc and "gateway → api 40 次调用" in desc


def test_an_older_reader_of_drawn_records_without_spans_still_reads_them() -> None:
    """The kinds added for spans are optional: records stored before them read as they did."""
    stored = stored_form(Drawn())
    assert stored == {"version": 1}
    assert read_drawn(stored) == Drawn()
    assert math.isclose(1.0, 1.0)


def test_a_suspect_service_is_marked_in_the_waterfall_and_its_column_holds_the_mark() -> None:
    spans = [
        TraceSpan(
            trace_id="t", span_id="g", parent_id="", service="gateway", operation="GET", start_ns=0, end_ns=9 * MS
        ),
        TraceSpan(
            trace_id="t", span_id="d", parent_id="g", service="db", operation="SELECT", start_ns=MS, end_ns=8 * MS
        ),
    ]
    trace = drawn_trace(spans)
    rows = rows_of(waterfall_svg(trace, WORDS["en"], chart_id="w", title="t", suspects=["db"]))
    assert ["wf-suspect" in (r.get("class") or "") for r in rows] == [False, True]
    label = rows[1].find(f"{SVG}text")
    assert label is not None and "▲" in "".join(label.itertext())
    assert "own time or errors grew" in (rows[1].findtext(f"{SVG}title") or "")
    plain, _ = _labels(trace)
    marked, layout = _labels(trace, ["db"])
    assert marked[1].narrow == "db ▲" and plain[1].narrow == "db"
    assert layout.narrow >= 6 + text_width("db ▲") + 8


def test_a_trace_read_by_its_id_is_kept_to_draw_tied_to_the_line_naming_it(env: EmbeddedEnvironment) -> None:
    """``query_traces trace_id=…`` (the trace a log line names) has no ranked list: its records
    tie the trace to the head line naming it, and its path to the path line."""
    trace = "ab" * 16
    env.add_spans(
        trace_rows(trace, T0 + timedelta(minutes=3), api_ms=50, db_ms=10, error=True), source="f", reach_key="f2"
    )
    status, text, evidence = run(env, service="api", trace_id=trace)
    assert status == "ok" and evidence is not None and evidence.trace_id == trace
    drawn = drawn_records("query_traces", text, [evidence])
    assert drawn is not None and drawn.omitted == 0 and drawn.trace is not None, text
    lines = text.split("\n")
    assert lines[drawn.trace.line] == evidence.line and trace in lines[drawn.trace.line]
    assert drawn.trace.path_line is not None and lines[drawn.trace.path_line] == evidence.slowest[0].path_line
    assert [s.service for s in drawn.trace.spans] == ["gateway", "api", "db"]
    assert [s.error for s in drawn.trace.spans] == [None, True, None]
    assert read_drawn(stored_form(drawn)) == drawn
