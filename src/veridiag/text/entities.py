"""Exact facts in text — numbers with units, percentages, ratios, error codes, ids,
service names, timestamps — and whether a tool output contains them.

Fuzzy excerpt scores cannot tell ``200/200`` from ``100/200`` (95.8 similar); these
checks are exact. Numbers compare by value within the precision they were written
with (``92%`` is grounded by ``92.4%``, ``5.3 s`` by ``5300ms`` or ``5312 ms``), never
by closeness of strings. Shared by the Gatekeeper, the offline verifier, the composer
guard and the evals. The words facts are known by are data: ``entities.yaml``, ``units.yaml``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta, tzinfo
from decimal import Decimal
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from pydantic import Field

from veridiag.text.cjk import HAN
from veridiag.text.memo import kept, remembered
from veridiag.text.normalize import reader_text
from veridiag.text.spoken import LIMIT as SPOKEN_LIMIT
from veridiag.text.spoken import calendar_dates, may_spell, spoken_text
from veridiag.text.units import NUMBER, Rates, Unit, unit_table
from veridiag.text.wordfiles import Word, WordModel, bundled_words

#: ``name``: a setting's or a field's name ("max_connections") — a fact to find, never a subject
#: whose line a value belongs to (a header line's tool name is no order or host).
EntityKind = Literal["timestamp", "identifier", "error_code", "ratio", "quantity", "service", "name", "date"]
#: The kinds the services a lexer is told of never change (``TextFacts``): they decide only
#: what a plain word is — a service, or else a host (``identifier``), a ``name`` or nothing.
SERVICE_BLIND: frozenset[EntityKind] = frozenset({"timestamp", "error_code", "ratio", "quantity"})


class EntityWords(WordModel):
    """``entities.yaml``: the words facts are recognised by (exact spellings)."""

    id_keywords: list[Word] = Field(min_length=1)
    id_suffixes: list[Word] = Field(min_length=1)
    status_words: list[Word] = Field(min_length=1)
    status_verbs: list[Word] = Field(default_factory=list)
    service_suffixes: list[Word] = Field(min_length=1)
    plain_words: list[Word] = Field(default_factory=list)
    record_words: list[Word] = Field(default_factory=list)


@lru_cache(maxsize=1)
def entity_words() -> EntityWords:
    """The bundled ``text/entities.yaml``, read once."""
    return bundled_words("veridiag.text", "entities.yaml", EntityWords)


def _any_of(words: list[str]) -> str:
    """A non-capturing alternation, longest first (so ``request`` is tried before ``req``)."""
    return "(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")"


_UNITS = unit_table()
_WORDS = entity_words()
_UNIT_ALT = _UNITS.alternation()
_NUMBER_AT = re.compile(NUMBER)
#: (a unit glued to ``_`` is a field's name: "Lock_time: 29.3 Rows_examined: 184302")
_UNIT_AT = re.compile(rf"\s?({_UNIT_ALT})(?![A-Za-z_])", re.IGNORECASE)
#: A letter of ``units.yaml`` letter_readings right after a number, glued (a CPU letter also apart),
#: in group 1: "115.64 m" is 115.64 millicores, never a bare 115.64 that a percentage may be.
_LETTER_UNIT = r"(?:\s(?={}))?({})(?![A-Za-z])".format(
    "|".join(map(re.escape, _UNITS.cpu_letters)) or "(?!)", "|".join(map(re.escape, _UNITS.letter_readings)) or "(?!)"
)
_LETTER_AT = re.compile(_LETTER_UNIT)
_END = r"(?![A-Za-z0-9_-]|\.[A-Za-z0-9_-])"
#: Where a fact can start: a digit, a Latin letter, or the first character of a non-Latin keyword.
_KEYWORDS = (*_WORDS.id_keywords, *_WORDS.status_words, *_WORDS.status_verbs)
_STARTS = "".join(sorted({re.escape(w[0]) for w in _KEYWORDS if not w[0].isascii()}))

#: What an alternative must match before it backtracks through a word that cannot be one,
#: stated possessively (``*+``): code, service, hex and ratio tried on every plain word were
#: most of the lexer's time (measured). Each asks only what its alternative needs anyway, so
#: the lexer finds what it finds without them (``_lexer_pattern(guarded=False)``, tested).
_GUARDS = {
    "hex": r"(?=[0-9a-f]{8})",
    "upper_code": r"(?=[A-Z][A-Z0-9]*+[_-][A-Z0-9])",
    "exception": r"(?=(?:[a-z][a-z0-9]*+\.)*+[A-Z])",
    "svc": r"(?=[A-Za-z][A-Za-z0-9]*+-)",
    "ratio": r"(?=\d++\s*+/)",
}


def fact_text(text: str) -> str:
    """``reader_text`` with Chinese clock words written as clocks (下午1点 → 13:00): the form
    in which a text's facts are looked up, claims and outputs alike."""
    text = reader_text(text)
    if text.isascii():
        return text
    return remembered("fact_text", text, _with_clocks)


#: A 12-hour range whose end alone writes am/pm ("3:30 to 3:59 pm", "4:40–7:55 PM"): its start is
#: of the same half of the day unless it is later on the clock ("11:30 to 1:15 pm": 11:30 am).
_MERIDIEM_RANGE = re.compile(
    r"(?<![\d:.])(?P<h1>\d{1,2}):(?P<m1>\d{2})(?::\d{2})?(?![\d:]|\s?[AaPp]\.?[Mm]\b)"
    r"(?P<join>\s*(?:to|and|until|till|through|->|[-–—~→⟶⇒])\s*)"
    r"(?P<h2>\d{1,2}):(?P<m2>\d{2})(?::\d{2})?\s?(?P<half>[AaPp])\.?(?P<m>[Mm])\.?(?![A-Za-z])"
)
_MERIDIEM_HINT = re.compile(r"[AaPp]\.?[Mm](?![A-Za-z])")


def with_shared_meridiem(text: str) -> str:
    """``text`` (a claim or excerpt, read for its facts; not every line of an output: a range
    there is matched as written) with the am/pm of a range's end written after its start too."""
    if len(text) > SPOKEN_LIMIT or not _MERIDIEM_HINT.search(text):
        return text
    return remembered("meridiem", text, _shared_meridiem)


def _shared_meridiem(text: str) -> str:

    def share(match: re.Match[str]) -> str:
        start = (int(match["h1"]) % 12, int(match["m1"]))
        end = (int(match["h2"]) % 12, int(match["m2"]))
        half = match["half"]
        if start > end:  # "11:30 to 1:15 pm": the start is in the other half
            half = {"a": "p", "p": "a", "A": "P", "P": "A"}[half]
        first = match.group()[: match.start("join") - match.start()]
        return f"{first} {half}{match['m']}{match.group()[match.start('join') - match.start() :]}"

    return _MERIDIEM_RANGE.sub(share, _HOUR_MERIDIEM.sub(r"\1:00 ", text))


#: An hour written with am/pm and no minutes ("7 a.m.", "9pm"): the clock on the hour ("7:00 a.m."),
#: so that it is checked like any clock, in the zone the claim names.
#: Not the digit of an id ("ERR_A1PM", "X-Q3PM": its code whole, no 1 pm).
_HOUR_MERIDIEM = re.compile(r"(?<![A-Za-z0-9_:.,/-])(1[0-2]|0?[1-9])\s?(?=[AaPp]\.?[Mm](?![A-Za-z]))")


def claim_reading(text: str) -> str:
    """``fact_text`` with spelled-out quantities in digits ("two minutes", 一个半小时:
    ``spoken.py``): the text a claim's facts are lexed from, for finding one of them in it."""
    return _spelled(fact_text(text))


def _spelled(text: str) -> str:
    if len(text) > SPOKEN_LIMIT:
        return text
    return remembered("spoken_text", text, spoken_text)


def _with_clocks(text: str) -> str:
    from veridiag.text.when import written_clocks  # only for a text with Chinese in it

    clocks = written_clocks(text)
    if not clocks:
        return text
    parts: list[str] = []
    done = 0
    for clock in clocks:
        parts += (text[done : clock.start], f" {clock.spelled} ")
        done = clock.end
    return "".join(parts) + text[done:]


#: After a status verb's number, what makes it no status but a measure or a count: a unit that is
#: not a count's ("returned 200 ms later", "返回 5.2 秒"), a plural word ("returned 120 rows") or a
#: Chinese measure word ("返回了 500 条").
_NOT_MEASURED = (
    r"(?!\s?(?:[A-Za-z]*s(?![A-Za-z])|[条个次笔行份项张]|(?i:"
    + "|".join(
        re.escape(spelling)
        for spelling in sorted(_UNITS.by_spelling, key=len, reverse=True)
        if _UNITS.by_spelling[spelling].dimension != "count"
    )
    + r"))(?![A-Za-z]))"
)


def _lexer_pattern(guarded: bool = True) -> str:
    """One left-to-right lexer instead of a pattern per kind: alternatives are tried in
    priority order at each token start, and ``word`` swallows every other word whole, so no
    entity can start in the middle of a word (no look-behinds, one pass). The leading
    look-ahead lets the engine skip spaces, punctuation and prose cheaply (measured 1.6×)."""
    g = _GUARDS if guarded else dict.fromkeys(_GUARDS, "")
    return (
        rf"(?=[0-9A-Za-z{_STARTS}])(?:"
        # "UTC+08:00" names a zone (``text/zones.py`` reads it): its "08:00" is no clock
        r"(?P<zone>(?:UTC|GMT)\s?[+-]\s?\d{1,2}(?::?\d{2})?(?![\d:]))"
        r"|(?P<ts>(?P<date>\d{4}-\d{2}-\d{2})(?:[T ](?P<time>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?"
        r"(?:Z|[+-]\d{2}:?\d{2})?(?![\d:])|(?P<clock>\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(?![\d:])"
        r"(?:\s?(?P<ampm>[AaPp]\.?[Mm]\.?)(?![A-Za-z]))?"
        # an offset glued to the clock ("08:22+08:00"; "-05:00" only after seconds) is its zone, no clock
        r"(?:\+\d{2}(?::?\d{2})?(?![\d:])|(?<=\d:\d\d:\d\d)-\d{2}:?\d{2}(?!\d)|\s\+\d{4}(?!\d))?)"
        # a Latin keyword glued to letters or digits is part of a word ("txn000", "nodejs12"), no keyword
        rf"|{_any_of(_WORDS.id_keywords)}\s*{_any_of(_WORDS.id_suffixes)}?(?:\s*[:=#：]\s*|\s+|(?<![A-Za-z0-9]))"
        # (a percentile after the keyword is none: "order p99")
        rf"(?![pP](?:50|75|90|95|99|999|9999)(?![A-Za-z0-9_-]))(?P<id>(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9][A-Za-z0-9_-]{{2,63}}){_END}"
        r"|(?P<ip>(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})(?!\d|\.\d|[A-Za-z])"
        rf"|{g['hex']}(?P<hex>[0-9a-f]{{8}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{4}}-[0-9a-f]{{12}}|[0-9a-f]{{16,64}}){_END}"
        rf"|(?:{_any_of(_WORDS.status_words)}\s*(?:code)?\s*[:=]?|{_any_of(_WORDS.status_verbs)}"
        rf"(?:\s*(?:an?|the|HTTP|status)(?![A-Za-z]))?)\s*(?P<http>[1-5]\d\d)(?![\d.,]?\d){_NOT_MEASURED}"
        rf"|(?P<code>{g['upper_code']}[A-Z][A-Z0-9]*(?:[_-][A-Z0-9]+)+|[A-Z]{{1,6}}\d{{3,6}}"
        rf"|{g['exception']}(?:[a-z][a-z0-9]*\.)*[A-Z][A-Za-z0-9]*(?:Exception|Error)){_END}"
        rf"|{g['svc']}(?P<svc>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-{_any_of(_WORDS.service_suffixes)})"
        rf"{_END}"
        rf"|{g['ratio']}(?P<ratio>(?P<num_a>\d+)\s*/\s*(?P<num_b>\d+))(?![\d./])"
        rf"|(?P<num>{NUMBER})(?P<unit>\s?(?:[A-Za-z%]+(?:/[sh])?(?![A-Za-z0-9_])|[µμ]s(?![A-Za-z])|[{HAN}]{{1,2}}|×))?"
        # digits glued to letters without a unit are the start of a word ("54fadb41…"), no number
        r"(?(unit)|(?![A-Za-z0-9_]))"
        r"|(?P<word>[A-Za-z0-9_.\-/]+))"
    )


_LEXER = re.compile(_lexer_pattern())


@dataclass(frozen=True, slots=True)
class Entity:
    """One exact fact found in text. ``needles`` are literal forms to look for."""

    kind: EntityKind
    text: str
    needles: tuple[str, ...]
    value: Decimal | None = None
    dimension: str | None = None
    factor: Decimal | None = None
    precision: Decimal | None = None
    #: Other readings of the same words, any of which states the fact: "504s" is 504 seconds
    #: or the status 504 in the plural; "北京时间 13:40" is 05:40Z in winter and summer alike.
    alternatives: tuple[Entity, ...] = ()
    #: A clock written with its zone (UTC, 北京时间, +08:00): an instant, its needles in UTC,
    #: found in an output's clock only where that clock is the same instant.
    instant: bool = False
    #: One of several readings the words allow (a zone word naming several zones, a zone the text
    #: attaches to no clock): stating it makes the claim no more than an inference (``Corpus.pins``).
    uncertain: bool = False
    #: An id written cut short ("trace 3a29437d…", "commit 9f2c1e7..."): the start of one, found
    #: where an id begins with it.
    prefix: bool = False
    #: A zoned clock without a day, read in one season of a zone that changes its offset: the
    #: zone and the offset (seconds) this reading takes. Found only beside no day or a day on which
    #: the zone keeps that offset.
    season: tuple[tzinfo, int] | None = None
    #: A quantity its words make a bound ("超过 99%", "under 10 minutes"): ``value`` ± half the
    #: ``precision`` is the interval it allows, not a number written to that precision.
    bound: bool = False


