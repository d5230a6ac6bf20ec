"""The ``query_traces`` tool: a service's spans in a window against its own spans before it.

A trace backend (``tools/backends`` ``TraceBackend``) reads; ``analysis/traces.py`` computes
self times, percentiles and critical paths; this module states them, one fact a line, every
figure of the service on a line that names it, times in UTC ISO and units written
(``text/render.py``), so a claim quotes a line and the Gatekeeper finds its numbers there:

    query_traces service=ts-travel-service start=… end=…
    window 2023-01-29T10:00:00Z – 2023-01-29T10:10:00Z; baseline 2023-01-29T09:00:00Z – …
    ts-travel-service spans: 412 in the window, 1630 in the baseline
    ts-travel-service self time p90: 231.5ms in the window, 12.3ms in the baseline (×18.82)
    call ts-gateway-service → ts-travel-service: 40 calls, errors not stated in the window; …
    callee ts-route-service self time p90: 3.1ms in the window, 3ms in the baseline (×1.03)
    trace 1 f223e6… at 2023-01-29T10:04:51Z: ts-travel-service span 862.63ms, trace 863ms
    trace 1 critical path: ts-gateway-service:/* 0.9ms (self 0.9ms) → ts-travel-service:… 650ms (self 650ms)
    trace 1 most time on its critical path: ts-travel-service:… 650ms of 862.63ms (self 650ms)

A hop is one service and operation (``×n``: n spans of it on the path, times summed); its first
figure is its time on the critical path (``analysis/traces.py``), then its self time — of its
whole run, so after the span's duration when it is more than the time on the path (a span that
ran beside a sibling holding the request up); a path of more than ``MAX_HOPS`` hops shows the
ones holding it up longest.

The baseline is the service's own spans in the period just before the window, as long as the
window but at least an hour; when that holds none, the day before the window.

A backend that returns traces rather than every span (Jaeger, Tempo: ``SpanStats.traces``)
has the window line say so, since every claim about the figures quotes it: "…; every figure is
over the traces jaeger's search returned, not every span: 51 for the window (all that
matched), 200 for the baseline (its limit: more may match)". A backend that cannot be read
(``TraceReadError``) makes the call's error, naming the server and why.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from veridiag.analysis.traces import (
    CallCount,
    Hop,
    SpanFilter,
    SpanStats,
    TraceSpan,
    by_operation,
    critical_path,
    ratio,
    waterfall,
)
from veridiag.contracts.json import JsonValue
from veridiag.text.render import format_value, iso, request_line, rounded
from veridiag.tools.args import QueryTracesArgs, parse_time
from veridiag.tools.backends import TraceBackend, TraceLookup, TraceReadError, one_call
from veridiag.tools.records import CallEdge, SlowTrace, SpanFigure, TraceEvidence
from veridiag.tools.results import ToolOutput
from veridiag.tools.words import quantity

TOOL = "query_traces"
#: The baseline is at least this long, and when that holds no span, this long instead.
MIN_BASELINE = timedelta(hours=1)
WIDE_BASELINE = timedelta(hours=24)
#: Edges listed (most calls first), callees whose self time is stated, hops a path line shows.
MAX_EDGES = 12
MAX_CALLEES = 5
MAX_HOPS = 12
#: Services an error for an unknown service lists.
MAX_LISTED = 20

#: Each figure: its name, how a line names it, its unit and how it is read from a ``SpanStats``.
_FIGURES: tuple[tuple[str, str, str, Callable[[SpanStats], float | None]], ...] = (
    ("duration_p50", "duration p50", "ms", lambda s: s.duration_p50),
    ("duration_p90", "duration p90", "ms", lambda s: s.duration_p90),
    ("duration_p99", "duration p99", "ms", lambda s: s.duration_p99),
    ("self_p50", "self time p50", "ms", lambda s: s.self_p50),
    ("self_p90", "self time p90", "ms", lambda s: s.self_p90),
)


def _error(message: str, status: str = "error") -> ToolOutput:
    if status == "no_data":
        return ToolOutput(status="no_data", text=f"{TOOL}: {message}", retrieval_details={"reason": message})
    return ToolOutput(status="error", error=message, text=f"{TOOL} error: {message}")


#: A trace id as a log line states it (``TraceID: 15ee…``, ``trace_id=…``, ``"traceId": "…"``):
#: the key spellings the log importers read as a trace id, then 16 or 32 hex digits.
_TRACE_ID = re.compile(r"(?i)\btrace[_.\-]?id\b[\"']?\s*[:=]\s*[\"']?(?P<id>[0-9a-f]{32}|[0-9a-f]{16})\b")


def trace_id_in(line: str) -> str | None:
    """The trace id a log line states, if it states one."""
    found = _TRACE_ID.search(line)
    return found.group("id").lower() if found else None


def ms_text(value: float | None) -> str:
    """A figure in ms as the output writes it (``none``: the spans give none); claims word it so too."""
    return "none" if value is None else format_value(rounded(value), "ms")


def _factor(now: float | None, before: float | None) -> tuple[float | None, str]:
    found = ratio(now, before)
    return (round(found, 2), f" (×{found:.2f})") if found is not None and now else (None, "")


@dataclass(frozen=True)
class TraceQuery:
    """``query_traces`` over a trace backend; ``now`` anchors relative times."""

    backend: TraceBackend
    now: datetime

    def run(self, args: QueryTracesArgs) -> ToolOutput:
        try:
            with one_call():
                return self._run(args)
        except TraceReadError as exc:
            return _error(str(exc))

    def _run(self, args: QueryTracesArgs) -> ToolOutput:
        try:
            end = parse_time(args.end, self.now) if args.end else self.now
            start = parse_time(args.start, self.now) if args.start else end - timedelta(hours=1)
        except ValueError as exc:
            return _error(str(exc))
        if start >= end:
            return _error(f"start {iso(start)} must be before end {iso(end)}")
        if args.trace_id is not None:
            return self._one(args, args.trace_id)
        return self._read(args, SpanFilter(service=args.service, operation=args.operation, start=start, end=end))

    def _read(self, args: QueryTracesArgs, where: SpanFilter) -> ToolOutput:
        """The window's figures against the baseline's: the period just before, as long as the
        window but at least an hour — or, when that holds no span, the day before."""
        length = max(where.end - where.start, MIN_BASELINE)
        before = where.model_copy(update={"start": where.start - length, "end": where.start})
        both = getattr(self.backend, "span_figures", None)
        if callable(both):  # figures and calls in one read (a database pays per statement)
            (window, now_calls), (baseline, then_calls) = both([where, before])
        else:
            window, baseline = span_stats(self.backend, [where, before])
        if window.spans == 0:
            return self._none(args, where)
        if baseline.spans == 0 and length < WIDE_BASELINE:
            before = where.model_copy(update={"start": where.start - WIDE_BASELINE, "end": where.start})
            if callable(both):
                ((baseline, then_calls),) = both([before])
            else:
                baseline = self.backend.span_stats(before)
        calls = (now_calls, then_calls) if callable(both) else None
        return _render(args, where, before=before, window=window, baseline=baseline, backend=self.backend, calls=calls)

    def _one(self, args: QueryTracesArgs, trace_id: str) -> ToolOutput:
        """One trace whole (a log line's ``TraceID``): where it went, what the service did in it."""
        if not isinstance(self.backend, TraceLookup):
            return _error(f"the {getattr(self.backend, 'name', 'trace')} backend cannot read a trace by its id")
        spans = self.backend.trace(trace_id)
        if not spans:
            return _error(f"no span of trace {trace_id} is stored", status="no_data")
        return _render_trace(args.service, spans)

    def _none(self, args: QueryTracesArgs, where: SpanFilter) -> ToolOutput:
        """No span in the window: where the service's spans are, or that it has none."""
        what = f"{args.service} operation {args.operation!r}" if args.operation else args.service
        missing = f"no spans of {what} in {iso(where.start)} – {iso(where.end)}"
        # A backend that reads a sample says what its extent covers (``_sampled.py``).
        scope = str(getattr(self.backend, "extent_scope", "") or "")
        extent = self.backend.span_extent(args.service)
        if extent is not None:
            said = f"{args.service}'s spans start {iso(extent.first)} – {iso(extent.last)}"
            return _error(f"{missing}; {said}{' ' + scope if scope else ''}{self._lacks(args)}", status="no_data")
        known = self.backend.trace_services()
        if args.service in known:
            none = f"none of {args.service}'s spans {scope or 'elsewhere'}"
            return _error(f"{missing}; {none}{self._lacks(args)}", status="no_data")
        listed = ", ".join(known[:MAX_LISTED]) + (" …" if len(known) > MAX_LISTED else "")
        return _error(
            f"no spans of service {args.service!r}; services with spans: {listed}"
            if known
            else f"no spans of service {args.service!r}: no spans are stored"
        )

    def _lacks(self, args: QueryTracesArgs) -> str:
        """An operation the service's spans never name: the ones they do (a backend that can list them)."""
        listing = getattr(self.backend, "operations", None)
        if args.operation is None or not callable(listing):
            return ""
        try:
            known = [str(name) for name in listing(args.service)]
        except TraceReadError:
            return ""
        if not known or args.operation in known:
            return ""
        shown = ", ".join(known[:MAX_LISTED]) + (" …" if len(known) > MAX_LISTED else "")
        return f"; {args.service} has no operation {args.operation!r}; its operations: {shown}"


def span_stats(backend: TraceBackend, filters: list[SpanFilter]) -> list[SpanStats]:
    """Each filter's figures: in one read where the backend offers it (``span_stats_many``: a
    database pays per statement), else one by one."""
    many = getattr(backend, "span_stats_many", None)
    found: list[SpanStats] = list(many(filters)) if callable(many) else [backend.span_stats(f) for f in filters]
    return found


def call_counts(backend: TraceBackend, filters: list[SpanFilter]) -> list[list[CallCount]]:
    """Each filter's calls per edge: in one read where the backend offers it (``call_counts_many``)."""
    many = getattr(backend, "call_counts_many", None)
    found: list[list[CallCount]] = (
        [list(c) for c in many(filters)] if callable(many) else [backend.call_counts(f) for f in filters]
    )
    return found


def _render(
    args: QueryTracesArgs,
    where: SpanFilter,
    *,
    before: SpanFilter,
    window: SpanStats,
    baseline: SpanStats,
    backend: TraceBackend,
    calls: tuple[list[CallCount], list[CallCount]] | None = None,
) -> ToolOutput:
    service = where.service
    request = {"service": service, "operation": args.operation, "start": iso(where.start), "end": iso(where.end)}
    head = (
        f"window {iso(where.start)} – {iso(where.end)}; baseline {iso(before.start)} – {iso(before.end)}"
        " (the same service's spans before the window)" + _sample(backend, window, baseline)
    )
    lines = [request_line(TOOL, request), head]
    figures = _figures(service, window, baseline)
    lines += [f.line for f in figures]
    edges = _calls(*(calls or call_counts(backend, [where, before])))
    if edges:
        lines.append("calls (caller → callee) in the window and in the baseline:")
        lines += [edge.line for edge in edges]
    callees = _callees(service, edges, where, before, backend)
    lines += [f.line for f in callees]
    slowest = [
        _slow(rank, spans, where)
        for rank, spans in enumerate(backend.slowest_traces(where, args.limit), start=1)
        if spans
    ]
    slowest_line = f"slowest traces of {service} in the window (by its longest span in each):" if slowest else None
    if slowest_line is not None:
        lines.append(slowest_line)
        for trace in slowest:
            lines += [trace.line, trace.path_line, *([trace.heaviest_line] if trace.heaviest_line else [])]
    evidence = TraceEvidence(
        service=service,
        operation=args.operation,
        start=where.start,
        end=where.end,
        baseline_start=before.start,
        baseline_end=before.end,
        figures=figures,
        callees=callees,
        calls=edges,
        slowest=slowest,
        traces=window.traces,
        baseline_traces=baseline.traces,
        limit_reached=window.limit_reached or baseline.limit_reached,
        line=head,
        slowest_line=slowest_line,
    )
    details: dict[str, JsonValue] = {
        "backend": getattr(backend, "name", "traces"),
        "spans": window.spans,
        "baseline_spans": baseline.spans,
        "window": [iso(where.start), iso(where.end)],
        "baseline": [iso(before.start), iso(before.end)],
    }
    if window.traces is not None:
        details["traces_read"] = window.traces
        details["baseline_traces_read"] = baseline.traces
        details["limit_reached"] = window.limit_reached or baseline.limit_reached
    return ToolOutput(status="ok", text="\n".join(lines), retrieval_details=details, evidence=[evidence])


def _render_trace(service: str, spans: Sequence[TraceSpan]) -> ToolOutput:
    """One trace as lines a claim quotes: its size, the services in the order the request reached
    them, what ``service`` did in it (its operations, whether it called any other service), its
    critical path, and the spans that state an error."""
    trace_id = spans[0].trace_id
    first, last = min(s.start_ns for s in spans), max(s.end_ns for s in spans)
    reached = list(dict.fromkeys(s.service for s in sorted(spans, key=lambda s: s.start_ns)))
    own = [s for s in spans if s.service == service]
    by_id = {s.span_id: s for s in spans}
    called = list(dict.fromkeys(s.service for s in spans if s.service != service and _parent_of(s, by_id) == service))
    head = (
        f"trace {trace_id} at {iso(_moment(first))}: {quantity(len(spans), 'span')} of "
        f"{quantity(len(reached), 'service')}, "
        f"{ms_text((last - first) / 1e6)}"
    )
    reached_line = f"trace {trace_id} services in the order it reached them: " + " → ".join(reached)
    own_line = (
        f"{service} in trace {trace_id}: {quantity(len(own), 'span')}; calls to other services: "
        + (", ".join(called) if called else "none")
        if own
        else f"{service} in trace {trace_id}: no spans"
    )
    lines = [request_line(TOOL, {"service": service, "trace_id": trace_id}), head, reached_line, own_line]
    where = SpanFilter(service=service, start=_moment(first), end=_moment(last + 1))
    slow = _slow(1, spans, where, label=f"trace {trace_id}")
    lines += [slow.path_line, *([slow.heaviest_line] if slow.heaviest_line else [])]
    failed = [s for s in spans if s.error]
    stated = any(s.error is not None for s in spans)
    lines.append(
        f"trace {trace_id} spans stating an error: "
        + (", ".join(f"{s.service}:{s.operation}" for s in failed[:MAX_HOPS]) if failed else "none")
        if stated
        else f"trace {trace_id} spans stating an error: no span states a status"
    )
    evidence = TraceEvidence(
        service=service,
        start=_moment(first),
        end=_moment(last),
        baseline_start=_moment(first),
        baseline_end=_moment(first),
        slowest=[slow],
        line=head,
        trace_id=trace_id,
        trace_spans=len(spans),
        reached=reached,
        called=called,
        reached_line=reached_line,
        own_line=own_line if own else None,
    )
    details = {"trace_id": trace_id, "spans": len(spans), "services": len(reached)}
    return ToolOutput(status="ok", text="\n".join(lines), retrieval_details=details, evidence=[evidence])


def _parent_of(span: TraceSpan, by_id: dict[str, TraceSpan]) -> str | None:
    parent = by_id.get(span.parent_id)
    return parent.service if parent is not None else None


def _sample(backend: TraceBackend, window: SpanStats, baseline: SpanStats) -> str:
    """What the figures are over when the backend read the traces a search returned (Jaeger,
    Tempo): how many for the window and the baseline, and whether a search stopped at its
    limit; nothing when every span was read."""
    if window.traces is None:
        return ""

    def read(stats: SpanStats, period: str) -> str:
        more = "its limit: more may match" if stats.limit_reached else "all that matched"
        return f"{stats.traces} for the {period} ({more})"

    name = getattr(backend, "name", "the trace backend")
    before = read(baseline, "baseline") if baseline.traces is not None else "none for the baseline"
    said = f"{read(window, 'window')}, {before}"
    return f"; every figure is over the traces {name}'s search returned, not every span: {said}"


def _figures(service: str, window: SpanStats, baseline: SpanStats) -> list[SpanFigure]:
    found = [
        SpanFigure(
            service=service,
            name="spans",
            unit="spans",
            window=window.spans,
            baseline=baseline.spans,
            line=f"{service} spans: {window.spans} in the window, {baseline.spans} in the baseline",
        )
    ]
    if window.errors is None and baseline.errors is None:
        line = f"{service} errors: no span states a status (no error count)"
        found.append(SpanFigure(service=service, name="errors", unit="%", window=None, baseline=None, line=line))
    else:
        now, then = window.error_rate, baseline.error_rate
        line = f"{service} errors: {_errors(window)} in the window, {_errors(baseline)} in the baseline"
        found.append(
            SpanFigure(
                service=service,
                name="errors",
                unit="%",
                window=None if now is None else round(now * 100, 2),
                baseline=None if then is None else round(then * 100, 2),
                line=line,
            )
        )
    for name, words, unit, read in _FIGURES:
        now_value, then_value = read(window), read(baseline)
        if now_value is None:
            continue
        factor, said = _factor(now_value, then_value)
        line = f"{service} {words}: {ms_text(now_value)} in the window, {ms_text(then_value)} in the baseline{said}"
        found.append(
            SpanFigure(
                service=service,
                name=name,
                unit=unit,
                window=rounded(now_value),
                baseline=None if then_value is None else rounded(then_value),
                factor=factor,
                line=line,
            )
        )
    return found


def _errors(stats: SpanStats) -> str:
    if stats.errors is None:
        return "no status stated" if stats.spans else "no spans"
    rate = format_value(rounded(stats.errors / stats.stated * 100), "%")
    return f"{stats.errors} of {quantity(stats.stated, 'span')} ({rate})"


def _calls(window: Sequence[CallCount], baseline: Sequence[CallCount]) -> list[CallEdge]:
    earlier = {(c.caller, c.callee): c for c in baseline}
    edges = sorted(window, key=lambda c: (-c.calls, c.caller, c.callee))[:MAX_EDGES]
    found = []
    for edge in edges:
        then = earlier.get((edge.caller, edge.callee))
        then_calls = then.calls if then else 0
        then_errors = then.errors if then else None
        line = (
            f"call {edge.caller} → {edge.callee}: {_edge(edge.calls, edge.errors)} in the window; "
            f"{_edge(then_calls, then_errors)} in the baseline"
        )
        found.append(
            CallEdge(
                caller=edge.caller,
                callee=edge.callee,
                calls=edge.calls,
                errors=edge.errors,
                baseline_calls=then_calls,
                baseline_errors=then_errors,
                line=line,
            )
        )
    return found


def _edge(calls: int, errors: int | None) -> str:
    said = "errors not stated" if errors is None else quantity(errors, "error")
    return f"{quantity(calls, 'call')}, {said}"


def _callees(
    service: str, calls: Sequence[CallEdge], where: SpanFilter, before: SpanFilter, backend: TraceBackend
) -> list[SpanFigure]:
    """The self time p90 of the services this one calls most (all their spans): whether what it
    waits on grew, beside its own."""
    callees = list(dict.fromkeys(edge.callee for edge in calls if edge.caller == service))[:MAX_CALLEES]
    periods = [(where.start, where.end), (before.start, before.end)]
    figures = span_stats(
        backend, [SpanFilter(service=callee, start=start, end=end) for callee in callees for start, end in periods]
    )
    found = []
    for index, callee in enumerate(callees):
        now, then = figures[2 * index].self_p90, figures[2 * index + 1].self_p90
        if now is None:
            continue
        factor, said = _factor(now, then)
        line = f"callee {callee} self time p90: {ms_text(now)} in the window, {ms_text(then)} in the baseline{said}"
        found.append(
            SpanFigure(
                service=callee,
                name="self_p90",
                unit="ms",
                window=rounded(now),
                baseline=None if then is None else rounded(then),
                factor=factor,
                line=line,
            )
        )
    return found


def _slow(rank: int, spans: Sequence[TraceSpan], where: SpanFilter, label: str | None = None) -> SlowTrace:
    """The trace's lines, each starting ``label`` (``trace <rank>`` among the slowest)."""
    label = label or f"trace {rank}"
    own = (
        [
            s
            for s in spans
            if s.service == where.service
            and (where.operation is None or s.operation == where.operation)
            and where.start <= _moment(s.start_ns) < where.end
        ]
        or [s for s in spans if s.service == where.service]
        or list(spans)
    )
    longest = max(own, key=lambda s: (s.duration_ns, -s.start_ns))
    first, last = min(s.start_ns for s in spans), max(s.end_ns for s in spans)
    trace_ms = (last - first) / 1e6
    path = by_operation(critical_path(spans))
    trace_id = spans[0].trace_id
    line = (
        f"trace {rank} {trace_id} at {iso(_moment(longest.start_ns))}: {where.service} span "
        f"{ms_text(longest.duration_ns / 1e6)}, trace {ms_text(trace_ms)}"
    )
    shown = sorted(sorted(path, key=lambda h: -h.critical_ms)[:MAX_HOPS], key=path.index)
    hops = [f"{_hop(h)} {ms_text(h.critical_ms)} ({_own(h)})" for h in shown]
    left = [h for h in path if h not in shown]
    more = f" (and {len(left)} more hops, {ms_text(sum(h.critical_ms for h in left))})" if left else ""
    path_line = f"{label} critical path: " + " → ".join(hops) + more
    heaviest = max(path, key=lambda h: h.critical_ms) if path else None
    heaviest_line = (
        f"{label} most time on its critical path: {_hop(heaviest)} "
        f"{ms_text(heaviest.critical_ms)} of {ms_text(trace_ms)} ({_own(heaviest)})"
        if heaviest is not None
        else None
    )
    return SlowTrace(
        rank=rank,
        trace_id=trace_id,
        at=_moment(longest.start_ns),
        span_ms=round(longest.duration_ns / 1e6, 2),
        trace_ms=round(trace_ms, 2),
        path=path,
        heaviest=heaviest,
        line=line,
        path_line=path_line,
        heaviest_line=heaviest_line,
        spans=waterfall(spans),
    )


def _own(hop: Hop) -> str:
    """A hop's self time; after its span's duration when the self time is more than the time on
    the path (written first): a span that ran beside a sibling holding the request up — an
    asynchronous call, work after its callee answered — is on the path for part of its run only,
    and its self time, of the whole run, read as more than the span."""
    own = ms_text(hop.self_ms)
    return f"span {ms_text(hop.duration_ms)}, self {own}" if hop.self_ms > hop.critical_ms else f"self {own}"


def _hop(hop: Hop) -> str:
    """``service:operation``, and ``×n`` when the hop stands for n spans of it."""
    return f"{hop.service}:{hop.operation}" + (f" ×{hop.spans}" if hop.spans > 1 else "")


def _moment(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)
