"""A diagnosis session as stored (``diagnosis_session``, docs/spec §23)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from veridiag.contracts.build import ON_FIRST_USE
from veridiag.contracts.json import JsonObject

#: ``running`` while its process works on it; ``completed`` with an answer (and a verdict only
#: beside that answer); ``failed`` on an error, with what was known; ``interrupted`` when its
#: process died or it outlived the session timeout (``error`` says which).
SessionStatus = Literal["running", "completed", "failed", "interrupted"]
#: Where a session came from: ``veridiag ask``, the HTTP API, the workbench's ask box, an alert,
#: an MCP client, an eval or a benchmark run.
SessionSource = Literal["cli", "api", "web", "alert", "mcp", "eval", "bench"]


# The row as stored: its JSON columns stay JSON here (the edge); readers validate what they
# use (``SelfEvaluation``, ``Plan``). No docstring: it would become the committed schema's text.
class SessionRecord(BaseModel):
    id: str
    created_at: datetime
    updated_at: datetime
    query: str
    lang: str | None = None
    status: SessionStatus = "running"
    plan: JsonObject | None = None
    verdict: str | None = None
    final_answer: str | None = None
    self_evaluation: JsonObject | None = Field(
        default=None, description="Audit chain; `verifier_evaluation` as in docs/spec §23."
    )
    rounds: int = 0
    llm_usage: JsonObject | None = None
    error: str | None = None
    deliveries: list[JsonObject] = Field(
        default_factory=list, description="Each attempt to post the session to chat (DeliveryAttempt), oldest first."
    )
    source: SessionSource | None = Field(default=None, description="Where the session came from; null before 0010.")
    answer_line: str | None = Field(
        default=None, description="The answer's line that answers the question (the first after the scope)."
    )
    service: str | None = Field(default=None, description="The service that line is about, when it names one.")


class ProgressEvent(BaseModel):
    """One stage event as a diagnosis emitted it (``pipeline/progress.py``) and its session
    stores it: the SSE event name and its data."""

    model_config = ON_FIRST_USE

    stage: str
    details: JsonObject


class SessionProgress(BaseModel):
    """What a reader following a session gets per look: the session (list columns, status as
    reconciled) and the stage events after those it had; ``read`` counts every event so far."""

    model_config = ON_FIRST_USE

    session: SessionRecord
    events: list[ProgressEvent]
    read: int
