"""The offline skills catalog (``skills.yaml``): data, loaded once, validated."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: Literal["query_logs", "query_metrics", "lookup_knowledge"]
    args: dict[str, Any] = Field(default_factory=dict)
    #: ``query_metrics`` only: these metrics of the plan's service, or every one ("discover").
    metrics: list[str] | Literal["discover"] | None = None
    when: str | None = None
    #: Look this much earlier than the question's window (a change comes before its effect).
    lookback_minutes: int = Field(default=0, ge=0, le=24 * 60)


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    triggers: list[str] = Field(default_factory=list)
    service: str | None = None
    steps: list[Step]


class Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skills: list[Skill]
    aliases: dict[str, str] = Field(default_factory=dict)

    def get(self, skill_id: str) -> Skill:
        return next(skill for skill in self.skills if skill.id == skill_id)


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    text = resources.files("veridiag.agents.offline").joinpath("skills.yaml").read_text(encoding="utf-8")
    return Catalog.model_validate(yaml.safe_load(text))
