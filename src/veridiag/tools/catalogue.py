"""What the offline roles know of the data without a tool call, when logs live in another store.

The planner finds services in the question among the services it knows, and the executor asks
whether a service has logs before reading them. With the embedded file both come from it; with
logs in ClickHouse they must come from there too, or a question about a service only the
ClickHouse table holds names no known service and is answered about the wrong data.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from veridiag.tools.backends import TraceReadError
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.records import Span


@runtime_checkable
class LogsCatalogue(Protocol):
    """A log backend that can say which services it holds and when (``ClickHouseLogs``)."""

    def services(self) -> list[str]: ...
    def log_span(self, service: str) -> Span | None: ...
    def table_span(self) -> Span | None: ...


@dataclass(frozen=True)
class LogsElsewhere:
    """The embedded environment (clock, metrics, changes) with the log backend's services and
    spans: the offline roles' environment when logs are read from another store."""

    embedded: EmbeddedEnvironment
    logs: LogsCatalogue

    def now(self) -> datetime:
        return self.embedded.now()

    def services(self) -> list[str]:
        return sorted(set(self.embedded.services()) | set(self.logs.services()))

    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]:
        return self.embedded.metrics(service)

    def dependencies(self) -> list[tuple[str, str]]:
        """The call graph, from the embedded file (no log store holds one)."""
        return self.embedded.dependencies()

    def log_span(self, service: str) -> Span | None:
        return self.logs.log_span(service)

    def trace_services(self) -> list[str]:
        """Services with spans, from the embedded file (where ``data import-traces`` stores them)."""
        return self.embedded.trace_services()

    def metric_span(self, service: str, metric: str | None = None) -> Span | None:
        return self.embedded.metric_span(service, metric)

    def data_end(self, service: str | None = None) -> datetime | None:
        """As the embedded file's: the minute just after the newest point, the logs' included."""
        span = self.logs.log_span(service) if service is not None else self.logs.table_span()
        ends = [_after(span.last)] if span is not None else []
        if (embedded := self.embedded.data_end(service)) is not None:
            ends.append(embedded)
        return max(ends, default=None)


def _after(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0) + timedelta(minutes=1)


@runtime_checkable
class TracesCatalogue(Protocol):
    """A trace backend that lists the services it has spans of (Jaeger, Tempo)."""

    def trace_services(self) -> list[str]: ...


@dataclass(frozen=True)
class TracesElsewhere:
    """The offline roles' environment with the trace server's services: the executor reads the
    spans of the services the server has spans of (``trace_services``), and the planner knows
    them as services. A server that cannot say which has none listed here — except that the
    services in question are still tried, so the failed calls are recorded as gaps."""

    environment: EmbeddedEnvironment | LogsElsewhere
    traces: TracesCatalogue

    def now(self) -> datetime:
        return self.environment.now()

    def services(self) -> list[str]:
        return sorted(set(self.environment.services()) | set(self._listed() or []))

    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]:
        return self.environment.metrics(service)

    def dependencies(self) -> list[tuple[str, str]]:
        return self.environment.dependencies()

    def log_span(self, service: str) -> Span | None:
        return self.environment.log_span(service)

    def metric_span(self, service: str, metric: str | None = None) -> Span | None:
        return self.environment.metric_span(service, metric)

    def data_end(self, service: str | None = None) -> datetime | None:
        return self.environment.data_end(service)

    def trace_services(self) -> list[str]:
        """The server's services; when it cannot be asked, every known service (``query_traces``
        then records why each read failed)."""
        listed = self._listed()
        return listed if listed is not None else self.environment.services()

    def _listed(self) -> list[str] | None:
        try:
            return self.traces.trace_services()
        except TraceReadError:
            return None


def offline_environment(
    embedded: EmbeddedEnvironment, logs: object, traces: object = None
) -> EmbeddedEnvironment | LogsElsewhere | TracesElsewhere:
    """The environment the offline roles read: the embedded file, or it with the log backend's
    services when logs come from a store that can list them, and with the trace server's when
    spans are read from one."""
    found: EmbeddedEnvironment | LogsElsewhere = embedded
    if logs is not embedded and isinstance(logs, LogsCatalogue):
        found = LogsElsewhere(embedded, logs)
    if traces is not None and traces is not embedded and isinstance(traces, TracesCatalogue):
        return TracesElsewhere(found, traces)
    return found
