"""Evidence tools (query_logs, query_metrics, lookup_knowledge), their backends and runner."""

from veridiag.tools.args import TOOL_ARGS, LookupKnowledgeArgs, QueryLogsArgs, QueryMetricsArgs
from veridiag.tools.results import ToolCallResult, ToolOutput
from veridiag.tools.runner import Toolbox, ToolRunner, tool_specs
from veridiag.tools.trace import build_trace_summary

__all__ = [
    "TOOL_ARGS",
    "LookupKnowledgeArgs",
    "QueryLogsArgs",
    "QueryMetricsArgs",
    "ToolCallResult",
    "ToolOutput",
    "ToolRunner",
    "Toolbox",
    "build_trace_summary",
    "tool_specs",
]