def _quantity(number: str, unit: str, text: str) -> Entity:
    return _quantity_in(number, unit, _UNITS.by_spelling[unit.lower()], text)


def _quantity_in(number: str, unit: str, unit_of: Unit, text: str) -> Entity:
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    return Entity(
        "quantity",
        text,
        (f"{number}{unit}", f"{number} {unit}"),
        Decimal(number),
        unit_of.dimension,
        unit_of.factor,
        Decimal(1).scaleb(-decimals),
    )


def _lettered(number: str, letter: str, written: str) -> Entity | None:
    """A number with a letter glued to it that names no one unit ("1950M", "427.52m"): each
    reading ``units.yaml`` letter_readings gives it, the first the fact and the rest its
    alternatives, so any one the evidence states confirms it."""
    readings = [_quantity_in(number, letter, unit_of, written) for unit_of in _UNITS.letter_readings.get(letter, ())]
    return replace(readings[0], alternatives=tuple(readings[1:])) if readings else None


def _entity(match: re.Match[str], services: frozenset[str]) -> Entity | None:
    kind = match.lastgroup
    group = match.group
    if kind == "word":
        word = group().rstrip(".")  # a sentence's full stop is no part of the name
        if services and word.lower() in services:
            return Entity("service", word, (word.lower(),))
        if _BARE_ID.fullmatch(word) and word.lower() not in _PLAIN:
            # "dn228", "tbird-admin1": a host or node; "ef604610…": an id cut short
            cut = group().endswith("...") or _CUT_SHORT.match(match.string, match.end()) is not None
            return Entity("identifier", word, (word,), prefix=cut and _HEX_STUB.fullmatch(word) is not None)
        if _HEX_STUB.fullmatch(word) and (group().endswith("...") or _CUT_SHORT.match(match.string, match.end())):
            return Entity("identifier", word, (word,), prefix=True)  # "54fadb41…": a hex id cut short
        if _NAMED_KEY.fullmatch(word) and word not in _RECORD_WORDS:
            return Entity("name", word, (word,))  # "max_connections", "hikari.maximum-pool-size"
        return None
    if kind == "ts":
        return _timestamp(match)
    if kind in ("id", "hex"):
        cut = _CUT_SHORT.match(match.string, match.end(kind)) is not None and len(group(kind)) >= _PREFIX_LEAST
        return Entity("identifier", group(kind), (group(kind),), prefix=cut)
    if kind == "ip":
        return Entity("identifier", group(kind), (group(kind),))
    if kind == "code" and _NAME_WITH_NUMBER.fullmatch(group(kind)):
        return None  # COVID-19, SARS-2: a name with a number, not an error code
    if kind in ("http", "code"):
        return Entity("error_code", group(kind), (group(kind),))
    if kind == "svc":
        return Entity("service", group(kind), (group(kind).lower(),))
    if kind == "ratio":
        a, b = group("num_a"), group("num_b")
        return Entity("ratio", f"{a}/{b}", (f"{a}/{b}", f"{a} / {b}"))
    if _HEX_STUB.fullmatch(group()) and _CUT_SHORT.match(match.string, match.end()):
        return Entity("identifier", group(), (group(),), prefix=True)  # "000000b…": an id cut short, no 0 bytes
    return _number(match)


#: An ellipsis right after an id: the id is cut short. At least ``_PREFIX_LEAST`` characters of it
#: must be written (an abbreviated git commit has 7), so a stub names one id, not many.
_CUT_SHORT = re.compile(r"…|\.\.\.")
_PREFIX_LEAST = 7
#: A bare word cut short is an id's start only when it is hex ("ef604610…"; "node-12…" is a host).
_HEX_STUB = re.compile(rf"[0-9a-f]{{{_PREFIX_LEAST},}}")

#: A name ending in a number: a host, node or device ("dn228", "tbird-admin1", "web-01", "SRV01");
#: a number inside it makes it something else (a thread: "http-nio-8080-exec-12"). One letter
#: names one only before a dash and three digits or more ("merchant m-40281"; "p99" is a percentile).
_BARE_ID = re.compile(r"[A-Za-z]{2,}(?:-[A-Za-z]+)*-?\d{1,6}|[A-Za-z]-\d{3,6}")
_PLAIN = frozenset(w.lower() for w in _WORDS.plain_words)
_RECORD_WORDS = frozenset(_WORDS.record_words)
#: A setting's or a field's name: snake case ("max_connections") or dotted words
#: ("spring.datasource.hikari.maximum-pool-size"; every part two characters or more, so "e.g."
#: is none). A configuration change names what it changed by it.
_NAMED_KEY = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Za-z][A-Za-z0-9_-]+(?:\.[A-Za-z][A-Za-z0-9_-]+)+")
_NAME_WITH_NUMBER = re.compile(r"[A-Z]{2,}-\d{1,2}")
_STATUS = re.compile(r"[1-5]\d\d")
_DECADE = re.compile(r"1\d\d0|20\d0")
#: "35-40 minutes", "3~5 秒": the first number of a range carries the unit written after the second;
#: not a date's month ("2026-07-07 %" is no range 07–07), nor a clock's minutes ("07:39 到 0.48 秒").
_RANGE = re.compile(rf"(?<![\w.-])(?<!\d:)({NUMBER})\s*[-–~至到]\s*{NUMBER}\s?({_UNIT_ALT})(?![A-Za-z])", re.IGNORECASE)
#: After a range's first number: the rest of the range and the unit both ends share ("-30 minutes").
_RANGE_REST = re.compile(rf"\s*(?:[-–~至到]|\s+to\s+)\s*{NUMBER}\s?({_UNIT_ALT})(?![A-Za-z])", re.IGNORECASE)
#: Before a range's second number: its first ("20-"), so the "-" is a range, not a sign or an id.
_RANGE_START = re.compile(r"\d\s*[-–~至到]\s*$")
#: "15–18m", "2-3G": a range whose end writes a letter (``_LETTER_UNIT``), read as ``_RANGE`` is.
_LETTER_RANGE = re.compile(rf"(?<![\w.-])({NUMBER})\s*[-–~至到]\s*{NUMBER}{_LETTER_UNIT}")


def _timestamp(match: re.Match[str]) -> Entity:
    """A date and/or clock; ``24:00`` also as the next day's ``00:00``; a clock written with a
    zone ("北京时间 13:40", "13:40 PST") as the UTC instant the outputs write."""
    group = match.group
    day, clock = group("date"), group("time") or _clock24(group("clock"), group("ampm"))
    entity = Entity("timestamp", group("ts"), tuple(p for p in (day, clock) if p))
    written = group("ts")
    offset = _OFFSET_TIMESTAMP.fullmatch(written) if day and group("time") else None
    if offset is not None:
        instant = _utc_of(offset)
        if instant is not None:
            spelled = instant.strftime("%H:%M:%S" if clock and clock.count(":") == 2 else "%H:%M")
            return Entity("timestamp", written, (instant.date().isoformat(), spelled), instant=True)
    zoned = _zoned(match, day, entity) if clock and ZONE_HINT.search(match.string) else None
    if zoned is not None:
        entity = zoned
    elif clock and (written.endswith(("Z", "+00:00")) or _ZULU_AFTER.match(match.string, match.end())):
        entity = replace(entity, instant=True)
    if clock and clock.startswith("24:") and zoned is None:  # (a zone reads it as the next day's 00:00)
        midnight = Entity("timestamp", group("ts"), ("00:" + clock[3:],))
        entity = Entity("timestamp", group("ts"), entity.needles, alternatives=(*entity.alternatives, midnight))
    return entity


#: A clock to a fraction of a second, as a claim writes it (``22:15:29.649``): the clock and the fraction.
_FRACTION_CLOCK = re.compile(r"(\d{1,2}:\d{2}:\d{2})\.(\d{1,9})")
_SECONDS_BEFORE = re.compile(r"\d{2}:\d{2}:\d{2}(?:[.,]\d+)?$")
_MINUTE_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")
#: "16:00Z": a bare clock marked UTC by the letter after it.
_ZULU_AFTER = re.compile(r"Z(?![A-Za-z0-9])")
#: Something a zone name or offset may be spelled with: texts without any skip the zone look-up.
#: Every zone word of ``when.yaml`` holds one of these (tested: a word it misses is never read).
ZONE_HINT = re.compile(
    r"[A-Z]{3}|(?<![A-Za-z])[EP]T(?![A-Za-z])|[Tt]ime|Pacific|Eastern|时间|時間|世界时|世界時|[区區]|[+-]\s*\d"
    # a place right beside a clock ("6:30 pm in Auckland", "(Berlin 15:24)": ``when.places_beside_clocks``)
    r"|\d\d(?:\s?[AaPp]\.?[Mm]\.?)?\s+in\s+[A-Z]|[A-Z][a-z]+\s\d{1,2}:\d\d"
)


def _zoned(match: re.Match[str], day: str | None, face: Entity) -> Entity | None:
    """A clock a zone concerns (``text/zones.py``) as the UTC instants it may name, the first
    the entity and the others its alternatives; each ``uncertain`` when the words allow several
    zones, and then the clock as written too when the zone may not be its own at all. None when
    no zone concerns the clock (it is compared as written)."""
    from veridiag.text.zones import clock_readings, instants, seconds_written  # a text that may name a zone

    text = match.string
    readings = clock_readings(text)
    reading = next((r for span, r in readings.items() if match.start() <= span[0] < match.end()), None)
    if reading is None:
        return None
    on = date.fromisoformat(day) if day else None
    spelling = "%H:%M:%S" if seconds_written(text, reading) else "%H:%M"
    doubt = not reading.pinned
    read = instants(text, reading, on)
    # Without a day, a zone that changes its offset gives a reading for each season: each holds
    # only against an output clock on a day of its season ("11:27 PM Pacific" is 07:27Z in
    # winter, not beside "2022-08-22T07:27:26Z").
    seasons = on is None and len({zone for _instant, zone in read}) < len(read)
    found = [
        Entity(
            "timestamp",
            face.text,
            (instant.date().isoformat(), instant.strftime(spelling)) if on else (instant.strftime(spelling),),
            instant=True,
            uncertain=doubt,
            season=(zone, _offset_seconds(instant, zone)) if seasons else None,
        )
        for instant, zone in read
    ]
    found = [e for i, e in enumerate(found) if all(e.needles != f.needles for f in found[:i])]  # UTC: one
    if not found:
        return None  # 24:00, or no clock: as written
    if reading.loose:
        found.append(replace(face, uncertain=True))
    return replace(found[0], alternatives=tuple(found[1:]))


def _offset_seconds(instant: datetime, zone: tzinfo) -> int:
    shift = instant.astimezone(zone).utcoffset()
    return int(shift.total_seconds()) if shift is not None else 0


_HOUR_MINUTE = re.compile(r"0?(\d{1,2}):(\d{2})")
#: A day written on an output's line ("2022-08-22T07:27:26Z"): the day a clock beside it is on.
#: A line's day: ``2017-12-24`` or, run together as HealthApp writes it, ``20171224`` (of this era only:
#: an eight-digit id is no day).
_LINE_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)|(?<!\d)((?:19|20)\d{2})(\d{2})(\d{2})(?=[-T ]\d)")


def _zoned_span(match: re.Match[str]) -> tuple[int, int]:
    """A zoned clock's fact spans its zone's words (``zones.reading_span``); a timestamp that
    writes its own zone (``…Z``, ``+08:00``) is its own span."""
    if not match.group("clock"):
        return match.span()
    from veridiag.text.zones import reading_span

    return reading_span(match.string, match.start(), match.end())


def _clock24(clock: str | None, ampm: str | None) -> str | None:
    """``2:00 PM`` is ``14:00``: the needle an output in 24-hour time carries."""
    if not clock or not ampm:
        return clock
    hours, rest = clock.split(":", 1)
    hour = int(hours) % 12 + (12 if ampm.lower().startswith("p") else 0)
    return f"{hour:02d}:{rest}"


