"""Evidence tools (registered by id in ``args.TOOL_ARGS``), their backends and runner."""

from typing import TYPE_CHECKING

from veridiag._lazy import lazy_exports

if TYPE_CHECKING:
    from veridiag.tools.args import TOOL_ARGS, LookupKnowledgeArgs, QueryLogsArgs, QueryMetricsArgs
    from veridiag.tools.results import ToolCallResult, ToolOutput
    from veridiag.tools.runner import Toolbox, ToolRunner, tool_specs
    from veridiag.tools.trace import build_trace_summary

# Lazy (``veridiag._lazy``): the runner imports the store, which ``veridiag.tools.factory`` or
# the importers (``veridiag.ingest``, writing through ``tools.backends.embedded``) alone do not need.
__getattr__ = lazy_exports(
    __name__,
    {
        ".args": ("TOOL_ARGS", "LookupKnowledgeArgs", "QueryLogsArgs", "QueryMetricsArgs"),
        ".results": ("ToolCallResult", "ToolOutput"),
        ".runner": ("Toolbox", "ToolRunner", "tool_specs"),
        ".trace": ("build_trace_summary",),
    },
)

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
