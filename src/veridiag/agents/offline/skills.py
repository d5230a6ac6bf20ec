"""The offline skills catalogue (``skills.yaml``) and service aliases (``aliases.yaml``):
data, loaded once, validated; a skill is chosen from the question and the data it would read."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from veridiag.contracts.plan import Step
from veridiag.text.yaml_files import load_yaml


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    triggers: list[str] = Field(default_factory=list)
    #: Words in service and metric names that suggest this skill fits the data.
    signals: list[str] = Field(default_factory=list)
    #: The data the skill needs of the services examined.
    requires: Literal["any", "logs", "metrics"] = "any"
    runbook_terms: str = ""
    steps: list[Step]


class Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skills: list[Skill]
    #: Words too common in operations to make a runbook match (timeout, error, p99 …).
    generic_terms: list[str] = Field(default_factory=list)
    #: Words that make a template read as a failure in logs that carry no level.
    failure_words: list[str] = Field(default_factory=list)
    #: Change kind (``change``: any) → words asking about what followed such a change.
    after_change: dict[str, list[str]] = Field(default_factory=dict)

    def asked_change(self, question: str) -> tuple[str, str] | None:
        """(kind, the words) when the question asks what followed a change; the earliest words win."""
        lowered = question.lower()
        found = [
            (at, kind, word)
            for kind, words in self.after_change.items()
            for word in words
            if (at := lowered.find(word.lower())) >= 0
        ]
        if not found:
            return None
        _at, kind, word = min(found, key=lambda item: (item[0], -len(item[2])))
        return kind, word

    def get(self, skill_id: str) -> Skill:
        return next(skill for skill in self.skills if skill.id == skill_id)


class TermWords(BaseModel):
    """``terms.yaml``: business words → the words logs write for them; the HTTP status pattern."""

    model_config = ConfigDict(extra="forbid")

    words: dict[str, list[str]]
    status: re.Pattern[str]


class Aliases(RootModel[dict[str, list[str]]]):
    """Question word → fragments of service names."""


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    return Catalog.model_validate(_load("skills.yaml"))


@lru_cache(maxsize=1)
def term_words() -> TermWords:
    return TermWords.model_validate(_load("terms.yaml"))


@lru_cache(maxsize=1)
def aliases() -> dict[str, list[str]]:
    return Aliases.model_validate(_load("aliases.yaml")).root


def _load(name: str) -> Any:
    return load_yaml(resources.files("veridiag.agents.offline").joinpath(name).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class DataShape:
    """What the services a question is about hold: which kinds, and the names to match signals on."""

    has_logs: bool
    has_metrics: bool
    names: Sequence[str] = ()


def choose_skill(question: str, data: DataShape | None = None) -> Skill:
    """The skill whose triggers the question uses most (longer triggers are more specific),
    plus the signals the data shows; a skill whose required data is absent is never chosen.
    Without triggers or signals: the generic skill, or the one made for the data there is."""
    lowered = question.lower()
    names = " ".join(data.names).lower() if data else ""
    scored = []
    for index, skill in enumerate(catalog().skills):
        if data is not None and not _has_required(skill, data):
            continue
        score = sum(len(t) for t in skill.triggers if t.lower() in lowered)
        score += sum(3 for signal in skill.signals if signal in names)
        scored.append((score, -index, skill))
    best = max(scored, key=lambda item: (item[0], item[1]), default=None)
    if best is not None and best[0] > 0:
        return best[2]
    if data is not None and data.has_logs != data.has_metrics:
        return catalog().get("logs_only" if data.has_logs else "metrics_only")
    return catalog().get("generic")


def _has_required(skill: Skill, data: DataShape) -> bool:
    if skill.requires == "logs":
        return data.has_logs and not data.has_metrics
    if skill.requires == "metrics":
        return data.has_metrics and not data.has_logs
    tools = {step.tool for step in skill.steps}
    # A skill built on both kinds of data still fits a service with one of them.
    return (data.has_logs and "query_logs" in tools) or (data.has_metrics and "query_metrics" in tools)
