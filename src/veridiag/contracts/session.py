"""A diagnosis session as stored (``diagnosis_session``, spec §23)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

SessionStatus = Literal["running", "completed", "failed"]


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
        default=None, description="Audit chain; `verifier_evaluation` as in spec §23."
    )
    rounds: int = 0
    llm_usage: dict[str, Any] | None = None
    error: str | None = None
