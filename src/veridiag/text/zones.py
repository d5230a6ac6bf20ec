"""Which zone each clock of a text is written in, and the instant it names (issue 27: zoned times
are compared as instants).

A claim writes a time as its reader does — "北京时间 2 月 19 日上午 8:22", "08:22+08:00", "UTC+8
08:22", "08:22 CST (UTC+8)", "16:22 (08:22 UTC)" — and a tool output as its writer does
(``…T00:22:10Z``, ``[19/Feb/2026:08:22:10 +0800]``, a header "timezone: Asia/Shanghai"). Both
are read to instants here, with one rule for whom a zone belongs to: the clock it is attached to
— written right after it ("08:22 UTC", "08:22 (UTC+8)") or right before it, a date between
allowed ("UTC+8 08:22", "北京时间 2 月 19 日 08:22") — a zone between two clocks being the first
one's ("00:22 UTC 08:22 北京时间"); the ends of a range share it ("08:22 到 08:40 北京时间"); a
clock in brackets beside a zoned one restates that instant ("16:22 (08:22 UTC)"). What cannot be
pinned stays uncertain: a word naming several zones (CST), a zone the text names but attaches to
no clock ("at 08:22, UTC+8 reads …"), two zones on one clock. The words are ``when.yaml``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from itertools import pairwise

from veridiag.text.cjk import has_cjk
from veridiag.text.entities import ZONE_HEAD, ZONE_HINT, Entity, fact_text
from veridiag.text.when import (
    _MONTHS,
    _OFFSET_AFTER,
    _OFFSET_NAME,
    _fold_zone_word,
    _when_words,
    _zone,
    _zone_words,
    place_zones,
    places_beside_clocks,
    within_place,
)

#: Days a clock without a date is read on: winter and summer, so a zone with summer time gives both.
_SEASONS = (date(2026, 1, 15), date(2026, 7, 15))
#: A year a text names ("16 May 2017", "2017-05-16", "2017 年"): its clocks without a day are read in
#: that year's seasons, for a zone's offsets change over the years (Tehran kept summer time until
#: 2022: "04:30 Tehran time … 2017" is 00:00Z, read in 2026 it would be 01:00Z).
_YEAR = re.compile(r"(?<![\d.:])(?:19[7-9]\d|20\d\d)(?![\d:]|\.\d)")
#: More years than this named, and the text is no one incident's: read in this year's seasons.
_MAX_YEARS = 2


def _seasons_named(text: str, zone: tzinfo) -> tuple[date, ...]:
    """A day of each offset kept in each year ``text`` names (``_YEAR``); else this year's (``_SEASONS``)
    and a day of each other offset ``zone`` kept since 2000 ("14:32 Caracas time" of a 2014 line
    is UTC−4:30, Venezuela's until 2016): each reading then holds only on a line of its season."""
    years = sorted({int(m.group()) for m in _YEAR.finditer(text)})
    if not years or len(years) > _MAX_YEARS:
        return _SEASONS + _other_offsets(zone)
    return tuple(day for year in years for day in _offsets_in(zone, year))


@lru_cache(maxsize=64)
def _offsets_in(zone: tzinfo, year: int) -> tuple[date, ...]:
    """A day of each offset ``zone`` kept in ``year`` (Moscow kept +4 until 26 October 2014, then +3)."""
    found: dict[timedelta | None, date] = {}
    for month in range(1, 13):
        day = date(year, month, 15)
        found.setdefault(datetime.combine(day, datetime.min.time(), zone).utcoffset(), day)
    return tuple(found.values())


#: The years a zone's past offsets are read from (the data veridiag reads is of this century).
_PAST_YEARS = range(2000, 2026)


@lru_cache(maxsize=64)
def _other_offsets(zone: tzinfo) -> tuple[date, ...]:
    """A day of each offset ``zone`` kept in winter or summer since 2000 that it keeps no more."""

    def offset(day: date) -> timedelta | None:
        return datetime.combine(day, datetime.min.time(), zone).utcoffset()

    now = {offset(day) for day in _SEASONS}
    found: dict[timedelta | None, date] = {}
    for year in _PAST_YEARS:
        for month in (1, 7):
            day = date(year, month, 15)
            found.setdefault(offset(day), day)
    return tuple(day for kept, day in found.items() if kept not in now)


@dataclass(frozen=True, slots=True)
class ClockReading:
    """How one written clock is read: the wall clock at ``clock`` (its own span, or the zoned
    clock it restates) in each of ``zones``; ``pinned`` when the words allow one zone only."""

    clock: tuple[int, int]
    zones: tuple[tzinfo, ...]
    pinned: bool
    #: Where the zone's words stand (the partner's, for a clock read in a range partner's zone or
    #: restating another; empty when loose).
    mention: tuple[int, int] = (0, 0)
    #: The zones are named in the text but attached to no clock: the clock may be as written too.
    loose: bool = False


@dataclass(frozen=True, slots=True)
class _Mention:
    start: int
    end: int
    zones: tuple[tzinfo, ...]


#: A written clock: ``08:22``, ``8:22 am``, ``08:22:10.5``, with an offset glued to it (``+08:00``,
#: ``+0800``, ``+08``; a "-hh:mm" only after seconds: "14:00-15:00" is a range).
CLOCK = re.compile(
    r"(?<![\d:.])(?<!UTC[+-])(?<!GMT[+-])(?<!UTC\s[+-])(?<!GMT\s[+-])(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:[.,]\d+)?)?"
    r"(?:\s?(?P<ampm>[AaPp])\.?[Mm]\.?(?![A-Za-z]))?"
    r"(?P<offset>\+\d{2}(?::?\d{2})?(?![\d:])|(?<=\d:\d\d:\d\d)-\d{2}:?\d{2}(?!\d)|\s\+\d{4}(?!\d))?(?![\d:])"
)
#: "东八区", "西五区": the zone N hours east or west of UTC.
_ZH_BELT = re.compile(r"(?P<side>[东東西])(?P<hours>[0-9]{1,2}|十[一二]?|[一二三四五六七八九])[区區]")
_ZH_HOURS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
#: A date between a zone written first and its clock: "北京时间 2 月 19 日 08:22", "UTC+8 Feb 19 08:22".
_DATE = (
    r"(?:\d{4}\s*[-/.年]\s*)?\d{1,2}\s*[-/.月]\s*\d{1,2}\s*[日号號]?"
    rf"|(?i:(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?|\d{{1,2}}\s+(?:{_MONTHS})\.?(?:\s+\d{{4}})?)"
)
_PREFIX_JOIN = re.compile(rf"[\s的]*(?i:(?:on|at)\s+)?(?:(?:{_DATE})[\s,，的]*(?i:at\s+)?)?")
_SUFFIX_JOIN = re.compile(r"\s*")
#: What joins a zone to its gloss in brackets: "CST (UTC+8)", "UTC+8（北京时间）".
_GLOSS_JOIN = re.compile(r"\s*")
#: What joins the two ends of a range of clocks.
_RANGE_JOIN = re.compile(r"\s*(?:到|至|->|-|–|—|~|～|→|⟶|⇒|(?i:to|and|until|till|through|thru)(?![A-Za-z]))\s*")
#: A clock in brackets right after another: "16:22 (08:22 UTC)" restates one instant.
_RESTATES = re.compile(r"\s*[(（]\s*")


def _offset_zone(sign: str, hours: int, minutes: int = 0) -> tzinfo | None:
    if hours > 14 or minutes > 59:
        return None
    offset = timedelta(hours=hours, minutes=minutes)
    return UTC if not offset else timezone(-offset if sign == "-" else offset)


def _glued_offset(written: str) -> tzinfo | None:
    digits = written.strip()[1:].replace(":", "")
    return _offset_zone(written.strip()[0], int(digits[:2]), int(digits[2:] or 0))


@lru_cache(maxsize=1)
def _ambiguous() -> dict[str, tuple[tzinfo, ...]]:
    return {_fold_zone_word(word): tuple(_zone(key) for key in keys) for word, keys in _when_words().ambiguous.items()}


def _bracketed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span with the brackets around it when they enclose it alone: "(UTC+8)" whole."""
    left = len(text[:start].rstrip())
    right = end + len(text[end:]) - len(text[end:].lstrip())
    if left and text[left - 1] in "(（" and text[right : right + 1] in (")", "）"):
        return left - 1, right + 1
    return start, end


def _mentions(text: str) -> list[_Mention]:
    """The zones ``text`` names, in order, each with its brackets, a word and its gloss as one."""
    found: list[_Mention] = []
    for match in _OFFSET_NAME.finditer(text):
        zone = _offset_zone(match.group("sign"), int(match.group("hours")), int(match.group("minutes") or 0))
        if zone is not None:
            found.append(_Mention(*_bracketed(text, *match.span()), (zone,)))
    for match in _ZH_BELT.finditer(text):
        hours = match.group("hours")
        count = int(hours) if hours.isdigit() else sum(_ZH_HOURS[c] for c in hours)
        zone = _offset_zone("-" if match.group("side") == "西" else "+", count)
        if zone is not None:
            found.append(_Mention(*_bracketed(text, *match.span()), (zone,)))
    pattern, keys, chinese_only = _zone_words()
    ambiguous = _ambiguous()
    chinese = has_cjk(text)
    places = list(place_zones(text))
    places += [found for found in places_beside_clocks(text) if not _overlapping(found[0], places)]
    for match in pattern.finditer(text):
        if _OFFSET_AFTER.match(text, match.end()) or any(m.start <= match.start() < m.end for m in found):
            continue  # "UTC" of "UTC+8"; "东八区" read above
        if within_place(match.span(), places):
            continue  # "Pacific" of "Mexican Pacific Time"
        word = _fold_zone_word(match.group())
        if word in ambiguous and not (word in chinese_only and chinese):
            zones = ambiguous[word]
        elif word in chinese_only and not chinese:
            continue
        else:
            zones = (_zone(keys[word]),)
        found.append(_Mention(*_bracketed(text, *match.span()), zones))
    for span, key in places:
        if not any(m.start < span[1] and span[0] < m.end for m in found):  # "Beijing time" is listed
            found.append(_Mention(*_bracketed(text, *span), (_zone(key),)))
    for match in _ambiguous_only(text):
        found.append(_Mention(*_bracketed(text, *match.span()), ambiguous[_fold_zone_word(match.group())]))
    found.sort(key=lambda m: m.start)
    return _glossed(text, found)


def _overlapping(span: tuple[int, int], places: list[tuple[tuple[int, int], str]]) -> bool:
    return any(at[0] < span[1] and span[0] < at[1] for at, _key in places)


def _ambiguous_only(text: str) -> list[re.Match[str]]:
    """Ambiguous words ``when.yaml`` lists nowhere else (IST)."""
    _pattern, keys, _chinese_only = _zone_words()
    words = [w for w in _ambiguous() if w not in keys]
    if not words:
        return []
    return list(re.finditer(r"(?<![A-Za-z])(?:" + "|".join(map(re.escape, words)) + r")(?![A-Za-z])", text))


def _same(first: tzinfo, second: tzinfo) -> bool:
    return all(
        datetime.combine(day, datetime.min.time(), first).utcoffset()
        == datetime.combine(day, datetime.min.time(), second).utcoffset()
        for day in _SEASONS
    )


def _glossed(text: str, mentions: list[_Mention]) -> list[_Mention]:
    """ "CST (UTC+8)": a zone and its gloss in brackets as one mention; the reading both allow."""
    merged: list[_Mention] = []
    for mention in mentions:
        last = merged[-1] if merged else None
        if last is not None and text[mention.start] in "(（" and _GLOSS_JOIN.fullmatch(text, last.end, mention.start):
            common = tuple(z for z in last.zones if any(_same(z, o) for o in mention.zones))
            one = len(last.zones) == 1 or len(mention.zones) == 1
            zones = (common[:1] if one else common) if common else last.zones + mention.zones  # disagreeing: either
            merged[-1] = _Mention(last.start, mention.end, zones)
        else:
            merged.append(mention)
    return merged


@lru_cache(maxsize=512)
def clock_readings(text: str) -> dict[tuple[int, int], ClockReading]:
    """Each clock of ``text`` that a zone concerns, by its span, read as the words allow; a clock
    no zone concerns is absent (it is compared as written). Meant for claims (short texts)."""
    clocks = list(CLOCK.finditer(text))
    if not clocks:
        return {}
    mentions = _mentions(text)
    if not mentions and not any(c.group("offset") for c in clocks):
        return {}
    spans = [c.span() for c in clocks]
    suffix = {i: m for i, c in enumerate(clocks) for m in mentions if _SUFFIX_JOIN.fullmatch(text, c.end(), m.start)}
    prefix = {i: m for i, c in enumerate(clocks) for m in mentions if _PREFIX_JOIN.fullmatch(text, m.end, c.start())}
    for i in list(prefix):
        # A zone between two clocks is the first one's, unless that one has its own before it.
        owner = next((j for j, m in suffix.items() if m is prefix[i] and j != i), None)
        if owner is not None and owner not in prefix:
            del prefix[i]
    readings: dict[tuple[int, int], ClockReading] = {}
    used: set[int] = set()
    for i, clock in enumerate(clocks):
        if clock.group("offset"):
            zone = _glued_offset(clock.group("offset"))
            if zone is not None:
                readings[spans[i]] = ClockReading(spans[i], (zone,), True, (clock.start("offset"), clock.end()))
            continue
        own = [m for m in (prefix.get(i), suffix.get(i)) if m is not None]
        used |= {id(m) for m in own}
        if not own:
            continue
        zones = own[0].zones if len(own) == 1 or _agree(own) else tuple(z for m in own for z in m.zones)
        pinned = len(zones) == 1
        readings[spans[i]] = ClockReading(spans[i], zones, pinned, (min(m.start for m in own), max(m.end for m in own)))
    _share_ranges(text, spans, readings)
    _restatements(text, spans, readings)
    loose = tuple(z for m in mentions if id(m) not in used for z in m.zones)
    if loose:
        for span in spans:
            if span not in readings:  # named in the text but attached to no clock: maybe this one's
                readings[span] = ClockReading(span, loose, False, loose=True)
    else:
        _carry_zone(spans, readings)
    return readings


def _carry_zone(spans: list[tuple[int, int]], readings: dict[tuple[int, int], ClockReading]) -> None:
    """ "UTC+05:30 的 05:27:42 还是 240，到 05:30:00 就变成了 0": a reader reads a later bare clock in
    the one zone the text gave its other clocks — maybe: it is read both ways, pinning nothing.
    UTC carries nothing (a bare clock is compared as UTC already)."""
    given = {reading.zones for reading in readings.values() if reading.pinned}
    if len(given) != 1:
        return
    (zones,) = given
    if all(zone.utcoffset(None) == timedelta(0) for zone in zones if isinstance(zone, timezone)) and all(
        str(zone) in _UTC_KEYS for zone in zones if not isinstance(zone, timezone)
    ):
        return
    for span in spans:
        if span not in readings:
            readings[span] = ClockReading(span, zones, False, loose=True)


#: Zone keys that are UTC all year.
_UTC_KEYS = frozenset({"UTC", "Etc/UTC", "Etc/GMT", "GMT", "Etc/Universal", "Etc/Zulu"})


def _agree(mentions: list[_Mention]) -> bool:
    first, second = mentions
    return len(first.zones) == len(second.zones) == 1 and _same(first.zones[0], second.zones[0])


def _share_ranges(text: str, spans: list[tuple[int, int]], readings: dict[tuple[int, int], ClockReading]) -> None:
    """ "08:22 到 08:40 北京时间", "UTC+8 08:22–08:40": a range's ends are read in one zone."""
    for _ in range(2):  # both directions: the zone may be written at either end
        for first, second in pairwise(spans):
            if not _RANGE_JOIN.fullmatch(text, first[1], second[0]):
                continue
            known = readings.get(first) or readings.get(second)
            for span in (first, second):
                if span not in readings and known is not None:
                    readings[span] = ClockReading(span, known.zones, known.pinned, known.mention)


def _restatements(text: str, spans: list[tuple[int, int]], readings: dict[tuple[int, int], ClockReading]) -> None:
    """ "16:22 (08:22 UTC)", "08:22 UTC (16:22)": a bare clock beside a zoned one in brackets is
    that instant in another zone; it states what the zoned one states."""
    for first, second in pairwise(spans):
        if not _RESTATES.fullmatch(text, first[1], second[0]):
            continue
        for bare, zoned in ((first, second), (second, first)):
            if bare not in readings and zoned in readings:
                reading = readings[zoned]
                readings[bare] = ClockReading(reading.clock, reading.zones, reading.pinned, reading.mention)


def instants(text: str, reading: ClockReading, day: date | None) -> list[tuple[datetime, tzinfo]]:
    """The UTC instants ``reading`` allows, each with the zone it is read in: on ``day``, or in
    winter and summer without one."""
    clock = CLOCK.match(text, reading.clock[0])
    if clock is None:
        return []
    hour = int(clock.group("hour"))
    if clock.group("ampm"):
        hour = hour % 12 + (12 if clock.group("ampm").lower() == "p" else 0)
    minute, second = int(clock.group("minute")), int(clock.group("second") or 0)
    # 24:00 ends a day ("北京时间晚上 10 点到 12 点"): the next day's 00:00, read in the zone
    later = timedelta(days=1) if hour == 24 and minute == second == 0 else timedelta(0)
    hour = 0 if later else hour
    if hour > 23 or minute > 59 or second > 59:
        return []
    found: list[tuple[datetime, tzinfo]] = []
    for zone in reading.zones:
        for on in (day,) if day else _seasons_named(text, zone):
            wall = datetime(on.year, on.month, on.day, hour, minute, second, tzinfo=zone) + later
            instant = wall.astimezone(UTC)
            if all(instant != seen for seen, _zone in found):
                found.append((instant, zone))
    return found


def seconds_written(text: str, reading: ClockReading) -> bool:
    """Whether the clock ``reading`` reads was written to the second."""
    clock = CLOCK.match(text, reading.clock[0])
    return clock is not None and clock.group("second") is not None


def reading_span(text: str, start: int, end: int) -> tuple[int, int]:
    """What the fact at ``text[start:end]`` spans once its zone is read: its zone's words and the
    clock it restates too (the whole text for a loose one): a text carrying the clock's own
    token does not state the instant."""
    reading = next((r for span, r in clock_readings(text).items() if start <= span[0] < end), None)
    if reading is None:
        return start, end
    if reading.loose:
        return 0, len(text)
    edges = [start, end, *reading.clock, *(reading.mention if reading.mention != (0, 0) else ())]
    return min(edges), max(edges)


#: A clock a tool output writes without a zone of its own, with its date when written before it.
_LOCAL_STAMP = re.compile(
    r"(?<![\d:.])(?:(?P<day>\d{4}-\d{2}-\d{2})[T ])?(?P<clock>\d{1,2}:\d{2}(?::\d{2})?)(?:[.,]\d+)?"
    r"(?![\d:]|Z(?![A-Za-z])|\s?[+-]\d{2}:?\d{2}(?!\d))"
)
#: "19/Feb/2026:08:22:10 +0800" (the common log format), "08:22:10 +0800": a clock with its offset.
_CLF_STAMP = re.compile(
    r"(?:(?P<day>\d{2})/(?P<month>[A-Z][a-z]{2})/(?P<year>\d{4}):|(?<![\d:.]))(?P<clock>\d{2}:\d{2}:\d{2})(?:[.,]\d+)?"
    r"\s?(?P<sign>[+-])(?P<hours>\d{2}):?(?P<minutes>\d{2})(?!\d)"
)
_MONTH_NUMBERS = {m: i for i, m in enumerate(("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec").split(), 1)}


@lru_cache(maxsize=1)
def _stated_zone_pattern() -> re.Pattern[str]:
    words = sorted(_when_words().output_zone, key=len, reverse=True)
    named = "|".join(r"\s+".join(map(re.escape, w.split())) for w in words)
    return re.compile(
        rf"(?<![A-Za-z_])(?i:{named})\s*[:=：]\s*[\"']?(?P<zone>[A-Za-z_]+/[A-Za-z_/+-]+|[^\s,;\"'()]+(?:\s*[+-]\s*\d{{1,2}}(?::?\d{{2}})?)?)"
    )


def stated_zone(text: str) -> tzinfo | bool:
    """The zone a tool output says its times are written in ("timezone: Asia/Shanghai", "时区:
    UTC+8", "tz=Europe/Paris"), when it names exactly one; True when it names a zone that is not
    UTC without pinning it ("tz: CST", two zones): its clocks are then no UTC, at no known
    offset; False when it names none, or UTC."""
    found: list[tzinfo] = []
    unpinned = False
    for match in _stated_zone_pattern().finditer(text):
        written = match.group("zone")
        zone: tzinfo | None
        if "/" in written:
            try:
                zone = _zone(written)
            except ValueError:
                continue
        else:
            named = _mentions(written)
            zone = named[0].zones[0] if named and len(named[0].zones) == 1 else None
            unpinned = unpinned or (bool(named) and zone is None)
        if zone is not None and not any(_same(zone, z) for z in found):
            found.append(zone)
    if unpinned or len(found) > 1:
        return True
    return found[0] if found and not _same(found[0], UTC) else False


def output_instants(text: str) -> tuple[list[tuple[int, int]], set[str]]:
    """The spans of an output's clocks that are local faces — written with an offset
    (``… 08:22:10 +0800``, ``[19/Feb/2026:08:22:10 +0800]``), or without one in an output that
    states its zone in its head — and their UTC readings (``2026-02-19``, ``00:22:10``, ``00:22``)."""
    spans: list[tuple[int, int]] = []
    readings: set[str] = set()

    def add(instant: datetime, span: tuple[int, int], dated: bool) -> None:
        spans.append(span)
        readings.update({instant.strftime("%H:%M:%S"), instant.strftime("%H:%M")})
        if dated:
            readings.add(instant.date().isoformat())

    for match in _CLF_STAMP.finditer(text):
        zone = _offset_zone(match.group("sign"), int(match.group("hours")), int(match.group("minutes")))
        month = _MONTH_NUMBERS.get(match.group("month") or "")
        if zone is None or zone is UTC:
            continue
        on = date(int(match.group("year")), month, int(match.group("day"))) if month else _SEASONS[0]
        wall = datetime.combine(on, datetime.strptime(match.group("clock"), "%H:%M:%S").time(), zone)
        add(wall.astimezone(UTC), match.span(), month is not None)
    stated = stated_zone(text[:ZONE_HEAD])
    if stated is not False:
        for match in _LOCAL_STAMP.finditer(text):
            if any(start <= match.start() < end for start, end in spans):
                continue
            clock = match.group("clock")
            try:
                wall_time = datetime.strptime(clock, "%H:%M:%S" if clock.count(":") == 2 else "%H:%M").time()
                days = (date.fromisoformat(match.group("day")),) if match.group("day") else _SEASONS
            except ValueError:
                continue
            if isinstance(stated, bool):
                spans.append(match.span())  # a local face at an offset the output does not pin
                continue
            for on in days:
                add(datetime.combine(on, wall_time, stated).astimezone(UTC), match.span(), bool(match.group("day")))
    return spans, readings


#: A claim's clock as a needle: "12:46" or "12:46:19".
_NEEDLE_CLOCK = re.compile(r"(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?")


def named_zones(texts: Iterable[str]) -> tuple[tzinfo, ...]:
    """The zones other than UTC that ``texts`` (an answer's claims) name: its reader's, in which it
    may write a clock without naming the zone again ("北京时间 12:45:19 突增 … 峰值出现在 12:46:19")."""
    found: list[tzinfo] = []
    for written in texts:
        text = fact_text(written)  # as its facts are read ("UTC−9:30" with a minus sign)
        if not ZONE_HINT.search(text):
            continue  # most claims name no zone
        for mention in _mentions(text):
            found += [z for z in mention.zones if not _same(z, UTC) and not any(_same(z, f) for f in found)]
    return tuple(found)


def read_in(entity: Entity, zones: tuple[tzinfo, ...]) -> list[Entity]:
    """A clock written without a zone (``entity``: no zone concerns it in its own text) as the UTC
    instant it names in each of ``zones``, each ``uncertain``: its words do not say it is in one
    of them. None for other facts or a clock already read with a zone."""
    if entity.kind != "timestamp" or entity.instant or entity.uncertain or not zones:
        return []
    day = next((date.fromisoformat(n) for n in entity.needles if _DAY_NEEDLE.fullmatch(n)), None)
    clock = next((m for n in entity.needles if (m := _NEEDLE_CLOCK.fullmatch(n))), None)
    if clock is None:
        return []
    hour, minute, second = int(clock["hour"]), int(clock["minute"]), int(clock["second"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        return []
    spelling = "%H:%M:%S" if clock["second"] else "%H:%M"
    # a face of twelve hours or less without its am/pm is either half of the reader's day: "1:05"
    # after "下午 1:02（ICT）" is 13:05 there, "12:06" after "凌晨 12:00" is 00:06
    hours = (hour, (hour + 12) % 24) if 1 <= hour <= 12 and not _MERIDIEM.search(entity.text) else (hour,)
    found: list[Entity] = []
    for zone, face in ((z, h) for z in zones for h in hours):
        readings = [
            datetime(on.year, on.month, on.day, face, minute, second, tzinfo=zone).astimezone(UTC)
            for on in ((day,) if day else _SEASONS)
        ]
        # a zone that changes its offset, without a day: each reading holds on its season's days only
        seasons = not day and len({r.time() for r in readings}) > 1
        for instant in readings:
            needles = (instant.date().isoformat(), instant.strftime(spelling)) if day else (instant.strftime(spelling),)
            if all(e.needles != needles for e in found):
                season = (zone, int((instant.astimezone(zone).utcoffset() or timedelta()).total_seconds()))
                found.append(
                    replace(
                        entity,
                        needles=needles,
                        instant=True,
                        uncertain=True,
                        alternatives=(),
                        season=season if seasons else None,
                    )
                )
    return found


_DAY_NEEDLE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: An am/pm the clock's own text writes: it says which half of the day it is.
_MERIDIEM = re.compile(r"[AaPp]\.?[Mm]\b")
