"""Offline planner: which services, which time window, which skill — from the question and
from the data the services actually have.

- Intent: what kind of question it is (``intent.py``, ``intents.yaml``): the answer's first
  sentence answers that.
- Services: every service named exactly in the question — checked, never assumed: the executor
  examines it with the services around it. A word that points to a kind of service ("支付" →
  services with "pay" in their name, ``aliases.yaml``) is a hint for which period to look at,
  never a limit on what is examined; with no service named, every service with data is.
- Terms: what the logs are searched for in every service — quoted phrases, codes, exceptions,
  identifiers, HTTP statuses, and the business words of ``terms.yaml`` (下单, wifi, login).
- Time: the question's own words (``veridiag.text.when``: "2014-03-14", "昨天下午两点",
  "since 10:00", "last 2h" …) in the configured timezone; a point in time ("around 21:00",
  9点左右) is 30 minutes either side of it. Relative words anchor to the asked service's newest
  data for imported history ("today" is that data's day), to the wall clock for live backends.
  An alert's start gets a longer window after it (``ALERT_AFTER``). Without
  a time the service's recent history is examined and the executor picks its most anomalous
  period.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from veridiag.agents.offline.intent import read_intent
from veridiag.agents.offline.naming import (
    NAME_CHARS,
    components,
    components_named,
    exact_services,
    misspelt_services,
    named_at,
    pod_services,
    services_by_noun,
    suspects_by_place,
)
from veridiag.agents.offline.skills import DataShape, aliases, catalog, choose_skill, term_words
from veridiag.agents.reply import OFFLINE, RoleReply
from veridiag.agents.roles import PlanRequest
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.plan import GivenTime, Plan, PlanTime, ReadAs
from veridiag.text.entities import extract_entities
from veridiag.text.normalize import reader_text
from veridiag.text.render import iso
from veridiag.text.when import TimeWindow, around, interpret_time
from veridiag.tools.records import Span

_ORDER = re.compile(r"(?:订单|order)\s*(?:id|号|#)?\s*[:=：#]?\s*([A-Za-z0-9-]*\d[A-Za-z0-9-]*)", re.IGNORECASE)
#: What a question names that its logs are searched for as written (``Plan.terms``): a quoted
#: phrase, an error code or exception (``ERR_TIMEOUT``, ``E1234``, ``NullPointerException``), an
#: identifier from the code (``onStandStepChanged``, ``ledger_write``). Plain words are left to
#: the skills: "timeout" or 超时 is a kind of failure, not a line to find.
_QUOTED = re.compile(r"[\"“「『‘'](?P<phrase>[^\"”」』’'\n]{3,80})[\"”」』’']")
_TERM = re.compile(
    r"(?<![A-Za-z0-9_.:/-])(?:"
    r"[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+"  # ERR_TIMEOUT, E-9999
    r"|[A-Z]{1,6}[0-9]{3,6}"  # E1234, ORA01017
    r"|(?:[a-z][a-z0-9]*\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error)"  # java.sql.SQLException
    r"|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+"  # onStandStepChanged
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"  # ledger_write
    r")(?![A-Za-z0-9_.:/-])"
)
#: At most this many terms are searched (each is one more query_logs call, or a few).
MAX_TERMS = 3
#: How far back a question without a time looks: live systems (the last hours matter) and
#: imported history (its recent days, to find the period that stands out).
LIVE_LOOKBACK = timedelta(hours=12)
HISTORY_LOOKBACK = timedelta(days=7)
#: What a question asking whether it is still happening reads, without a time of its own: the
#: newest data's last hour (the live clock's, for live backends).
STILL = timedelta(hours=1)
#: Services examined when the question names none.
MAX_SERVICES = 8
#: An alert's window: [startsAt − 30 min, startsAt + 2 h), cut at "now". Not a question's
#: ±30 min (``text.when.AROUND``) on purpose: Prometheus sends ``startsAt`` as the moment the rule
#: fired, after its condition had held for the rule's ``for:`` (pending, often 5–15 min: inside
#: the 30 minutes before), and the alert is asked about while it still fires, so what follows the
#: start is the incident itself — a window ending 30 minutes after it would cut off its course.
ALERT_BEFORE = timedelta(minutes=30)
ALERT_AFTER = timedelta(hours=2)


class Environment(Protocol):
    """What the planner knows about the evidence backend without calling a tool."""

    def now(self) -> datetime: ...
    def services(self) -> list[str]: ...
    def data_end(self, service: str | None = None) -> datetime | None: ...
    def log_span(self, service: str) -> Span | None: ...
    def metric_span(self, service: str, metric: str | None = None) -> Span | None: ...
    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]: ...


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    #: The question's words it came from; None when the question gave no time.
    found: TimeWindow | None
    anchor: datetime
    anchor_source: str
    #: The moment given with the question (an alert's start), when there was one.
    given: GivenTime | None = None
    #: The words asking whether it is still happening, when the window is the newest data's hour.
    still: str | None = None

    @property
    def explicit(self) -> bool:
        return self.found is not None or self.given is not None

    def time(self, timezone: str) -> PlanTime:
        """How the window was chosen, for the plan (and the answer's scope line)."""
        at: datetime | None = None
        if self.given is not None:
            phrase, kind, at = self.given.source, "given", self.given.at
        elif self.found is not None:  # a point in time ("around 21:00") says the moment asked about
            phrase, kind, at = self.found.phrase, self.found.kind, self.found.at
        elif self.still is not None:  # "still failing?": the newest hour of data
            phrase, kind = self.still, "newest"
        else:
            phrase, kind = None, "recent_history"
        return PlanTime(
            phrase=phrase,
            kind=kind,
            timezone=timezone,
            anchor=iso(self.anchor),
            anchor_source=self.anchor_source,
            at=iso(at) if at is not None else None,
        )


def named_services(question: str, known: list[str]) -> tuple[list[str], bool]:
    """Services the question names exactly, in order (True), else those a word points to (False)."""
    exact = exact_services(question, known)
    return (exact, True) if exact else (pointed_services(question, known), False)


def pointed_services(question: str, known: list[str]) -> list[str]:
    """Services a word of the question points to by kind (``aliases.yaml``: 支付 → *pay*)."""
    lowered = question.lower()
    pointed: list[tuple[int, str]] = []
    for word, fragments in aliases().items():
        if word.lower() not in lowered:  # most words are not there: no pattern compiled for them
            continue
        # An English word counts from a word start ("orders" yes, "reorder" and "display" no).
        found = re.search(rf"(?<![a-z]){re.escape(word.lower())}" if word.isascii() else re.escape(word), lowered)
        if found is None:
            continue
        position = found.start()
        for service in known:
            if any(fragment in service.lower() for fragment in fragments):
                pointed.append((position, service))
    ordered = [service for _pos, service in sorted(pointed)]
    return list(dict.fromkeys(ordered))


def kinds_without_data(question: str, known: list[str]) -> list[str]:
    """Services asked about by kind that the data has none of: a kind word (``aliases.yaml``)
    with a service noun after it (``components.yaml`` ``nouns``: "the search service", "搜索服务")
    that points to no known service — said to have no data, as the text names it, never answered
    from another service's incident."""
    nouns = "|".join(re.escape(n) for n in sorted(components().service_shaped.nouns, key=len, reverse=True))
    lowered = reader_text(question).lower()
    found: list[tuple[int, str]] = []
    for word, fragments in aliases().items():
        if word.lower() not in lowered or any(fragment in s.lower() for s in known for fragment in fragments):
            continue
        before = r"(?<![a-z])" if word.isascii() else ""
        for at in re.finditer(rf"{before}{re.escape(word.lower())}\s*(?:{nouns})(?![a-z])", lowered):
            found.append((at.start(), at.group(0)))
    return list(dict.fromkeys(name for _at, name in sorted(found)))


def kind_words(question: str, known: list[str]) -> dict[str, str]:
    """The words of the question that point by kind to exactly one service (``aliases.yaml``:
    "the database" → mysql where mysql is the only *db*/*mysql* service), as written → that
    service: "is it the database?" asks yes or no about it as "is it mysql?" does. A word that
    points to several services names none of them."""
    lowered = question.lower()
    found: dict[str, str] = {}
    for word, fragments in aliases().items():
        if word.lower() not in lowered:
            continue
        at = re.search(rf"(?<![a-z]){re.escape(word.lower())}" if word.isascii() else re.escape(word), lowered)
        if at is None:
            continue
        matching = [service for service in known if any(fragment in service.lower() for fragment in fragments)]
        if len(matching) == 1:
            found[question[at.start() : at.end()]] = matching[0]
    return found


class OfflinePlanner:
    """``planner_plan`` as JSON: skill, services, order id, window (and how it was read), steps."""

    name = OFFLINE

    def __init__(self, environment: Environment, *, timezone: str = "UTC", live: bool = False) -> None:
        self.environment = environment
        self.timezone = timezone
        self.live = live

    def plan(self, request: PlanRequest) -> RoleReply:
        plan = json.dumps(self.make_plan(request.question, request.given_time).stored(), ensure_ascii=False)
        return RoleReply(text=plan, answered_by=EngineUse(engine=self.name))

    def make_plan(self, question: str, given_time: GivenTime | None = None) -> Plan:
        known = self.environment.services()
        pods = pod_services(question, known)
        read_as = [*pods, *(r for r in misspelt_services(question, known) if r not in pods)]
        services = _in_order(question, [*exact_services(question, known), *(r.service for r in read_as)], read_as)
        missing, carried = components_named(question, known)
        taken = {m.lower() for m in missing} | {r.written.lower() for r in read_as}
        missing += [w for w in suspects_by_place(question, known) if w.lower() not in taken]
        missing += [w for w in kinds_without_data(question, known) if w.lower() not in taken and w not in missing]
        missing += [w for w in services_by_noun(question, known, list(aliases())) if w not in missing]
        pointed = [] if services else list(dict.fromkeys([*carried, *pointed_services(question, known)]))
        spelt = {r.written: r.service for r in read_as}
        kinds = {} if services else kind_words(question, known)
        intent = read_intent(question, services or list(dict.fromkeys(kinds.values())), spelt | kinds, missing)
        window = self._window(question, services or pointed, given_time, still=intent.still)
        # The data's names say something of the services asked about, nothing when none was named.
        asked_about = services or pointed
        shape = self._shape(asked_about) if asked_about else self._shape(known, names=False)
        skill = choose_skill(question, shape)
        order = _ORDER.search(_blank(question, window.found))
        asked = catalog().asked_change(question)
        terms = self._terms(_blank(question, window.found), known, order.group(0) if order else "")
        lowered = {s.lower() for s in known} | {r.written.lower() for r in read_as}
        unknown = [e.text for e in extract_entities(question) if e.kind == "service" and e.text.lower() not in lowered]
        return Plan(
            skill=skill.id,
            skill_title=skill.title,
            intent=intent,
            service=services[0] if services else None,
            services=services,
            services_named_exactly=bool(services),
            pointed_services=pointed,
            unknown_services=list(dict.fromkeys([*unknown, *missing])),
            read_as=read_as,
            order_id=order.group(1) if order else None,
            terms=terms,
            start=iso(window.start),
            end=iso(window.end),
            explicit_time=window.explicit,
            time=window.time(self.timezone),
            runbook_terms=skill.runbook_terms,
            after_change=asked[0] if asked else None,
            after_change_phrase=asked[1] if asked else None,
            steps=list(skill.steps),
        )

    def _terms(self, question: str, services: list[str], order: str) -> list[str]:
        """The question's quoted phrases, code-like words and HTTP statuses, in order, then its
        business words (``terms.yaml``) — without the services and metrics it names (they are
        looked up as such, and a word inside a service's name is no term) or the order id."""
        names = {s.lower() for s in services} | {m.lower() for _s, m, _u in self.environment.metrics()}
        found = [(m.start(), m.group("phrase").strip()) for m in _QUOTED.finditer(question)]
        quoted = [range(m.start(), m.end()) for m in _QUOTED.finditer(question)]
        rest = _blank_words(question, [order, *sorted(names, key=len, reverse=True)])
        vocabulary = term_words()
        shaped = [*_TERM.finditer(rest), *vocabulary.status.finditer(rest)]
        found += [(m.start(), m.group()) for m in shaped if not any(m.start() in span for span in quoted)]
        lowered = rest.lower()
        business = [
            (at, word)
            for word in vocabulary.words
            if (at := _word_at(lowered, word.lower())) >= 0 and not any(at in span for span in quoted)
        ]
        terms = [term for _at, term in [*sorted(found), *sorted(business)] if term and term.lower() not in names]
        return list(dict.fromkeys(terms))[:MAX_TERMS]

    def _window(
        self, question: str, services: list[str], given: GivenTime | None = None, *, still: str | None = None
    ) -> Window:
        if self.live:
            anchor, source = datetime.now(UTC), "clock"
        else:
            latest = [t for s in services if (t := self.environment.data_end(s)) is not None]
            anchor = max(latest) if latest else (self.environment.data_end(None) or datetime.now(UTC))
            source = "data of " + ", ".join(services) if latest else "data"
        if given is not None:  # given, not read: the question's own time words do not move it
            start, end = around(given.at.astimezone(UTC), anchor, before=ALERT_BEFORE, after=ALERT_AFTER)
            return Window(start, end, None, anchor, source, given)
        found = interpret_time(question, anchor=anchor, tz=ZoneInfo(self.timezone))
        if found is not None:
            return Window(found.start, found.end, found, anchor, source)
        if still is not None:  # "is it still failing?" asks about now: the newest data's last hour
            return Window(anchor - STILL, anchor, None, anchor, source, still=still)
        lookback = LIVE_LOOKBACK if self.live else HISTORY_LOOKBACK
        return Window(anchor - lookback, anchor, None, anchor, source)

    def _shape(self, services: list[str], *, names: bool = True) -> DataShape:
        chosen = services[:MAX_SERVICES]
        words = [*chosen, *(m for s in chosen for _s, m, _u in self.environment.metrics(s))] if names else []
        return DataShape(
            has_logs=any(self.environment.log_span(s) is not None for s in chosen),
            has_metrics=any(self.environment.metric_span(s) is not None for s in chosen),
            names=words,
        )


def _blank_words(text: str, words: list[str]) -> str:
    """``text`` with each of ``words`` (any case) blanked where it stands as a word of its own.
    One pattern of all of them, longest first: a pattern a word cost ~0.5 ms to compile, 0.1 s
    a question over 200 services' metric names (measured)."""
    present = sorted({w for w in words if w and w.lower() in text.lower()}, key=len, reverse=True)
    if not present:
        return text
    either = "|".join(re.escape(word) for word in present)
    pattern = rf"(?<![{NAME_CHARS}])(?:{either})(?![{NAME_CHARS}])"
    return re.sub(pattern, lambda m: " " * len(m.group()), text, flags=re.IGNORECASE)


def _word_at(text: str, word: str) -> int:
    """Where ``word`` stands in ``text`` as a word of its own (ASCII words between non-letters), else -1."""
    if not word.isascii() or word not in text:  # no pattern to compile for a word the text lacks
        return text.find(word)
    found = re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", text)
    return found.start() if found else -1


def _in_order(question: str, services: list[str], read_as: list[ReadAs]) -> list[str]:
    """The services named exactly and those read from a misspelling, in the order written."""
    if not read_as:
        return services
    text = reader_text(question).lower()
    written = {r.service: r.written.lower() for r in read_as}

    def position(service: str) -> int:
        found = named_at(text, written.get(service, service.lower()))
        return found.start() if found else len(text)

    return sorted(dict.fromkeys(services), key=position)


def _blank(question: str, found: TimeWindow | None) -> str:
    """The question with its time words blanked, so a date is not read as an order id."""
    if found is None:
        return question
    chars = list(question)
    for start, end in found.spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
