"""Evidence backends behind small protocols, one module each (embedded, prometheus, loki,
clickhouse, jaeger, tempo)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, runtime_checkable

from veridiag.analysis.traces import CallCount, SpanFilter, SpanStats, TraceSpan
from veridiag.tools.args import LookupKnowledgeArgs, QueryChangesArgs, QueryLogsArgs, QueryMetricsArgs
from veridiag.tools.records import Span
from veridiag.tools.results import ToolOutput


class LogBackend(Protocol):
    name: str

    def query_logs(self, args: QueryLogsArgs) -> ToolOutput: ...


class MetricBackend(Protocol):
    name: str

    def query_metrics(self, args: QueryMetricsArgs) -> ToolOutput: ...


class ChangeBackend(Protocol):
    name: str

    def query_changes(self, args: QueryChangesArgs) -> ToolOutput: ...


class KnowledgeBackend(Protocol):
    name: str

    def lookup_knowledge(self, args: LookupKnowledgeArgs) -> ToolOutput: ...


_CALL_MEMO: ContextVar[dict[object, object] | None] = ContextVar("veridiag_call_memo", default=None)


@contextmanager
def one_call() -> Iterator[None]:
    """The scope of one tool call: what a backend learns there about its store (that our derived
    tables are current for some days) holds for the rest of that call and no longer, so the call's
    reads agree with one another and a later call looks again. A context variable, not state on the
    backend, which every call and thread shares."""
    token = _CALL_MEMO.set({})
    try:
        yield
    finally:
        _CALL_MEMO.reset(token)


def call_memo() -> dict[object, object] | None:
    """The current tool call's memo (``one_call``); None outside one."""
    return _CALL_MEMO.get()


class TraceReadError(RuntimeError):
    """A trace backend could not answer (its server is down, refused the query or answered
    what is no answer, its table is missing or not of the expected shape); the message names
    the backend and says why. ``query_traces`` states it as the call's error."""


class TraceBackend(Protocol):
    """Where spans are read for ``query_traces`` (``tools/traces.py`` compares, finds paths and
    writes the output). Reads only, each bounded by a service and a window, so a store that
    aggregates (ClickHouse ``otel_traces``: quantiles and counts in SQL) and one that returns
    traces (Jaeger's and Tempo's query APIs: a search by service, operation and time, then
    the traces) can both answer: the embedded file (``embedded/_traces.py``), ClickHouse's
    ``otel_traces`` (``clickhouse_traces.py``), Jaeger (``jaeger.py``) and Tempo (``tempo.py``)
    over ``_sampled.py``, whose figures are over the traces a search returned
    (``SpanStats.traces``). A read that fails raises ``TraceReadError``."""

    name: str

    def trace_services(self) -> list[str]:
        """Services with spans."""
        ...

    def span_extent(self, service: str) -> Span | None:
        """When the service's spans start, first to last; None when it has none."""
        ...

    def span_stats(self, where: SpanFilter) -> SpanStats:
        """Count, errors, duration and self-time percentiles of the spans ``where`` selects."""
        ...

    def slowest_traces(self, where: SpanFilter, limit: int) -> list[list[TraceSpan]]:
        """The traces in which the selected spans were longest, longest first, each whole."""
        ...

    def call_counts(self, where: SpanFilter) -> list[CallCount]:
        """Calls into and out of the service in the window, per caller → callee edge."""
        ...


@runtime_checkable
class TraceLookup(Protocol):
    """A trace backend that can read one trace whole by its id (a log line's ``TraceID``); one
    that cannot is told so by ``query_traces trace_id=…``."""

    def trace(self, trace_id: str) -> list[TraceSpan]:
        """The trace's stored spans, by start; empty when no span of it is stored."""
        ...
