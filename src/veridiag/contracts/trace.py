"""The tool trace summary handed to the Verifier as its evidence index (docs/spec §14)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ToolTraceEntry(BaseModel):
    """One tool call, summarised: enough to cite, bounded in size."""

    trace_ref: str
    tool_name: str
    invocation_ids: list[int] = Field(default_factory=list)
    status: str = "ok"
    output_summary: str = ""