def _number(match: re.Match[str]) -> Entity | None:
    """A number is a fact only with a known unit ("5300ms", "5.3 秒", "92%"); "1970s" is a
    decade, not a duration."""
    number, unit = match.group("num"), match.group("unit")
    if not unit:
        return _counted(number, match) or _bare_value(number, match)
    if unit == "s" and _DECADE.fullmatch(number):
        return None
    if unit == "s" and _STATUS.fullmatch(number):
        # "504s": the plural of a status code as often as 504 seconds; either reading states it.
        return replace(_quantity(number, "s", number + unit), alternatives=(Entity("error_code", number, (number,)),))
    if match.start() and match.string[match.start() - 1] in "$€£¥":  # $3B is money, not three bytes
        return None
    bare = unit.strip()
    if bare.startswith(_MORE) or bare.startswith("个" + _MORE):
        return _more_than(number, match)
    if bare.startswith("个"):
        # "50 个小时": 个 is a measure word before a unit, not a count of 50.
        spaced = unit[: unit.index("个") + 1]
        after = match.string[match.end("num") + len(spaced) :]
        spelling = next((s for s in _MEASURED_UNITS if after.startswith(s)), None)
        if spelling is not None:
            return _qualified(_quantity(number, spelling, number + spaced + spelling), match)
        latin = _latin_unit_at(match.string, match.end("num") + len(spaced))  # "4 个 core"
        if latin is not None:
            at, spelling = latin
            written = match.string[match.start("num") : at + len(spelling)]
            return _qualified_at(_quantity(number, spelling, written), match.string, match.start(), at + len(spelling))
    for candidate in (bare, bare[:1]) if not bare.isascii() else (bare,):
        if candidate.lower() in _UNITS.by_spelling:
            written = number + unit[: unit.index(candidate) + len(candidate)]
            return _qualified(_quantity(number, candidate, written), match)
    lettered = _lettered(number, bare, number + unit) if not unit[:1].isspace() or bare in _UNITS.cpu_letters else None
    if lettered is not None:
        return _qualified(lettered, match)  # "1950M", "427.52m", "427.52 m"
    if unit[:1].isspace() and bare.isascii() and bare.isalpha() and bare.lower() not in _MULTIPLIERS:
        # a word after it that is no unit ("73.5 at 11:35"), unless what it counts follows
        return _counted(number, match) or _bare_value(number, match)
    if not bare.isascii() and bare[:1] not in _NO_BARE_AFTER:
        return _bare_value(number, match)  # Chinese after it that is no unit ("峰值 12.5 出现在 …")
    # other letters glued to it are a unit of its own, read elsewhere or not at all
    return None


#: After a bare number, the rest of a range whose end writes a unit or a unit's letter ("4.6–4.7 ms",
#: "15~18 %", "15–18m": ``_LETTER_RANGE`` reads the first end with the letter).
_RANGE_FIRST_END = re.compile(rf"\s?[-–—~～]\s?\d+(?:\.\d+)?(?:\s?(?i:{_UNIT_ALT})(?![A-Za-z])|{_LETTER_UNIT})")
#: After a number, a Chinese character that makes it no value of its own: a ratio (倍), a rank or
#: share (名, 成), a date or clock part (年 月 日 号 点 时 分 秒 周), an attribute (504 的根因), a range's
#: or a list's first end (4.8 到 5.3 秒: the range reads it with its unit; 3 和 5).
_NO_BARE_AFTER = frozenset("倍名成年月日号点时分秒周岁的到至和或与及、")
#: The same characters as a string, for a character class elsewhere (``claim.stated_content``).
NO_BARE_AFTER = "".join(sorted(_NO_BARE_AFTER))
#: A number before one of these is a ratio ("5x", "3 times"), the ratio checks' to read.
_MULTIPLIERS = frozenset({"x", "times", "fold"})


def _counted_pattern() -> re.Pattern[str]:
    """After a number: the name of what is counted, then a count's noun (``units.yaml``,
    dimension count): "541 ERR_TIMEOUT errors", "617 onStandStepChanged lines" state a count as
    "541 errors" does. The name is written as code writes one — an underscore, a capital inside
    it, a digit — so a word of prose between ("15 such lines", "476 close lines across the
    templates": a sum the claim computed) leaves the number a bare one."""
    nouns = sorted(
        (s for s, u in _UNITS.by_spelling.items() if u.dimension == "count" and s.isascii() and s.isalpha()),
        key=len,
        reverse=True,
    )
    name = r"(?=[A-Za-z][\w.-]*(?:_|[a-z][A-Z]|\d))[A-Za-z][\w.-]*"
    noun = "|".join(re.escape(w) for w in nouns)
    return re.compile(rf"\s+{name}\s+(?P<noun>(?i:{noun}))(?![\w-])")


_COUNTED = _counted_pattern()


def _counted(number: str, match: re.Match[str]) -> Entity | None:
    """An integer followed by what it counts, words between (``_COUNTED``): a count, checked as one."""
    if "." in number:
        return None
    text, end = match.string, match.end("num")
    found = _COUNTED.match(text, end)
    if found is None:
        return None
    spelling = found.group("noun").lower()
    return _qualified_at(
        _quantity(number, spelling, f"{number} {spelling}"), match.string, match.start(), match.end("num")
    )


def _bare_value(number: str, match: re.Match[str]) -> Entity | None:
    """A number without a unit is a fact only after a word that states a value ("冲到了 73",
    "peaked at 37": ``units.yaml`` value_words) or a change ("bumped the counter by 2", "增加了 2":
    difference_words): checked as a dimensionless count."""
    start = match.start()
    if _RANGE_FIRST_END.match(match.string, match.end("num")):
        return None  # a range's first end ("4.6–4.7 ms"): the range reads it with its end's unit
    if (
        not _UNITS.value_word_before(match.string, start, _UNITS.value_reach)
        and not _statistic_of(match)
        and not _UNITS.difference_ending(match.string[max(0, start - _QUALIFIER_REACH) : start])
    ):
        return None
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    value = Entity("quantity", number, (number,), Decimal(number), "count", Decimal(1), Decimal(1).scaleb(-decimals))
    text, end = match.string, match.end("num")
    reach = text[max(0, start - _QUALIFIER_REACH) : start], text[end : end + _QUALIFIER_REACH]
    if _UNITS.qualifier(*reach) != "approximate":
        return value  # ("went up to 4": the value word's "up to" is no bound)
    return _qualified_at(value, text, start, end)  # "冲到了 73 左右": about 73


def _statistic_of(match: re.Match[str]) -> bool:
    """Does a statistic's name stand right by the number ("the peak was 73.5", "the 50.89 peak",
    "average 12.3")? It states the series' value then, as a value word does (``text/statistics``)."""
    from veridiag.text.statistics import statistics  # only for a bare number

    return bool(statistics().near(match.string, match.start(), match.end("num"), _STATISTIC_BEFORE, _STATISTIC_AFTER))


#: How far from a bare number a statistic's name makes it that statistic's value.
_STATISTIC_BEFORE, _STATISTIC_AFTER = 12, 8


#: "两个多小时", "20 多分钟", "100 多条": more than the number, by less than a unit of its last
#: non-zero digit (2 to 3 hours, 20 to 30 minutes, 100 to 200 lines).
_MORE = "多"
#: The Chinese spellings of units, longest first (毫秒 before 秒).
_CHINESE_UNITS = sorted((s for s in _UNITS.by_spelling if not s.isascii()), key=len, reverse=True)


def _more_than(number: str, match: re.Match[str]) -> Entity | None:
    """A number with 多 before its unit (``_MORE``): the range it names, as a value and a precision."""
    text = match.string
    at = text.index(_MORE, match.end("num")) + 1
    spelling = next((s for s in _CHINESE_UNITS if text.startswith(s, at)), None)
    if spelling is None:
        latin = _latin_unit_at(text, at)  # "4 个多 core"
        if latin is None:
            return None
        at, spelling = latin
    entity = _quantity(number, spelling, text[match.start() : at + len(spelling)])
    value = Decimal(number)
    digits = number.split(".", 1)
    step = Decimal(1).scaleb(-len(digits[1]) if len(digits) > 1 else len(digits[0]) - len(digits[0].rstrip("0")))
    return replace(entity, value=value + step / 2, precision=step)


#: A Latin unit after the measure word 个 or 多, a blank apart ("4 个 core", "3 个多 GB").
_LATIN_UNIT = re.compile(r"\s*([A-Za-z]+)(?![A-Za-z0-9_])")


def _latin_unit_at(text: str, at: int) -> tuple[int, str] | None:
    """The start and spelling of the Latin unit written at ``text[at:]`` past blanks, if it is one."""
    found = _LATIN_UNIT.match(text, at)
    unit = _UNITS.by_spelling.get(found.group(1).lower()) if found is not None else None
    # a count's noun ("3 个 ERROR") is what 个 counts, and a one-letter unit is no word a reader spaces
    if found is None or unit is None or unit.dimension == "count" or len(found.group(1)) < 2:
        return None
    return found.start(1), found.group(1).lower()


#: Units that may follow the measure word 个 (个小时, 个月 is no unit here), longest first.
_MEASURED_UNITS = sorted(
    (s for s in _UNITS.by_spelling if not s.isascii() and _UNITS.by_spelling[s].dimension == "time"),
    key=len,
    reverse=True,
)
#: How far back a qualifier may start ("approximately " is 14 characters).
_QUALIFIER_REACH = 16


def _qualified(entity: Entity, match: re.Match[str]) -> Entity | None:
    """The quantity as its words qualify it: "约 90%" within ±10 %, "不到 10 分钟" from half of it up
    to it, "超过 200" from it up to twice it (``units.yaml`` qualifiers) — what a reader takes
    the writer to have said, so an honest rounding is found and a bound is checked as one."""
    return _qualified_at(entity, match.string, match.start(), match.start() + len(entity.text))


def _qualified_at(entity: Entity, text: str, start: int, end: int) -> Entity | None:
    """``_qualified`` for the number at ``text[start:]``, its unit ending at ``end``."""
    kind = _UNITS.qualifier(text[max(0, start - _QUALIFIER_REACH) : start], text[end : end + _QUALIFIER_REACH])
    if kind == "selection" and entity.dimension == "count":
        return None  # "前两条": which lines, not how many
    if kind is None or kind == "selection" or entity.value is None or entity.precision is None or entity.value <= 0:
        return entity
    value = entity.value
    if kind == "approximate":
        return replace(entity, precision=max(entity.precision, value / 5))
    low, high = (value / 2, value) if kind == "at_most" else (value, value * 2)
    return replace(entity, value=(low + high) / 2, precision=max(high - low, entity.precision), bound=True)


@lru_cache(maxsize=64)
def _folded(words: tuple[str, ...]) -> frozenset[str]:
    """Lower-cased configuration lists (known services, ignored tokens), folded once."""
    return frozenset(word.lower() for word in words)


#: What every range has (a number, a dash or 至, a number): texts without it skip the range scan.
_RANGE_HINT = re.compile(r"\d\s*[-–~至到]\s*\d")


class TextFacts:
    """One text's facts, lexed once: each occurrence with the whitespace tokens it lies in.

    ``extract_entities`` (every fact) and ``entities_outside`` (the facts some known tokens
    do not carry) are two views of it, so a caller asking about one text several times —
    a claim repeated in a check, its excerpts read against different lines — lexes it once.
    The lexing is deferred until a fact is asked for: a text whose tokens are all known
    is never lexed.
    """

    __slots__ = ("_entities", "_ignored", "_occurrences", "_services", "text", "tokens")

    def __init__(self, text: str, known_services: Iterable[str] = (), ignore: Iterable[str] = ()) -> None:
        #: Read as a reader sees it (``fact_text``): what the facts and tokens are of.
        self.text = with_shared_meridiem(fact_text(text))
        #: Its whitespace tokens: ``str.split()`` splits on what ``\s`` matches (both ask
        #: ``Py_UNICODE_ISSPACE``), ~3.7× faster than ``re.findall(r"\S+")`` (measured).
        self.tokens: list[str] = self.text.split()
        self._services = _folded(tuple(known_services))
        self._ignored = _folded(tuple(ignore))
        self._occurrences: tuple[tuple[Entity, tuple[str, ...]], ...] | None = None
        #: ``entities()`` without and with the ignored ones, once asked: the rules of a check ask
        #: for a claim's facts several times each (~80 a 20-claim check).
        self._entities: dict[bool, tuple[Entity, ...]] = {}

    def entities(self, *, ignored_too: bool = False) -> list[Entity]:
        """Every exact fact, each once, in order of appearance; ``ignored_too``: those of the
        ignored tokens as well (as a ``TextFacts`` told to ignore none would give them)."""
        found = self._entities.get(ignored_too)
        if found is None:
            found = self._entities[ignored_too] = tuple(
                _unique(entity for entity, _tokens in self._lexed() if ignored_too or self._kept(entity))
            )
        return list(found)

    def outside(self, known_tokens: frozenset[str] | set[str]) -> list[Entity]:
        """The facts touching a token not in ``known_tokens`` (see ``entities_outside``)."""
        if known_tokens.issuperset(self.tokens):
            return []
        return _unique(
            entity for entity, tokens in self._lexed() if self._kept(entity) and not known_tokens.issuperset(tokens)
        )

    def _kept(self, entity: Entity) -> bool:
        """Not one of the ignored tokens: they are lexed, and left out when facts are asked for."""
        return not self._ignored or entity.text.lower() not in self._ignored

    def _lexed(self) -> tuple[tuple[Entity, tuple[str, ...]], ...]:
        if self._occurrences is None:
            # the same of every ``TextFacts`` of this text and services (the ignored tokens are
            # left out afterwards): lexed once in a ``readings()`` block — a diagnosis's stages
            # read the same claims
            self._occurrences = kept("lexing", (self.text, self._services), self._lexed_anew)
        return self._occurrences

    def _lexed_anew(self) -> tuple[tuple[Entity, tuple[str, ...]], ...]:
        return tuple(self._lex())

    def _lex(self) -> list[tuple[Entity, tuple[str, ...]]]:
        # spelled-out quantities are read only here: a text whose tokens are all known (an
        # excerpt, an output's line) is never lexed, and tools write digits
        text, services = self.text, self._services
        dated = may_spell(text, self.tokens)
        if dated:
            text = _spelled(text)
        spans: list[tuple[int, int, Entity]] = []
        for match in _LEXER.finditer(text):
            kind = match.lastgroup
            if kind == "zone":
                continue
            if kind == "word":
                word = match.group()
                if not services or word.lower() not in services:
                    word = word.rstrip(".")
                    # a name has a "_" or a "." inside (``_NAMED_KEY``): most words have neither
                    if (
                        not word[-1:].isdigit()
                        and (("_" not in word and "." not in word) or not _NAMED_KEY.fullmatch(word))
                        # "0000a0a…" (read "0000a0a..."): an id cut short
                        and not (word[:1].isdigit() and match.group().endswith("..."))
                    ):
                        continue  # most matches: a word that is no fact, skipped without a call
            entity = _entity(match, services)
            if entity is not None and entity.kind == "timestamp" and (entity.instant or entity.uncertain):
                spans.append((*_zoned_span(match), entity))
            elif entity is not None:
                spans.append((match.start(), match.end(), entity))
            elif kind == "unit":
                # "504 gateway": the word after a number was no unit; it may be a fact itself.
                start, end = match.span()
                for inner in _LEXER.finditer(match.group("unit")):
                    if found := _entity(inner, services):
                        spans.append((start, end, found))
        if dated:
            # a zoned clock that reads its date with it holds it, and one beyond ±10 h tells no sure day
            # ("UTC+14 2 月 20 日 00:00"); another ("新加坡时间 11 月 24 日凌晨 2:05") leaves it a date of its own
            zoned_with_day = [
                (start, end)
                for start, end, e in spans
                if e.kind == "timestamp"
                and (e.instant or e.uncertain)
                and (any("-" in n for n in e.needles) or not _sure_day(e))
            ]
            for start, end, month, day in calendar_dates(text, self.tokens):
                # the date of a clock read in its zone is the instant's: "UTC+14 2 月 20 日 00:00" is the 19th
                if not any(
                    z_start <= start < z_end or (end <= z_start and not text[end:z_start].strip())
                    for z_start, z_end in zoned_with_day
                ):
                    spans.append((start, end, _zoned_date(text[start:end], month, day, spans)))
        rates = _UNITS.rates
        if rates is not None and rates.may_hold(text, self.tokens):
            spans = _with_rates(text, spans, rates)
        if _RANGE_HINT.search(text):
            for low in _RANGE.finditer(text):
                entity = _quantity(low.group(1), low.group(2), f"{low.group(1)}{low.group(2)}")
                spans.append((low.start(), low.end(), entity))
            for low in _LETTER_RANGE.finditer(text):
                lettered = _lettered(low.group(1), low.group(2), f"{low.group(1)}{low.group(2)}")
                if lettered is not None:
                    spans.append((low.start(), low.end(), lettered))
        return [(entity, tokens_over(text, start, end)) for start, end, entity in spans]


