"""Evidence backends behind small protocols, one module each (embedded, prometheus, loki)."""

from __future__ import annotations

from typing import Protocol

from veridiag.tools.args import LookupKnowledgeArgs, QueryChangesArgs, QueryLogsArgs, QueryMetricsArgs
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
