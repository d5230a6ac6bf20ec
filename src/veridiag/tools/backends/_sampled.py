"""A ``TraceBackend`` over a server that returns traces, not aggregates (Jaeger, Tempo).

The embedded file answers ``span_stats`` from every span it stores; Jaeger's query API and
Tempo's answer a search by service, operation and time with at most ``limit`` traces, each
whole. So each figure here is over the traces one search returned (``Sample``): the service's
(operation's) spans in them that start in the window, their self times computed on each whole
trace (``analysis/traces.py``), the calls their spans make and take. ``SpanStats.traces`` says
how many traces were read and ``limit_reached`` whether the search stopped at its limit — more
may match then — and ``query_traces`` says both on the line naming the window, which every claim
about the figures quotes.

One search serves every read of the same service, operation and period (the figures, the calls
and the slowest traces of one call read one sample), kept for a few calls (``KEPT_SAMPLES``).
A server that cannot answer raises ``TraceReadError`` naming it and why.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, TypeVar

import httpx2

from veridiag._retry import Backoff
from veridiag.analysis.traces import CallCount, SpanFilter, SpanStats, TimedSpan, TraceSpan, self_times, span_stats
from veridiag.contracts.json import JsonObject
from veridiag.tools.backends import TraceReadError
from veridiag.tools.backends._http import QueryError, UnavailableError, get_json
from veridiag.tools.records import Span

#: How long before the window a calling span may have started and still call into it (as the
#: embedded backend counts calls).
CALLER_LEAD = timedelta(minutes=10)
#: The largest answer read by default (a search of 200 traces of ~50 spans is ~5 MB).
MAX_RESPONSE_BYTES = 32 * 2**20
#: Samples kept for later reads (a window, its baseline, the callees' of one call).
KEPT_SAMPLES = 32
#: How long the server's list of services is believed.
SERVICES_FOR = timedelta(seconds=60)
_T = TypeVar("_T")


def ns(moment: datetime) -> int:
    return int(moment.timestamp()) * 10**9 + moment.microsecond * 1000


def moment(nanoseconds: int) -> datetime:
    return datetime.fromtimestamp(nanoseconds / 1e9, tz=UTC)


@dataclass(frozen=True)
class Sample:
    """The traces one search returned, each whole and once, with self times computed;
    ``limit_reached``: the search returned as many as it was allowed (more may match)."""

    traces: tuple[tuple[TraceSpan, ...], ...]
    limit_reached: bool


class Searched(NamedTuple):
    """What a search gave: the traces read (whole), and how many traces it returned — more than
    were read when a trace found could not be read by id."""

    traces: list[list[ReadSpan]]
    returned: int


class ReadSpan(NamedTuple):
    """A span as a server's answer gives it (read and checked by the backend's models)."""

    trace_id: str
    span_id: str
    parent_id: str
    service: str
    operation: str
    start_ns: int
    end_ns: int
    error: bool | None


def with_self_times(spans: Iterable[ReadSpan]) -> tuple[TraceSpan, ...]:
    """One trace's spans (a span stated twice kept once), each with its self time, by start."""
    unique = sorted({span.span_id: span for span in spans}.values(), key=lambda s: (s.start_ns, s.span_id))
    owns = self_times(TimedSpan(s.span_id, s.parent_id, s.start_ns, s.end_ns) for s in unique)
    # Of fields the backend's models checked: constructed, not validated again (~80 k spans a call).
    return tuple(TraceSpan.model_construct(**s._asdict(), self_ns=owns[s.span_id]) for s in unique)


def _selected(span: TraceSpan, where: SpanFilter, start_ns: int, end_ns: int) -> bool:
    return (
        span.service == where.service
        and (where.operation is None or span.operation == where.operation)
        and start_ns <= span.start_ns < end_ns
    )


