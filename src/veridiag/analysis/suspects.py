"""Which services changed at the time asked, and which of them most likely started it.

An on-call engineer asked "which service is the culprit around 07:00?" looks at every service,
keeps the changes that began near 07:00, and prefers a service whose own resources gave out
(CPU saturated, memory filled, a pool ran dry, it restarted, it was changed) over one that only
waits on another (its latency grew because something it calls slowed). That is this module, in
order:

1. **Qualify** each change. Metric episodes come from ``anomaly.detect_anomalies`` (robust z
   against the series' own history before the window, routine excursions excluded: an
   established method, and already the product's); log templates are changes when they begin
   inside the window after the service had been logging without them; deploys and config
   changes from the change feed. A change never counts when it began before the window, in a
   series' first rows (nothing to compare with), as a single point, or below a minimum size.
2. **Size** each qualifying change from 0 to 1: how large it is (points of a limit for a
   percentage, else its factor; a resource that reached its limit in the change — not there in
   its own history before — counts in full), scaled by how far out of
   its noise it is (robust z) — a large change that is no more than noise, or a tiny one far out of
   a flat line (a CPU at 0.01 % jumping to 8 %), is no culprit's signature.
3. **Weigh** it by what it measures (``signatures.yaml``: cause families above effects) and by
   how near it began to the moment asked.
4. **Explain away** a service whose changes are only effects when something it calls (the
   dependency list, at any depth) changed as a cause at the same time, or whose new log lines
   name another service that itself changed by then (words in logs alone move no blame).
5. **Rank** services by their strongest change (corroborated by a second family), and say
   whether the first stands out — never more than the evidence carries: without a clear first,
   the report says so and the answer says the evidence cannot tell. A first whose own change
   began at the moment asked is weighed against the others' own changes in full and against
   changes that only show where a fault is felt (latency, traffic) at half (``rivalry``).

Pure: typed inputs in, a typed report out; the ``rank_suspects`` tool reads the backends and
states every number of the report in its output.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from statistics import median
from typing import Literal

from veridiag.analysis.anomaly import TimedPoints, detect_anomalies
from veridiag.analysis.changepoints import level_shifts
from veridiag.analysis.signatures import Family, family_of, is_percent, signatures
from veridiag.text.units import unit_table

Source = Literal["metric", "log", "change"]
Reason = Literal["before_window", "first_rows", "single_point", "too_small", "begins_during"]

#: Points of a series before an onset without which there is nothing to compare it with.
MIN_LEAD_POINTS = 10
#: Points of history before the window that let the window be judged against it; with fewer
#: and more than this share of the series out of line, its own level shifts are found instead.
HISTORY_POINTS = 30
MOST_OF_IT = 0.2
#: Points an episode must span: one point is a blip, never a culprit's signature.
MIN_EPISODE_POINTS = 2
#: The smallest change that counts, on the 0–1 size scale (a ×1.26 factor, or 4 points of 100 %).
MIN_SIZE = 0.05
#: Around the moment asked, changes count in full from this long before it to this long after it
#: (people round the time they noticed, and a fault shows a sample after it starts) ...
BEFORE_AT = timedelta(minutes=3)
AFTER_AT = timedelta(minutes=5)
#: ... and half as much for every this much further away.
HALF_LIFE = timedelta(minutes=5)
#: A log template is new when the service had logged this long without it.
MIN_LOG_LEAD = timedelta(seconds=60)
#: Lines of a new template that make it a change.
MIN_LOG_LINES = 3
#: A change recorded this long before the moment asked may still have caused it.
CHANGE_LEAD = timedelta(minutes=30)
#: The weight of a recorded deploy or configuration change.
CHANGE_WEIGHT = 0.7
#: A caller's effect is explained by a callee's cause that began at most this much after it.
EXPLAINED_WITHIN = timedelta(minutes=3)
#: How much an explained service keeps of its score, and how deep the call graph is followed.
EXPLAINED_FACTOR = 0.5
MAX_DEPTH = 4
#: A second family corroborating a service adds this share of its score.
CORROBORATION = 0.2
#: The first stands out when its score reaches this and this multiple of the second's.
MIN_STANDOUT = 0.3
STANDOUT_RATIO = 1.5
#: A percentage series with more than this share of its history at its limit was there before.
AT_LIMIT_SHARE = 0.1
#: A change in the direction its family is not worse in still counts, at this share.
OTHER_DIRECTION = 0.3


@dataclass(frozen=True)
class SeriesInput:
    """One metric series: its history before the window and the window, in any order."""

    service: str
    metric: str
    unit: str
    points: Sequence[tuple[datetime, float]]
    #: Counts of whole events per step (a sparse counter's increases: restarts, OOM kills): one
    #: is news, not a blip.
    events: bool = False


@dataclass(frozen=True)
class LogInput:
    """One log template of a service over the window and the lead before it."""

    service: str
    level: str
    template: str
    first: datetime
    last: datetime
    count: int
    #: When the service's logs that were read begin (to tell a new template from a chronic one).
    logs_from: datetime


@dataclass(frozen=True)
class ChangeInput:
    service: str
    at: datetime
    kind: str
    description: str


@dataclass(frozen=True)
class Question:
    """What was asked: the window, the moment in it (if one was named) and the call graph."""

    start: datetime
    end: datetime
    at: datetime | None = None
    #: (caller, callee) pairs; empty when no dependency list or traces are known.
    edges: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Signal:
    """One qualifying change of a service."""

    service: str
    source: Source
    #: The metric, the log template, or the change's kind.
    name: str
    family: str
    role: str
    onset: datetime
    end: datetime
    #: Metric changes: the expected value, the most deviant value and when, the factor, the robust z.
    expected: float | None = None
    peak: float | None = None
    peak_at: datetime | None = None
    factor: float | None = None
    z: float | None = None
    #: Points of the episode, or lines of the template.
    count: int = 0
    unit: str = ""
    level: str = ""
    description: str = ""
    saturated: bool = False
    #: Events counted per step (restarts …): how many in the window.
    events: float | None = None
    #: Its size (0–1), nearness to the moment asked (0–1) and weighted score.
    strength: float = 0.0
    nearness: float = 1.0
    score: float = 0.0


@dataclass(frozen=True)
class Excluded:
    """A change that was seen but does not count, and why."""

    service: str
    name: str
    onset: datetime
    reason: Reason


@dataclass(frozen=True)
class Suspect:
    service: str
    score: float
    #: Its qualifying changes, strongest first.
    signals: tuple[Signal, ...]
    #: Services whose change explains this one's (something it calls, a service its logs name).
    explained_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class SuspectReport:
    suspects: tuple[Suspect, ...]
    excluded: tuple[Excluded, ...]
    #: Services examined with no qualifying change.
    quiet: tuple[str, ...]
    examined: tuple[str, ...]
    series: int
    #: Whether the first suspect stands out of the others (else the evidence cannot tell).
    standout: bool
    #: The suspect that competes with the first too strongly for it to stand out (``rivalry``).
    close: str | None = None
    #: The earliest qualifying change, when any.
    first: Signal | None = None


@dataclass
class _Gathered:
    signals: dict[str, list[Signal]] = field(default_factory=lambda: defaultdict(list))
    excluded: list[Excluded] = field(default_factory=list)


def rank_suspects(
    question: Question,
    series: Iterable[SeriesInput],
    logs: Iterable[LogInput] = (),
    changes: Iterable[ChangeInput] = (),
    services: Sequence[str] = (),
) -> SuspectReport:
    """The services ranked as suspects for what changed in ``question``'s window; ``services``
    are the ones examined (those without data or changes are reported quiet)."""
    gathered = _Gathered()
    series = list(series)
    for item in series:
        _qualify_series(question, item, gathered)
    log_list = list(logs)
    for template in log_list:
        _qualify_log(question, template, gathered)
    for change in changes:
        _qualify_change(question, change, gathered)
    examined = list(dict.fromkeys([*services, *(s.service for s in series), *(t.service for t in log_list)]))
    suspects = _explained(question, gathered, examined)
    ranked = sorted(suspects, key=lambda s: (-s.score, s.signals[0].onset, s.service))
    named = {s.service for s in ranked}
    all_signals = [signal for suspect in ranked for signal in suspect.signals]
    return SuspectReport(
        suspects=tuple(ranked),
        excluded=tuple(sorted(gathered.excluded, key=lambda e: (e.onset, e.service, e.name))),
        quiet=tuple(s for s in examined if s not in named),
        examined=tuple(examined),
        series=len(series),
        standout=_stands_out(ranked),
        close=close.service if (close := _close(ranked)) is not None else None,
        first=min(all_signals, key=lambda s: (s.onset, -s.score), default=None),
    )


# -- qualifying ------------------------------------------------------------------------


def _qualify_series(question: Question, item: SeriesInput, gathered: _Gathered) -> None:
    family = family_of(item.metric)
    if family.role == "context":
        return
    if item.events:
        _qualify_events(question, item, family, gathered)
        return
    finite, times = _finite(item.points)
    episodes = detect_anomalies(finite, window=(question.start, question.end)).anomalies
    history = bisect_left(times, question.start)
    flagged = sum(e.points for e in episodes)
    shifted = history < HISTORY_POINTS and flagged > MOST_OF_IT * len(finite)
    if shifted:
        # No history before the window, and what stands out is much of the series: it is its
        # own baseline no longer (an incident in a short file) — where its level shifts instead.
        episodes = [e for e in level_shifts(finite) if e.onset < question.end and e.end >= question.start]
    percent = is_percent(item.unit)
    # a checked series carries its values as a column: no pass over a week of pairs (~0.15 s
    # a survey of 600 series, measured)
    usual = median(finite.raw if isinstance(finite, TimedPoints) else [v for _m, v in finite]) if finite else 0.0
    for found in episodes:
        if shifted and _returns(found.expected, found.peak, usual):
            # A shift is measured from the level the data began at: when that is not its usual
            # one, the data begins during a period out of line, and this is its end, not a change.
            gathered.excluded.append(Excluded(item.service, item.metric, found.onset, "begins_during"))
            continue
        held = _held(finite, found.onset, found.end, found.expected, found.peak, percent=percent)
        onset = held[0].moment if held else found.onset
        reason = _disqualified(question, onset, len(held), times)
        size = _size(found.peak, found.expected, found.factor, percent)
        if reason is None and size < MIN_SIZE:
            reason = "too_small"
        if reason is not None:
            gathered.excluded.append(Excluded(item.service, item.metric, onset, reason))
            continue
        saturated = (
            family.role == "cause"
            and percent
            and found.direction == "up"
            and found.peak >= _saturated()
            and not _at_limit_before(finite, onset, found.expected)
        )
        strength = (1.0 if saturated else size) * (1 + _z_part(found.score)) / 2
        weight = family.weight * (1.0 if family.worse in ("either", found.direction) else OTHER_DIRECTION)
        nearness = _nearness(question, onset)
        gathered.signals[item.service].append(
            Signal(
                service=item.service,
                source="metric",
                name=item.metric,
                family=family.id,
                role=family.role if family.worse in ("either", found.direction) else "effect",
                onset=onset,
                end=found.end,
                expected=found.expected,
                peak=found.peak,
                peak_at=found.peak_at,
                factor=found.factor,
                z=found.score,
                count=found.points,
                unit=item.unit,
                saturated=saturated,
                strength=strength,
                nearness=nearness,
                score=strength * weight * nearness,
            )
        )


def _finite(points: Sequence[tuple[datetime, float]]) -> tuple[list[tuple[datetime, float]], list[datetime]]:
    """The points with a finite value, in time order, and their times (a backend's checked
    ``TimedPoints`` as they are: no point by point pass over a week of them)."""
    if isinstance(points, TimedPoints):
        return points, points.times
    finite = [(m, v) for m, v in points if isinstance(v, float) and math.isfinite(v)]
    if any(a[0] > b[0] for a, b in pairwise(finite)):  # backends give time order; anything else is sorted
        finite.sort()
    return finite, [moment for moment, _v in finite]


def _qualify_events(question: Question, item: SeriesInput, family: Family, gathered: _Gathered) -> None:
    """Whole events counted per step (restarts, OOM kills): each is news on its own, so the
    events in the window count — after the series' first rows — however few; a series that had
    as many in its history before the window is doing what it always does."""
    points = sorted((m, v) for m, v in item.points if isinstance(v, float) and math.isfinite(v))
    inside = [(m, v) for m, v in points if question.start <= m < question.end and v > 0]
    if not inside:
        return
    onset = inside[0][0]
    before = [v for m, v in points if m < question.start]
    if sum(1 for m, _v in points if m < onset) < MIN_LEAD_POINTS:
        gathered.excluded.append(Excluded(item.service, item.metric, onset, "first_rows"))
        return
    total = sum(v for _m, v in inside)
    if sum(before) >= total:
        gathered.excluded.append(Excluded(item.service, item.metric, onset, "too_small"))
        return
    strength = min(1.0, 0.5 + 0.25 * total)
    nearness = _nearness(question, onset)
    peak_at, peak = max(inside, key=lambda p: p[1])
    gathered.signals[item.service].append(
        Signal(
            service=item.service,
            source="metric",
            name=item.metric,
            family=family.id,
            role=family.role,
            onset=onset,
            end=inside[-1][0],
            expected=0.0,
            peak=peak,
            peak_at=peak_at,
            count=len(inside),
            unit=item.unit,
            strength=strength,
            nearness=nearness,
            score=strength * family.weight * nearness,
            events=total,
        )
    )


def _qualify_log(question: Question, template: LogInput, gathered: _Gathered) -> None:
    if template.last < question.start or template.first >= question.end:
        return
    if template.first < question.start:
        gathered.excluded.append(Excluded(template.service, template.template, template.first, "before_window"))
        return
    if template.first - template.logs_from < MIN_LOG_LEAD:  # in its logs from their first lines on
        gathered.excluded.append(Excluded(template.service, template.template, template.first, "first_rows"))
        return
    if template.count < MIN_LOG_LINES:
        gathered.excluded.append(Excluded(template.service, template.template, template.first, "single_point"))
        return
    errors = _family("errors")
    level = 1.0 if template.level.upper() in ("ERROR", "FATAL", "CRITICAL") else 0.5
    strength = (min(math.log10(template.count) / 2, 1.0) + level) / 2
    nearness = _nearness(question, template.first)
    gathered.signals[template.service].append(
        Signal(
            service=template.service,
            source="log",
            name=template.template,
            family=errors.id,
            role=errors.role,
            onset=template.first,
            end=template.last,
            count=template.count,
            level=template.level,
            strength=strength,
            nearness=nearness,
            score=strength * errors.weight * nearness,
        )
    )


def _qualify_change(question: Question, change: ChangeInput, gathered: _Gathered) -> None:
    moment = question.at or question.start
    if not (moment - CHANGE_LEAD <= change.at < question.end):
        return
    # A change shortly before the moment asked is as near as one at it: it comes before its effect.
    nearness = 1.0 if moment - CHANGE_LEAD <= change.at <= moment else _nearness(question, change.at)
    gathered.signals[change.service].append(
        Signal(
            service=change.service,
            source="change",
            name=change.kind,
            family="change",
            role="cause",
            onset=change.at,
            end=change.at,
            description=change.description,
            strength=1.0,
            nearness=nearness,
            score=CHANGE_WEIGHT * nearness,
        )
    )


def _disqualified(question: Question, onset: datetime, held: int, times: list[datetime]) -> Reason | None:
    if times and onset <= times[0]:  # out of line from the data's first row: it began before the data
        return "begins_during"
    if onset < question.start:
        return "before_window"
    if sum(1 for moment in times if moment < onset) < MIN_LEAD_POINTS:
        return "first_rows"
    if held < MIN_EPISODE_POINTS:
        return "single_point"
    return None


@dataclass(frozen=True)
class _Point:
    moment: datetime
    value: float


def _held(
    points: list[tuple[datetime, float]],
    onset: datetime,
    end: datetime,
    expected: float,
    peak: float,
    *,
    percent: bool = False,
) -> list[_Point]:
    """The points of an episode at half its size or more: a spike with noisy neighbours is one
    point, and the change began at the first of them (the episode's edges may be noise). Its size
    is judged as ``_size`` judges it — points of a limit for a percentage, else orders of magnitude
    (×100 then a spike of ×1400 is one episode from the ×100 on, not a single point)."""
    half = abs(peak - expected) / 2 if percent or expected <= 0 else abs(math.log10(_ratio(peak, expected))) / 2
    return [
        _Point(m, v)
        for m, v in points
        if onset <= m <= end
        and (
            abs(v - expected) >= half
            if percent or expected <= 0
            else (v - expected) * (peak - expected) > 0 and abs(math.log10(_ratio(v, expected))) >= half
        )
    ]


def _ratio(value: float, expected: float) -> float:
    """``value / expected`` kept off 0 (a value of 0 is a fall of many orders of magnitude)."""
    return max(value, expected * 1e-6) / expected


def _returns(expected: float, peak: float, usual: float) -> bool:
    """Whether an episode goes back to the series' usual level (its median) from the one it is
    measured against — the end of something, never a change of its own."""
    return abs(peak - usual) < abs(expected - usual) / 2


def _at_limit_before(points: list[tuple[datetime, float]], onset: datetime, expected: float) -> bool:
    """Whether a percentage series was at its limit before ``onset`` already (its own history):
    its expected level, or more than ``AT_LIMIT_SHARE`` of its points before the onset, at or above
    the limit — then reaching it again is what it does, not a resource that gave out."""
    limit = _saturated()
    before = [v for m, v in points if m < onset]
    if expected >= limit:
        return True
    return bool(before) and sum(1 for v in before if v >= limit) > AT_LIMIT_SHARE * len(before)


def _size(peak: float, expected: float, factor: float | None, percent: bool) -> float:
    """0–1: points of 100 for a percentage (80 points is all of it); else the factor's order of
    magnitude (×100 is all of it); without a factor (a baseline of 0) the change counts in full."""
    if percent:
        return min(abs(peak - expected) / _saturated(), 1.0)
    if factor is None or factor <= 0:
        return 1.0 if peak != expected else 0.0
    return min(abs(math.log10(factor)) / 2, 1.0)


def _z_part(z: float) -> float:
    """0–1: a robust z of 10 000 and more counts in full."""
    return min(math.log10(max(z, 1.0)) / 4, 1.0)


def _nearness(question: Question, onset: datetime) -> float:
    if question.at is None:
        return 1.0
    early, late = question.at - BEFORE_AT, question.at + AFTER_AT
    if early <= onset <= late:
        return 1.0
    away = (early - onset) if onset < early else (onset - late)
    return float(0.5 ** (away / HALF_LIFE))


# -- ranking ---------------------------------------------------------------------------


def _explained(question: Question, gathered: _Gathered, examined: Sequence[str]) -> list[Suspect]:
    best = {service: _by_family(signals) for service, signals in gathered.signals.items() if signals}
    callees = _reachable(question.edges)
    suspects = []
    for service, signals in best.items():
        lead = signals[0]
        score = lead.score + CORROBORATION * sum(s.score for s in signals[1:2])
        explained: list[str] = []
        if lead.role != "cause":
            explained += [
                other
                for other in callees.get(service, ())
                if other in best and any(_explains(s, lead) for s in best[other])
            ]
        # Words alone move no blame: a service the new lines name explains them only when it
        # changed itself, no later than they began.
        explained += [
            other
            for other in examined
            if other != service
            and other in best
            and lead.source == "log"
            and _names(lead.name, other)
            and any(_together(s, lead) for s in best[other])
        ]
        explained = list(dict.fromkeys(explained))
        if explained:
            score *= EXPLAINED_FACTOR
        suspects.append(Suspect(service, score, tuple(signals), tuple(explained)))
    return suspects


def _names(text: str, service: str) -> bool:
    """Whether ``text`` names ``service`` as a name (not inside a longer one: ``ts-order-service``
    in ``ts-admin-order-service``)."""
    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(service)}(?![A-Za-z0-9_])", text) is not None


def _by_family(signals: list[Signal]) -> list[Signal]:
    """A service's signals, strongest first, one per family: a percentage of a family speaks for
    it (it says how near the limit it is; a raw amount beside it only how much it grew)."""
    percent_families = {s.family for s in signals if s.source == "metric" and is_percent(s.unit)}
    kept: dict[str, Signal] = {}
    for signal in sorted(signals, key=lambda s: (-s.score, s.onset)):
        if signal.family in percent_families and signal.source == "metric" and not is_percent(signal.unit):
            continue
        kept.setdefault(signal.family, signal)
    ranked = sorted(kept.values(), key=lambda s: (-s.score, s.onset))
    # Each family's other series stay listed after the ones that count, as they are evidence too.
    rest = [s for s in sorted(signals, key=lambda s: (-s.score, s.onset)) if s not in ranked]
    return ranked + rest


def _explains(cause: Signal, effect: Signal) -> bool:
    """A callee's cause explains a caller's effect when it came at the same time and is no mere
    ripple beside it (a change scored below ``EXPLAINED_FACTOR`` of the effect's explains nothing)."""
    return cause.role == "cause" and _together(cause, effect) and cause.score >= EXPLAINED_FACTOR * effect.score


def _together(cause: Signal, effect: Signal) -> bool:
    """A change that began at most ``EXPLAINED_WITHIN`` after the effect and was still going on
    within that of its start: one over long before is another incident, no explanation."""
    return cause.onset <= effect.onset + EXPLAINED_WITHIN and cause.end >= effect.onset - EXPLAINED_WITHIN


def _reachable(edges: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """Every service's callees, at any depth up to ``MAX_DEPTH``, nearest first."""
    direct: dict[str, list[str]] = defaultdict(list)
    for caller, callee in edges:
        if caller != callee and callee not in direct[caller]:
            direct[caller].append(callee)
    reach: dict[str, list[str]] = {}
    for start in list(direct):
        seen: list[str] = []
        frontier = [start]
        for _depth in range(MAX_DEPTH):
            frontier = [c for node in frontier for c in direct.get(node, []) if c != start and c not in seen]
            seen += list(dict.fromkeys(frontier))
            if not frontier:
                break
        reach[start] = seen
    return reach


def _stands_out(ranked: Sequence[Suspect]) -> bool:
    # Only a change of the service's own (a resource, its errors, a change made to it) can say
    # where a fault started; latency or traffic alone say only where it shows.
    # Nor can a change that began away from the moment asked say where what was asked about started
    # (the next fault, or the one before): it may rank first, it does not stand out.
    if not ranked or ranked[0].score < MIN_STANDOUT or ranked[0].explained_by or ranked[0].signals[0].role != "cause":
        return False
    if ranked[0].signals[0].nearness < 1.0:
        return False
    return _close(ranked) is None


def _close(ranked: Sequence[Suspect]) -> Suspect | None:
    """The other suspect that competes with the first too strongly for it to stand out, if any."""
    if not ranked:
        return None
    rival = max(ranked[1:], key=rivalry, default=None)
    return rival if rival is not None and ranked[0].score < STANDOUT_RATIO * rivalry(rival) else None


def rivalry(suspect: Suspect) -> float:
    """How strongly another suspect competes with a first whose own change (a cause) began at
    the moment asked: in full when one of its changes near that moment is its own too; at
    ``EXPLAINED_FACTOR`` when all of them are where a fault shows (latency, traffic) — those are
    how the first's fault may be felt elsewhere, and say nothing of where it started. Its other
    changes compete as they are weighed (a cause far from the moment is the next incident)."""
    own = any(signal.role == "cause" and signal.nearness >= 1.0 for signal in suspect.signals)
    return suspect.score if own else EXPLAINED_FACTOR * suspect.score


def _family(family_id: str) -> Family:
    return next(f for f in signatures().families if f.id == family_id)


def _saturated() -> float:
    return signatures().saturated


# -- ranked by a measure -----------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    """A service's level of one measure in the window: its series of that family with the
    highest average (a percentage of a family before a raw amount of it)."""

    service: str
    metric: str
    unit: str
    average: float
    peak: float
    peak_at: datetime
    points: int
    #: ``log``: the count of the service's ERROR lines in the window (``average`` and ``peak``).
    source: Source = "metric"


#: The family a service's ERROR log lines measure, when no series of it does.
LOG_FAMILY = "errors"


def levels_period(question: Question) -> tuple[datetime, datetime]:
    """The period a ranking by a measure reads: around the moment asked when one was ("the
    highest CPU at 06:37" is the level then, from ``BEFORE_AT`` before it to ``AFTER_AT`` after
    it, as a change counts in full), else the whole window."""
    if question.at is None:
        return question.start, question.end
    return max(question.start, question.at - BEFORE_AT), min(question.end, question.at + AFTER_AT)


def rank_levels(
    question: Question, series: Iterable[SeriesInput], family: str, error_lines: Mapping[str, int] | None = None
) -> list[Level]:
    """Services by their level of ``family`` in the window ("哪个服务最慢": latency), highest first
    (lowest first for a family that is worse when it falls, such as a success rate). Levels are
    compared in one dimension (``text/units.yaml``: 2391ms is more than 1.2s); a series in
    another dimension than most of the family's (slow queries per minute among latencies) is left out.
    Errors that no series measures are ranked by ``error_lines``: each service's ERROR lines in the
    window (logs without a metric of their errors are no service without errors)."""
    levels = _metric_levels(levels_period(question), series, family)
    if levels or family != LOG_FAMILY or not error_lines:
        return levels
    counted = sorted(((n, s) for s, n in error_lines.items() if n > 0), key=lambda item: (-item[0], item[1]))
    return [Level(s, "ERROR", "lines", float(n), float(n), question.start, n, source="log") for n, s in counted]


def _metric_levels(period: tuple[datetime, datetime], series: Iterable[SeriesInput], family: str) -> list[Level]:
    best: dict[str, tuple[float, Level]] = {}
    chosen = [s for s in series if family_of(s.metric).id == family]
    dimensions = Counter(_dimension(s.unit)[0] for s in chosen)
    if dimensions:
        common = max(dimensions.items(), key=lambda kv: (kv[0] is not None, kv[1]))[0]
        chosen = [s for s in chosen if _dimension(s.unit)[0] == common]
    percent_services = {s.service for s in chosen if is_percent(s.unit)}
    for item in chosen:
        if item.service in percent_services and not is_percent(item.unit):
            continue
        inside = [
            (m, v) for m, v in item.points if period[0] <= m < period[1] and isinstance(v, float) and math.isfinite(v)
        ]
        if not inside:
            continue
        peak_at, peak = max(inside, key=lambda p: p[1])
        average = sum(v for _m, v in inside) / len(inside)
        level = Level(item.service, item.metric, item.unit, average, peak, peak_at, len(inside))
        base = average * _dimension(item.unit)[1]
        known = best.get(item.service)
        if known is None or base > known[0]:
            best[item.service] = (base, level)
    down = next((f.worse == "down" for f in signatures().families if f.id == family), False)
    ranked = sorted(best.values(), key=lambda item: (item[0] if down else -item[0], item[1].service))
    return [level for _base, level in ranked]


def _dimension(unit: str) -> tuple[str | None, float]:
    """A unit's dimension and its factor to the dimension's base unit (None: unknown, factor 1)."""
    found = unit_table().by_spelling.get(unit.strip().lower())
    return (found.dimension, float(found.factor)) if found else (None, 1.0)