def _with_rates(text: str, spans: list[tuple[int, int, Entity]], rates: Rates) -> list[tuple[int, int, Entity]]:
    """``spans`` with each rate ``text`` writes ("42 a minute", "每分钟约 12 次") in place of the facts
    lexed inside it: its time unit is a denominator, no duration. A count lexed inside it ("12 次",
    "63.32 requests") stays a count, stated by the rate too (its other reading): the count is per
    that unit, and the rate is checked as well."""
    found: list[tuple[int, int, Entity]] = []
    for pattern in (rates.en, rates.zh):
        for match in pattern.finditer(text):
            found.append((match.start(), match.end(), _rate(match)))
    if not found:
        return spans
    kept: list[tuple[int, int, Entity]] = []
    for start, end, entity in spans:
        rate = next((r for r_start, r_end, r in found if r_start < end and start < r_end), None)
        if rate is None:
            kept.append((start, end, entity))
        elif entity.kind == "quantity" and entity.dimension == "count":
            kept.append((start, end, replace(entity, alternatives=(*entity.alternatives, rate))))
    return kept + found


def _rate(match: re.Match[str]) -> Entity:
    """A rate as a quantity per second (the unit table's ``rate`` dimension: qps, req/s), at the
    precision of its count and as its words qualify it ("about 8 a minute", "at most 3 …")."""
    groups = match.groupdict()
    count = "num" if groups.get("num") else "snum" if groups.get("snum") else "one"
    number, unit = groups[count], groups.get("unit") or groups["sunit"]
    start = match.start(count)
    every = groups.get("every")
    seconds = _UNITS.by_spelling[unit.lower()].factor * Decimal(every or 1)
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    precision = Decimal(1).scaleb(-decimals)
    if not number[:1].isdigit():
        # "one sweep every 14 seconds", "每秒一条": one exactly, the interval to its digits (14 ± 0.5
        # s), an interval of one unit to a tenth
        number = "1"
        precision = (
            Decimal(1).scaleb(-(len(every.split(".", 1)[1]) if "." in every else 0)) / Decimal(every)
            if every
            else Decimal("0.1")
        )
    text = match.group()
    entity = Entity("quantity", text, (text,), Decimal(number), "rate", 1 / seconds, precision)
    qualified = _qualified_at(entity, match.string, start, match.end()) or entity
    if qualified == entity and start != match.start():  # "约每 2 秒一条", "差不多每秒一条": before the whole
        qualified = _qualified_at(entity, match.string, match.start(), match.end()) or entity
    return qualified


def tokens_over(text: str, start: int, end: int) -> tuple[str, ...]:
    """The whitespace tokens of ``text`` that ``text[start:end]`` overlaps: its own, widened to
    the whole tokens its ends cut. Read from the span, not by splitting the whole text and
    bisecting its token bounds (~1 % of a Gatekeeper check, measured)."""
    left, right = start, end
    if 0 < start < len(text) and not text[start].isspace() and not text[start - 1].isspace():
        left -= len(text[:start].rsplit(None, 1)[-1])
    if 0 < end < len(text) and not text[end - 1].isspace() and not text[end].isspace():
        right += len(text[end:].split(None, 1)[0])
    return tuple(text[left:right].split())


_MONTH_ABBREVIATIONS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _zoned_date(text: str, month: int, day: int, spans: list[tuple[int, int, Entity]]) -> Entity:
    """A date the claim writes apart from a clock it reads in a zone ("at 9:11 pm PDT on 21
    August"): the reader's day, whose UTC day is the one before or after when the clock crosses
    midnight there (04:11Z on the 22nd). With the zone sure, that UTC day only: the UTC date kept
    beside a local clock is another instant. A clock whose zone is unsure leaves both readings."""
    date = _date(text, month, day)
    shifts = {
        (shift, stamp.uncertain)
        for _start, _end, stamp in spans
        if stamp.kind == "timestamp" and stamp.instant and (shift := _day_shift(stamp)) is not None
    }
    if len({shift for shift, _ in shifts}) != 1:
        return date  # no zoned clock crosses midnight, or clocks that disagree
    shift, unsure = next(iter(shifts))[0], any(u for _, u in shifts)
    if shift == 0:
        return date
    try:
        moved = datetime(2024, month, day) + timedelta(days=shift)  # a leap year: 29 February is a day
    except ValueError:
        return date
    other = replace(_date(text, moved.month, moved.day), uncertain=unsure or (shift, True) in shifts)
    if not other.uncertain:
        # the zone is sure: the day written is the reader's, its UTC day is the other one only
        # ("新加坡时间 11 月 24 日凌晨 2:05" is 23 November UTC, not a line of 24 November 18:05Z)
        return replace(other, text=date.text)
    return replace(date, alternatives=(other,))


def _day_shift(stamp: Entity) -> int | None:
    """How many days the UTC instant of a zoned clock is from the day it is written on: +1 for
    "9:11 pm PDT" (04:11Z), −1 for "07:30 北京时间" (23:30Z), 0 when no midnight lies between.
    The two clocks tell the offset but for its sign beyond ±10 hours (UTC+13 and UTC−11 read
    alike): there, none (the date then states only the reader's day)."""
    clocks = _local_and_utc(stamp)
    if clocks is None:
        return None
    local, instant = clocks
    ahead = (instant - local) % 1440  # minutes UTC is ahead of the wall clock
    if ahead == 0:
        return 0
    if _AMBIGUOUS_AHEAD[0] < ahead < _AMBIGUOUS_AHEAD[1]:
        return None
    if ahead < 720:  # a zone west of UTC: past midnight in UTC when the instant wraps
        return 1 if instant < local else 0
    return -1 if instant > local else 0


def _local_and_utc(stamp: Entity) -> tuple[int, int] | None:
    """A zoned clock's minute of the day as written and as its UTC instant reads it."""
    written = _WRITTEN_CLOCK.search(stamp.text)
    utc = next((n for n in stamp.needles if _NEEDLE_CLOCK.match(n)), None)
    if written is None or utc is None:
        return None
    hours, minutes = (_clock24(f"{written.group(1)}:{written.group(2)}", written.group(3)) or "").split(":")
    return int(hours) * 60 + int(minutes), int(utc[:2]) * 60 + int(utc[3:5])


def _sure_day(stamp: Entity) -> bool:
    """Does a zoned clock tell the day of its instant for sure: not where two offsets give the same
    clocks, UTC−10 … −12 and UTC+12 … +14 ("UTC+14 2 月 20 日 00:00" is 10:00Z on the 19th, "HST
    21:00" 07:00Z on the next day: ``_day_shift`` reads both as −10)?"""
    clocks = _local_and_utc(stamp)
    if clocks is None or _day_shift(stamp) is None:
        return False
    ahead = (clocks[1] - clocks[0]) % 1440
    return not _AMBIGUOUS_AHEAD[0] <= ahead <= _AMBIGUOUS_AHEAD[1]


#: Minutes UTC is ahead of a wall clock that two offsets give (UTC−10:30 … −11:59 or +12:01 … +13:30).
_AMBIGUOUS_AHEAD = (600, 720)
#: A written clock and its am/pm.
_WRITTEN_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?\s?(?:([AaPp])\.?[Mm]\.?)?")


def _date(text: str, month: int, day: int) -> Entity:
    """A date without a year, found as outputs write a month and a day: ISO (-10-30), dotted or
    slashed ([10.30 …], 10/30) or as syslog does (Oct 30)."""
    abbreviation = _MONTH_ABBREVIATIONS[month - 1]
    needles = (
        f"-{month:02d}-{day:02d}",
        f"{month:02d}.{day:02d}",
        f"{month:02d}/{day:02d}",
        f"{abbreviation} {day:2d}",
        f"{abbreviation} {day}",
        f"{day:02d}/{abbreviation}",
    )
    return Entity("date", text, needles)


#: A month and day as a date needle writes them numerically (``-12-23``).
_MONTH_DAY = re.compile(r"-\d{2}-\d{2}")


def _date_in(text: str, needle: str) -> bool:
    """``needle`` (a month and day as ``_date`` writes them) in ``text``, no digit glued to it:
    "Jan 1" is not in "Jan 10". ``-12-23`` is also the day HealthApp runs together before its clock
    (``20171223-22:19:58``, as ``_LINE_DAY`` reads a line's day)."""
    if _MONTH_DAY.fullmatch(needle) and re.search(rf"(?<!\d)(?:19|20)\d\d{needle[1:3]}{needle[4:6]}(?=[-T ]\d)", text):
        return True
    if needle not in text:
        return False
    before = r"(?<!\d)" if needle[0].isdigit() else ""
    return re.search(rf"{before}{re.escape(needle)}(?!\d)", text) is not None


def _unique(entities: Iterable[Entity]) -> list[Entity]:
    """The first of each fact (by kind and text, ignoring case)."""
    unique: dict[tuple[str, str], Entity] = {}
    for entity in entities:
        unique.setdefault((entity.kind, entity.text.lower()), entity)
    return list(unique.values())


def entities_outside(
    text: str,
    known_tokens: frozenset[str] | set[str],
    known_services: Iterable[str] = (),
    ignore: Iterable[str] = (),
) -> list[Entity]:
    """Entities of ``text`` that could be absent from a text whose whitespace tokens are
    ``known_tokens`` (read as the claim is, as ``Corpus.tokens`` gives them): a fact lying
    wholly inside tokens found verbatim there is carried by them; every fact touching
    another token is returned — including one that spans a blank ("5.3 秒", "order 124",
    "HTTP 504", "200 / 200"), since the text is lexed whole."""
    return TextFacts(text, known_services, ignore).outside(known_tokens)


def extract_entities(text: str, known_services: Iterable[str] = (), ignore: Iterable[str] = ()) -> list[Entity]:
    """Every exact fact in ``text``, each once, in order of appearance."""
    return TextFacts(text, known_services, ignore).entities()


#: Texts up to this size are also searched case-insensitively for names and codes.
_FOLD_LIMIT = 16384
#: How many occurrences of a short number prefix are examined before giving up.
_MAX_PREFIX_HITS = 200


@lru_cache(maxsize=1024)
def _spaced_pattern(needle: str) -> tuple[re.Pattern[str], str]:
    """``needle`` with optional blanks where a number meets a unit or a slash, and the part
    every match starts with."""
    parts = [part for part in re.split(r"(?<=\d)(?=[^\d.])|(?<=/)(?=\d)|(?<=\d)(?=/)", needle) if part]
    return re.compile(r"\s?".join(map(re.escape, parts))), parts[0] if parts else ""


