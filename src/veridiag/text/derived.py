"""Facts a claim computed from the lines it quotes rather than copied from them, each checked by
computing it from the numbers of those lines.

No tool writes "1 秒后", "28 minutes after the rollout", "about 8 a minute", "两段加起来两个多小时",
"约 2%" of a stated ×0.02 or "one and a half times" the other peak: the claim derived them. Looked up,
a true one is never found; left unchecked, a wrong one ("3 seconds later", "每分钟约 30 次" for 361 in
30 minutes) passes. So each is stated when the claim's own quoted lines compute it within the
precision the claim writes ("约", "about", "多", "roughly" widen it as ``entities`` reads them), and
not otherwise: a derivation that does not compute stays unconfirmed.

``derived`` is the one question entity grounding (the Gatekeeper) and the offline verifier both
ask of a fact they did not find, so the two agree. The words are data (``units.yaml``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from itertools import combinations, pairwise, permutations

from veridiag.text.bounds import ANY_TIME, series_points, threshold_kept
from veridiag.text.entities import (
    BARE_NUMBER,
    Corpus,
    Entity,
    TextFacts,
    claim_reading,
    computed,
    derived_duration,
    extract_entities,
    fact_at,
    is_difference,
    line_periods,
    restates,
    unit_readings,
    written_durations,
    written_half_unit,
)
from veridiag.text.epochs import epoch_stated
from veridiag.text.statistics import statistics
from veridiag.text.tallies import code_names, enumerated, points_in_range, quoted_records, tallied
from veridiag.text.units import NUMBER, unit_table

_UNITS = unit_table()
#: How far before a number its sum word may start, and how many values a claim's lines may hold
#: for their sums and ratios to be tried (more, and some pair gives any value by chance).
_REACH = 16
_MAX_VALUES = 12
#: How far its own lines may run for a rate, sum or ratio to be computed from them (a claim quotes lines).
_OWN_LIMIT = 16384


#: The kinds of fact a claim may compute: quantities, and the clocks that end a range it rounds.
_COMPUTED_KINDS = frozenset({"quantity", "timestamp"})


def _no_periods() -> Sequence[int]:
    return ()


def _no_lines() -> Corpus | None:
    return None


@dataclass(frozen=True)
class Cited:
    """What a claim's derived facts are computed from. ``periods`` and ``previous`` are read only
    when a fact needs them (most claims copy their facts)."""

    #: The claim's own quoted lines, whole (None: it quotes no place of the output).
    own: Corpus | None
    #: The cited calls' outputs (a bound over a period is checked against every point of them).
    outputs: Sequence[str] = ()
    #: The cited calls' arguments and retrieval details (a series named per minute).
    context: Sequence[str] = ()
    #: Seconds in each period the cited calls state as their own (``entities.period_lengths``).
    periods: Callable[[], Sequence[int]] = _no_periods
    #: The lines the answer's previous claim quotes: the event "1 秒后", "28 minutes after" counts from.
    previous: Callable[[], Corpus | None] = _no_lines
    #: The claim's facts (the subjects a per-host tally counts lines by); read from its text when not given.
    facts: Sequence[Entity] | None = field(default=None)


def derived(entity: Entity, claim_text: str, cited: Cited) -> bool:
    """Is ``entity``, a fact of ``claim_text`` its cited lines do not write, computed from them: the
    date or clock of an epoch they write, a duration between two of their clocks (or from the
    previous claim's event), a rate, a sum, a ratio, a percentage of a stated multiple, a
    difference, a bound kept by every point, a tally of the listed lines?"""
    if epoch_stated(entity, claim_text, cited.own):
        return True  # "1125915213，即 … 9 月 5 日 00:43:33": the epoch converted
    if entity.kind not in _COMPUTED_KINDS:
        return False  # an id, a service, a code: copied or not there
    if _derived(entity, claim_text, cited):
        return True
    # a count that is a rate's ("12 次" of "每分钟约 12 次"): stated by the rate it is per unit of
    return any(_derived(reading, claim_text, cited) for reading in entity.alternatives if reading.dimension == "rate")


def _derived(entity: Entity, claim_text: str, cited: Cited) -> bool:
    own = cited.own
    if own is not None and entity.dimension == "time" and _a_sum(entity, claim_reading(claim_text)):
        # "In total the pod spent about 12 minutes above 50 %": what its lines' parts add up to, not
        # the span from the first one's start to the last one's end (a count in total is a tally too)
        return summed(entity, claim_text, own)
    if own is not None and (
        computed(entity, claim_text, own)
        or _timed(entity, claim_text, own, cited)
        or rate_computed(entity, claim_text, own, cited)
        or summed(entity, claim_text, own)
        or multiple_computed(entity, claim_text, own)
        or percent_of_multiple(entity, own, claim_text)
        or share_computed(entity, own, cited.facts)
        or throughput_computed(entity, own, cited.facts)
    ):
        return True
    if entity.kind != "quantity":
        return False
    if threshold_kept(entity.text, claim_text, cited.outputs):
        return True
    facts = cited.facts if cited.facts is not None else extract_entities(claim_text)
    # another of the claim's quantities in another unit, that one on its lines ("256 MB" of
    # "268435456 字节", "37 km/h" of "23 mph")
    if own is not None and any(restates(entity, other) and own.contains(other) for other in facts):
        return True
    outputs = cited.outputs
    return (
        tallied(entity, facts, outputs, code_names(claim_text))
        or points_in_range(entity, facts, outputs, claim_reading(claim_text))
        or enumerated(entity, claim_reading(claim_text))
        or (cited.own is not None and quoted_records(entity, cited.own.text, outputs))
    )


def _timed(entity: Entity, claim_text: str, own: Corpus, cited: Cited) -> bool:
    """A duration as long as one of the calls' own periods, or from an event of the previous claim's
    lines to one of this claim's ("1 秒后", "28 minutes after the rollout")."""
    if entity.kind != "quantity" or entity.dimension != "time":
        return False
    periods = cited.periods()
    if periods and derived_duration(entity, claim_text, own, periods):
        return True
    if not _after_word(entity, claim_text, _UNITS.relative_after):
        return False
    previous = cited.previous()
    return previous is not None and derived_duration(entity, claim_text, own, anchors=previous)


def _after_word(entity: Entity, claim_text: str, words: re.Pattern[str]) -> bool:
    read = claim_reading(claim_text)
    at = fact_at(read, entity.text)
    return at >= 0 and words.match(read, at + len(entity.text)) is not None


def _bounds(entity: Entity) -> tuple[Decimal, Decimal] | None:
    """The value in its dimension's base unit and half the precision it is written to."""
    if entity.value is None or entity.factor is None or entity.precision is None:
        return None
    return entity.value * entity.factor, entity.precision * entity.factor / 2


def rate_computed(entity: Entity, claim_text: str, own: Corpus, cited: Cited) -> bool:
    """A count per unit of time ("about 8 a minute", "每分钟约 12 次") is stated by a count on its
    lines over a period of the same line ("320× 15:05:01 – 15:44:48") or of the call's own window,
    or by a count on its lines where the cited series is counted per that unit: named so
    (``upstream_timeouts_per_minute``: "peak 42 times" is 42 a minute) or with points that far
    apart ("63.32 requests per 5 minutes" of a series of five-minute counts). A statistic the claim
    names by it is the one that counts: "averaged 40 a minute" is not stated by "max 40 times", and
    "peaked at 12 a minute" by no average of a count over its period."""
    if entity.kind != "quantity" or entity.dimension != "rate" or len(own.text) > _OWN_LIMIT:
        return False
    bounds = _bounds(entity)
    if bounds is None:
        return False
    target, tolerance = bounds
    assert entity.factor is not None and entity.value is not None and entity.precision is not None
    per = (1 / entity.factor).quantize(Decimal("0.001")).normalize()  # 1 / (1/60) is 59.99…
    named = _statistics_named(entity, claim_text)
    # the call says what it counts in its arguments, its details or its output's first line
    heads = [output.split("\n", 1)[0][:_HEAD] for output in cited.outputs]
    said = "\n".join([*cited.context, *heads, own.text])
    steps = _series_steps(cited.outputs)
    if _level_stated(entity, named, own) and (_per_unit(per).search(said) or per in steps):
        return True
    if entity.value == 1 and per in steps and _a_point(entity, claim_text):
        return True  # "每 5 分钟一个点": the spacing of the series' points
    # the level of a series counted per another unit, converted: "42 次" a minute is "约 0.7 次/秒",
    # 369 per five minutes "about 1.23 req/s" (to the claim's digits, scaled by the step); a rate
    # written to a fifth of itself or coarser ("about 2 a minute") converts from too many levels, and
    # one per a unit is a spacing ("one point every 5 minutes"), no level; lines holding more levels
    # than a few dozen give any value by chance
    convertible = tolerance * _CONVERTED_WITHIN < target and not _a_point(entity, claim_text)
    levels = _levels(named, own) if convertible else []
    for seconds in (steps | _counted_per(said)) - {per} if 0 < len(levels) <= _MAX_VALUES * 4 else ():
        if any(abs(level - target * seconds) <= tolerance * seconds for level in levels):
            return True
    if not named <= _AVERAGES:
        return False  # a peak, a minimum, a percentile: no count over a period gives it
    called = [Decimal(p) for p in cited.periods()]
    for line in _lines(own):
        facts = TextFacts(line).entities()
        counts = [v for e in facts if e.dimension == "count" and _total(e, line) and (v := _base(e)) is not None]
        if not counts:
            continue
        if any(p > 0 and abs(c / p - target) <= tolerance for c in counts for p in called):
            return True
        # over a line's own span, from its first event to its last, c events are c − 1 intervals
        # ("one every half hour" of three restarts at 12:01, 12:31 and 13:00)
        if any(
            p > 0 and (abs(c / p - target) <= tolerance or abs((c - 1) / p - target) <= tolerance)
            for c in counts
            for p in line_periods(line, facts)
        ):
            return True
    return False


#: The statistics a count over a period gives: its average (or none named).
_AVERAGES = frozenset({"avg"})
#: How far before (after) a rate the words naming its statistic may stand ("averaged 40 slow queries a
#: minute", "每分钟最多 12 次").
_STATISTIC_BEFORE, _STATISTIC_AFTER = 16, 8


def _statistics_named(entity: Entity, claim_text: str) -> frozenset[str]:
    """The statistics the claim's words name right by the rate ("peaked at", "averaged", 平均)."""
    read = claim_reading(claim_text)
    at = fact_at(read, entity.text)
    if at < 0:
        return frozenset()
    return statistics().near(read, at, at + len(entity.text), _STATISTIC_BEFORE, _STATISTIC_AFTER)


def _level_stated(rate: Entity, named: frozenset[str], own: Corpus) -> bool:
    """Is the rate's count a value of its lines — the one labelled with the statistic the claim names,
    when it names one ("peaked at 42 a minute": "peak 42 times")?"""
    assert rate.value is not None and rate.precision is not None
    if not named:
        count = Entity("quantity", rate.text, (rate.text,), rate.value, "count", Decimal(1), rate.precision)
        return own.contains(count)
    labelled = statistics().labelled(_lines(own))
    return any(v.statistic in named and abs(v.value - rate.value) <= rate.precision / 2 for v in labelled)


#: A converted rate must be written finer than a fifth of itself ("约" widens a tenth).
_CONVERTED_WITHIN = 5
#: How far after a rate its counted word may stand ("每 5 分钟一个" then "点").
_POINT_AFTER = 4


def _a_point(rate: Entity, claim_text: str) -> bool:
    """Is what ``rate`` counts a series' point ("一个点", "one data point every 5 minutes")?"""
    read = claim_reading(claim_text)
    at = fact_at(read, rate.text)
    pattern = _UNITS.rates.point if _UNITS.rates is not None else None
    if at < 0 or pattern is None:
        return False
    return pattern.search(read, at, at + len(rate.text) + _POINT_AFTER) is not None


def _levels(named: frozenset[str], own: Corpus) -> list[Decimal]:
    """The counts a claim's lines state as a series' level: those labelled with the statistic the
    claim names, when it names one; else every count and bare number of its lines."""
    if named:
        return [v.value for v in statistics().labelled(_lines(own)) if v.statistic in named]
    found = [Decimal(n) for n in BARE_NUMBER.findall(own.text)]
    return found + [
        v
        for line in _lines(own)
        for e in TextFacts(line).entities()
        if e.dimension == "count" and (v := _base(e)) is not None
    ]


def _counted_per(said: str) -> set[Decimal]:
    """Seconds in each time unit ``said`` (a call's arguments, details, head and the claim's lines)
    counts per ("upstream_timeouts_per_minute" → 60)."""
    return {seconds for seconds in _TIME_FACTORS if _per_unit(seconds).search(said)}


_TIME_FACTORS = frozenset(
    u.factor.normalize() for u in _UNITS.by_spelling.values() if u.dimension == "time" and u.factor >= 1
)


#: How much of an output's first line (its call's header) may name what it counts.
_HEAD = 512
#: Where a metric output lists its points, and how many of them tell its step.
_POINTS_MARK = "\npoints:\n"
_STEP_POINTS = 2048


def _series_steps(outputs: Sequence[str]) -> set[Decimal]:
    """Seconds between the points of each series the outputs list (the most common gap)."""
    steps: set[Decimal] = set()
    for output in outputs:
        at = output.find(_POINTS_MARK)
        if at < 0:
            continue
        points = series_points(output[at : at + _STEP_POINTS])
        gaps = [(b.minute - a.minute) % 1440 for a, b in pairwise(points) if a.minute != ANY_TIME != b.minute]
        if gaps:
            steps.add(Decimal(max(set(gaps), key=gaps.count) * 60))
    return steps


def _total(count: Entity, line: str) -> bool:
    """Is ``count`` a total of its line ("361× ERROR …", "(840 lines)"), not a level of a series
    ("peak 42 times", "expected 1 times": a statistic's or a level's word right before it)?"""
    at = fact_at(line, count.text)
    rates = _UNITS.rates
    if at < 0 or rates is None:
        return False
    before = line[max(0, at - _REACH) : at]
    return not statistics().near(line, at, at, _REACH, 0) and rates.level_before.search(before) is None


@lru_cache(maxsize=16)
def _per_unit(seconds: Decimal) -> re.Pattern[str]:
    """A name or unit that counts per ``seconds`` ("…_per_minute", "/min", "每分钟")."""
    spellings = sorted(
        (s for s, u in _UNITS.by_spelling.items() if u.dimension == "time" and u.factor == seconds),
        key=len,
        reverse=True,
    )
    if not spellings:
        return re.compile("(?!)")
    latin = "|".join(re.escape(s) for s in spellings if s.isascii())
    chinese = "|".join(re.escape(s) for s in spellings if not s.isascii()) or "(?!)"
    return re.compile(
        rf"(?<![A-Za-z])per[_\s.-]?(?:{latin})(?![A-Za-z])|/\s?(?:{latin})(?![A-Za-z])|每(?:{chinese})",
        re.IGNORECASE,
    )


def _lines(own: Corpus) -> list[str]:
    """The distinct lines of a claim's quoted text (two bindings may quote one line)."""
    return list(dict.fromkeys(line for line in own.text.splitlines() if line.strip()))


def _base(entity: Entity) -> Decimal | None:
    if entity.kind != "quantity" or entity.value is None or entity.factor is None:
        return None
    return entity.value * entity.factor


def _values(own: Corpus, dimension: str | None) -> list[Decimal]:
    """The values of ``dimension`` on a claim's distinct lines, in its base unit."""
    return [
        v
        for line in _lines(own)
        for e in TextFacts(line).entities()
        if e.dimension == dimension and (v := _base(e)) is not None
    ]


def summed(entity: Entity, claim_text: str, own: Corpus) -> bool:
    """A sum the claim computed ("两段加起来两个多小时", "136 minutes in total" after a sum word): stated
    when two values of its kind on its own lines, or all of them, add up to it."""
    if entity.kind != "quantity" or len(own.text) > _OWN_LIMIT:
        return False
    bounds = _bounds(entity)
    if bounds is None or not _a_sum(entity, claim_reading(claim_text)):
        return False
    values = _values(own, entity.dimension)
    if len(values) < 2 or len(values) > _MAX_VALUES:
        return False
    target, tolerance = bounds
    sums = [a + b for a, b in combinations(values, 2)] + [sum(values, Decimal(0))]
    return any(abs(total - target) <= tolerance for total in sums)


#: Where a sentence ends: a sum word before it sums nothing after it ("In total, …" sums its own).
_CLAUSE_END = re.compile(r"[;；。!?！？]|\.(?:\s|$)")


def _a_sum(entity: Entity, read: str) -> bool:
    """Is ``entity`` a sum: a sum word ("in total", "一共") before it in its sentence?"""
    at = fact_at(read, entity.text)
    if at < 0 or entity.kind != "quantity":
        return False
    start = max((m.end() for m in _CLAUSE_END.finditer(read, 0, at)), default=0)
    return _UNITS.sum_word.search(read, start, at) is not None


#: A multiple a tool wrote ("×0.02", "×68.92", "3.5x") and a number standing on its own.
_MULTIPLE = re.compile(rf"×\s?(?P<after>{NUMBER})|(?<![\w.])(?P<before>{NUMBER})\s?(?:×|x(?![A-Za-z]))")
#: How a multiple is written after its number ("1.5 times the …", "3×").
_TIMES = ("times", "×", "x")


def multiple_computed(entity: Entity, claim_text: str, own: Corpus) -> bool:
    """A multiple the claim computed ("about one and a half times the 11:35 one", "3 times as many"):
    stated when two values of one kind on its own lines give that ratio, within the precision it
    is written to. "42 times" followed by no word of comparison is how often, not a multiple."""
    if entity.kind != "quantity" or entity.dimension != "count" or len(own.text) > _OWN_LIMIT:
        return False
    if not entity.text.lower().endswith(_TIMES) or not _after_word(entity, claim_text, _UNITS.multiple_after):
        return False
    bounds = _bounds(entity)
    if bounds is None:
        return False
    target, tolerance = bounds
    text = own.text
    groups: dict[str | None, list[Decimal]] = {}
    for line in _lines(own):
        for e in TextFacts(line).entities():
            if (v := _base(e)) is not None and v > 0:
                groups.setdefault(e.dimension, []).append(v)
    groups["bare"] = [Decimal(n) for n in BARE_NUMBER.findall(_MULTIPLE.sub(" ", text)) if Decimal(n) > 0]
    return any(
        2 <= len(values) <= _MAX_VALUES and any(abs(a / b - target) <= tolerance for a, b in permutations(values, 2))
        for values in groups.values()
    )


def share_computed(entity: Entity, own: Corpus, facts: Sequence[Entity] | None = None) -> bool:
    """A share the claim computed ("约 21%" of "3977 entries" and "entries_done=850"): a percentage
    that one value on its own lines is of a larger one of the same kind (or two bare numbers),
    within the precision it is written to — of the two values the claim names, when it names
    two ("峰值 1923 MB 占 2048 MB 上限的约 84%" is 94%, whatever else its lines hold), which may
    also be the change from one to the other ("比历史 median 46 高大约 15%" of 52.96)."""
    if entity.kind != "quantity" or entity.dimension != "percent" or len(own.text) > _OWN_LIMIT:
        return False
    bounds = _bounds(entity)
    if bounds is None:
        return False
    target, tolerance = bounds
    if not entity.bound:
        # to the digits written: "about 30%" computed is 29.5–30.5% (its "about" widens what a tool
        # states, not what the claim computes from any two numbers of its lines); a bound ("降幅超过
        # 99%") holds what it bounds
        tolerance = min(tolerance, written_half_unit(entity.text))
    named = [
        (e.dimension, v) for e in facts or () if e.dimension != "percent" and (v := _base(e)) is not None and v > 0
    ]
    if len(named) >= 2 and entity.bound:
        # a bound is wide ("超过 53%" allows 53–106 %): a change is read one way only, from a value the
        # claim names to one it names later ("从 200.52m 降到 97.64m", a drop of 51 %, is no rise of
        # 105 % from 97.64m); a share, of the earlier in the later
        return any(
            (a < b and abs(a / b * 100 - target) <= tolerance)
            or (kind_a == kind_b and abs(abs(b - a) / a * 100 - target) <= tolerance)
            for (kind_a, a), (kind_b, b) in combinations(named, 2)
        )
    if len(named) >= 2:
        # a share of one value in another ("850 of 3977, about 21%"), or the change from one to
        # another of one kind ("52.96 against a median of 46, about 15% higher", "a 97% drop")
        return any(
            (a < b and abs(a / b * 100 - target) <= tolerance)
            or (kind_a == kind_b and abs(abs(a - b) / b * 100 - target) <= tolerance)
            for (kind_a, a), (kind_b, b) in permutations(named, 2)
        )
    groups: dict[str | None, list[Decimal]] = {}
    for line in _lines(own):
        for e in TextFacts(line).entities():
            if e.dimension != "percent" and (v := _base(e)) is not None and v > 0:
                groups.setdefault(e.dimension, []).append(v)
    bare = [Decimal(n) for n in BARE_NUMBER.findall(_MULTIPLE.sub(" ", own.text)) if Decimal(n) > 0]
    groups["bare"] = bare + groups.get("count", [])
    if len(named) == 1:  # the one value the claim names, against one of its lines' ("比 median 46 高 15%")
        value = named[0][1]
        others = {v for values in groups.values() for v in values if v != value}
        if len(others) <= _MAX_VALUES * 4 and any(
            abs(abs(value - other) / other * 100 - target) <= tolerance for other in others
        ):
            return True
    return any(
        2 <= len(values) <= _MAX_VALUES
        and any(a < b and abs(a / b * 100 - target) <= tolerance for a, b in permutations(values, 2))
        for values in groups.values()
    )


def throughput_computed(entity: Entity, own: Corpus, facts: Sequence[Entity] | None = None) -> bool:
    """A throughput the claim computed ("about 19.9 KB/s" of "1846301 bytes … lifetime 01:33"): a size
    on its own lines (or one the claim names) over a duration there, its unit read decimal or
    binary, within the precision it is written to."""
    if entity.kind != "quantity" or entity.dimension != "throughput" or len(own.text) > _OWN_LIMIT:
        return False
    if entity.value is None or entity.precision is None:
        return False
    found = [*(facts or ()), *(e for line in _lines(own) for e in TextFacts(line).entities())]
    sizes = {v for e in found if e.dimension == "size" and (v := _base(e)) is not None and v > 0}
    durations = {v for e in found if e.dimension == "time" and (v := _base(e)) is not None and v > 0}
    durations |= {d for d in written_durations(own.text) if d > 0}
    if not sizes or not durations or len(sizes) * len(durations) > _MAX_VALUES**2:
        return False
    return any(
        abs(size / seconds - entity.value * factor) <= entity.precision * factor / 2
        for factor in unit_readings(entity)
        for size in sizes
        for seconds in durations
    )


def percent_of_multiple(entity: Entity, own: Corpus, claim_text: str = "") -> bool:
    """A percentage of a multiple its lines state ("约 2%" of "×0.02", "6900%" of "×69"); after a
    difference word, the change it is ("下降了约 88%" of "×0.12", "rose 34%" of "×1.34")."""
    if entity.kind != "quantity" or entity.dimension != "percent":
        return False
    bounds = _bounds(entity)
    if bounds is None:
        return False
    target, tolerance = bounds
    change = bool(claim_text) and is_difference(entity, claim_reading(claim_text))
    for match in _MULTIPLE.finditer(own.text):
        multiple = Decimal(match.group("after") or match.group("before"))
        if abs((abs(multiple - 1) if change else multiple) * 100 - target) <= tolerance:
            return True
    return False
