"""The ``scripted`` engine: replays given raw outputs per role (and per round).

Used by eval fixtures and tests so every path — malformed outputs, exceptions in any
role, retries — can be driven without a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from veridiag.agents.reply import SCRIPTED, RoleReply
from veridiag.agents.roles import ComposerRole, ExecuteRequest, PlanRequest, Roles, VerifierRole
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.composer import ComposerInput
from veridiag.contracts.verifier import VerifierPayload

Script = str | Sequence[str | None] | BaseException | None


class _Replay:
    """Texts for rounds 1, 2, …; the last repeats. An exception is raised instead."""

    name = SCRIPTED

    def __init__(self, script: Script) -> None:
        self.script = script
        self.calls: list[Any] = []

    def reply(self, index: int, request: Any) -> RoleReply:
        self.calls.append(request)
        if isinstance(self.script, BaseException):
            raise self.script
        if self.script is None or isinstance(self.script, str):
            text = self.script
        else:
            texts = list(self.script)
            text = texts[min(index, len(texts) - 1)] if texts else None
        return RoleReply(text=text, answered_by=EngineUse(engine=self.name))


class ScriptedPlanner(_Replay):
    def plan(self, request: PlanRequest) -> RoleReply:
        return self.reply(0, request)


class ScriptedExecutor(_Replay):
    def execute(self, request: ExecuteRequest) -> RoleReply:
        return self.reply(request.round - 1, request)


class ScriptedVerifier(_Replay):
    def verify(self, payload: VerifierPayload) -> RoleReply:
        return self.reply(payload.round - 1, payload)


class ScriptedComposer(_Replay):
    def compose(self, composer_input: ComposerInput) -> RoleReply:
        return self.reply(len(self.calls), composer_input)


def scripted_roles(
    *,
    executor: Script,
    planner: Script = '{"skill": "scripted", "steps": []}',
    verifier: Script = None,
    composer: Script = None,
    fallback_verifier: VerifierRole | None = None,
) -> Roles:
    """Roles replaying the given raw texts. ``verifier`` None → ``fallback_verifier`` (e.g. the
    offline verifier) or, without one, the pipeline's fail-closed fallback; ``composer`` None →
    the template."""
    composer_role: ComposerRole | None = ScriptedComposer(composer) if composer is not None else None
    return Roles(
        planner=ScriptedPlanner(planner),
        executor=ScriptedExecutor(executor),
        verifier=ScriptedVerifier(verifier) if verifier is not None else fallback_verifier,
        composer=composer_role,
    )