@lru_cache(maxsize=256)
def _prefixed_quantity(prefix: str, spellings: frozenset[str], exact: bool = False) -> re.Pattern[str]:
    """A number starting with ``prefix`` with one of the units right after it, or after the rest
    of a range it opens ("20-30 minutes" states 20 minutes too). ``exact``: units glued to the
    number and in their own case (``1931M``)."""
    units = "|".join(re.escape(u) for u in sorted(spellings, key=len, reverse=True))
    if exact:
        return re.compile(rf"({re.escape(prefix)}[\d.]*?)(?:{units})(?![A-Za-z])")
    rest = rf"\s*(?:[-–~至到]|\s+to\s+)\s*{NUMBER}\s?"
    return re.compile(rf"({re.escape(prefix)}[\d.]*?)(?:[\s-]?|{rest})(?:{units})(?![A-Za-z])", re.IGNORECASE)


#: A writer's GB may mean GiB (GiB never means GB): the binary multiple of each decimal one.
_SIZE_TWINS = {Decimal(1000) ** n: Decimal(1024) ** n for n in range(1, 5)}


def restates(entity: Entity, other: Entity) -> bool:
    """Is ``entity`` the quantity ``other`` is, written in another unit, to the digits it writes
    ("268435456 字节正好是 256 MB", "23 mph 大约 37 km/h": a size read both ways)?"""
    if entity.kind != "quantity" or other.kind != "quantity" or entity.dimension != other.dimension:
        return False
    if None in (entity.value, entity.factor, entity.precision, other.value, other.factor) or entity is other:
        return False
    assert entity.value is not None and entity.precision is not None and other.value is not None
    assert other.factor is not None
    if entity.factor == other.factor:
        return False  # the same unit: the same number or another, no conversion
    target = other.value * other.factor
    return any(abs(entity.value * factor - target) <= entity.precision * factor / 2 for factor in unit_readings(entity))


def unit_readings(entity: Entity) -> tuple[Decimal, ...]:
    """The factors the claim's unit may mean: its own, and for a decimal size (or size a second) the
    binary one."""
    assert entity.factor is not None
    twin = _SIZE_TWINS.get(entity.factor) if entity.dimension in ("size", "throughput") else None
    return (entity.factor, twin) if twin else (entity.factor,)


@lru_cache(maxsize=16)
def _unit_groups(dimension: str) -> tuple[tuple[Decimal, frozenset[str], bool], ...]:
    """(factor, spellings, case-sensitive and glued) for every way a quantity of ``dimension``
    is written: the unit table's spellings, and for sizes and CPU the letters (``1931M``, ``500m``)."""
    groups = [(factor, spellings, False) for factor, spellings in _UNITS.groups.get(dimension, [])]
    lettered = {"size": _UNITS.size_letters, "cpu": _UNITS.cpu_letters}.get(dimension, {})
    by_factor: dict[Decimal, set[str]] = {}
    for letter, factors in lettered.items():
        for factor in factors:
            # a millicore letter also apart, as our metric outputs write it ("448.24 m")
            by_factor.setdefault(factor, set()).update((letter, f" {letter}") if dimension == "cpu" else (letter,))
    groups += [(factor, frozenset(letters), True) for factor, letters in by_factor.items()]
    return tuple(groups)


#: A field and the bare number assigned to it: ``Lock_time: 29.3``, ``active=50``, ``"rt": 35``.
# A key glued to nothing before it (the ``T10`` of ``2026-07-07T10:07`` is no key) and a
# number that is not the hour of a clock.
_FIELD_NUMBER = re.compile(rf"(?<![\w.\-])([A-Za-z][A-Za-z0-9_.\-]*)[\"']?\s*[:=]\s*[\"']?({NUMBER})(?![\d.%]|:\d)")
_KEY_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _fields_with(text: str, base_value: Decimal, base_tolerance: Decimal) -> Iterator[tuple[str, Decimal]]:
    """The fields of ``text`` assigned a bare number (at most ``_MAX_PREFIX_HITS`` looked at
    past the first): only where the text has ``=`` or ``:`` followed by a digit."""
    for seen, match in enumerate(_FIELD_NUMBER.finditer(text)):
        if seen > 20 * _MAX_PREFIX_HITS:
            return
        if not _UNIT_AT.match(text, match.end()):  # "cost=5300ms" has its unit: read above
            yield match.group(1), Decimal(match.group(2))


@lru_cache(maxsize=4096)
def _key_parts(key: str) -> frozenset[str]:
    """``Lock_time`` → {lock, time}; ``latencyMs`` → {latency, ms}; ``db.query-time`` → {db, query, time}."""
    return frozenset(part.lower() for part in _KEY_PART.findall(key))


def _ascii_word(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char == "_")


@lru_cache(maxsize=1024)
def written_half_unit(text: str) -> Decimal:
    """Half the unit of the last digit written of the first number of ``text`` ("37%" → 0.5,
    "2.45 s" → 0.005): how close a number must be to be the one written."""
    number = _NUMBER_AT.search(text)
    if number is None:
        return Decimal("Infinity")
    written = number.group()
    decimals = len(written.split(".", 1)[1]) if "." in written else 0
    return Decimal(1).scaleb(-decimals) / 2


