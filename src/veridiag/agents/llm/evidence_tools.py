"""The Executor's three tools as model tools, behind a call budget and a duplicate guard.

Every call that runs goes through ToolRunner (persisted before the model sees it); a refused
call (over budget, or the same arguments again) is not run and tells the model which
invocation to cite instead. Refusals are counted for the audit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from veridiag.text.render import invocation_json
from veridiag.tools.runner import ToolRunner, tool_specs

if TYPE_CHECKING:
    from pydantic_ai import Tool


class EvidenceTools:
    def __init__(self, runner: ToolRunner, budget: int) -> None:
        self.runner = runner
        self.budget = budget
        self.ran: dict[str, int] = {}
        self.refused: list[dict[str, Any]] = []

    def call(self, tool_name: str, arguments: dict[str, Any]) -> str:
        key = f"{tool_name} {invocation_json(arguments)}"
        if key in self.ran:
            self.refused.append({"tool": tool_name, "reason": "duplicate", "invocation_id": self.ran[key]})
            return (
                f"Not run: the same {tool_name} call already ran as invocation {self.ran[key]}. "
                "Cite that invocation id; do not repeat calls."
            )
        if len(self.ran) >= self.budget:
            self.refused.append({"tool": tool_name, "reason": "budget"})
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
        def run(**arguments: Any) -> str:
            return self.call(tool_name, arguments)

        run.__name__ = tool_name
        return run

    @property
    def summary(self) -> dict[str, Any]:
        return {"tool_calls_run": len(self.ran), "tool_calls_refused": self.refused, "budget": self.budget}