class SampledTraces(ABC):
    """The ``TraceBackend`` methods over ``search``; a subclass reads one server's API."""

    name: str
    #: Traces a search reads at most.
    max_traces: int
    #: Traces a search reads at most when the settings name no other.
    default_max_traces: int = 100
    #: How far before the clock a service's spans are looked for when a window holds none.
    lookback: timedelta

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 10.0,
        headers: dict[str, str] | None = None,
        max_traces: int | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        lookback: timedelta = timedelta(days=7),
        transport: httpx2.BaseTransport | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_traces = max_traces if max_traces is not None else self.default_max_traces
        self.max_response_bytes = max_response_bytes
        self.lookback = lookback
        self.backoff = backoff or Backoff()
        self._client = httpx2.Client(
            base_url=self.base_url,
            timeout=timeout,
            headers={"Accept": "application/json", **(headers or {})},
            transport=transport,
        )
        self._lock = threading.Lock()
        #: Traces read by id (a server that returns a search's traces only by id: Tempo).
        self._traces: OrderedDict[str, list[ReadSpan]] = OrderedDict()
        self._traces_lock = threading.Lock()
        self._samples: OrderedDict[tuple[str, str | None, datetime, datetime], Sample] = OrderedDict()
        self._services: tuple[datetime, list[str] | TraceReadError] | None = None

    # -- what a server answers -----------------------------------------------------------------

    @abstractmethod
    def _search(self, service: str, operation: str | None, start: datetime, end: datetime, limit: int) -> Searched:
        """Whole traces holding a span of ``service`` (``operation``) that starts in
        ``[start, end)``, at most ``limit``; raises ``UnavailableError`` / ``QueryError``."""

    @abstractmethod
    def _service_names(self) -> list[str]:
        """The services the server has spans of; raises ``UnavailableError`` / ``QueryError``."""

    @abstractmethod
    def _operation_names(self, service: str) -> list[str]:
        """The operations of the service's spans; raises ``UnavailableError`` / ``QueryError``."""

    def _where(self) -> str:
        """The server, as an error names it (``jaeger at http://…``)."""
        return f"{self.name} at {self.base_url}"

    def _get(self, path: str, params: dict[str, str | int | float]) -> JsonObject:
        return get_json(self._client, path, params, self.backoff, max_bytes=self.max_response_bytes)

    def close(self) -> None:
        self._client.close()

    @abstractmethod
    def _by_id(self, trace_id: str) -> list[ReadSpan]:
        """One trace's spans by its id (empty: the server has none of it); raises as ``_search``."""

    def trace(self, trace_id: str) -> list[TraceSpan]:
        """``TraceLookup``: one trace whole, as a log line's ``TraceID`` names it."""
        return list(with_self_times(self._read(lambda: self._by_id(trace_id.lower()))))

    # -- TraceBackend ----------------------------------------------------------------------------

    def trace_services(self) -> list[str]:
        """The server's services, believed for ``SERVICES_FOR`` — and so is a failure to list
        them, so a planner asking again does not wait on a server that is down each time."""
        with self._lock:
            kept = self._services
        now = datetime.now(UTC)
        if kept is not None and now - kept[0] < SERVICES_FOR:
            if isinstance(kept[1], TraceReadError):
                raise TraceReadError(str(kept[1]))
            return kept[1]
        try:
            found: list[str] | TraceReadError = sorted(set(self._read(self._service_names)))
        except TraceReadError as exc:
            found = exc
        with self._lock:
            self._services = (now, found)
        if isinstance(found, TraceReadError):
            raise found
        return found

    def operations(self, service: str) -> list[str]:
        """The operations the server knows of the service's spans."""
        return sorted(set(self._read(lambda: self._operation_names(service))))

    def span_extent(self, service: str) -> Span | None:
        """When the service's spans start, of the traces a search of the ``lookback`` before now
        returned (``extent_scope`` says so); None when the server knows no such service or that
        search found none of its spans."""
        if service not in self.trace_services():
            return None
        end = datetime.now(UTC)
        where = SpanFilter(service=service, start=end - self.lookback, end=end)
        starts = [s.start_ns for trace in self.sample(where).traces for s in trace if s.service == service]
        return Span(first=moment(min(starts)), last=moment(max(starts))) if starts else None

    @property
    def extent_scope(self) -> str:
        """What ``span_extent`` covers, as ``query_traces`` words it."""
        return f"in the traces {self.name} returned for the {_hours(self.lookback)} before now"

    def span_stats(self, where: SpanFilter) -> SpanStats:
        sample = self.sample(where)
        start, end = ns(where.start), ns(where.end)
        spans = [s for trace in sample.traces for s in trace if _selected(s, where, start, end)]
        found = span_stats([s.duration_ns for s in spans], [s.self_ns for s in spans], [s.error for s in spans])
        return found.model_copy(update={"traces": len(sample.traces), "limit_reached": sample.limit_reached})

    def slowest_traces(self, where: SpanFilter, limit: int) -> list[list[TraceSpan]]:
        """The traces read in which the service's (operation's) longest span in the window was
        longest, longest first (ties by trace id, as the embedded backend orders them)."""
        start, end = ns(where.start), ns(where.end)
        ranked = []
        for trace in self.sample(where).traces:
            own = [s.duration_ns for s in trace if _selected(s, where, start, end)]
            if own:
                ranked.append((-max(own), trace[0].trace_id, trace))
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [list(trace) for _longest, _id, trace in ranked[:limit]]

    def call_counts(self, where: SpanFilter) -> list[CallCount]:
        """Calls into the service's (operation's) spans in the window and out of its spans into
        spans starting in the window, per edge, in the traces read: the window's and, when that
        search returned every trace it matched, those of a search reaching ``CALLER_LEAD``
        further back (a call out of a span that started just before the window into one in it,
        as the embedded backend counts it); a window read only in part is counted in its own
        traces alone."""
        start, end, lead = ns(where.start), ns(where.end), ns(where.start - CALLER_LEAD)
        window = self.sample(where)
        traces = {trace[0].trace_id: trace for trace in window.traces}
        if not window.limit_reached:  # every trace of the window read: the calls from before it too
            earlier = self.sample(where.model_copy(update={"start": where.start - CALLER_LEAD}))
            traces |= {trace[0].trace_id: trace for trace in earlier.traces if trace[0].trace_id not in traces}
        tally: dict[tuple[str, str], list[bool | None]] = defaultdict(list)
        for trace in traces.values():
            by_id = {s.span_id: s for s in trace}
            for child in trace:
                parent = by_id.get(child.parent_id)
                if parent is None or parent.span_id == child.span_id or parent.service == child.service:
                    continue
                if _selected(child, where, start, end) or (
                    start <= child.start_ns < end and _selected(parent, where, lead, end)
                ):
                    tally[(parent.service, child.service)].append(child.error)
        found = []
        for (caller, callee), errors in sorted(tally.items()):
            stated = [e for e in errors if e is not None]
            found.append(
                CallCount(caller=caller, callee=callee, calls=len(errors), errors=sum(stated) if stated else None)
            )
        return found

    # -- the sample ------------------------------------------------------------------------------

    def sample(self, where: SpanFilter) -> Sample:
        """The traces of one search for ``where``'s service, operation and period (kept)."""
        key = (where.service, where.operation, where.start, where.end)
        with self._lock:
            kept = self._samples.get(key)
            if kept is not None:
                self._samples.move_to_end(key)
                return kept
        searched = self._read(
            lambda: self._search(where.service, where.operation, where.start, where.end, self.max_traces)
        )
        whole: dict[str, tuple[TraceSpan, ...]] = {}
        for spans in searched.traces:
            if spans:
                whole.setdefault(spans[0].trace_id, with_self_times(spans))
        found = Sample(traces=tuple(whole.values()), limit_reached=searched.returned >= self.max_traces)
        with self._lock:
            self._samples[key] = found
            while len(self._samples) > KEPT_SAMPLES:
                self._samples.popitem(last=False)
        return found

    def _read(self, call: Callable[[], _T]) -> _T:
        try:
            return call()
        except QueryError as exc:
            raise TraceReadError(f"{self._where()} refused the query: {exc}") from None
        except UnavailableError as exc:
            raise TraceReadError(f"{self._where()} unavailable: {exc}") from None


def _hours(length: timedelta) -> str:
    hours = length / timedelta(hours=1)
    return f"{hours / 24:g} days" if hours >= 48 and hours % 24 == 0 else f"{hours:g} hours"