def _value_prefixes(value: Decimal, tolerance: Decimal) -> frozenset[str]:
    """Leading digits shared by every number within ``tolerance`` of ``value``.

    ``5300 ± 50`` → {"52", "53"}; ``5.3 ± 0.05`` → {"5.2", "5.3"}. Each prefix is a
    cheap ``str.find``; what follows is parsed and compared by value.
    """
    low, high = max(value - tolerance, Decimal(0)), value + tolerance
    step = Decimal(1).scaleb((2 * tolerance).adjusted()) if tolerance > 0 else Decimal(1)
    if step >= 1:
        first, last = int(low // step), int(high // step)
        # Every leading-digit group between the bounds (90 ± 3 is 87 … 93, not just 87 and 93).
        found = {str(n) for n in range(first, last + 1) if n > 0}
        if first == 0 and step > 1:
            # Numbers below one step have fewer digits (1024 ± 512 holds 806): their first digit.
            tenth = step / 10
            found |= {str(d) for d in range(max(1, int(low // tenth)) if low >= tenth else 1, 10)}
        elif first == 0:
            found.add("0")
        return frozenset(found or {str(int(value))})
    places = -step.adjusted()
    # every value between the bounds at that step, as the whole numbers above: "about 20 ms" is
    # 0.018–0.022 s, and an output's "0.02s" starts with none of the two bounds
    first, last = int(low // step), int(high // step)
    rendered = {f"{(step * n):.{places}f}" for n in range(first, last + 1)}
    # An output may write fewer decimals than the claim ("46s" for "46000ms", "200M" for 209.7 MB):
    # its whole part, when that is within the tolerance.
    whole = {str(n) for n in range(int(low), int(high) + 1) if low <= n <= high}
    return frozenset(rendered | whole | {r.rstrip("0").rstrip(".") for r in rendered})


def _inside_token(text: str, end: int) -> bool:
    """Digits that run on into a time, date, version or id (``10:07``, ``2026-07``, ``v2.3.1``)
    are part of it, never a standalone number."""
    after = text[end : end + 2]
    return bool(after) and (after[0] in ":/-" or (after[0] == "." and after[1:2].isdigit()) or _ascii_word(after[0]))


#: ASCII characters that are not word characters (``_ascii_word``), and those that are not digits, as blanks.
_WORD_GAPS = str.maketrans({chr(c): " " for c in range(128) if not _ascii_word(chr(c))})
_DIGIT_GAPS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isdigit()})
_WORD_RUN = re.compile(r"[A-Za-z0-9_]+")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_LEADING_DIGITS = re.compile(r"[0-9]+")


def _runs(text: str, gaps: dict[int, str], run: re.Pattern[str]) -> set[str]:
    """The maximal runs of ``run``'s characters in ``text``. Blanking the other ASCII characters
    and splitting is ~4× faster on a 64 KB output than ``run.findall`` (measured); a token
    left with non-ASCII characters (``5秒``) is split by ``run`` itself."""
    tokens = set(text.translate(gaps).split())
    if text.isascii():
        return tokens
    mixed = [token for token in tokens if not token.isascii()]
    tokens.difference_update(mixed)
    for token in mixed:
        tokens.update(run.findall(token))
    return tokens


@dataclass(frozen=True, slots=True)
class WordRuns:
    """A large text's maximal runs of ASCII word characters and of ASCII digits.

    What ``Corpus.contains`` looks for is never glued to word characters, so each ASCII word
    run of a fact that occurs is a whole run of the text, and a number it states starts a
    whole digit run. A fact failing that test is absent: answered without scanning the text
    (the costly answer: a present fact's scan stops at its first occurrence). Only absence
    is answered here; a fact that passes is searched as before, so no answer changes.
    """

    words: frozenset[str]
    #: ``words`` sorted, and each spelled backwards, sorted: the runs starting or ending with some characters.
    starting: tuple[str, ...]
    ending: tuple[str, ...]
    #: ``words`` one per line: a run found in it is part of a word run of the text.
    joined: str
    numbers: frozenset[str]
    #: ``numbers`` sorted, for the runs starting with some digits.
    ordered: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> WordRuns:
        words = _runs(text, _WORD_GAPS, _WORD_RUN)
        starting, ending = tuple(sorted(words)), tuple(sorted(word[::-1] for word in words))
        joined = "\n".join(starting)
        # A whole digit run lies in a whole word run, and is one of its digit runs: read from
        # the few distinct words, not the whole text again.
        numbers = frozenset(joined.translate(_DIGIT_GAPS).split())
        return cls(frozenset(words), starting, ending, joined, numbers, tuple(sorted(numbers)))

    def may_contain(self, piece: str) -> bool:
        """Can ``piece`` occur anywhere in the text, glued or not? Its word runs that do not
        touch its ends are whole runs of the text, the one it starts with ends one, the one it
        ends with starts one; a piece that is one run lies inside one."""
        found = _WORD_RUN.findall(piece)
        if not found:
            return True
        first, last = piece[0] in _WORD_CHARS, piece[-1] in _WORD_CHARS
        if len(found) == 1 and first and last:
            return found[0] in self.joined
        if not self.words.issuperset(found[1 if first else 0 : len(found) - 1 if last else len(found)]):
            return False
        return (not first or _has_prefix(self.ending, found[0][::-1])) and (
            not last or _has_prefix(self.starting, found[-1])
        )

    def may_hold(self, needle: str) -> bool:
        """Can ``needle`` occur unglued (``Corpus._has_token``)? Each of its word runs is bounded
        by its own other characters or, at its ends, by the unglued test."""
        return all(run in self.words for run in _WORD_RUN.findall(needle))

    def may_start(self, needle: str) -> bool:
        """Can a match of ``needle`` (``Corpus._has_spaced``) start here? It is preceded by no
        word character and its leading digits end where the needle's do."""
        lead = _LEADING_DIGITS.match(needle)
        return lead is None or lead.group() in self.numbers

    def may_begin_number(self, prefix: str) -> bool:
        """Is there a number starting with ``prefix`` (``Corpus._value_with_unit``), preceded by
        no digit? Its leading digits are a whole run that starts with the prefix's — that is
        exactly them when the prefix goes on past them (``5.2``)."""
        lead = _LEADING_DIGITS.match(prefix)
        if lead is None:
            return True
        digits = lead.group()
        if lead.end() < len(prefix):
            return digits in self.numbers
        return _has_prefix(self.ordered, digits)


def _has_prefix(ordered: tuple[str, ...], prefix: str) -> bool:
    """Does a string of ``ordered`` (sorted) start with ``prefix``?"""
    at = bisect_left(ordered, prefix)
    return at < len(ordered) and ordered[at].startswith(prefix)


#: A date and clock written with a UTC offset (``2026-07-07T22:10:00+08:00``, ``… +0800``).
_OFFSET_TIMESTAMP = re.compile(
    r"(?P<local>(?P<day>\d{4}-\d{2}-\d{2})[T ](?P<clock>\d{2}:\d{2}(?::\d{2})?)(?:[.,]\d+)?)"
    r"\s?(?P<sign>[+-])(?P<hours>\d{2}):?(?P<minutes>\d{2})(?!\d)"
)
_OFFSET_HINT = re.compile(r"\d[+-]\d{2}:?\d{2}(?!\d)|\d [+-]\d{4}")
#: What an output writing local clocks without offsets has in its head: a statement of its zone
#: ("timezone:", "tz=", "时区"). Only the head is searched (a scan of 64 KB for it costs ~7 ms).
_ZONE_STATED = re.compile(r"(?i:zone|tz)\s*[:=]|时区|時區")
#: Where an output states its zone: its head (a header line), not 64 KB of log lines.
ZONE_HEAD = 4096


def _utc_of(match: re.Match[str]) -> datetime | None:
    """The UTC instant of an offset timestamp; None for a zero offset or an impossible one."""
    hours, minutes = int(match.group("hours")), int(match.group("minutes"))
    if (hours, minutes) == (0, 0) or hours > 14 or minutes > 59:
        return None
    try:
        wall = datetime.fromisoformat(f"{match.group('day')}T{match.group('clock')}")
    except ValueError:
        return None
    offset = timedelta(hours=hours, minutes=minutes)
    return wall - offset if match.group("sign") == "+" else wall + offset


#: A duration in two or three glued units, as Go prints one ("21m41s", "1h2m3.5s", "2h30m"): a
#: number and h or m followed by a digit starts it, so "5m" (metres?) and "30s" alone are none.
_GLUED_DURATION = re.compile(
    r"(?<![\w.])(?=\d+[hm]\d)(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m(?!s))?(?:(?P<s>\d+(?:\.\d+)?)s)?(?![\w.])"
)


def _glued_seconds(match: re.Match[str]) -> Decimal:
    hours, minutes, seconds = (match.group(k) or "0" for k in ("h", "m", "s"))
    return Decimal(hours) * 3600 + Decimal(minutes) * 60 + Decimal(seconds)


#: A quantity that is a multiple ("38 times", "5 倍"): the one a number after × may state.
_MULTIPLE_WORD = re.compile(r"(?i:times)$|倍$")
#: A clock needle (``05:30:00``, ``05:30``) and a text's clock with a one-digit hour, minute or second.
_NEEDLE_CLOCK = re.compile(r"(\d{2}):(\d{2})(?::(\d{2}))?")
_UNPADDED = re.compile(r"(?<![\d:])\d:\d|\d:\d(?!\d)")


class Corpus:
    """Searchable text: a tool output, or the lines an excerpt was aligned with."""

    __slots__ = ("_durations", "_folded", "_offsets", "_runs", "_tokens", "text")

    def __init__(self, texts: Sequence[str]) -> None:
        # Read like the claims are: a full-width or Chinese-numeral output states its facts too.
        self.text = fact_text("\n".join(t for t in texts if t))
        self._folded: str | None = None
        self._tokens: frozenset[str] | None = None
        self._runs: WordRuns | None = None
        self._offsets: tuple[list[tuple[int, int]], frozenset[str], tuple[tuple[str, datetime], ...]] | None = None
        self._durations: tuple[Decimal, ...] | None = None

    @property
    def runs(self) -> WordRuns | None:
        """The word and digit runs, when ``indexed``."""
        return self._runs

    def indexed(self) -> Corpus:
        """This corpus with its tokens and word and digit runs built: for a large text asked
        about by many checks (an invocation's output), where most absent facts are then
        answered without a scan (``WordRuns``). ~1 ms per 64 KB, once (measured)."""
        if self._runs is None:
            # No run spans a blank: the distinct whitespace tokens have the text's runs, in
            # about a third of its characters for a log (0.75 → 0.4 ms per 64 KB, measured).
            self._runs = WordRuns.of(" ".join(self.tokens))
        return self

    @property
    def tokens(self) -> frozenset[str]:
        """Whitespace tokens (meant for small texts: aligned lines, arguments)."""
        if self._tokens is None:
            self._tokens = frozenset(self.text.split())
        return self._tokens

    @property
    def folded(self) -> str:
        if self._folded is None:
            folded = self.text.lower()
            self._folded = folded if len(folded) == len(self.text) else self.text
        return self._folded

    @staticmethod
    def _has_token(
        hay: str, needle: str, glued: Callable[[str], bool] = _ascii_word, limit: int = 2000, *, right: bool = True
    ) -> bool:
        """``needle`` occurs in ``hay`` not glued (by default to ASCII word characters) on either
        side (``right=False``: on its left; the start of a word)."""
        if not needle:
            return False
        check_left, check_right = glued(needle[0]), right and glued(needle[-1])
        position = hay.find(needle)
        while position >= 0 and limit:
            left_ok = not check_left or position == 0 or not glued(hay[position - 1])
            after = position + len(needle)
            right_ok = not check_right or after >= len(hay) or not glued(hay[after])
            if left_ok and right_ok:
                return True
            position = hay.find(needle, position + 1)
            limit -= 1
        return False

    def contains(self, entity: Entity, *, literal: bool = False) -> bool:
        """Does this text state ``entity`` (or one of its other readings)? ``literal`` demands
        the exact spelling (for excerpts, which quote); otherwise quantities match by value (for
        claims, which may round or change units)."""
        if self._states(entity, literal):
            return True
        return any(self._states(other, literal) for other in entity.alternatives)

    def pins(self, entity: Entity) -> bool:
        """Does this text state ``entity`` in a reading its words leave no doubt about? Only an
        ``uncertain`` fact (a clock whose zone the claim does not pin) may be contained without."""
        return any(not e.uncertain and self._states(e, False) for e in (entity, *entity.alternatives))

    def _states(self, entity: Entity, literal: bool) -> bool:
        if self._whole_token(entity):
            return True
        if entity.kind == "timestamp" and entity.instant:
            season = entity.season
            return all(
                self._has_instant(n, season) or self._rounds_to(n, instant=True) or self._has_unpadded(n, season)
                for n in entity.needles
            )
        if entity.kind == "timestamp":
            return all(
                self._has_clock(n)
                or self._has_clock("0" + n)
                or self._has_twelve_hour(n)
                or self._rounds_to(n)
                or self._has_fraction(n)
                or self._has_unpadded(n)
                for n in entity.needles
            )
        if entity.kind == "date":
            return any(_date_in(self.text, needle) for needle in entity.needles)
        if entity.kind == "quantity" and not literal:
            return self._has_quantity(entity)
        if entity.kind in ("quantity", "ratio"):
            return self._has_spaced(entity.needles[0], ratio=entity.kind == "ratio")
        runs = self._runs
        if entity.prefix:  # glued on its right to the rest of the id it begins
            return any(self._has_token(self.text, n, glued=_ascii_word, right=False) for n in entity.needles)
        if any((runs is None or runs.may_hold(n)) and self._has_token(self.text, n) for n in entity.needles):
            return True
        if entity.kind in ("service", "error_code"):
            # Case-insensitive look-up lowers the whole text: only where that is cheap.
            return len(self.text) <= _FOLD_LIMIT and any(
                self._has_token(self.folded, n.lower()) for n in entity.needles
            )
        return False

    def _whole_token(self, entity: Entity) -> bool:
        """Found without a scan: a needle that is a whole whitespace token is glued to nothing,
        which is all ``_has_token`` asks of it. Quantities and ratios are searched with their
        spacing variants, and by value: always by the scans below."""
        tokens = self._tokens
        if tokens is None or entity.kind in ("quantity", "ratio"):
            return False
        if entity.kind == "timestamp":
            return all(needle in tokens for needle in entity.needles)
        return any(needle in tokens for needle in entity.needles)

    def _has_unpadded(self, needle: str, season: tuple[tzinfo, int] | None = None) -> bool:
        """A clock a log writes without its leading zeros (HealthApp's ``20171224-0:0:0:235``),
        looked for only in a text that writes an hour, minute or second of one digit; for a zoned
        clock of one season, on a line of that season."""
        clock = _NEEDLE_CLOCK.fullmatch(needle)
        if clock is None or _UNPADDED.search(self.text) is None:
            return False
        parts = ":".join(f"0?{int(part)}" for part in clock.groups() if part is not None)
        return any(
            season is None or self._in_season(m.start(), season)
            for m in re.finditer(rf"(?<![\d:]){parts}(?!\d)", self.text)
        )

    def _has_clock(self, needle: str) -> bool:
        """A date or clock glued to no digit; a clock is not the minutes and seconds of another
        (``14:28`` is not in ``14:14:28``) nor a UTC offset (``-05:00``)."""
        hay, position, tries = self.text, self.text.find(needle), _MAX_PREFIX_HITS
        while position >= 0 and tries:
            tries -= 1
            if self._clock_at(position, needle):
                return True
            position = hay.find(needle, position + 1)
        return False

    def _has_instant(self, needle: str, season: tuple[tzinfo, int] | None = None) -> bool:
        """A UTC date or clock: written so where the output writes it without an offset (or
        with Z), or the UTC reading of an output's clock written with one (``22:10+08:00`` is
        14:10Z) — never that clock's local face. ``season``: found only on a line with no day or
        a day of that season (``Entity.season``)."""
        local, utc, epochs = self.offset_clocks
        if any(reading.startswith(needle) or reading.startswith("0" + needle) for reading in utc):
            return True
        # a line's epoch: its clock, on its day (a summer reading is no winter line's, "Nov 9")
        if any(
            (clock.startswith(needle) or clock.startswith("0" + needle))
            and (season is None or _offset_seconds(instant, season[0]) == season[1])
            for clock, instant in epochs
        ):
            return True
        hay, position, tries = self.text, self.text.find(needle), _MAX_PREFIX_HITS
        while position >= 0 and tries:
            tries -= 1
            if (
                not any(start <= position < end for start, end in local)
                and self._clock_at(position, needle)
                and (season is None or self._in_season(position, season))
                and self._utc_face(position, needle)
            ):
                return True
            position = hay.find(needle, position + 1)
        return needle[:1] != "0" and ":" in needle and self._has_instant("0" + needle, season)

    def _utc_face(self, position: int, needle: str) -> bool:
        """May the clock at ``position`` be a UTC one? Not on a line whose epoch seconds give
        another clock: the line's instant is the epoch, and its clock the host's local face
        (Thunderbird's ``- 1131567055 2005.11.09 … Nov 9 12:10:55``: 20:10:55Z)."""
        if ":" not in needle:
            return True
        face = (needle if needle.index(":") == 2 else "0" + needle)[:8]  # "9:05" → "09:05"
        start = self.text.rfind("\n", 0, position) + 1
        end = self.text.find("\n", position)
        for epoch in _EPOCH_SECONDS.finditer(self.text, start, len(self.text) if end < 0 else end):
            if not datetime.fromtimestamp(int(epoch.group()), UTC).strftime("%H:%M:%S").startswith(face):
                return False
        return True

    def _in_season(self, position: int, season: tuple[tzinfo, int]) -> bool:
        """Is the day written on the line at ``position``, if any, one on which ``season``'s zone
        keeps its offset?"""
        start = self.text.rfind("\n", 0, position) + 1
        end = self.text.find("\n", position)
        day = _LINE_DAY.search(self.text, start, len(self.text) if end < 0 else end)
        if day is None:
            return True
        clock = _HOUR_MINUTE.match(self.text, position)
        hour, minute = (int(clock.group(1)), int(clock.group(2))) if clock else (12, 0)
        year, month, date_ = (g for g in day.groups() if g is not None)
        try:  # the instant itself: on the day a zone changes its offset, its hour decides
            instant = datetime(int(year), int(month), int(date_), hour, minute, tzinfo=UTC)
        except ValueError:
            return True
        zone, offset = season
        return _offset_seconds(instant, zone) == offset

    @property
    def offset_clocks(self) -> tuple[list[tuple[int, int]], frozenset[str], tuple[tuple[str, datetime], ...]]:
        """The spans of dates and clocks written with a non-zero UTC offset, and their UTC
        readings (``2026-07-07``, ``14:10:00``, ``14:10``); and the instants the lines' epochs
        name (seconds, or HealthApp's milliseconds), each with its UTC clock: read once, on the
        first instant asked."""
        if self._offsets is None:
            spans: list[tuple[int, int]] = []
            readings: set[str] = set()
            offsets = _OFFSET_HINT.search(self.text) is not None
            if offsets:
                for match in _OFFSET_TIMESTAMP.finditer(self.text):
                    instant = _utc_of(match)
                    if instant is None:
                        continue
                    spans.append(match.span())  # the offset too: "-05:00" is no clock
                    readings |= {instant.date().isoformat(), instant.strftime("%H:%M:%S"), instant.strftime("%H:%M")}
            if offsets or _ZONE_STATED.search(self.text, 0, ZONE_HEAD):
                from veridiag.text.zones import output_instants  # an output whose clocks may be local

                local, utc = output_instants(self.text)
                spans += [span for span in local if not any(s <= span[0] < e for s, e in spans)]
                readings |= utc
            # a line's epoch is the instant it names: its clock, and its day only to tell a zone's
            # season (as a date it would tie one said in the wrong zone to every line of that day)
            instants = (
                datetime.fromtimestamp(int(digits) / (1000 if len(digits) == 13 else 1), UTC)
                for digits in (epoch.group() for epoch in _EPOCH_SECONDS_OR_MS.finditer(self.text))
            )
            epochs = tuple((instant.strftime("%H:%M:%S"), instant) for instant in instants)
            self._offsets = (spans, frozenset(readings), epochs)
        return self._offsets

    def _clock_at(self, position: int, needle: str) -> bool:
        hay = self.text
        before = hay[position - 1] if position else " "
        after = position + len(needle)
        seconds_of = before == ":" and position > 1 and hay[position - 2].isdigit() and ":" in needle
        # "…T10:00:00-05:00": an offset after a clock to the second ("14:00-15:00" is a range)
        offset = before in "+-" and ":" in needle and _SECONDS_BEFORE.search(hay, max(0, position - 16), position - 1)
        after_ok = after >= len(hay) or not hay[after].isdigit()
        return not before.isdigit() and not seconds_of and not offset and after_ok

    def _has_fraction(self, needle: str) -> bool:
        """``22:15:29.649`` written with another mark before its milliseconds: a comma (log4j,
        ``22:15:29,649``) or a colon (``20171223-22:15:29:649``), its hour perhaps unpadded
        (HealthApp's ``20171224-0:32:28:806``)."""
        clock = _FRACTION_CLOCK.fullmatch(needle)
        if clock is None:
            return False
        hour, rest = clock.group(1).split(":", 1)
        faces = dict.fromkeys((clock.group(1), f"0{clock.group(1)}", f"{int(hour)}:{rest}"))
        return any(self._has_clock(f"{face}{mark}{clock.group(2)}") for mark in ",:" for face in faces)

    def _rounds_to(self, needle: str, *, instant: bool = False) -> bool:
        """``14:28`` for ``14:27:56``: a clock to the minute, rounded from one written to the
        second (the minute before, at :30 or later). ``instant``: a UTC clock (a zoned claim's
        "1:40 AM PDT" for an output's 08:39:58Z), never an offset clock's local face."""
        clock = _MINUTE_CLOCK.fullmatch(needle)
        if clock is None:
            return False
        minutes = (int(clock.group(1)) * 60 + int(clock.group(2)) - 1) % 1440
        before = f"{minutes // 60:02d}:{minutes % 60:02d}:"
        hay, position, tries = self.text, self.text.find(before), _MAX_PREFIX_HITS
        local = self.offset_clocks[0] if instant else []
        while position >= 0 and tries:
            tries -= 1
            seconds = hay[position + len(before) : position + len(before) + 2]
            if (
                seconds.isdigit()
                and int(seconds) >= 30
                and not any(start <= position < end for start, end in local)
                and self._clock_at(position, before + seconds)
            ):
                return True
            position = hay.find(before, position + 1)
        return False

    def _has_twelve_hour(self, needle: str) -> bool:
        """``14:30`` written ``2:30 p.m.`` (only tried when the 24-hour spelling is absent)."""
        clock = re.fullmatch(r"(\d{2}):(\d{2})(:\d{2})?", needle)
        if clock is None:
            return False
        hour = int(clock.group(1))
        twelve, half = (hour % 12 or 12), ("p" if hour >= 12 else "a")
        pattern = rf"(?<![\d:])0?{twelve}:{clock.group(2)}{clock.group(3) or ''}\s?[{half}{half.upper()}]\.?[mM]\b"
        return re.search(pattern, self.text) is not None

    def _has_spaced(self, needle: str, *, ratio: bool = False) -> bool:
        """``5300ms`` or ``5300 ms``, ``200/200`` or ``200 / 200``: one scan, not one per spelling.
        A ratio ends where the lexer ends one (at anything but a digit, a dot or a slash: ``3/4ms``
        states 3/4), a quantity before any ASCII letter.

        The scan starts where the first part first occurs (``str.find`` skips 64 KB several
        times faster than the regex engine's prefix search, measured); no match starts before.
        """
        if self._runs is not None and not self._runs.may_start(needle):
            return False
        pattern, first = _spaced_pattern(needle)
        start = self.text.find(first)
        if start < 0:
            return False
        for match in pattern.finditer(self.text, start):
            before = self.text[match.start() - 1] if match.start() else " "
            after = self.text[match.end()] if match.end() < len(self.text) else " "
            glued = (after.isdigit() or after in "./") if ratio else (_ascii_word(after) and needle[-1].isascii())
            if not (_ascii_word(before) or before == ".") and not glued:
                return True
        return False

    def _has_quantity(self, entity: Entity) -> bool:
        """A number here that is the same quantity at the precision the claim wrote.

        Targeted, not a scan of every number: for each unit of the claim's dimension the
        leading digits of the expected value are found with ``str.find``, the number there
        is parsed and compared by value, then its unit is checked. A size is read both ways
        (GB as 10⁹ or 2³⁰ bytes: writers use either), and also found as a capital letter glued
        to a number (``1931M``) or a bare number in a field whose name says its dimension.
        """
        if entity.value is None or entity.factor is None or entity.precision is None:
            return False
        dimension = entity.dimension or ""
        small = len(self.text) <= _FOLD_LIMIT
        # a letter written as the output writes it is its unit ("3906M" is no "4096M" read the other way)
        letter = entity.text.lstrip("0123456789.").strip()
        for claimed in unit_readings(entity):
            for factor, spellings, exact in _unit_groups(dimension):
                if exact and factor != claimed and letter in spellings:
                    continue
                value = entity.value * claimed / factor
                tolerance = entity.precision * claimed / factor / 2
                # A bare number ("cpu 92") counts only in small texts: in a 64 KB log any
                # "92" would do, which proves nothing.
                bare_ok = small and not exact and factor == claimed and dimension in _UNITS.bare_ok
                # a bare number, no unit to say it is this quantity, holds only at the digits
                # written: "约 37%" is no "entries_done=34" (its 约 widens a stated 37%, not any 34)
                bare_within = min(tolerance, written_half_unit(entity.text) * claimed / factor)
                for prefix in _value_prefixes(value, tolerance):
                    if bare_ok:
                        if self._value_at(
                            prefix,
                            value,
                            tolerance,
                            spellings,
                            bare_ok=bare_ok,
                            bare_within=bare_within,
                            multiple=_MULTIPLE_WORD.search(entity.text) is not None,
                        ):
                            return True
                    elif self._value_with_unit(prefix, value, tolerance, spellings, exact=exact):
                        return True
        return self._in_field(entity, dimension) or (dimension == "time" and self._has_duration(entity))

    def _has_duration(self, entity: Entity) -> bool:
        """A duration written as Go and many tools write one, its units glued (``elapsed 21m41s``,
        ``1h2m3.5s``), or as a clock face after its word (Proxifier's ``lifetime 00:07``): "21 min
        41 s", "7 秒" state it. Read once per text, only for a duration not found otherwise."""
        if self._durations is None:
            self._durations = written_durations(self.text)
        if not self._durations:
            return False
        assert entity.value is not None and entity.factor is not None and entity.precision is not None
        target, tolerance = entity.value * entity.factor, entity.precision * entity.factor / 2
        return any(abs(seconds - target) <= tolerance for seconds in self._durations)

    def _in_field(self, entity: Entity, dimension: str) -> bool:
        """A bare number right after a field whose name gives it this dimension (``Lock_time:
        29.3``, ``latency_ms=120``) — in the unit the name ends with, else the claim's own — or,
        for counts and percentages, after any field (``active=50``): a number bound to a name,
        which an output of any size may state, unlike a bare number anywhere."""
        words = _UNITS.field_words.get(dimension)
        if words is None and dimension not in _UNITS.bare_ok:
            return False
        if dimension == "rate" and entity.factor != 1:
            return False  # "42 a minute": a field's number says per what nowhere (``text/derived.py``)
        assert entity.value is not None and entity.factor is not None and entity.precision is not None
        text = self.text
        for key, number in _fields_with(text, entity.value * entity.factor, entity.precision * entity.factor):
            parts = _key_parts(key)
            factors: tuple[Decimal, ...]
            if words is None:
                factors = (entity.factor,)
            elif parts & words:
                named = [_UNITS.by_spelling[p] for p in parts if p in _UNITS.by_spelling]
                named += [_UNITS.field_units[p] for p in (key.lower(), *parts) if p in _UNITS.field_units]
                unit = next((u for u in named if u.dimension == dimension), None)
                # Without a unit in its name, as the claim writes it or in the base unit
                # (MySQL's Query_time and Lock_time are seconds).
                factors = (unit.factor,) if unit else (entity.factor, Decimal(1))
            else:
                continue
            target, tolerance = entity.value * entity.factor, entity.precision * entity.factor / 2
            if any(abs(number * factor - target) <= tolerance for factor in factors):
                return True
        return False

    def _value_with_unit(
        self, prefix: str, value: Decimal, tolerance: Decimal, spellings: frozenset[str], *, exact: bool = False
    ) -> bool:
        """Numbers starting with ``prefix`` and followed by a unit (spelled in that case when
        ``exact``): the regex engine skips the many bare occurrences of a short prefix without
        a Python loop."""
        if self._runs is not None and not self._runs.may_begin_number(prefix):
            return False
        text = self.text
        start = text.find(prefix)  # every match starts with it: the scan starts there (see ``_has_spaced``)
        if start < 0:
            return False
        for match in _prefixed_quantity(prefix, spellings, exact).finditer(text, start):
            before = text[match.start() - 1] if match.start() else " "
            if (_ascii_word(before) or before in ".-:/×") and not _RANGE_START.search(text, 0, match.start()):
                continue
            if match.group(1).count(".") > 1:
                continue  # "34.5.3 秒": a version, no number (Decimal refuses it)
            if abs(Decimal(match.group(1)) - value) <= tolerance:
                return True
        return False

    def _value_at(
        self,
        prefix: str,
        value: Decimal,
        tolerance: Decimal,
        spellings: frozenset[str],
        *,
        bare_ok: bool,
        bare_within: Decimal | None = None,
        multiple: bool = False,
    ) -> bool:
        """Is there, at an occurrence of ``prefix``, a number within ``tolerance`` of ``value``
        followed by one of ``spellings`` (or by no unit, when ``bare_ok``, within ``bare_within``)?"""
        text = self.text
        position = text.find(prefix)
        tries = _MAX_PREFIX_HITS
        while position >= 0 and tries:
            tries -= 1
            before = text[position - 1] if position else " "
            in_range = before in "-–~" and _RANGE_START.search(text, max(0, position - 24), position) is not None
            # (after × it is a multiple, "×40.00": no value of anything but a multiple, "38 times")
            if not (_ascii_word(before) or before in (".-:/" if multiple else ".-:/×")) or in_range:
                number = _NUMBER_AT.match(text, position)
                rest = _RANGE_REST.match(text, number.end()) if number else None
                standalone = number is not None and (rest is not None or not _inside_token(text, number.end()))
                if number and standalone and abs(Decimal(number.group()) - value) <= tolerance:
                    unit = _UNIT_AT.match(text, number.end()) or rest
                    if unit and unit.group(1).lower() in spellings:
                        return True
                    close = bare_within is None or abs(Decimal(number.group()) - value) <= bare_within
                    if bare_ok and not unit and close and not _LETTER_AT.match(text, number.end()):
                        return True
            position = text.find(prefix, position + 1)
        return False


#: A clock in a text (``10:05``, ``10:05:11.000``, the time of an ISO timestamp), its fraction of a
#: second after a dot, a comma (log4j) or a colon (``20171223-22:15:29:649``).
_CLOCK_AT = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,:](\d{1,9}))?)?(?![\d:])")
#: Words that make a duration a bound ("10 分钟内", "within 10 minutes"), written beside it.
#: At most this many distinct clocks are paired (a derivation quotes a few lines).
_MAX_CLOCKS = 64


def computed(entity: Entity, claim_text: str, evidence: Corpus, periods: Sequence[int] = ()) -> bool:
    """A fact the claim computed from its evidence rather than copied: a duration between two
    cited clocks or as long as one of the call's own periods (``derived_duration``), a difference
    of two cited values (``derived_difference``) or the rounded end of a range around cited
    clocks (``range_bound``)."""
    return (
        derived_duration(entity, claim_text, evidence, periods)
        or derived_difference(entity, claim_text, evidence)
        or range_bound(entity, claim_text, evidence)
    )


#: The periods a call states as its own, by key of its arguments or retrieval details: the window
#: it read and the baseline it compared with ("the 6-hour window", "之前一小时") — never the
#: episodes it found, any two of whose times would give some duration.
_PERIOD_KEYS = ("window", "baseline")


def period_lengths(arguments: Mapping[str, object], details: Mapping[str, object] | None) -> tuple[int, ...]:
    """Seconds in each period the call states as its own: its ``start``–``end`` arguments and
    the ``window`` / ``baseline`` pairs of its retrieval details, where both ends are instants."""
    pairs: list[tuple[object, object]] = [(arguments.get("start"), arguments.get("end"))]
    for key in _PERIOD_KEYS:
        value = (details or {}).get(key)
        if isinstance(value, (list, tuple)) and len(value) == 2:
            pairs.append((value[0], value[1]))
    lengths: list[int] = []
    for start, end in pairs:
        first, last = _instant(start), _instant(end)
        if first is not None and last is not None and last > first:
            lengths.append(int((last - first).total_seconds()))
    return tuple(lengths)


def _instant(value: object) -> datetime | None:
    if not isinstance(value, str) or not value[:4].isdigit():
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


#: How many values of one kind a claim's lines may hold for their differences to be tried: more,
#: and some pair is that far apart by chance.
_MAX_VALUES = 12


def derived_difference(entity: Entity, claim_text: str, evidence: Corpus) -> bool:
    """A difference the claim computed ("比 15:00 高出约 4.9 秒", "低了将近 60 mph", "上升了 91 个百分
    点"): a quantity after a difference word (``units.yaml`` difference_words), or in percentage
    points, is stated when two values of its kind on the claim's own lines are that far apart,
    within the rounding it is written to. Computed, not looked up: no tool writes the difference;
    a wrong one ("低了约 49 mph" for 67 − 8) is still not found."""
    if entity.kind != "quantity" or entity.value is None or entity.factor is None or entity.precision is None:
        return False
    if len(evidence.text) > _FOLD_LIMIT:
        return False
    if not is_difference(entity, claim_reading(claim_text)):
        return False
    kind = _PERCENT if entity.dimension == _POINTS else entity.dimension
    # counts of different things are no series: "11 points" and a bare level 45.62 are 34.62 apart
    # of nothing; a count is compared with counts of the same noun (or bare with bare)
    found: dict[str, set[Decimal]] = {}
    for e in TextFacts(evidence.text).entities():
        if e.kind == "quantity" and e.dimension == kind and e.value is not None and e.factor is not None:
            noun = _DIGITS.sub("", e.text).strip().lower() if kind == "count" else ""
            found.setdefault(noun, set()).add(e.value * e.factor)
    target, tolerance = entity.value * entity.factor, entity.precision * entity.factor / 2
    series = [sorted(values) for values in found.values()]
    if kind == "count":
        series += _counter_readings(evidence.text)
    return any(
        2 <= len(values) <= _MAX_VALUES
        and any(abs((high - low) - target) <= tolerance for i, low in enumerate(values) for high in values[i + 1 :])
        for values in series
    )


def _counter_readings(text: str) -> list[list[Decimal]]:
    """A counter's bare readings: the numbers standing at one place of lines of one shape (their
    digits aside: "…|onStandStepChanged 3579", then "… 3626", rose by 47) — not any two numbers
    of a line ("3 restarts in total … +1": no change of 2)."""
    places: dict[tuple[str, int], set[Decimal]] = {}
    for whole in text.splitlines():
        line = whole.strip().removeprefix(_EXAMPLE).lstrip()  # a log pattern's example is a line of the log
        shape = _DIGITS.sub("#", line)
        for place, number in enumerate(BARE_NUMBER.findall(line)):
            places.setdefault((shape, place), set()).add(Decimal(number))
    return [sorted(values) for values in places.values() if len(values) > 1]


_POINTS = "points"
_PERCENT = "percent"
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_EXAMPLE = "e.g."
#: A number standing on its own on a line: no part of a clock, a date, a path, a name or a version.
BARE_NUMBER = re.compile(r"(?<![\w.:/-])(\d+(?:\.\d+)?)(?![\w.:/%-]|\.\d)")


def fact_at(text: str, written: str) -> int:
    """Where ``written`` (a fact's text) stands in ``text`` as a fact of its own, or -1: not inside
    a longer number ("5 GB" is not the end of "15 GB", "2.5" not of "12.5")."""
    at = text.find(written)
    if not written[:1].isdigit():
        return at
    while at > 0 and (text[at - 1].isdigit() or (text[at - 1] == "." and text[at - 2 : at - 1].isdigit())):
        at = text.find(written, at + 1)
    return at


def is_difference(entity: Entity, read: str) -> bool:
    """Is this quantity of ``read`` (a text's ``fact_text``) a difference rather than a level: in
    percentage points, or right after a difference word ("高出约 4.9 秒", "rose by 47")?"""
    if entity.kind != "quantity":
        return False
    if entity.dimension == _POINTS:
        return True
    at = fact_at(read, entity.text)
    if at < 0:
        return False
    end = at + len(entity.text)
    aside = _ASIDE.match(read, end)  # "5 GB (one third) more than": a bracketed aside between
    before, after = read[max(0, at - _QUALIFIER_REACH) : at], aside.end() if aside else end
    return (
        _UNITS.difference_ending(before)
        or _UNITS.difference_after.match(read, after) is not None
        or any(ending.search(before) and starting.match(read, after) for ending, starting in _UNITS.difference_frames)
    )


def level_for_difference(entity: Entity, read: str, corpus: Corpus) -> bool:
    """Is ``entity``, a difference of ``read`` ("高出大约 36", "12.18 higher"), found in ``corpus``
    only as a value near it? A level of the series (33.44 within "about 36") states no difference:
    one is written as such, or computed from two cited values (``derived_difference``)."""
    return is_difference(entity, read) and not corpus.contains(entity, literal=True)


#: A short bracketed aside right after a quantity.
_ASIDE = re.compile(r"\s*[(（][^()（）]{1,24}[)）]")


#: How far a range's end may be rounded past the clock it bounds, to a clock on a five-minute
#: mark ("0 点到 0 点 15 分" for lines from 00:00:20 to 00:14:15; "14:00–14:30" for 14:01–14:28;
#: not "10:03–10:15" for lines to 10:04, the end of another template's lines).
_RANGE_ROUNDING = 5 * 60
_RANGE_BEFORE = re.compile(r"(?:到|至|-|–|—|~|～|\bto|\band|\buntil|\btill)\s*$", re.IGNORECASE)
_RANGE_AFTER = re.compile(r"\s*(?:到|至|-|–|—|~|～|to\b|and\b|until\b|till\b)")


def range_bound(entity: Entity, claim_text: str, evidence: Corpus) -> bool:
    """A clock on a five-minute mark that starts or ends a range in the claim ("0 点到 0 点 15
    分", "between 14:00 and 14:30") is stated when a clock of the evidence lies inside the range
    within five minutes of it: a range is written to round minutes outward, never to hold
    nothing."""
    if entity.kind != "timestamp" or len(evidence.text) > _FOLD_LIMIT:
        return False
    clock = next((n for n in entity.needles if ":" in n), None)
    if clock is None:
        return False
    claim = fact_text(claim_text)
    at = claim.find(clock)
    if at < 0:
        return False
    end = _RANGE_BEFORE.search(claim, max(0, at - 8), at) is not None
    start = _RANGE_AFTER.match(claim, at + len(clock)) is not None
    if not (start or end):
        return False
    hours, minutes = clock.split(":")[:2]
    if int(minutes) % 5:
        return False  # a clock rounded to is a round one
    bound = int(hours) * 3600 + int(minutes) * 60
    for match in _CLOCK_AT.finditer(evidence.text):
        seen = _seconds(match)
        if (end and bound - _RANGE_ROUNDING < seen <= bound) or (start and bound <= seen < bound + _RANGE_ROUNDING):
            return True
    return False


def derived_duration(
    entity: Entity, claim_text: str, evidence: Corpus, periods: Sequence[int] = (), anchors: Corpus | None = None
) -> bool:
    """A duration the claim derives from two times ("两分钟后开始报错", "1 s later", "10 分钟内"):
    stated when two clocks of the evidence (and of the claim itself) are that far apart — or at
    most that far, for a bound — or when it is as long as one of the call's own ``periods``
    (``period_lengths``: "the 6-hour window"). With ``anchors`` (the lines of the event it counts
    from, "1 秒后" after the previous claim's), only as far as from one of theirs to one of its
    own. Computed, not looked up: no tool writes "2 minutes later"."""
    if entity.kind != "quantity" or entity.dimension != "time" or len(evidence.text) > _FOLD_LIMIT:
        return False
    assert entity.value is not None and entity.factor is not None and entity.precision is not None
    target, tolerance = entity.value * entity.factor, entity.precision * entity.factor / 2
    # a period the claim names without citing its clocks is a round figure it writes as is
    # (6 小时, twelve hours): within a tenth, not the half unit "1 hour" would otherwise allow
    if any(abs(Decimal(length) - target) <= min(tolerance, target / 10) for length in periods):
        return True
    claim = claim_reading(claim_text)
    written = [_when(m) for m in _CLOCK_AT.finditer(evidence.text)]
    times = sorted({*written, *(_when(m) for m in _CLOCK_AT.finditer(claim)), *_epochs(claim, evidence)}, key=str)
    if anchors is not None:
        since = {_when(m) for m in _CLOCK_AT.finditer(anchors.text)} - set(times)
        if not times or len(since) > _MAX_CLOCKS or len(anchors.text) > _FOLD_LIMIT:
            return False
        return any(abs(target - _apart(first, second)) <= tolerance for first in since for second in times)
    if len(times) < 2 or len(times) > _MAX_CLOCKS:
        return False
    at = fact_at(claim, entity.text)
    bounded = (
        at >= 0
        and _UNITS.qualifier(
            claim[max(0, at - _QUALIFIER_REACH) : at], claim[at + len(entity.text) :][:_QUALIFIER_REACH]
        )
        == "at_most"
    )
    # points of a series one step apart each stand for their step: 04:37–04:39 of a minutely
    # series is three minutes above the line (it lasted between two and four)
    step = Decimal(_series_step(written))
    # an end of a range of durations ("every 40–42 s") is stated by a gap within the range
    low, high = _duration_range(claim, target)
    if high > low and any(
        low - tolerance <= _apart(first, second) <= high + tolerance
        for i, first in enumerate(times)
        for second in times[i + 1 :]
    ):
        return True
    for i, first in enumerate(times):
        for second in times[i + 1 :]:
            apart = Decimal(_apart(first, second))
            # a step widens only two points of the series (a whole number of steps apart): the
            # 22:19:58 failure and the hourly 22:32:28 retry are 12.5 minutes apart, not "22"
            widen = step if step and apart % step == 0 else 0
            if -tolerance <= target - apart <= widen + tolerance or (bounded and apart <= target + tolerance):
                return True
    return False


def written_durations(text: str) -> tuple[Decimal, ...]:
    """Seconds in each duration ``text`` writes as Go does, its units glued (``elapsed 21m41s``), or
    as a clock face after its word (Proxifier's ``lifetime 01:33``): the lexer reads neither."""
    return tuple(_glued_seconds(m) for m in _GLUED_DURATION.finditer(text) if m.group("h") or m.group("m")) + tuple(
        _glued_seconds(m) for m in _UNITS.clock_duration.finditer(text)
    )


def line_periods(line: str, facts: Sequence[Entity]) -> list[Decimal]:
    """Seconds in each period one line states: a duration it writes ("(29 points, 28 min)",
    ``facts`` being its facts) and the time between any two of its clocks ("14:00:05Z – 14:27:56Z")."""
    clocks = [_when(m) for m in _CLOCK_AT.finditer(line)]
    between = [_apart(a, b) for i, a in enumerate(clocks) for b in clocks[i + 1 :]]
    written = [e.value * e.factor for e in facts if e.dimension == "time" and e.value is not None and e.factor]
    return written + between


def _series_step(clocks: list[tuple[Decimal, int | None]]) -> Decimal:
    """Seconds between the evidence's clocks when they are a series' points — the same gap
    forward between at least three distinct ones in a row, in the order written — else 0. A line
    quoted twice (an episode under two headings) repeats its clocks: 20:10:43, 20:10:55, 20:10:43
    are no series 12 s apart, whose step would let any gap up to 24 s pass as "12 s"."""
    distinct = list(dict.fromkeys(clocks))
    gaps = [_forward(a, b) for a, b in pairwise(distinct)]
    runs = [a for a, b in pairwise(gaps) if a == b and a > 0]
    return max(set(runs), key=runs.count) if runs else Decimal(0)


#: A date written right before a clock ("2013-12-21T20:00"): the clock is then an instant.
_DATE_BEFORE = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ]$")


