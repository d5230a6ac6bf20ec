"""What every role returns: raw text (parsed by the pipeline, never trusted), usage, and — as
data — which engine answered and, after a fallback, which engine failed and why."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field, field_validator

from veridiag.contracts.audit import EngineUsage, EngineUse
from veridiag.contracts.sanitize import clean_text

#: The engines that need no model; a model's engine is ``llm:<model>`` (``RoleModel.label``).
OFFLINE = "offline"
TEMPLATE = "template"
SCRIPTED = "scripted"


class Engine(Protocol):
    """Whatever answers a role names its engine, so what is configured is read off the roles
    themselves rather than a table kept beside them."""

    @property
    def name(self) -> str: ...


class RoleReply(BaseModel):
    text: str | None
    answered_by: EngineUse
    usage: EngineUsage = Field(default_factory=EngineUsage)

    @field_validator("text")
    @classmethod
    def _sanitised(cls, text: str | None) -> str | None:
        """A model's text as stored and parsed: no control or bidi character, no lone surrogate."""
        return None if text is None else clean_text(text)
