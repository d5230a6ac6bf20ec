"""Which period a question is about, chosen by the question rather than by anomaly size.

A question with a moment ("around 07:00", an alert's start) is about that moment. One that
points at records (an order's lines) is about when they were written. Otherwise the changes
the culprit search found across every service, and the bursts of lines holding the question's
own words, are weighed by how much they have to do with the question — the services it names,
the services its words point at, the kind of change it speaks of (slow: latency; restarts) —
and, when it speaks of something down or still going on (or of an alert), or asks "is X to
blame?" of nothing else, the latest such incident wins over the week's largest. Pure: typed records in, a period out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from veridiag.agents.offline.intent import intent_book
from veridiag.contracts.plan import Plan
from veridiag.tools.records import Episode, SuspectSignal

#: A window at most this long is looked at whole.
WHOLE = timedelta(minutes=90)
#: "Which service is slowest?" without a time asks about the data's last hour.
RECENT = timedelta(hours=1)
#: The period around a chosen onset: this much before it and after it (its end and a sample's
#: slack, if later); the period after a change the question points at starts a sample before it.
BEFORE = timedelta(minutes=15)
AROUND = timedelta(minutes=30)
PAD = timedelta(minutes=5)
#: Changes weaker than this share of the strongest are no incident of their own.
MIN_SHARE = 0.5
#: A change the culprit search scored below this is noise to choose a period by.
MIN_SCORE = 0.1
#: How much a change weighs more when the question names its service, points at it, names its
#: kind, or when it holds the question's own words.
NAMED = 3.0
NEIGHBOUR = 1.5
POINTED = 1.5
ASKED_KIND = 1.5
TERM = 1.0


@dataclass(frozen=True)
class Candidate:
    service: str
    start: datetime
    end: datetime
    weight: float
    #: It has to do with the question (a service it names or points at, a kind of change it
    #: speaks of, its own words): such changes are chosen from before any other ...
    relevant: bool = False
    #: ... and of those, first the kind of change the question speaks of (restarts, latency).
    asked_kind: bool = False
    #: Of a service the question names, points at, or one they call: such changes come before a
    #: change of the kind asked elsewhere ("是不是mysql导致的支付超时" is about payments' period,
    #: not the gateway's timeouts).
    about: bool = False


@dataclass(frozen=True)
class Focus:
    start: datetime
    end: datetime
    #: The moment the ranking is made for (None: the window as a whole).
    at: datetime | None
    #: How it was chosen (the scope line says so): question, asked_lines, most_recent,
    #: question_words, most_anomalous, whole_window.
    chosen: str


def candidates(
    plan: Plan,
    question: str,
    episodes: Sequence[Episode],
    term_bursts: Sequence[tuple[str, datetime, datetime]],
    neighbours: Sequence[str] = (),
) -> list[Candidate]:
    """Every change found, and every burst of the question's words, weighed by the question."""
    named, pointed = set(plan.services), set(plan.pointed_services)
    kinds = asked_kinds(plan, question)
    # "Is X to blame for …?" names X as a suspect, not where the symptom is: X's own changes are
    # weighed as any service's, so the symptom (the question's words, its kind, its time) chooses
    # the period — not X's own largest incident.
    accused = {plan.intent.about} if plan.intent.kind == "blame" and plan.intent.about else set()
    if accused and named <= accused:  # nor are the services around X: they would choose X's incident
        neighbours = ()
    found = []
    for episode in episodes:
        if episode.score < MIN_SCORE:
            continue
        if episode.service in accused:
            found.append(Candidate(episode.service, episode.onset, episode.end, episode.score))
            continue
        relevance = 1.0
        if episode.service in named:
            relevance *= NAMED
        elif episode.service in neighbours:
            relevance *= NEIGHBOUR
        elif episode.service in pointed:
            relevance *= POINTED
        about = relevance > 1
        asked_kind = of_kind(episode, kinds, question)
        if asked_kind:
            relevance *= ASKED_KIND
        weight = episode.score * relevance
        found.append(Candidate(episode.service, episode.onset, episode.end, weight, relevance > 1, asked_kind, about))
    for service, first, last in term_bursts:
        relevance = NAMED if service in named else POINTED if service in pointed else 1.0
        found.append(Candidate(service, first, last, TERM * relevance, True, about=relevance > 1))
    return found


def choose(
    plan: Plan, window: tuple[datetime, datetime], found: Sequence[Candidate], moments: Sequence[datetime] = ()
) -> Focus:
    """The period the answer is about."""
    start, end = window
    at = moment(plan.time.at)
    if at is not None:  # "around 07:00", an alert's start: the window is already around it
        return Focus(start, end, at, "question")
    if moments:  # the records asked about: their first line, and the change nearest it
        first = min(moments)
        near = min(found, key=lambda c: (_distance(c, first), -c.weight), default=None)
        if near is not None and _distance(near, first) <= AROUND.total_seconds():
            return around(near, window, "asked_lines", before=AROUND)
        return _clip(first - AROUND, first + AROUND, window, first, "asked_lines")
    if end - start <= WHOLE:
        return Focus(start, end, None, "question" if plan.explicit_time else "whole_window")
    if plan.intent.kind == "rank" and plan.intent.rank_by and not plan.explicit_time:
        # "which service is slowest?" asks about now: the last stretch of the data
        return Focus(max(start, end - RECENT), end, None, "most_recent")
    if not found:
        return Focus(start, end, None, "question" if plan.explicit_time else "whole_window")
    # What has to do with the question first — the services it is about before a kind of change
    # elsewhere; among that, the latest incident when something is down or still failing (or an
    # alert fired), else the strongest.
    tiers = (
        [c for c in found if c.about and c.asked_kind],
        [c for c in found if c.about],
        [c for c in found if c.relevant and c.asked_kind],
        [c for c in found if c.relevant],
    )
    pool = next((tier for tier in tiers if tier), list(found))
    strongest = max(c.weight for c in pool)
    if plan.time.kind == "since":  # "since 10:00": what began then, the first strong change after it
        strong = [c for c in pool if c.weight >= MIN_SHARE * strongest and c.start >= start - PAD]
        if strong:
            return around(min(strong, key=lambda c: c.start), window, "question")
    # "Is X to blame?" with neither a time nor a symptom asks about the incident at hand, the
    # latest: judging X in the week's largest would answer about another incident.
    yes_or_no = plan.intent.kind == "blame" or plan.intent.kind_asked is not None  # "is it the network?" too
    at_hand = yes_or_no and not any(c.relevant for c in found)
    if plan.intent.recent or plan.time.kind == "given" or at_hand:
        strong = [c for c in pool if c.weight >= MIN_SHARE * strongest]
        latest = max(strong, key=lambda c: c.start)
        # the latest incident from its first strong change: a later change within it (the errors
        # that followed) is no moment of its own to judge its origin by
        opening = min((c for c in strong if c.start <= latest.end and c.end >= latest.start), key=lambda c: c.start)
        return _from_its_start(opening, found, window, "most_recent")
    best = max(pool, key=lambda c: (c.weight, c.start))
    return _from_its_start(best, found, window, "question_words" if best.relevant else "most_anomalous")


