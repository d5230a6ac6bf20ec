"""Span figures as server-side SVG (issue 29 item 4): a trace's waterfall and the service call
graph, pure functions over the records ``query_traces`` kept to draw by (``tools/drawn.py``),
no JavaScript, like ``charts.py``.

**Legible at any width.** A chart scaled into a phone's width shrinks its text with it; these
two are drawn without a ``viewBox``, text at its own size. The waterfall's label column is as
wide as its longest label (the server estimates it, ``label_width``) and its bars are placed by
CSS as shares of what remains (``--s`` start and ``--w`` width, each 0–1 of the trace; the
attributes hold the same shares of a fixed split for a reader without the stylesheet). Where
the figure is narrow (a phone, the claim panel) a container query shows the services without
their operations, in a narrower column. The call graph is an outline — each service under its
caller, each call once, a service met again named as seen above — so it reads top-down in any
width; calls are a column at its right edge.

**Colours** are CSS classes (``workbench.css``): a service's colour ``wf-c0`` … ``wf-c7`` in
the order it first appears, one value for light and one for dark, the legend's swatches of the
same classes. Nothing is told by colour alone: the critical path is a line of ink over its
stretches and its labels are bold, self time is the solid part of a bar (the faded part is time
spent waiting on the span's children), an error has a mark, a suspect its badge.
"""

from __future__ import annotations

import math
import unicodedata
from collections import defaultdict
from collections.abc import Collection, Sequence

from markupsafe import Markup, escape
from pydantic import BaseModel

from veridiag.analysis.traces import uncovered
from veridiag.api.charts import value_ticks
from veridiag.text.render import format_value, iso
from veridiag.tools.drawn import DrawnCall, DrawnGraph, DrawnService, DrawnSpan, DrawnTrace

#: Row and axis heights (px); label indentation per level, the levels indented at most.
ROW, BAR, AXIS = 18, 10, 22
INDENT, MAX_INDENT = 6, 10
#: Estimated width of one character at the figures' 11 px (a Han character: one em).
CHAR = 6.8
WIDE_CHAR = 11.5
#: The label column in each layout, at most (px); names are shortened with "…" to fit.
WIDE_LABEL, NARROW_LABEL = 420, 200
#: The split a reader without the stylesheet sees: labels in the first share of the width.
FALLBACK_LABEL = 0.35
#: Service colours before they repeat (the label still names each).
PALETTE = 8
#: The call graph: row height, indentation per level, the levels indented at most.
GRAPH_ROW, GRAPH_INDENT, GRAPH_MAX_INDENT = 26, 16, 5


class TraceWords(BaseModel):
    """The words the span figures write, in the page's language (``i18n.py``'s ``trace_*`` keys)."""

    waterfall: str
    by_id: str
    spans: str
    total: str
    critical: str
    own: str
    waiting: str
    error: str
    more: str
    start: str
    longest_self: str
    graph: str
    services: str
    edges: str
    calls: str
    errors: str
    suspect: str
    seen_above: str
    self_p90: str
    baseline: str
    no_calls: str


def text_width(text: str) -> float:
    """What ``text`` is estimated to take at 11 px (generous, so a label's box holds it)."""
    return sum(WIDE_CHAR if unicodedata.east_asian_width(c) in "WF" else CHAR for c in text)


def shortened(text: str, room: float) -> str:
    """``text``, or as much of it as fits ``room`` px with "…"."""
    if text_width(text) <= room:
        return text
    kept = ""
    for char in text:
        if text_width(kept + char + "…") > room:
            break
        kept += char
    return kept + "…"


def _num(value: float) -> str:
    return f"{value:.1f}" if math.isfinite(value) else "0"


def _share(value: float) -> str:
    """A share of the trace (0–1), as CSS reads it."""
    return f"{min(1.0, max(0.0, value)):.5f}" if math.isfinite(value) else "0"


def service_colours(services: Sequence[str]) -> dict[str, int]:
    """Each service's colour class index, in the order it first appears."""
    found: dict[str, int] = {}
    for service in services:
        found.setdefault(service, len(found) % PALETTE)
    return found


class WaterfallLayout(BaseModel):
    """Where the waterfall's labels end in each layout (px) and how tall it is."""

    wide: float
    narrow: float
    height: int


