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
    #: When the spans are those of the traces a search returned (Jaeger's and Tempo's APIs
    #: return traces, not aggregates): how many traces were read, and whether the search
    #: returned as many as it was allowed, so that more may match (None: every span was read).
    traces: int | None = None
    limit_reached: bool = False

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
    ids = {s.span_id for s in spans}
    owns = self_times(TimedSpan(s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in spans)
    children: dict[str, list[TraceSpan]] = defaultdict(list)
    for span in spans:
        if span.parent_id in ids and span.parent_id != span.span_id:
            children[span.parent_id].append(span)
    roots = [s for s in spans if s.parent_id not in ids or s.parent_id == s.span_id]
    root = min(roots or spans, key=lambda s: (s.start_ns, -s.end_ns))
    shares: dict[str, int] = {}
    order: list[tuple[int, str]] = []
    by_id = {s.span_id: s for s in spans}

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
            shares[span.span_id] = shares.get(span.span_id, 0) + end - start
            order.append((start, span.span_id))

    walk(root, root.end_ns, 0)
    first: dict[str, int] = {}
    for start, span_id in sorted(order):
        first.setdefault(span_id, start)
    hops = []
    for span_id in sorted(first, key=lambda i: (first[i], -by_id[i].end_ns)):
        span = by_id[span_id]
        own = span.self_ns if span.self_ns is not None else owns[span_id]
        hops.append(
            Hop(
                service=span.service,
                operation=span.operation,
                duration_ms=span.duration_ns / _NS_PER_MS,
                critical_ms=shares[span_id] / _NS_PER_MS,
                self_ms=own / _NS_PER_MS,
                error=span.error,
            )
        )
    return hops


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