def _from_its_start(
    chosen: Candidate, found: Sequence[Candidate], window: tuple[datetime, datetime], how: str
) -> Focus:
    """The period of a change chosen (not asked about), judged from the incident's start: the
    earliest change of any service that began up to ``BEFORE`` ahead of it and was still going
    when it began — where it started is what a "why" asks, and a moment after that start would
    make the origin look "away" from it."""
    focus = around(chosen, window, how)
    lead = [c for c in found if chosen.start - BEFORE <= c.start <= chosen.start and c.end >= chosen.start]
    start = min((c.start for c in lead), default=chosen.start)
    return Focus(focus.start, focus.end, max(min(start, focus.end), focus.start), focus.chosen)


def asked_kinds(plan: Plan, question: str) -> set[str]:
    """The families of change the question's words speak of (slow: latency; 重启: restarts)."""
    lowered = question.lower()
    kinds = {plan.intent.rank_by} if plan.intent.rank_by else set()
    for family, words in intent_book().rank_by.items():
        if any(word.lower() in lowered for word in words):
            kinds.add(family)
    return kinds


def of_kind(change: Episode | SuspectSignal, kinds: set[str], question: str) -> bool:
    """A change of the kind the question speaks of: of its family (slow: latency), or of a metric
    its words name (lock waits: mysql_lock_wait_p99_seconds)."""
    return change.family in kinds or (change.source == "metric" and names_metric(question, change.name, change.service))


def names_metric(question: str, metric: str, service: str = "") -> bool:
    """Whether a word of the question is a part of the metric's name that says what it measures
    ("lock waits", 锁等待 → mysql_lock_wait_p99_seconds; ``intents.yaml`` ``metric_words``) — a
    kind word (slow, errors) is a family already, a unit or statistic (seconds, p99) names none,
    and neither does the name of the ``service`` it is of (mysql_… of mysql)."""
    return bool(metric_words(question, metric, service))


def metric_words(question: str, metric: str, service: str = "") -> frozenset[str]:
    """The parts of the metric's name the question's words name (see ``names_metric``)."""
    words = _question_parts(question)
    if not words:
        return frozenset()
    return (words & _metric_parts(metric)) - _metric_parts(service)


_PART = re.compile(r"[a-z][a-z0-9]*")


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@lru_cache(maxsize=1)
def _not_parts() -> frozenset[str]:
    book = intent_book()
    kind_words = {_singular(w.lower()) for words in book.rank_by.values() for w in words}
    ignored = {w.lower() for w in book.metric_parts_ignored}
    return frozenset(kind_words | ignored | {_singular(w) for w in ignored})


@lru_cache(maxsize=64)
def _question_parts(question: str) -> frozenset[str]:
    lowered = question.lower()
    words = {_singular(w) for w in _PART.findall(lowered) if len(w) >= 3}
    for zh, parts in intent_book().metric_words.items():
        if zh in question:
            words |= {p.lower() for p in parts}
    return frozenset(words - _not_parts())


@lru_cache(maxsize=4096)
def _metric_parts(metric: str) -> frozenset[str]:
    return frozenset(_singular(p) for p in _PART.findall(metric.lower()) if len(p) >= 2)


def around(
    candidate: Candidate, window: tuple[datetime, datetime], chosen: str, *, before: timedelta = BEFORE
) -> Focus:
    """The period of a chosen change: from ``before`` its onset (what led up to it) to its end,
    at least ``AROUND`` after the onset."""
    end = max(candidate.end + PAD, candidate.start + AROUND)
    return _clip(candidate.start - before, end, window, candidate.start, chosen)


def _clip(start: datetime, end: datetime, window: tuple[datetime, datetime], at: datetime, chosen: str) -> Focus:
    """The period on whole minutes (a counter's steps and the points read fall on the minute),
    inside the window."""
    start = start.replace(second=0, microsecond=0)
    whole = end.replace(second=0, microsecond=0)
    end = whole if whole == end else whole + timedelta(minutes=1)
    start, end = max(start, window[0]), min(end, window[1])
    at = min(max(at, start), end)
    return Focus(start, end, at, chosen)


def _distance(candidate: Candidate, moment: datetime) -> float:
    if candidate.start <= moment <= candidate.end:
        return 0.0
    return min(abs((candidate.start - moment).total_seconds()), abs((moment - candidate.end).total_seconds()))


def moment(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
