"""A bound a claim states over a period, checked against every point the cited series holds.

"CPU never went above 80% between 10:00 and 10:30", "延迟一直高于 2 秒", "都在 50 以下": an absolute
over a threshold is a statement about each point of the period, not only the ones quoted. The
metric outputs list their points (``query_metrics``' ``points:`` lines), so the claim is decided
by computation: every point of the period on the bound's side states it; one point across
contradicts it. Words are data (``bounds.yaml``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

from pydantic import Field

from veridiag.text.alternation import whole_words
from veridiag.text.normalize import ignorecase_key, reader_text
from veridiag.text.units import unit_table
from veridiag.text.wordfiles import Word, WordModel, bundled_words

Side = Literal["above", "below"]


class BoundWords(WordModel):
    above_before: list[Word] = Field(min_length=1)
    below_before: list[Word] = Field(min_length=1)
    above_after: list[Word] = Field(default_factory=list)
    below_after: list[Word] = Field(default_factory=list)
    inclusive: list[Word] = Field(default_factory=list)
    turned_by: list[Word] = Field(default_factory=list)
    held_on: list[Word] = Field(default_factory=list)
    #: Between a negation and a bound, these leave its side unsure ("no cache stayed above 5 ms").
    turn_unsure: list[Word] = Field(default_factory=list)
    #: Around a duration, these make it span between two times ("90 s before", "持续 5 分钟").
    span_after: list[Word] = Field(default_factory=list)
    #: A bound from its first quoted point to the series' last ("for the rest of the window", 此后).
    onward: list[Word] = Field(default_factory=list)
    span_before: list[Word] = Field(default_factory=list)
    #: These place a claim at the end of the data ("still above 9 s").
    latest: list[Word] = Field(default_factory=list)
    #: Right before a bound, these make it a bound on a change, no level ("降幅超过 99%").
    changes: list[Word] = Field(default_factory=list)
    #: Between a bound's word and its number, these leave it that bound ("above the 2 s mark",
    #: "never above about 1.2 ms").
    between: list[Word] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Bound:
    """A side of a threshold, in the unit's base (seconds, bytes, percent), over a period of
    minutes of the day (None: the whole series)."""

    side: Side
    value: Decimal
    inclusive: bool
    dimension: str | None
    period: tuple[int, int] | None
    #: The threshold as the claim writes it ("5 ms", "80%"), blanks out.
    written: str = ""
    #: Turned by a negation ("none above 5 ms", "never over 80%"): about every point, as an absolute.
    turned: bool = False

    def kept_by(self, value: Decimal) -> bool:
        if self.side == "above":
            return value >= self.value if self.inclusive else value > self.value
        return value <= self.value if self.inclusive else value < self.value


@dataclass(frozen=True, slots=True)
class Point:
    minute: int
    value: Decimal
    dimension: str | None
    #: The ISO date of the point's instant ("" for a window's extremes): 00:01 of the next day
    #: comes after 23:59.
    day: str = ""

    @property
    def at(self) -> tuple[str, int]:
        """When the point holds, in time order."""
        return self.day, self.minute


_NUMBER = r"(?P<number>\d+(?:\.\d+)?)\s?(?P<unit>%|[A-Za-z]+|毫秒|秒|分钟|小时)?"
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2})?(?![\d:])(?:\s*(?P<half>[ap])\.?m\b\.?)?", re.IGNORECASE)
#: A point as ``query_metrics`` lists it: an ISO instant, a value, maybe a unit.
_POINT = re.compile(
    r"^(?P<day>\d{4}-\d{2}-\d{2})T(?P<hour>\d{2}):(?P<minute>\d{2})(?::\d{2})?Z "
    r"(?P<value>-?\d+(?:\.\d+)?)\s?(?P<unit>\S*)$",
    re.MULTILINE,
)


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) or "(?!)"


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], BoundWords, re.Pattern[str], tuple[str, ...]]:
    words = bundled_words("veridiag.text", "bounds.yaml", BoundWords)
    before = re.compile(
        # the negation up to three short words before, in its clause ("none of them above 5 ms")
        # (a whole word: the "no" of "node" or "annotation" turns nothing)
        rf"(?:(?P<turn>(?<![A-Za-z])(?:{_alternation(words.turned_by)})(?![A-Za-z]))"
        rf"(?:\s*[^\s,，;；。.!?！？]{{1,12}}?){{0,3}}?\s*)?"
        rf"(?P<word>{_alternation(words.above_before + words.below_before)})\s*(?:了|到|过)?\s*"
        rf"(?:(?:{_alternation(words.between)})(?![A-Za-z])\s*){{0,2}}{_NUMBER}",
        re.IGNORECASE,
    )
    after = re.compile(
        rf"{_NUMBER}\s*(?P<word>{_alternation(words.above_after + words.below_after)})",
        re.IGNORECASE,
    )
    # Led by a class of the words' first characters (matched case-insensitively, as the words
    # are): the engine then tries the words only where one can start, not at every character
    # of every claim (``keeps_on`` was ~2 % of a Gatekeeper check's instructions, measured).
    starts = "".join(sorted({re.escape(w[0]) for w in words.held_on}))
    held = re.compile(rf"(?=[{starts}])(?:{_alternation(words.held_on)})" if starts else "(?!)", re.IGNORECASE)
    # Every bound has one of its words: a claim without any (most) is not tried against the two
    # patterns above at each of its characters (~4 % of a Gatekeeper check's instructions, measured).
    bound_words = words.above_before + words.below_before + words.above_after + words.below_after
    return before, after, words, held, tuple(sorted({ignorecase_key(w) for w in bound_words}))


def bound_words() -> BoundWords:
    """``bounds.yaml``, read once (``text/comparisons.py`` compares two fields with its words)."""
    return _patterns()[2]


def has_bound_word(read: str) -> bool:
    """Whether ``read`` holds a bound's word as the patterns match it (case-blind: ``ignorecase_key``)."""
    return any(map(ignorecase_key(read).__contains__, _patterns()[4]))


