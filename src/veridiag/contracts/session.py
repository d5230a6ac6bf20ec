"""A diagnosis session as stored (``diagnosis_session``, docs/spec §23)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

#: ``running`` while its process works on it; ``completed`` with an answer (and a verdict only
#: beside that answer); ``failed`` on an error, with what was known; ``interrupted`` when its
#: process died or it outlived the session timeout (``error`` says which).
SessionStatus = Literal["running", "completed", "failed", "interrupted"]


class SessionRecord(BaseModel):
    id: str
    created_at: datetime
    updated_at: datetime
    query: str
    lang: str | None = None
    status: SessionStatus = "running"
    plan: dict[str, Any] | None = None
    verdict: str | None = None
    final_answer: str | None = None
    self_evaluation: dict[str, Any] | None = Field(
        default=None, description="Audit chain; `verifier_evaluation` as in docs/spec §23."
    )
    rounds: int = 0
    llm_usage: dict[str, Any] | None = None
    error: str | None = None
