"""Offline planner: picks a skill by its triggers and fills service, ids and the time window
from the question ("10点以后", "since 10:00", "last 30 min", "订单123")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from veridiag.agents.offline.skills import Skill, catalog
from veridiag.agents.reply import RoleReply
from veridiag.agents.roles import PlanRequest

_CLOCK = re.compile(
    r"(?:since|after|from|at)\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm)?|(\d{1,2})\s*(?:点|時)\s*(?:(\d{1,2})\s*分|半)?"
    r"|(?<![\d:])(\d{1,2}):(\d{2})(?![\d:])",
    re.IGNORECASE,
)
_RELATIVE = re.compile(r"(?:last|past|最近|过去)\s*(\d+)\s*(min(?:ute)?s?|分钟|h(?:ours?)?|小时)", re.IGNORECASE)
_ORDER = re.compile(r"(?:订单|order)\s*(?:id|号|#)?\s*[:=：#]?\s*([A-Za-z0-9-]*\d[A-Za-z0-9-]*)", re.IGNORECASE)
#: How far back a question without a time looks.
DEFAULT_LOOKBACK = timedelta(hours=12)


class Environment(Protocol):
    """What the planner needs to know about the evidence backend."""

    def now(self) -> datetime: ...
    def services(self) -> list[str]: ...


@dataclass(frozen=True)
class Slots:
    service: str | None
    order_id: str | None
    start: datetime
    end: datetime
    explicit_time: bool


def _window(question: str, now: datetime) -> tuple[datetime, datetime, bool]:
    """(start, end, whether the question gave the time)."""
    relative = _RELATIVE.search(question)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2).lower()
        delta = timedelta(hours=amount) if unit.startswith(("h", "小")) else timedelta(minutes=amount)
        return now - delta, now, True
    clock = _CLOCK.search(question)
    if clock:
        groups = clock.groups()
        hour = int(groups[0] or groups[3] or groups[5])
        minute = int(groups[1] or groups[4] or groups[6] or (30 if "半" in clock.group() else 0))
        if groups[2] and groups[2].lower() == "pm" and hour < 12:
            hour += 12
        if hour < 24 and minute < 60:
            start = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
            if start > now:
                start -= timedelta(days=1)
            return start, now, True
    return now - DEFAULT_LOOKBACK, now, False


def choose_skill(question: str) -> Skill:
    lowered = question.lower()
    # Longer triggers are more specific: "database" outweighs "order" in "orders".
    scored = [
        (sum(len(t) for t in skill.triggers if t.lower() in lowered), index, skill)
        for index, skill in enumerate(catalog().skills)
    ]
    best = max(scored, key=lambda item: (item[0], -item[1]))
    return best[2] if best[0] > 0 else catalog().get("generic")


def fill_slots(question: str, skill: Skill, environment: Environment) -> Slots:
    lowered = question.lower()
    known = sorted(environment.services(), key=len, reverse=True)
    named = next((s for s in known if re.search(rf"(?<![\w-]){re.escape(s.lower())}(?![\w-])", lowered)), None)
    alias = next((service for word, service in catalog().aliases.items() if word in question), None)
    service = named or skill.service or alias or (known[0] if len(known) == 1 else None)
    order = _ORDER.search(question)
    start, end, explicit = _window(question, environment.now())
    return Slots(
        service=service, order_id=order.group(1) if order else None, start=start, end=end, explicit_time=explicit
    )


class OfflinePlanner:
    """``planner_plan`` as JSON: skill, service, order id, window, steps."""

    name = "offline"

    def __init__(self, environment: Environment) -> None:
        self.environment = environment

    def plan(self, request: PlanRequest) -> RoleReply:
        import json

        return RoleReply(text=json.dumps(self.make_plan(request.question), ensure_ascii=False), engine=self.name)

    def make_plan(self, question: str) -> dict[str, Any]:
        skill = choose_skill(question)
        named = fill_slots(question, skill, self.environment)
        if skill.id != "generic" and named.service not in self.environment.services() and named.service:
            skill = catalog().get("generic")
        return {
            "skill": skill.id,
            "skill_title": skill.title,
            "service": named.service,
            "order_id": named.order_id,
            "start": named.start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "end": named.end.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "explicit_time": named.explicit_time,
            "steps": [step.model_dump(exclude_none=True) for step in skill.steps],
        }
