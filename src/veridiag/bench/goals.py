"""The performance goals (``goals.yaml``) checked against a bench report.

Goals are data so that a changed target is a one-line review, and so that ``--json`` and the
printed table say the same thing: each row names the measured key, its baseline when the goal is
a ratio against something measured in the same run, and whether it is met.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, model_validator

from veridiag.text.yaml_files import parse_yaml, validate_yaml

GoalStatus = Literal["met", "missed", "not measured"]


class GoalFileError(ValueError):
    """``goals.yaml`` does not say what a goal is."""


class Goal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    what: str
    #: Dotted path into the bench report, e.g. ``tools.query_logs_p99_ms``.
    key: str
    #: The value is ``key / per`` — a ratio against a baseline measured in the same run.
    per: str | None = None
    at_most: float | None = None
    at_least: float | None = None

    @model_validator(mode="after")
    def _one_bound(self) -> Self:
        if (self.at_most is None) == (self.at_least is None):
            raise ValueError("give exactly one of at_most / at_least")
        return self

    @property
    def target(self) -> str:
        bound = f"≤ {self.at_most:g}" if self.at_most is not None else f"≥ {self.at_least:g}"
        return f"{bound}×" if self.per else bound

    def met_by(self, value: float) -> bool:
        if self.at_most is not None:
            return value <= self.at_most
        return self.at_least is not None and value >= self.at_least


class GoalCheck(BaseModel):
    """One row of the table: the goal, the value measured in this report, and the verdict."""

    what: str
    key: str
    per: str | None
    target: str
    value: float | None
    status: GoalStatus


class _GoalFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    goals: list[Goal]


@cache
def goals() -> tuple[Goal, ...]:
    origin = "veridiag/bench/goals.yaml"
    text = files("veridiag.bench").joinpath("goals.yaml").read_text(encoding="utf-8")
    data, node = parse_yaml(text, origin, GoalFileError)
    return tuple(validate_yaml(_GoalFile, data, node, origin, GoalFileError, whole="goals").goals)


def _number(report: Mapping[str, object], path: str) -> float | None:
    """The number at ``path`` (``a.b``) in ``report``; None when absent or not a number."""
    node: object = report
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    if isinstance(node, bool) or not isinstance(node, int | float):
        return None
    return float(node)


def check_goals(report: Mapping[str, object]) -> list[GoalCheck]:
    """Every goal against ``report``; a goal whose numbers the report lacks is "not measured",
    never met (a benchmark that did not run proves nothing)."""
    checks = []
    for goal in goals():
        value = _number(report, goal.key)
        if value is not None and goal.per is not None:
            baseline = _number(report, goal.per)
            value = value / baseline if baseline else None
        status: GoalStatus = "not measured" if value is None else "met" if goal.met_by(value) else "missed"
        checks.append(
            GoalCheck(
                what=goal.what,
                key=goal.key,
                per=goal.per,
                target=goal.target,
                value=None if value is None else round(value, 3),
                status=status,
            )
        )
    return checks
