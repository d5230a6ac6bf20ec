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


def offline_environment(embedded: EmbeddedEnvironment, logs: object) -> EmbeddedEnvironment | LogsElsewhere:
    """The environment the offline roles read: the embedded file, or it with the log backend's
    services when logs come from a store that can list them."""
    if logs is not embedded and isinstance(logs, LogsCatalogue):
        return LogsElsewhere(embedded, logs)
    return embedded
