"""One interface per role (docs/spec §0.4: planner → executor → verifier → composer).

Engines (``scripted`` here; ``llm`` and ``offline`` later) implement these. Roles return
raw text: the pipeline parses and checks it, so a role can never put anything in front
of a user directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from veridiag.agents.composer import ComposerRole
from veridiag.agents.reply import RoleReply
from veridiag.tools.runner import ToolRunner


@dataclass(frozen=True)
class PlanRequest:
    question: str
    lang: str


@dataclass
class ExecuteRequest:
    question: str
    lang: str
    plan: dict[str, Any]
    round: int
    tools: ToolRunner | None
    retry_context: dict[str, Any] | None = None
    #: ``structured_output_v2.enabled`` (docs/spec §22.2): which contract the Executor is asked for.
    contract: Literal["executor_evidence_v2", "executor_evidence_v1"] = "executor_evidence_v2"


class PlannerRole(Protocol):
    def plan(self, request: PlanRequest) -> RoleReply: ...


class ExecutorRole(Protocol):
    def execute(self, request: ExecuteRequest) -> RoleReply: ...


class VerifierRole(Protocol):
    def verify(self, payload: dict[str, Any]) -> RoleReply: ...


@dataclass
class Roles:
    """The four roles of one pipeline; a missing verifier or composer falls back in code."""

    planner: PlannerRole
    executor: ExecutorRole
    verifier: VerifierRole | None = None
    composer: ComposerRole | None = None
    names: dict[str, str] = field(default_factory=dict)
