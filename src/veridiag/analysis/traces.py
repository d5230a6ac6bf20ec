"""Spans as an on-call engineer reads them: self time, percentiles, critical paths (issue 29).

Pure: typed spans and durations in, typed figures out. The trace backends
(``tools/backends``) read spans where they live and hand them here; ``tools/traces.py`` states
what was computed.

**Self time** (``self_times``): a span's duration less the part of it its *direct* children
cover together — the union of their intervals, each clipped to the span's own
``[start, end]``. Overlapping children (parallel or asynchronous calls) are counted once, so
two children running side by side for 40 ms take 40 ms, not 80; a child outliving its parent
(a fire-and-forget call) or a child whose clock is a little off takes at most the parent's own
time. So a span's self time is never below 0 and never above its duration, and along a trace
whose children lie inside their parents the self times add up to the time the root covers.
A grandchild is its child's business: a parent waiting on a child that waits on a database
shows the wait in neither parent's nor child's self time but in the database call's.

**Critical path** (``critical_path``): the spans that held up the end of the request, as
Jaeger computes it. Walk back from the root's end: the child of the span that finished last
before the cursor (clipped to the span's end) is on the path — its own critical path first —
then the cursor moves to that child's start and the next child finishing before it is looked
for; the stretches where no such child runs are the span's own time on the path. So sequential
calls each take their share, a call running beside a longer one takes none, and the shares of
the hops add up to the root's duration. A hop is one span, listed in the order it first holds
up the request, with its time on the path and its self time.

**Percentiles** interpolate linearly between the closest ranks (numpy's default, and
``statistics.quantiles(method="inclusive")``), as the span series ``span_duration_p90`` are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict

_NS_PER_MS = 1e6


class TimedSpan(NamedTuple):
    """What self time is computed from: a span of one trace, its parent and its interval."""

    span_id: str
    parent_id: str
    start_ns: int
    end_ns: int


def self_times(spans: Iterable[TimedSpan]) -> dict[str, int]:
    """Each span's self time in ns (module docstring). ``spans`` are one trace's."""
    listed = list(spans)
    children: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for span in listed:
        if span.parent_id and span.parent_id != span.span_id:
            children[span.parent_id].append((span.start_ns, span.end_ns))
    found = {}
    for span in listed:
        busy = covered(children.get(span.span_id, []), span.start_ns, span.end_ns)
        found[span.span_id] = max(0, span.end_ns - span.start_ns - busy)
    return found


def covered(intervals: Iterable[tuple[int, int]], start: int, end: int) -> int:
    """How much of ``[start, end]`` the intervals cover together (each counted once)."""
    clipped = sorted((max(a, start), min(b, end)) for a, b in intervals if min(b, end) > max(a, start))
    total, reach = 0, start
    for a, b in clipped:
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def quantiles(values: Sequence[float], qs: Sequence[float]) -> list[float]:
    """The quantiles ``qs`` (0–1) of ``values``, interpolated between the closest ranks."""
    if not values:
        raise ValueError("no values")
    found = np.quantile(np.asarray(values, dtype=float), list(qs), method="linear")
    return [float(v) for v in np.atleast_1d(found)]


class SpanFilter(BaseModel):
    """Which spans a trace backend reads: of a service (and an operation) starting in ``[start, end)``."""

    model_config = ConfigDict(frozen=True)

    service: str
    operation: str | None = None
    start: datetime
    end: datetime


class SpanStats(BaseModel):
    """The spans a filter selects, summed up. Latencies in ms; None where no span gives one."""

    spans: int
    #: Spans with an error status, of the ``stated`` spans that state a status at all (nezha's
    #: CSVs state none: ``errors`` is then None, never 0).
    errors: int | None = None
    stated: int = 0
    duration_p50: float | None = None
    duration_p90: float | None = None
    duration_p99: float | None = None
    self_p50: float | None = None
    self_p90: float | None = None

    @property
    def error_rate(self) -> float | None:
        """Errors per span stating a status, 0–1."""
        return self.errors / self.stated if self.errors is not None and self.stated else None


def span_stats(durations_ns: Sequence[int], self_ns: Sequence[int | None], errors: Sequence[bool | None]) -> SpanStats:
    """The figures of one set of spans: durations, self times (None: not computed) and error
    flags (None: the span states no status), index by index."""
    if not durations_ns:
        return SpanStats(spans=0)
    d50, d90, d99 = quantiles([d / _NS_PER_MS for d in durations_ns], (0.5, 0.9, 0.99))
    owns = [own / _NS_PER_MS for own in self_ns if own is not None]
    s50, s90 = quantiles(owns, (0.5, 0.9)) if owns else (None, None)
    stated = [e for e in errors if e is not None]
    return SpanStats(
        spans=len(durations_ns),
        errors=sum(stated) if stated else None,
        stated=len(stated),
        duration_p50=d50,
        duration_p90=d90,
        duration_p99=d99,
        self_p50=s50,
        self_p90=s90,
    )


class TraceSpan(BaseModel):
    """A span as a trace backend returns it; ``self_ns`` None when the backend keeps none."""

    model_config = ConfigDict(frozen=True)

    trace_id: str
    span_id: str
    parent_id: str
    service: str
    operation: str
    start_ns: int
    end_ns: int
    error: bool | None = None
    self_ns: int | None = None

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


class Hop(BaseModel):
    """One span on a critical path: its time on the path (``critical_ms``) and its self time."""

    service: str
    operation: str
    duration_ms: float
    critical_ms: float
    self_ms: float
    error: bool | None = None
    #: Spans of this service and operation the hop stands for (``by_operation``).
    spans: int = 1


def by_operation(path: Sequence[Hop]) -> list[Hop]:
    """The path's hops of one service and operation as one (a loop of calls to one endpoint is
    one hop holding up the request for their sum), in the order each first appears; times summed,
    an error when any has one."""
    merged: dict[tuple[str, str], Hop] = {}
    for hop in path:
        key = (hop.service, hop.operation)
        found = merged.get(key)
        if found is None:
            merged[key] = hop.model_copy()
            continue
        errors = [e for e in (found.error, hop.error) if e is not None]
        merged[key] = found.model_copy(
            update={
                "duration_ms": found.duration_ms + hop.duration_ms,
                "critical_ms": found.critical_ms + hop.critical_ms,
                "self_ms": found.self_ms + hop.self_ms,
                "error": any(errors) if errors else None,
                "spans": found.spans + hop.spans,
            }
        )
    return list(merged.values())


def critical_path(spans: Sequence[TraceSpan]) -> list[Hop]:
    """The trace's critical path (module docstring), in the order its hops hold up the request;
    self times computed here when the backend gave none. Empty for no spans; a trace without a
    root (its root span not captured) starts at its earliest span whose parent is missing."""
    if not spans:
        return []
    owns = self_times(TimedSpan(s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in spans)
    segments = critical_segments(spans)
    first = {span_id: min(a for a, _b in found) for span_id, found in segments.items()}
    by_id = {s.span_id: s for s in spans}
    hops = []
    for span_id in sorted(first, key=lambda i: (first[i], -by_id[i].end_ns)):
        span = by_id[span_id]
        own = span.self_ns if span.self_ns is not None else owns[span_id]
        hops.append(
            Hop(
                service=span.service,
                operation=span.operation,
                duration_ms=span.duration_ns / _NS_PER_MS,
                critical_ms=sum(b - a for a, b in segments[span_id]) / _NS_PER_MS,
                self_ms=own / _NS_PER_MS,
                error=span.error,
            )
        )
    return hops


def critical_segments(spans: Sequence[TraceSpan]) -> dict[str, list[tuple[int, int]]]:
    """Where each span on the critical path holds up the request: its stretches ``[start, end)``
    in ns, in time order (the walk of the module docstring; they never overlap, and together
    they cover the root's duration). Spans off the path are absent."""
    if not spans:
        return {}
    ids = {s.span_id for s in spans}
    children: dict[str, list[TraceSpan]] = defaultdict(list)
    for span in spans:
        if span.parent_id in ids and span.parent_id != span.span_id:
            children[span.parent_id].append(span)
    root = min(_roots(spans) or spans, key=lambda s: (s.start_ns, -s.end_ns))
    found: dict[str, list[tuple[int, int]]] = defaultdict(list)

    def walk(span: TraceSpan, until: int, depth: int) -> None:
        cursor = min(span.end_ns, until)
        kids = sorted(children.get(span.span_id, []), key=lambda c: c.end_ns, reverse=True)
        for kid in kids if depth < _MAX_DEPTH else []:
            if cursor <= span.start_ns:
                break
            if kid.end_ns > cursor and kid.start_ns >= cursor:
                continue
            end = min(kid.end_ns, cursor)
            if end <= max(kid.start_ns, span.start_ns):
                continue
            _share(span, end, cursor)
            walk(kid, end, depth + 1)
            cursor = max(kid.start_ns, span.start_ns)
        _share(span, span.start_ns, cursor)

    def _share(span: TraceSpan, start: int, end: int) -> None:
        if end > start:
            found[span.span_id].append((start, end))

    walk(root, root.end_ns, 0)
    return {span_id: sorted(stretches) for span_id, stretches in found.items()}


def _roots(spans: Sequence[TraceSpan]) -> list[TraceSpan]:
    ids = {s.span_id for s in spans}
    return [s for s in spans if s.parent_id not in ids or s.parent_id == s.span_id]


def uncovered(start: float, end: float, intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The stretches of ``[start, end]`` no interval covers, in order: a span's self time as
    stretches (its children's intervals given), which add up to ``self_times``' figure."""
    clipped = sorted((max(a, start), min(b, end)) for a, b in intervals if min(b, end) > max(a, start))
    gaps, reach = [], start
    for a, b in clipped:
        if a > reach:
            gaps.append((reach, a))
        reach = max(reach, b)
    if end > reach:
        gaps.append((reach, end))
    return gaps


class WaterfallSpan(BaseModel):
    """One row of a trace's waterfall: a span placed in time from the trace's first start (ms),
    under its parent (``parent``: that row's index, always an earlier row; None for a root)."""

    model_config = ConfigDict(frozen=True)

    parent: int | None = None
    depth: int = 0
    service: str
    operation: str
    start_ms: float
    duration_ms: float
    self_ms: float
    error: bool | None = None
    #: Its stretches on the critical path, in ms from the trace's start (empty: off the path).
    critical: list[tuple[float, float]] = []

    @property
    def critical_ms(self) -> float:
        return sum(b - a for a, b in self.critical)


def waterfall(spans: Sequence[TraceSpan]) -> list[WaterfallSpan]:
    """The trace as Jaeger lists it: each span once, under its parent, siblings by start time
    (depth first); a span whose parent is missing, or caught in a cycle of parent ids, starts a
    tree of its own. Times in ms from the earliest start; self time as ``self_times`` computes it
    (the backend's when it kept one); the critical path's stretches (``critical_segments``)."""
    if not spans:
        return []
    unique = list({s.span_id: s for s in spans}.values())
    ids = {s.span_id for s in unique}
    children: dict[str, list[TraceSpan]] = defaultdict(list)
    for span in unique:
        if span.parent_id in ids and span.parent_id != span.span_id:
            children[span.parent_id].append(span)
    for kids in children.values():
        kids.sort(key=lambda s: (s.start_ns, -s.end_ns, s.span_id))
    origin = min(s.start_ns for s in unique)
    owns = self_times(TimedSpan(s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in unique)
    segments = critical_segments(unique)
    rows: list[WaterfallSpan] = []
    placed: set[str] = set()

    def ms(ns: int) -> float:
        return (ns - origin) / _NS_PER_MS

    def place(first: TraceSpan) -> None:
        stack: list[tuple[TraceSpan, int | None, int]] = [(first, None, 0)]
        while stack:
            span, parent, depth = stack.pop()
            if span.span_id in placed:
                continue
            placed.add(span.span_id)
            own = span.self_ns if span.self_ns is not None else owns[span.span_id]
            rows.append(
                WaterfallSpan(
                    parent=parent,
                    depth=depth,
                    service=span.service,
                    operation=span.operation,
                    start_ms=ms(span.start_ns),
                    duration_ms=span.duration_ns / _NS_PER_MS,
                    self_ms=own / _NS_PER_MS,
                    error=span.error,
                    critical=[(ms(a), ms(b)) for a, b in segments.get(span.span_id, [])],
                )
            )
            index = len(rows) - 1
            stack += [(kid, index, depth + 1) for kid in reversed(children.get(span.span_id, []))]

    for root in sorted(_roots(unique), key=lambda s: (s.start_ns, -s.end_ns, s.span_id)):
        place(root)
    for span in sorted(unique, key=lambda s: (s.start_ns, -s.end_ns, s.span_id)):  # cycles of parent ids
        if span.span_id not in placed:
            place(span)
    return rows


def own_grew(self_factor: float | None, errors_now: float | None, errors_before: float | None) -> bool:
    """Whether a service's own work or errors grew against its earlier spans (a suspect), not
    only its wait on what it calls: its self time p90 ×``SELF_TIME_GREW`` or more, or an error
    rate above the baseline's."""
    rose = self_factor is not None and self_factor >= SELF_TIME_GREW
    failed = errors_now is not None and errors_now > (errors_before or 0)
    return rose or failed


#: How much a service's self time p90 grows, window against baseline, to make it a suspect.
SELF_TIME_GREW = 1.5


#: Span nesting followed at most this deep (a cycle of parent ids in a broken file ends here).
_MAX_DEPTH = 200


class CallCount(BaseModel):
    """Calls from one service to another in a window: child spans of ``callee`` whose parent
    span is ``caller``'s; ``errors`` of the child spans (None: none states a status)."""

    caller: str
    callee: str
    calls: int
    errors: int | None = None


def ratio(now: float | None, before: float | None) -> float | None:
    """``now / before`` where both are known and ``before`` is above 0."""
    if now is None or before is None or before <= 0:
        return None
    return now / before
