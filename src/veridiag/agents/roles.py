"""One interface per role (docs/spec §0.4: planner → executor → verifier → composer).

Engines (``offline``, ``llm``, ``scripted``) implement these, and each names itself. Roles
return raw text: the pipeline parses and checks it, so a role can never put anything in front
of a user directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from veridiag.agents.reply import TEMPLATE, Engine, RoleReply
from veridiag.contracts.composer import ComposerInput
from veridiag.contracts.plan import GivenTime, Plan
from veridiag.contracts.verifier import RetryContext, VerifierPayload
from veridiag.tools.runner import ToolRunner


@dataclass(frozen=True)
class PlanRequest:
    question: str
    lang: str
    #: A moment given with the question (an alert's start): the window is anchored there,
    #: whatever the question's words say.
    given_time: GivenTime | None = None


@dataclass
class ExecuteRequest:
    question: str
    lang: str
    plan: Plan
    round: int
    tools: ToolRunner | None
    retry_context: RetryContext | None = None
    #: ``structured_output_v2.enabled`` (docs/spec §22.2): which contract the Executor is asked for.
    contract: Literal["executor_evidence_v2", "executor_evidence_v1"] = "executor_evidence_v2"


class ComposerRole(Engine, Protocol):
    def compose(self, composer_input: ComposerInput) -> RoleReply: ...


class PlannerRole(Engine, Protocol):
    def plan(self, request: PlanRequest) -> RoleReply: ...


class ExecutorRole(Engine, Protocol):
    def execute(self, request: ExecuteRequest) -> RoleReply: ...


class VerifierRole(Engine, Protocol):
    def verify(self, payload: VerifierPayload) -> RoleReply: ...


#: The configured name of a missing verifier: the pipeline then fails closed (every claim
#: ``unsupported``).
NO_VERIFIER = "fallback"


@dataclass
class Roles:
    """The four roles of one pipeline; a missing verifier or composer falls back in code."""

    planner: PlannerRole
    executor: ExecutorRole
    verifier: VerifierRole | None = None
    composer: ComposerRole | None = None

    @property
    def names(self) -> dict[str, str]:
        """The engine configured for each role, as the roles name themselves (a missing composer
        is the template the pipeline uses in its place)."""
        return {
            "planner": self.planner.name,
            "executor": self.executor.name,
            "verifier": self.verifier.name if self.verifier is not None else NO_VERIFIER,
            "composer": self.composer.name if self.composer is not None else TEMPLATE,
        }
