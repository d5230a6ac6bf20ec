"""The answer's first line: the time window and services examined, and how they were chosen.

Built by code from the plan (what the question said) and the executor's ``scope`` (the period
it settled on), never by a model, and put in front of every answer — template or composed —
so a misread date is the first thing a reader sees.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo

from veridiag.contracts.material import ExecutorScope
from veridiag.contracts.plan import Plan
from veridiag.text.yaml_files import load_yaml


@lru_cache(maxsize=1)
def _phrases() -> dict[str, dict[str, str]]:
    text = resources.files("veridiag.pipeline").joinpath("scope.yaml").read_text(encoding="utf-8")
    loaded: dict[str, dict[str, str]] = load_yaml(text)
    return loaded


def scope_line(plan: Plan, scope: ExecutorScope | None, lang: str) -> str | None:
    """One line in ``lang``; None when the plan carries no window (a plan that failed to parse)."""
    words = _phrases()["zh" if lang == "zh" else "en"]
    start, end = moment(plan.start), moment(plan.end)
    if start is None or end is None:
        return None
    zone, zone_name = plan_zone(plan)
    scope = scope or ExecutorScope()
    focus_start, focus_end = (moment(scope.focus[0]), moment(scope.focus[1])) if scope.focus else (None, None)
    named = _services(plan, scope, words)
    values = {
        "start": _show(start, zone),
        "end": _show(end, zone),
        "tz": zone_name,
        "phrase": plan.time.phrase or "",
        "services": named,
        "focus_start": _show(focus_start, zone) if focus_start else "",
        "focus_end": _show(focus_end, zone) if focus_end else "",
        "after_phrase": plan.after_change_phrase or "",
        "after_at": _show(after_at, zone) if (after_at := moment(scope.after_change_at)) else "",
    }
    narrowed = focus_start is not None and (focus_start, focus_end) != (start, end)
    if plan.time.kind == "newest":  # "still failing?": the newest hour of data
        keys = ("newest", "newest")
    elif plan.time.kind == "given":  # a moment handed in (an alert's start), not words of the question
        keys = ("given_focus", "given")
    else:
        keys = ("focus", "question") if plan.explicit_time else ("chosen", "recent")
    key = keys[0] if narrowed else keys[1]
    if key == "chosen":  # worded as the period was chosen (focus.py), never as another way
        key = {"asked_lines": "anchored", "most_anomalous": "chosen"}.get(scope.chosen or "", "chosen_other")
        if scope.chosen == "after_change" and values["after_at"]:
            key = "after_change"
        elif f"chosen_{scope.chosen}" in words:
            key = f"chosen_{scope.chosen}"
    line = words[key].format(**values)
    # a named service without data: a sentence of its own, after the line's
    missing = [s for s in [*plan.examined_services, *plan.unknown_services] if s in scope.without_data]
    if missing:
        # what the survey found has no data, or (no survey stated) what no call read data for
        key = "without_data" if scope.examined else "not_read"
        line += words[key if len(missing) == 1 else f"{key}_many"].format(services=", ".join(missing))
    return line + _read_as(plan, words) + (words["utc_note"] if zone_name != "UTC" else "")


def _services(plan: Plan, scope: ExecutorScope, words: dict[str, str]) -> str:
    """What was examined, exactly: every service with data (how many), or the named services
    with their callers and callees; a named service without data is said to have none."""
    services = plan.examined_services
    if scope.examined and scope.surveyed:
        said = words["all_with_data_one" if len(scope.examined) == 1 else "all_with_data"].format(
            count=len(scope.examined)
        )
        if services:
            said += words["asked_about"].format(services=", ".join(services))
    elif scope.examined and scope.neighbours:
        said = words["with_neighbours_one" if len(scope.neighbours) == 1 else "with_neighbours"].format(
            services=", ".join(services), count=len(scope.neighbours), neighbours=", ".join(scope.neighbours)
        )
    elif scope.surveyed or not services:
        said = words["all_services"] if scope.surveyed else words["none"]
    else:
        said = ", ".join(services)
    return said


def _read_as(plan: Plan, words: dict[str, str]) -> str:
    """Which service each misspelt word of the question was read as."""
    return "".join(words["read_as"].format(written=r.written, service=r.service) for r in plan.read_as)


def plan_zone(plan: Plan) -> tuple[ZoneInfo, str]:
    """The zone the plan read the question in (the ``timezone`` setting), and its name; UTC
    when the stored name is no zone. Every time the answer and the session page show is in it."""
    name = plan.time.timezone or "UTC"
    try:
        return ZoneInfo(name), name
    except (ValueError, KeyError):
        return ZoneInfo("UTC"), "UTC"


def moment(value: Any) -> datetime | None:
    """A stored ISO time (a plan's or a scope's), aware; None when it is none."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _show(moment: datetime, zone: ZoneInfo) -> str:
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M")
