"""How anything outside the store sees a recorded tool call.

The Gatekeeper reads invocations only through ``InvocationSource`` so it stays
independent of the store (docs/DESIGN.md §9); ``InMemoryInvocations`` serves tests, the
``gatekeeper check`` command and other stacks that pass invocations as JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from veridiag.contracts.json import JsonObject

InvocationStatus = Literal["ok", "no_data", "error"]


@runtime_checkable
class InvocationView(Protocol):
    """The fields of a ``tool_invocation`` row the guard needs."""

    @property
    def id(self) -> int: ...
    @property
    def session_id(self) -> str: ...
    @property
    def tool_name(self) -> str: ...
    @property
    def status(self) -> InvocationStatus: ...
    @property
    def output(self) -> str: ...
    @property
    def output_preview(self) -> str: ...
    @property
    def retrieval_details(self) -> Mapping[str, Any] | None: ...
    @property
    def arguments(self) -> Mapping[str, Any]: ...


class InvocationSource(Protocol):
    """Looks invocations up by id, whatever session they belong to."""

    def get_invocations(self, ids: Iterable[int]) -> Mapping[int, InvocationView]:
        """Return the invocations that exist among ``ids``; unknown ids are simply absent."""
        ...


class InvocationRecord(BaseModel):
    """A tool invocation as plain data (a ``tool_invocation`` row; the JSON ``gatekeeper check`` reads)."""

    id: int
    session_id: str
    tool_name: str
    status: InvocationStatus = "ok"
    output: str = ""
    output_preview: str = ""
    retrieval_details: JsonObject | None = None
    arguments: JsonObject = Field(default_factory=dict)
    error: str | None = None
    round: int = 1
    output_truncated: bool = False
    started_at: datetime | None = None
    latency_ms: float | None = None
    #: The typed records the tool produced (``tools/drawn.py``'s ``Drawn`` as JSON), for the pages
    #: that draw the output — never grounded: ``InvocationView`` does not name it, so the
    #: Gatekeeper cannot read it. None for invocations stored before it (migration 0009).
    drawn: JsonObject | None = None


class InMemoryInvocations:
    """An ``InvocationSource`` over a list of records."""

    def __init__(self, records: Iterable[InvocationView]) -> None:
        self._by_id: dict[int, InvocationView] = {}
        for record in records:
            if record.id in self._by_id:
                raise ValueError(f"duplicate invocation id {record.id}")
            self._by_id[record.id] = record

    def get_invocations(self, ids: Iterable[int]) -> Mapping[int, InvocationView]:
        return {i: self._by_id[i] for i in ids if i in self._by_id}

    def __len__(self) -> int:
        return len(self._by_id)