#: Epoch seconds, or milliseconds (thirteen digits: HealthApp's "hiHealthData = 1513958400000").
_EPOCH_SECONDS_OR_MS = re.compile(r"(?<!\d)(?<!\d\.)1\d{9}(?:\d{3})?(?!\d|\.\d)")
#: Seconds since 1970 as logs write them (HPC, BGL: "node status 1079615344"; Thunderbird beside
#: its record), 2001 to 2033. Also read by ``Corpus._utc_face``.
_EPOCH_SECONDS = re.compile(r"(?<!\d)(?<!\d\.)1\d{9}(?!\d|\.\d)")


def _epochs(claim: str, evidence: Corpus) -> list[tuple[Decimal, int | None]]:
    """The instants of the epoch seconds a claim copies from its evidence ("在 1079615344 报 …，约
    29 分钟后（1079617105）"): a duration between two of them is computed as between two clocks. Only
    a number both write is read so: an id of ten digits elsewhere is no time."""
    if not any(c.isdigit() for c in claim):
        return []
    found: list[tuple[Decimal, int | None]] = []
    for number in {m.group() for m in _EPOCH_SECONDS.finditer(claim)}:
        if number in evidence.text:
            instant = datetime.fromtimestamp(int(number), UTC)
            found.append((Decimal(instant.hour * 3600 + instant.minute * 60 + instant.second), instant.toordinal()))
    return found


