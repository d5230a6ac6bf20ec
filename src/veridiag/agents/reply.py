"""What every role returns: raw text (parsed by the pipeline, never trusted), usage, and — as
data — which engine answered and, after a fallback, which engine failed and why."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field

from veridiag.contracts.audit import EngineUsage, EngineUse

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
