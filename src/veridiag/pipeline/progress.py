"""The progress events a diagnosis emits, one model per stage.

A listener hears ``(stage, details)``: ``details`` is the event's JSON, its fields in the order
declared here and the session id last — exactly what ``POST /api/v1/chat/stream`` sends as an
event's data and ``veridiag ask`` prints while it runs. The models fix what each stage says; the
listener keeps receiving plain JSON, so existing listeners need no change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from veridiag.contracts.build import ON_FIRST_USE
from veridiag.contracts.composer import AnswerSource
from veridiag.contracts.invocation import InvocationStatus
from veridiag.contracts.json import JsonObject
from veridiag.contracts.parsing import ParseState
from veridiag.contracts.verifier import Verdict

#: ``progress(stage, details)``: a stage's name and its event's JSON (``session_id`` included).
Progress = Callable[[str, JsonObject], None]


class StageProgress(BaseModel):
    """One event; ``stage`` names it (the SSE event name)."""

    model_config = ConfigDict(frozen=True)

    stage: ClassVar[str]

    def event(self, session_id: str) -> JsonObject:
        """The JSON a listener hears: these fields, then the session they belong to."""
        return {**self.model_dump(mode="json"), "session_id": session_id}


class SessionStarted(StageProgress):
    stage: ClassVar[str] = "session"
    lang: Literal["zh", "en"]


class PlanMade(StageProgress):
    stage: ClassVar[str] = "plan"
    skill: str
    service: str | None
    start: str | None
    end: str | None


class ToolCalled(StageProgress):
    stage: ClassVar[str] = "tool"
    invocation_id: int
    tool: str
    status: InvocationStatus
    round: int


class GatekeeperChecked(StageProgress):
    stage: ClassVar[str] = "gatekeeper"
    round: int
    parse_status: ParseState
    #: ``off`` when the Gatekeeper is switched off.
    status: str
    failed_rules: list[str]


class VerifierJudged(StageProgress):
    stage: ClassVar[str] = "verifier"
    round: int
    verdict: Verdict
    verifier_status: str
    corrections: int


class AnswerComposed(StageProgress):
    stage: ClassVar[str] = "composer"
    answer_source: AnswerSource
    reason: str


class DiagnosisDone(StageProgress):
    stage: ClassVar[str] = "done"
    verdict: Verdict
    rounds: int


class DiagnosisFailed(StageProgress):
    model_config = ON_FIRST_USE

    stage: ClassVar[str] = "failed"
    error: str
