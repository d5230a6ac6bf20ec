"""One fallback for every role, in the spirit of pydantic-ai's ``FallbackModel``: ask the
primary engine; when it cannot answer, ask the fallback, and record on the reply — as data —
which engine answered, which one failed and why."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from veridiag.agents.reply import Engine, RoleReply
from veridiag.agents.roles import ComposerRole, ExecuteRequest, ExecutorRole, PlannerRole, PlanRequest, VerifierRole
from veridiag.contracts.audit import EngineUsage
from veridiag.contracts.composer import ComposerInput
from veridiag.contracts.verifier import VerifierPayload


class EngineFailedError(Exception):
    """A primary engine could not answer (a model timed out, refused, was cut off, wrote no
    plan). ``usage`` is what the attempt cost, so the audit keeps the tokens spent on it."""

    def __init__(self, reason: str, usage: EngineUsage | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.usage: EngineUsage = usage or EngineUsage()


RoleT = TypeVar("RoleT", bound=Engine)


class FallbackRole(Generic[RoleT]):
    """``primary`` answers unless it raises ``EngineFailedError``; then ``fallback`` does. Any other
    exception is not a failed answer but a fault, and goes up to the pipeline, which fails
    closed. Each role method is typed for a wrapper of that role only: mypy refuses ``verify`` on
    a ``FallbackRole[PlannerRole]``."""

    def __init__(self, primary: RoleT, fallback: RoleT) -> None:
        self.primary = primary
        self.fallback = fallback

    @property
    def name(self) -> str:
        """The configured engine is the one asked first."""
        return self.primary.name

    def plan(self: FallbackRole[PlannerRole], request: PlanRequest) -> RoleReply:
        return self._answer(lambda role: role.plan(request))

    def execute(self: FallbackRole[ExecutorRole], request: ExecuteRequest) -> RoleReply:
        return self._answer(lambda role: role.execute(request))

    def verify(self: FallbackRole[VerifierRole], payload: VerifierPayload) -> RoleReply:
        return self._answer(lambda role: role.verify(payload))

    def compose(self: FallbackRole[ComposerRole], composer_input: ComposerInput) -> RoleReply:
        return self._answer(lambda role: role.compose(composer_input))

    def _answer(self, ask: Callable[[RoleT], RoleReply]) -> RoleReply:
        try:
            return ask(self.primary)
        except EngineFailedError as failure:
            reply = ask(self.fallback)
            answered_by = reply.answered_by.model_copy(
                update={"fallback_from": self.primary.name, "reason": failure.reason}
            )
            return reply.model_copy(update={"answered_by": answered_by, "usage": {**reply.usage, **failure.usage}})