class SpanLabel(BaseModel):
    """A span's label as each layout draws it: the service (shortened to the narrow column's cap
    there, to half the wide one's in it) and, in the wide layout, the operation."""

    wide: str
    narrow: str
    operation: str


#: After a suspect service's name, in its rows and in the call graph.
SUSPECT_MARK = " ▲"


def _labels(trace: DrawnTrace, suspects: Collection[str] = ()) -> tuple[list[SpanLabel], WaterfallLayout]:
    """Each span's label as drawn and the two columns' widths: the wide one holds service and
    operation, the narrow one the service; a suspect's service marked."""
    labels, wide, narrow = [], 0.0, 0.0
    for span in trace.spans:
        indent = INDENT * min(span.depth, MAX_INDENT)
        mark = SUSPECT_MARK if span.service in suspects else ""
        short = shortened(span.service, NARROW_LABEL - indent - 8 - text_width(mark)) + mark
        full = shortened(span.service, WIDE_LABEL / 2) + mark
        room = WIDE_LABEL - indent - 8 - text_width(full) - 6
        operation = shortened(span.operation, room) if room > 3 * CHAR else ""
        labels.append(SpanLabel(wide=full, narrow=short, operation=operation))
        narrow = max(narrow, indent + text_width(short) + 8)
        wide = max(wide, indent + text_width(full) + (6 + text_width(operation) if operation else 0) + 8)
    height = AXIS + ROW * len(trace.spans) + 4
    return labels, WaterfallLayout(wide=math.ceil(wide), narrow=math.ceil(narrow), height=height)


def _rect(css: str, start: float, width: float, y: float, height: float, *, extra: str = "") -> str:
    """A bar at ``start`` for ``width`` (shares of the trace): CSS places it in the track; the
    attributes place it in the fallback split."""
    start = min(1.0, max(0.0, start))
    width = min(1.0 - start, max(0.0, width))
    x = 100 * (FALLBACK_LABEL + (1 - FALLBACK_LABEL) * start)
    w = 100 * (1 - FALLBACK_LABEL) * width
    return (
        f'<rect class="{css}" x="{x:.3f}%" width="{w:.3f}%" y="{_num(y)}" height="{_num(height)}" '
        f'style="--s:{_share(start)};--w:{_share(width)}"{extra}/>'
    )


def waterfall_svg(
    trace: DrawnTrace, words: TraceWords, *, chart_id: str, title: str, suspects: Collection[str] = ()
) -> Markup:
    """The trace's spans, one row each in the order Jaeger lists them, indented by depth: a bar
    from its start for its duration — solid where it works itself, faded where it waits on its
    children — the critical path's stretches a line of ink over their bars, its labels bold; a
    suspect service's name marked ▲ (``suspects``: the call graph's); a time axis in ms from the
    trace's start."""
    labels, layout = _labels(trace, suspects)
    total = max([trace.trace_ms, *(s.start + s.duration for s in trace.spans)], default=0.0)
    scale = total if total > 0 else 1.0
    colours = service_colours([s.service for s in trace.spans])
    children: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for span in trace.spans:
        if span.parent is not None:
            children[span.parent].append((span.start, span.start + span.duration))
    body = _time_axis(total, layout.height)
    for index, (span, label) in enumerate(zip(trace.spans, labels, strict=True)):
        top = AXIS + index * ROW
        bar_y = top + (ROW - BAR) / 2
        on_path = bool(span.critical)
        css = (
            f"wf-row wf-c{colours[span.service]}"
            + (" wf-critical" if on_path else "")
            + (" wf-error" if span.error else "")
        )
        suspect = span.service in suspects
        css += " wf-suspect" if suspect else ""
        said = _row_title(span, words) + (f", {words.suspect}" if suspect else "")
        parts = [f"<title>{escape(said)}</title>"]
        indent = INDENT * min(span.depth, MAX_INDENT)
        op = f'<tspan class="wf-op" dx="6">{escape(label.operation)}</tspan>' if label.operation else ""
        service = (
            f'<tspan class="wf-svc">{escape(label.wide)}</tspan>'
            if label.wide == label.narrow
            else f'<tspan class="wf-svc wf-wide">{escape(label.wide)}</tspan>'
            f'<tspan class="wf-svc wf-narrow">{escape(label.narrow)}</tspan>'
        )
        parts.append(
            f'<text class="wf-label" x="{indent}" y="{_num(top + ROW / 2)}" dominant-baseline="central">'
            f"{service}{op}</text>"
        )
        end = span.start + span.duration
        parts.append(_rect("wf-span", span.start / scale, span.duration / scale, bar_y, BAR, extra=' rx="1.5"'))
        for a, b in uncovered(span.start, end, children.get(index, [])):
            parts.append(_rect("wf-self", a / scale, (b - a) / scale, bar_y, BAR))
        for a, b in span.critical:
            parts.append(_rect("wf-cp", a / scale, (b - a) / scale, bar_y + BAR / 2 - 1.5, 3))
        if span.error:
            parts.append(_rect("wf-err", end / scale, 0, bar_y - 2, BAR + 4))
        body.append(
            f'<g class="{css}" data-service="{escape(span.service)}" data-depth="{span.depth}" '
            f'data-row="{index}">' + "".join(parts) + "</g>"
        )
    style = f"--wf-wide:{_num(layout.wide)}px;--wf-narrow:{_num(layout.narrow)}px"
    description = _waterfall_description(trace, words)
    named = f"{title}: {description}"
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="waterfall" id="{escape(chart_id)}" width="100%" '
        f'height="{layout.height}" role="img" aria-label="{escape(named)}" font-size="11" '
        f'fill="currentColor" style="{style}">'
        f"<title>{escape(title)}</title><desc>{escape(description)}</desc>" + "".join(body) + "</svg>"
    )


