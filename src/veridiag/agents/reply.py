"""What every role returns: raw text (parsed by the pipeline, never trusted), usage, and — as
data — which engine answered and, after a fallback, which engine failed and why."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

#: The engines that need no model; a model's engine is ``llm:<model>`` (``RoleModel.label``).
OFFLINE = "offline"
TEMPLATE = "template"
SCRIPTED = "scripted"


class Engine(Protocol):
    """Whatever answers a role names its engine, so what is configured is read off the roles
    themselves rather than a table kept beside them."""

    @property
    def name(self) -> str: ...


class EngineUse(BaseModel):
    """Which engine answered one role call; ``fallback_from`` and ``reason`` say which engine
    was asked first and why it did not answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str = Field(description="The engine that answered: offline, template, scripted or llm:<model>.")
    fallback_from: str | None = Field(default=None, description="The engine asked first, when it failed.")
    reason: str | None = Field(default=None, description="Why the engine asked first did not answer.")

    @property
    def label(self) -> str:
        """The one string form of this record (``offline (fallback)``), as ``ask`` and the audit
        have always shown it."""
        return self.engine if self.fallback_from is None else f"{self.engine} (fallback)"

    @property
    def failure(self) -> str | None:
        """Why the engine asked first did not answer, worded as ``usage.fallbacks`` carries it."""
        return None if self.fallback_from is None else f"{self.fallback_from} failed: {self.reason}"


class RoleReply(BaseModel):
    text: str | None
    answered_by: EngineUse
    usage: dict[str, Any] = Field(default_factory=dict)
