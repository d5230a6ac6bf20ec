"""The Executor's three tools as model tools, behind a call budget and a duplicate guard.

Every call that runs goes through ToolRunner (persisted before the model sees it); a refused
call (over budget, or the same arguments again) is not run and tells the model which
invocation to cite instead. Refusals are counted for the audit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict

from veridiag.contracts.audit import RefusedCall
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.text.render import invocation_json
from veridiag.tools.runner import ToolRunner, tool_specs

if TYPE_CHECKING:
    from pydantic_ai import Tool


class ToolUse(TypedDict):
    """The evidence tools' part of the executor's ``EngineUsage``."""

    tool_calls_run: int
    tool_calls_refused: list[RefusedCall]
    budget: int


class EvidenceTools:
    def __init__(self, runner: ToolRunner, budget: int) -> None:
        self.runner = runner
        self.budget = budget
        self.ran: dict[str, int] = {}
        self.refused: list[RefusedCall] = []

    def call(self, tool_name: str, arguments: JsonObject) -> str:
        """``arguments`` as the model sent them; ``ToolRunner`` validates them against the tool."""
        key = f"{tool_name} {invocation_json(arguments)}"
        if key in self.ran:
            self.refused.append(RefusedCall(tool=tool_name, reason="duplicate", invocation_id=self.ran[key]))
            return (
                f"Not run: the same {tool_name} call already ran as invocation {self.ran[key]}. "
                "Cite that invocation id; do not repeat calls."
            )
        if len(self.ran) >= self.budget:
            self.refused.append(RefusedCall(tool=tool_name, reason="budget"))
            return (
                f"Not run: the tool-call budget ({self.budget}) is used up. "
                "Output the executor_evidence_v2 JSON now from the evidence you have; list gaps in missing_info."
            )
        result = self.runner.run(tool_name, arguments)
        self.ran[key] = result.invocation_id
        return result.for_model()

    def tools(self) -> list[Tool[Any]]:
        from pydantic_ai import Tool

        return [
            Tool.from_schema(self._bound(spec["name"]), spec["name"], spec["description"], spec["parameters"])
            for spec in tool_specs()
        ]

    def _bound(self, tool_name: str) -> Callable[..., str]:
        def run(**arguments: JsonValue) -> str:
            return self.call(tool_name, arguments)

        run.__name__ = tool_name
        return run

    @property
    def summary(self) -> ToolUse:
        return ToolUse(tool_calls_run=len(self.ran), tool_calls_refused=self.refused, budget=self.budget)
