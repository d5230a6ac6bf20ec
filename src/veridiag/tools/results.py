"""What a backend returns and what the runner hands back after persisting it."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field, field_validator

from veridiag.contracts.invocation import InvocationStatus
from veridiag.contracts.json import JsonObject
from veridiag.tools.records import Evidence

#: Characters of tool output a model sees per call (the stored output keeps more).
MODEL_CHARS = 6000


class ToolOutput(BaseModel):
    """A backend's answer. ``text`` is stored in full (capped by the store); ``model_text``
    — what a model is shown — must be drawn from ``text`` so any excerpt it quotes exists there."""

    status: InvocationStatus
    text: str = ""
    model_text: str | None = None
    #: What the backend keeps beside the text, as stored: JSON of the backend's own shape.
    retrieval_details: JsonObject = Field(default_factory=dict)
    error: str | None = None
    #: The typed records behind ``text``, one per series or query (in memory: the store keeps the
    #: text, and ``tools/drawn.py``'s extract of them to draw by).
    evidence: list[Evidence] = Field(default_factory=list, exclude=True)

    @field_validator("retrieval_details", mode="before")
    @classmethod
    def _as_json(cls, details: object) -> object:
        """A backend's details as the store keeps them: a value JSON has no type for (a datetime, a
        tuple) in its JSON spelling or as its text, never a failed call."""
        return (
            json.loads(json.dumps(details, ensure_ascii=False, default=str)) if isinstance(details, dict) else details
        )

    def for_model(self) -> str:
        text = self.model_text if self.model_text is not None else self.text
        if len(text) > MODEL_CHARS:
            cut = text.rfind("\n", 0, MODEL_CHARS)
            text = text[: cut if cut > 0 else MODEL_CHARS] + "\n…(truncated)"
        return text


class ToolCallResult(BaseModel):
    """A persisted tool call: the id the Executor cites, and what it may see."""

    invocation_id: int
    tool_name: str
    status: InvocationStatus
    output: ToolOutput

    def for_model(self) -> str:
        """Tool output as delimited data, never as instructions (docs/DESIGN.md §3); a log line cannot
        close the delimiter early."""
        body = self.output.for_model().replace("</tool_output", "<\\/tool_output")
        return (
            f'<tool_output invocation_id="{self.invocation_id}" tool="{self.tool_name}" status="{self.status}">\n'
            f"{body}\n</tool_output>"
        )