def _time_axis(total: float, height: int) -> list[str]:
    """Round ms from the trace's start along the top, a faint line down from each."""
    if total <= 0:
        return []
    _lo, _hi, ticks = value_ticks(0.0, total, 4)
    marks = []
    for number, tick in enumerate(t for t in ticks if 0 <= t <= total * (1 + 1e-9)):
        share = tick / total
        anchor = "start" if share < 0.08 else ("end" if share > 0.92 else "middle")
        odd = " wf-tick-odd" if number % 2 else ""
        marks.append(
            _rect("wf-grid", share, 0, AXIS - 4, height - AXIS)
            + f'<text class="wf-tick{odd}" x="{100 * (FALLBACK_LABEL + (1 - FALLBACK_LABEL) * share):.3f}%" '
            f'y="{AXIS - 8}" text-anchor="{anchor}" style="--s:{_share(share)}">'
            f"{escape(format_value(tick, 'ms'))}</text>"
        )
    return marks


def _ms(value: float) -> str:
    return format_value(round(value, 2), "ms")


def _row_title(span: DrawnSpan, words: TraceWords) -> str:
    said = (
        f"{span.service} {span.operation}: {words.start} +{_ms(span.start)}, {_ms(span.duration)}, "
        f"{words.own} {_ms(span.own)}"
    )
    if span.critical:
        said += f", {words.critical} {_ms(sum(b - a for a, b in span.critical))}"
    if span.error:
        said += f", {words.error}"
    return said


def _waterfall_description(trace: DrawnTrace, words: TraceWords) -> str:
    """The key numbers: how many spans, how long, when; the critical path's longest stretches
    and the span with the most self time."""
    parts = [f"{len(trace.spans) + trace.more} {words.spans}, {words.total} {_ms(trace.trace_ms)}, {iso(trace.at)}"]
    if trace.more:
        parts.append(f"{trace.more} {words.more}")
    path = sorted((s for s in trace.spans if s.critical), key=lambda s: -sum(b - a for a, b in s.critical))[:3]
    if path:
        parts.append(
            f"{words.critical}: "
            + ", ".join(f"{s.service} {s.operation} {_ms(sum(b - a for a, b in s.critical))}" for s in path)
        )
    if trace.spans:
        heaviest = max(trace.spans, key=lambda s: s.own)
        parts.append(f"{words.longest_self}: {heaviest.service} {heaviest.operation} {_ms(heaviest.own)}")
    return "; ".join(parts)


# -- the call graph -----------------------------------------------------------------------------


