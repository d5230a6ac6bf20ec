"""``tool_trace_summary`` (docs/spec §14): the Verifier's evidence index, one entry per call."""

from __future__ import annotations

from collections.abc import Iterable

from veridiag.contracts.invocation import InvocationRecord
from veridiag.contracts.trace import ToolTraceEntry

#: Characters of output per entry: enough to judge a claim, bounded for the prompt.
SUMMARY_CHARS = 800


def build_trace_summary(
    invocations: Iterable[InvocationRecord], summary_chars: int = SUMMARY_CHARS
) -> list[ToolTraceEntry]:
    entries = []
    for index, invocation in enumerate(sorted(invocations, key=lambda i: i.id), start=1):
        text = invocation.output or invocation.output_preview or (invocation.error or "")
        if len(text) > summary_chars:
            cut = text.rfind("\n", 0, summary_chars)
            text = text[: cut if cut > summary_chars // 2 else summary_chars]
        entries.append(
            ToolTraceEntry(
                trace_ref=f"trace-{index}",
                tool_name=invocation.tool_name,
                invocation_ids=[invocation.id],
                status=invocation.status,
                output_summary=text,
            )
        )
    return entries