def _when(clock: re.Match[str]) -> tuple[Decimal, int | None]:
    """A clock's second of the day, and its day when a date is written with it."""
    dated = _DATE_BEFORE.search(clock.string, max(0, clock.start() - 11), clock.start())
    day = None
    if dated is not None:
        try:
            day = date(int(dated.group(1)), int(dated.group(2)), int(dated.group(3))).toordinal()
        except ValueError:
            day = None
    return _seconds(clock), day


_DURATION_RANGE = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:–|—|-|~|～|到|至|to)\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+|[\u4e00-\u9fff]{1,2})"
)


def _duration_range(claim: str, target: Decimal) -> tuple[Decimal, Decimal]:
    """The range of durations ("40–42 s", "3 到 5 分钟") of ``claim`` that ``target`` (seconds)
    ends, in seconds; (0, 0) when none does."""
    for match in _DURATION_RANGE.finditer(claim):
        unit = _UNITS.by_spelling.get(match.group(3).lower())
        if unit is None or unit.dimension != "time":
            continue
        low, high = Decimal(match.group(1)) * unit.factor, Decimal(match.group(2)) * unit.factor
        if target in (low, high):
            return low, high
    return Decimal(0), Decimal(0)


def _forward(first: tuple[Decimal, int | None], second: tuple[Decimal, int | None]) -> Decimal:
    """Seconds from one clock on to the next written (past midnight when undated): 0 when the
    second is no later on its dated day."""
    if first[1] is not None and second[1] is not None:
        return max(Decimal(0), (second[1] - first[1]) * 86400 + second[0] - first[0])
    return (second[0] - first[0]) % 86400


def _apart(first: tuple[Decimal, int | None], second: tuple[Decimal, int | None]) -> Decimal:
    """Seconds between two clocks: between instants when both carry a date (20:00 on the 21st
    to 13:00 on the 23rd is 41 h, not 17), else between times of day, the short way round
    midnight (23:58 to 00:02 is 4 minutes)."""
    if first[1] is not None and second[1] is not None:
        return abs((second[1] - first[1]) * 86400 + second[0] - first[0])
    apart = abs(second[0] - first[0])
    return min(apart, 86400 - apart)


def _seconds(clock: re.Match[str]) -> Decimal:
    """A clock's second of the day, to the fraction it is written to ("22:15:29.649": 80129.649)."""
    hours, minutes, seconds, fraction = clock.group(1), clock.group(2), clock.group(3) or "0", clock.group(4)
    whole = Decimal(int(hours) * 3600 + int(minutes) * 60 + int(seconds))
    return whole + Decimal(f"0.{fraction}") if fraction else whole