class GraphEdge(BaseModel):
    caller: str
    callee: str
    calls: int
    errors: int | None = None
    baseline_calls: int = 0
    baseline_errors: int | None = None
    invocation_id: int


class GraphNode(BaseModel):
    service: str
    self_p90: float | None = None
    baseline_self_p90: float | None = None
    factor: float | None = None
    errors: float | None = None
    baseline_errors: float | None = None
    suspect: bool = False
    #: The invocations that measured it or named it.
    invocation_ids: list[int] = []


class ServiceGraph(BaseModel):
    """The calls of every cited ``query_traces`` invocation as one graph: an edge stated twice
    keeps its first statement (the earlier invocation), a service is a suspect when any says so."""

    nodes: list[GraphNode]
    edges: list[GraphEdge]

    @property
    def suspects(self) -> list[str]:
        return [n.service for n in self.nodes if n.suspect]


def merged_graph(graphs: Sequence[tuple[int, DrawnGraph]]) -> ServiceGraph:
    """One graph of several invocations' (``(invocation id, graph)``, in invocation order)."""
    nodes: dict[str, GraphNode] = {}
    edges: dict[tuple[str, str], GraphEdge] = {}

    def node(service: str, invocation_id: int) -> GraphNode:
        found = nodes.setdefault(service, GraphNode(service=service))
        if invocation_id not in found.invocation_ids:
            found.invocation_ids.append(invocation_id)
        return found

    for invocation_id, graph in graphs:
        node(graph.service, invocation_id)
        for call in graph.calls:
            node(call.caller, invocation_id)
            node(call.callee, invocation_id)
            edges.setdefault((call.caller, call.callee), _edge(call, invocation_id))
        for measured in graph.services:
            _measure(node(measured.service, invocation_id), measured)
    return ServiceGraph(nodes=list(nodes.values()), edges=list(edges.values()))


def _edge(call: DrawnCall, invocation_id: int) -> GraphEdge:
    return GraphEdge(
        caller=call.caller,
        callee=call.callee,
        calls=call.calls,
        errors=call.errors,
        baseline_calls=call.baseline_calls,
        baseline_errors=call.baseline_errors,
        invocation_id=invocation_id,
    )


def _measure(node: GraphNode, measured: DrawnService) -> None:
    if node.self_p90 is None and measured.self_p90 is not None:
        node.self_p90, node.baseline_self_p90 = measured.self_p90, measured.baseline_self_p90
        node.factor = measured.factor
    if node.errors is None and measured.errors is not None:
        node.errors, node.baseline_errors = measured.errors, measured.baseline_errors
    node.suspect = node.suspect or measured.suspect


class OutlineRow(BaseModel):
    """One row of the graph's outline: a service under the caller whose call brought it there
    (``edge``; None for a service nobody here calls), at ``depth``; ``again`` when it was
    listed above (its calls are there)."""

    service: str
    depth: int
    edge: GraphEdge | None = None
    again: bool = False
    #: The row of its caller.
    parent: int | None = None


def outline(graph: ServiceGraph) -> list[OutlineRow]:
    """Every service once as a row and every call once (a service met again is a row that says
    so, without its calls): from the services nobody here calls, callees by most calls."""
    calls: dict[str, list[GraphEdge]] = defaultdict(list)
    for call in graph.edges:
        calls[call.caller].append(call)
    for listed in calls.values():
        listed.sort(key=lambda e: (-e.calls, e.callee))
    called = {e.callee for e in graph.edges}
    order = [n.service for n in graph.nodes]
    starts = [s for s in order if s not in called] + order  # then whatever a cycle left out
    rows: list[OutlineRow] = []
    shown: set[str] = set()
    for start in starts:
        if start in shown:
            continue
        stack: list[tuple[str, int, GraphEdge | None, int | None]] = [(start, 0, None, None)]
        while stack:
            service, depth, edge, parent = stack.pop()
            again = service in shown
            rows.append(OutlineRow(service=service, depth=depth, edge=edge, again=again, parent=parent))
            if again:
                continue
            shown.add(service)
            index = len(rows) - 1
            stack += [(e.callee, depth + 1, e, index) for e in reversed(calls.get(service, []))]
    return rows