@lru_cache(maxsize=1)
def _latest_pattern() -> re.Pattern[str]:
    ordered = sorted(_patterns()[2].latest, key=len, reverse=True)
    return re.compile(whole_words(ordered, edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+"), re.IGNORECASE)


@lru_cache(maxsize=1)
def _onward_pattern() -> re.Pattern[str]:
    ordered = sorted(_patterns()[2].onward, key=len, reverse=True)
    return re.compile(whole_words(ordered, edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+") or "(?!)", re.IGNORECASE)


def onward(text: str) -> bool:
    """Does ``text`` stretch its bound to the end of the data ("for the rest of the window", 此后一直)?
    Every point from the first it quotes to the series' last then decides it."""
    return _onward_pattern().search(reader_text(text)) is not None


def of_latest(text: str) -> bool:
    """Does ``text`` place itself at the end of the data ("still above 9 s", "目前仍在上升")? Its
    bound or direction is then of the cited series' last point."""
    return _latest_pattern().search(reader_text(text)) is not None


def last_points(series: list[list[Point]]) -> list[Point]:
    """Each series' last point in time (its window's extremes aside)."""
    ends = []
    for points in series:
        timed = [p for p in points if p.minute != ANY_TIME]
        if timed:
            ends.append(max(timed, key=lambda p: p.at))
    return ends


def keeps_on(text: str) -> bool:
    """Does ``text`` say a level held on ("stayed under", "一直维持在")? A bound is then about
    every point, as with an absolute."""
    return _patterns()[3].search(reader_text(text)) is not None


@lru_cache(maxsize=1)
def _span_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    words = _patterns()[2]
    before = re.compile(
        rf"(?<![A-Za-z])(?:{_alternation(words.span_before)})\s*(?:(?:about|around|roughly|some|约|大约|近)\s*)?$",
        re.IGNORECASE,
    )
    after = re.compile(rf"\s*(?:{_alternation(words.span_after)})(?![A-Za-z])", re.IGNORECASE)
    return before, after


def spans_times(read: str, start: int, end: int) -> bool:
    """Does the duration ``read[start:end]`` span between two times ("90 seconds before the
    anomaly", "1 秒后", "lasting 44 minutes", "持续了约 5 分钟")? It is then no level a series holds
    at the claim's clock: ``derived_duration`` computes it from the clocks."""
    before, after = _span_patterns()
    return after.match(read, end) is not None or before.search(read, max(0, start - 16), start) is not None


def unsure_turn(between: str) -> bool:
    """Does ``between`` (a negation's end to a bound word) hold a word that leaves the bound's
    side unsure ("no cache stayed above 5 ms": of the cache, or of the bound)?"""
    words = _patterns()[2]
    return any(w.lower() in between.lower() for w in (*words.held_on, *words.turn_unsure))


def unsure_bound(text: str) -> bool:
    """Does ``text`` state a bound whose side a negation before it leaves unsure? The claim then
    states no checkable bound and is at most an inference."""
    read = reader_text(text)
    match = _patterns()[0].search(read) if has_bound_word(read) else None
    return (
        match is not None
        and bool(match.group("turn"))
        and unsure_turn(match.string[match.end("turn") : match.start("word")])
    )


def _negated_earlier(read: str, at: int) -> bool:
    """Is there a negation word (``turned_by``) in the clause before ``at``?"""
    start = max((read.rfind(mark, 0, at) for mark in _CLAUSE_MARKS), default=-1) + 1
    return _turn_word().search(read, start, at) is not None


#: Where a clause ends for a negation before it: marks, and the words that join two clauses.
_CLAUSE_MARKS = (
    ",",
    "，",
    ";",
    "；",
    ":",
    "：",
    "。",
    ". ",
    "!",
    "?",
    "！",
    "？",
    " and ",
    " but ",
    " then ",
    "然后",
    "但",
)


@lru_cache(maxsize=1)
def _turn_word() -> re.Pattern[str]:
    words = bundled_words("veridiag.text", "bounds.yaml", BoundWords)
    return re.compile(rf"(?<![A-Za-z])(?:{_alternation(words.turned_by)})(?![A-Za-z])", re.IGNORECASE)


def _of_a_change(read: str, at: int, words: BoundWords) -> bool:
    """Does a change's noun end right before ``at`` (a linking word between: "降幅超过", "a drop of
    more than", "the decline was over")?"""
    return _change_pattern(tuple(words.changes)).search(read, max(0, at - 24), at) is not None


@lru_cache(maxsize=1)
def _change_pattern(changes: tuple[str, ...]) -> re.Pattern[str]:
    nouns = whole_words(sorted(changes, key=len, reverse=True), edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+")
    return re.compile(rf"(?:{nouns or '(?!)'})\s*(?:了|为|是|达|达到|of|was|is|by)?\s*$", re.IGNORECASE)


def claimed_bound(text: str) -> Bound | None:
    """The first bound ``text`` states, with the period its clocks give (two clocks: from the
    first to the second)."""
    read = reader_text(text)
    before, after, words, _held, _keys = _patterns()
    match = (before.search(read) or after.search(read)) if has_bound_word(read) else None
    if match is None:
        return None
    word = " ".join(match.group("word").lower().split())
    above = {w.lower() for w in (*words.above_before, *words.above_after)}
    side: Side = "above" if word in above else "below"
    turned = bool(match.re is before and match.group("turn"))
    if turned:
        between = read[match.end("turn") : match.start("word")].lower()
        if unsure_turn(between):
            return None  # the negation is of something else ("no cache, stayed above"): no side known
        side = "below" if side == "above" else "above"
    elif match.re is before and _negated_earlier(read, match.start("word")):
        return None  # a negation further back in its clause ("No request on the api ever took over 2 s"): unsure
    if match.re is before and _of_a_change(read, match.start("word"), words):
        return None  # "降幅超过 99%", "a drop of more than 99%": how much it changed, no level it kept
    value, dimension = _base(match.group("number"), match.group("unit"))
    if value is None:
        return None
    inclusive = turned or word in {w.lower() for w in words.inclusive}
    clocks = clocks_of_day(read)
    period = (min(clocks[:2]), max(clocks[:2])) if len(clocks) >= 2 else None
    written = "".join(f"{match.group('number')}{match.group('unit') or ''}".split())
    return Bound(side, value, inclusive, dimension, period, written, turned)


#: A metric output's summary of its window: its least and greatest points ("window: min 25.73%,
#: max 104.87%"), the series' extremes whether or not every point is listed.
_WINDOW = re.compile(
    r"^window: min (?P<low>-?\d+(?:\.\d+)?)\s?(?P<low_unit>[^\s,]*), "
    r"max (?P<high>-?\d+(?:\.\d+)?)\s?(?P<high_unit>[^\s,]*),",
    re.MULTILINE,
)
#: The minute of a window's extremes: they hold at some time of it, which one unsaid.
ANY_TIME = -1


def series_points(output: str) -> list[Point]:
    """The points a metric output lists, each in its unit's base; its window's extremes too,
    at ``ANY_TIME`` (a bound over the whole window is decided by them)."""
    points = []
    for match in _POINT.finditer(output):
        value, dimension = _base(match.group("value"), match.group("unit") or None)
        if value is not None:
            minute = int(match.group("hour")) * 60 + int(match.group("minute"))
            points.append(Point(minute, value, dimension, match.group("day")))
    for window in _WINDOW.finditer(output[:4096]):
        for value_group, unit_group in (("low", "low_unit"), ("high", "high_unit")):
            value, dimension = _base(window.group(value_group), window.group(unit_group) or None)
            if value is not None:
                points.append(Point(ANY_TIME, value, dimension))
    return points


def threshold_kept(written: str, claim: str, outputs: Iterable[str]) -> bool:
    """Is ``written`` ("5 ms") the threshold of a bound ``claim`` states ("none above 5 ms",
    "一直低于 80%") that every point of the series ``outputs`` list in the bound's period keeps? A
    threshold is no reading: it need not occur in an output when the series computes the bound
    true (a point across it contradicts the claim; no point to decide by leaves it unfound)."""
    bound = claimed_bound(claim)
    if bound is None or "".join(written.split()) != bound.written:
        return False
    return broken_by(bound, [point for output in outputs for point in series_points(output)]) is None


def clocks_of_day(text: str) -> list[int]:
    """The clocks ``text`` (as a reader reads it) states, each as its minute of the day."""
    return [_minute_of_day(clock) for clock in _CLOCK.finditer(text)]


def _minute_of_day(clock: re.Match[str]) -> int:
    """A clock's minute of the day; "4:10 pm" is 16:10, "12:05 am" 00:05."""
    hour, minute, half = int(clock.group(1)), int(clock.group(2)), (clock.group("half") or "").lower()
    if half == "p" and hour < 12:
        hour += 12
    elif half == "a" and hour == 12:
        hour = 0
    return hour * 60 + minute


def broken_by(bound: Bound, points: list[Point]) -> Point | Literal[False] | None:
    """The first point of the bound's period on the other side; None when every one keeps it;
    False when no point of the same dimension lies in the period (nothing to decide)."""
    inside = [
        p
        for p in points
        if (p.dimension == bound.dimension or p.dimension is None or bound.dimension is None)
        and (p.minute != ANY_TIME or bound.period is None)
        and (bound.period is None or bound.period[0] <= p.minute <= bound.period[1])
    ]
    if not inside:
        return False
    return next((p for p in inside if not bound.kept_by(p.value)), None)


def _base(number: str, unit: str | None) -> tuple[Decimal | None, str | None]:
    try:
        value = Decimal(number)
    except InvalidOperation:
        return None, None
    if not unit:
        return value, None
    known = unit_table().by_spelling.get(unit.lower())
    if known is None:
        return value, None
    return value * known.factor, known.dimension