def _edge_said(edge: GraphEdge, words: TraceWords) -> str:
    said = f"{edge.calls} {words.calls}"
    if edge.errors:
        said += f", {edge.errors} {words.errors}"
    return said


def graph_svg(graph: ServiceGraph, words: TraceWords, *, chart_id: str, title: str) -> Markup:
    """The outline: each service a box under its caller, joined by a line from the caller; the
    calls (and errors) of that edge at the right edge; a suspect's box drawn heavy with a badge."""
    rows = outline(graph)
    nodes = {n.service: n for n in graph.nodes}
    colours = service_colours([n.service for n in graph.nodes])
    height = GRAPH_ROW * len(rows) + 6
    body = []
    for index, row in enumerate(rows):
        node = nodes[row.service]
        mid = index * GRAPH_ROW + GRAPH_ROW / 2 + 3
        left = GRAPH_INDENT * min(row.depth, GRAPH_MAX_INDENT) + 2
        if row.parent is not None:
            parent_x = GRAPH_INDENT * min(rows[row.parent].depth, GRAPH_MAX_INDENT) + 2 + 6
            top = row.parent * GRAPH_ROW + GRAPH_ROW / 2 + 3 + 9
            body.append(
                f'<path class="sg-link" d="M{_num(parent_x)} {_num(top)}V{_num(mid)}H{_num(left)}" fill="none"/>'
            )
        suspect = node.suspect and not row.again
        badge = f"{SUSPECT_MARK} {words.suspect}" if suspect else ""
        name = row.service + (f" ({words.seen_above})" if row.again else "")
        shown = shortened(name, NARROW_LABEL + 60 - left) + badge
        width = text_width(shown) + 12
        css = (
            f"sg-node wf-c{colours[row.service]}"
            + (" sg-suspect" if suspect else "")
            + (" sg-again" if row.again else "")
        )
        said = _node_title(node, row, words)
        calls = (
            f'<text class="sg-calls" x="100%" dx="-4" y="{_num(mid)}" text-anchor="end" '
            f'dominant-baseline="central">{escape(_edge_said(row.edge, words))}</text>'
            if row.edge is not None
            else ""
        )
        flag = ' data-suspect="true"' if suspect else ""
        body.append(
            f'<g class="{css}" data-service="{escape(row.service)}"{flag}><title>{escape(said)}</title>'
            f'<rect class="sg-box" x="{_num(left)}" y="{_num(mid - 9)}" width="{_num(width)}" height="18" rx="4"/>'
            f'<text class="sg-label" x="{_num(left + 6)}" y="{_num(mid)}" dominant-baseline="central">'
            f"{escape(shown)}</text>{calls}</g>"
        )
    description = _graph_description(graph, words)
    label = f"{title}: {description}"
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="service-graph" id="{escape(chart_id)}" width="100%" '
        f'height="{height}" role="img" aria-label="{escape(label)}" font-size="11" fill="currentColor">'
        f"<title>{escape(title)}</title><desc>{escape(description)}</desc>" + "".join(body) + "</svg>"
    )


def _node_title(node: GraphNode, row: OutlineRow, words: TraceWords) -> str:
    parts = [node.service]
    if row.edge is not None:
        parts.append(f"{row.edge.caller} → {row.edge.callee}: {_edge_said(row.edge, words)}")
    if node.self_p90 is not None:
        factor = f" (×{node.factor:.2f})" if node.factor is not None else ""
        base = f", {words.baseline} {_ms(node.baseline_self_p90)}" if node.baseline_self_p90 is not None else ""
        parts.append(f"{words.self_p90} {_ms(node.self_p90)}{base}{factor}")
    if node.suspect:
        parts.append(words.suspect)
    return "; ".join(parts)


def _graph_description(graph: ServiceGraph, words: TraceWords) -> str:
    parts = [f"{len(graph.nodes)} {words.services}, {len(graph.edges)} {words.edges}"]
    if graph.suspects:
        parts.append(f"{words.suspect}: " + ", ".join(graph.suspects))
    for edge in sorted(graph.edges, key=lambda e: -e.calls)[:5]:
        parts.append(f"{edge.caller} → {edge.callee} {_edge_said(edge, words)}")
    if not graph.edges:
        parts.append(words.no_calls)
    return "; ".join(parts)
