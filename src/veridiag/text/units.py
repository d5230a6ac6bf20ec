"""Numbers and the units they are written in (the table is ``units.yaml``).

A quantity is a number, a unit spelling, and through it a dimension and a factor to the
dimension's base unit: ``5.3 秒`` and ``5300ms`` are one duration. The entity lexer and the
reader-text normaliser both take their units from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

from pydantic import Field, field_validator, model_validator

from veridiag.text.alternation import whole_words
from veridiag.text.cjk import HAN
from veridiag.text.wordfiles import Word, WordModel, bundled_words

#: A number as written in text: digits, optionally a decimal part.
NUMBER = r"\d+(?:\.\d+)?"


def decimal_or_none(text: str | None) -> Decimal | None:
    """``text`` as a Decimal; None for no text or one that is no number."""
    try:
        return Decimal(text) if text else None
    except InvalidOperation:
        return None


class UnitSpellings(WordModel):
    dimension: Word
    factor: Decimal = Field(gt=0)
    spellings: list[Word] = Field(min_length=1)

    @field_validator("spellings")
    @classmethod
    def _lower_case(cls, spellings: list[str]) -> list[str]:
        upper = [s for s in spellings if s != s.lower()]
        if upper:
            raise ValueError(f"spellings are matched case-insensitively and must be lower case: {upper}")
        return spellings


QualifierKind = Literal["approximate", "at_most", "at_least", "selection"]
_BOUNDS: frozenset[QualifierKind] = frozenset({"at_most", "at_least"})


class QualifierWords(WordModel):
    before: list[Word] = Field(default_factory=list)
    after: list[Word] = Field(default_factory=list)


class RateWords(WordModel):
    """``units.yaml`` rates: the words that make a time unit a rate's denominator."""

    per: list[Word] = Field(min_length=1)
    per_zh: list[Word] = Field(min_length=1)
    not_counted: list[Word] = Field(default_factory=list)
    not_after: list[Word] = Field(default_factory=list)
    levels: list[Word] = Field(default_factory=list)
    points: list[Word] = Field(default_factory=list)


class LetterReading(WordModel):
    """One unit a letter glued to a number may stand for (``units.yaml`` letter_readings)."""

    dimension: Word
    factor: Decimal = Field(gt=0)


class UnitWords(WordModel):
    units: list[UnitSpellings] = Field(min_length=1)
    size_letters: dict[Word, list[Decimal]] = Field(default_factory=dict)
    cpu_letters: dict[Word, list[Decimal]] = Field(default_factory=dict)
    letter_readings: dict[Word, list[LetterReading]] = Field(default_factory=dict)
    field_words: dict[Word, list[Word]] = Field(default_factory=dict)
    field_units: dict[Word, Word] = Field(default_factory=dict)
    clock_durations: list[Word] = Field(default_factory=list)
    bare_number_dimensions: list[Word] = Field(default_factory=list)
    chinese_numeral_units: list[Word] = Field(default_factory=list)
    qualifiers: dict[QualifierKind, QualifierWords] = Field(default_factory=dict)
    value_words: list[Word] = Field(default_factory=list)
    #: Adverbs that may stand between a value word and its number ("was already 42.15").
    value_adverbs: list[Word] = Field(default_factory=list)
    difference_words: list[Word] = Field(default_factory=list)
    difference_after: list[Word] = Field(default_factory=list)
    difference_frames: list[tuple[Word, Word]] = Field(default_factory=list)
    rates: RateWords | None = None
    relative_after: list[Word] = Field(default_factory=list)
    sum_words: list[Word] = Field(default_factory=list)
    multiple_after: list[Word] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_unit_per_spelling(self) -> UnitWords:
        seen: set[str] = set()
        for spelling in (s for unit in self.units for s in unit.spellings):
            if spelling in seen:
                raise ValueError(f"spelling {spelling!r} belongs to more than one unit")
            seen.add(spelling)
        dimensions = {unit.dimension for unit in self.units}
        lettered = [r.dimension for readings in self.letter_readings.values() for r in readings]
        unknown = [d for d in [*self.bare_number_dimensions, *self.field_words, *lettered] if d not in dimensions]
        if unknown:
            raise ValueError(f"a dimension named (bare numbers, fields, letters) is no unit's dimension: {unknown}")
        return self


@dataclass(frozen=True)
class Unit:
    dimension: str
    factor: Decimal


@dataclass(frozen=True)
class UnitTable:
    """The units, looked up by lower-case spelling and grouped for conversion."""

    by_spelling: dict[str, Unit]
    #: dimension → [(factor, spellings)]: where to look for a quantity written in another unit.
    groups: dict[str, list[tuple[Decimal, frozenset[str]]]]
    #: Dimensions where a bare number may stand for the quantity (small texts only).
    bare_ok: frozenset[str]
    chinese_numeral_units: tuple[str, ...]
    #: Case-sensitive size suffixes (``1931M``) → the factors they may mean.
    size_letters: dict[str, tuple[Decimal, ...]]
    #: Case-sensitive CPU suffixes (Kubernetes' millicores: ``448.24 m``, ``500m``) → factors in cores.
    cpu_letters: dict[str, tuple[Decimal, ...]]
    #: A letter glued to a number in a claim (``1950M``, ``427.52m``) → the units it may stand for.
    letter_readings: dict[str, tuple[Unit, ...]]
    #: dimension → words a field's name has when its bare number is of that dimension.
    field_words: dict[str, frozenset[str]]
    #: kind → (words ending right before a number, words right after its unit), compiled.
    qualifiers: dict[QualifierKind, tuple[re.Pattern[str], re.Pattern[str]]]
    #: Words ending right before a bare number that make it a stated value.
    value_before: re.Pattern[str]
    #: kind → the last characters (lower case) of its ``before`` words; and of the value words.
    qualifier_ends: dict[QualifierKind, frozenset[str]]
    value_ends: frozenset[str]
    #: Words ending right before a number (an approximate word between) that make it a difference.
    difference_before: re.Pattern[str]
    #: The same for a sum ("加起来", "in total").
    sum_before: re.Pattern[str]
    #: Words right after a quantity that make it a difference ("0.81 ms below the peak").
    difference_after: re.Pattern[str]
    #: (a word ending right before a quantity, one right after it) that make it a difference bound
    #: ("within 0.1 m of the median").
    difference_frames: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]
    #: Words right after a duration that make it the time from another event ("后", "later").
    relative_after: re.Pattern[str]
    #: Words right after "N times" that make it a multiple ("the", "as", "higher").
    multiple_after: re.Pattern[str]
    #: A count per unit of time, where a text may hold one (``Rates``).
    rates: Rates | None
    #: The last characters (lower case) of the difference words and of the approximate words that
    #: may follow them: what a text ``difference_before`` matches ends with but for blanks.
    difference_ends: frozenset[str] = frozenset()
    #: A sum word anywhere ("In total the pod spent about 12 minutes"): its clause is a sum.
    sum_word: re.Pattern[str] = re.compile("(?!)")
    #: A word of a field's name → the unit its bare number is in (``len: 176`` is bytes).
    field_units: dict[str, Unit] = field(default_factory=dict)
    #: A clock face that is a duration, after its word ("lifetime 00:07"): groups h, m, s.
    clock_duration: re.Pattern[str] = re.compile("(?!)")
    #: How far before a bare number its value word may start: the longest with two adverbs after it
    #: ("climbed up to once more 3", "was still only 3").
    value_reach: int = 0

    def qualifier(self, before: str, after: str) -> QualifierKind | None:
        """What the words around a number make of it: approximate, a bound, or (None) exact.

        A ``before`` word ends ``before`` but for blanks: where the last other character is ASCII
        and ends none of a kind's words (in any case), that kind's pattern is not searched — a
        search tries each word at every position, ~3 µs a kind for every number lexed (measured).
        An ASCII character matches no other character case-insensitively than its own two cases
        when the words' last characters are ASCII or Chinese (``_ends``)."""
        for kind, (ends_before, starts_after) in self.qualifiers.items():
            if _may_end(before, self.qualifier_ends[kind]) and ends_before.search(before):
                # "went up to 2024M" states a value: its "up to" ends a value word, no bound
                if kind in _BOUNDS and self.value_word_before(before, len(before), len(before)):
                    continue
                return kind
            if starts_after.match(after):
                return kind
        return None

    def difference_ending(self, before: str) -> bool:
        """Does a difference word (perhaps with an approximate word after it) end ``before`` but for
        blanks? ``difference_before`` searched only where one can end it (see ``qualifier``): a
        bare number's ~16 characters before it were searched at each of them for every one lexed."""
        return _may_end(before, self.difference_ends) and self.difference_before.search(before) is not None

    def value_word_before(self, text: str, start: int, reach: int) -> bool:
        """Does a value word end right before ``text[start]``, within ``reach`` characters
        (``value_before`` searched there, unless no value word can end it: see ``qualifier``)?"""
        begin = max(0, start - reach)
        return _may_end(text[begin:start], self.value_ends) and self.value_before.search(text, begin, start) is not None

    @classmethod
    def from_words(cls, words: UnitWords) -> UnitTable:
        by_spelling = {s: Unit(u.dimension, u.factor) for u in words.units for s in u.spellings}
        grouped: dict[str, dict[Decimal, set[str]]] = {}
        for spelling, unit in by_spelling.items():
            grouped.setdefault(unit.dimension, {}).setdefault(unit.factor, set()).add(spelling)
        groups = {d: [(f, frozenset(sp)) for f, sp in by_factor.items()] for d, by_factor in grouped.items()}
        approximate = words.qualifiers.get("approximate")
        return cls(
            by_spelling,
            groups,
            frozenset(words.bare_number_dimensions),
            tuple(words.chinese_numeral_units),
            {letter: tuple(factors) for letter, factors in words.size_letters.items()},
            {letter: tuple(factors) for letter, factors in words.cpu_letters.items()},
            {letter: tuple(Unit(r.dimension, r.factor) for r in rs) for letter, rs in words.letter_readings.items()},
            {dimension: frozenset(w.lower() for w in names) for dimension, names in words.field_words.items()},
            {kind: (_ending(q.before), _starting(q.after)) for kind, q in words.qualifiers.items()},
            _ending(words.value_words, then=words.value_adverbs),
            {kind: _ends(q.before) for kind, q in words.qualifiers.items()},
            _ends(words.value_words + words.value_adverbs),
            _difference(words.difference_words, words),
            _difference(words.sum_words, words),
            _starting(words.difference_after),
            tuple((_ending([before]), _starting([after])) for before, after in words.difference_frames),
            _starting(words.relative_after),
            _starting(words.multiple_after),
            Rates(words.rates, by_spelling) if words.rates is not None else None,
            _ends(words.difference_words) | _ends(approximate.before if approximate is not None else []),
            re.compile(_words_pattern(words.sum_words), re.IGNORECASE),
            {word.lower(): by_spelling[unit.lower()] for word, unit in words.field_units.items()},
            re.compile(
                rf"(?<![A-Za-z])(?:{_words_pattern(words.clock_durations)})[\s:=]*"
                r"(?:(?P<h>\d{1,3}):)?(?P<m>\d{1,2}):(?P<s>\d{2})(?![\d:])",
                re.IGNORECASE,
            ),
            max(map(len, words.value_words), default=0) + 2 * max(map(len, words.value_adverbs), default=0) + 3,
        )

    def alternation(self) -> str:
        """Every spelling, longest first, for a regular expression."""
        return "|".join(re.escape(s) for s in sorted(self.by_spelling, key=len, reverse=True))


def _difference(listed: list[str], words: UnitWords) -> re.Pattern[str]:
    """One of ``listed`` (difference or sum words), then perhaps an approximate word, ending the
    text but for blanks."""
    approximate = words.qualifiers.get("approximate")
    maybe = _words_pattern(approximate.before) if approximate is not None else "(?!)"
    return re.compile(rf"(?:{_words_pattern(listed)})\s*(?:{maybe})?\s*$", re.IGNORECASE)


#: Measure words after a count in a Chinese rate ("每分钟 12 次", "每秒一条", "每 41 秒一台").
_MEASURES = "次个条台项行笔件"


class Rates:
    """A count per unit of time ("42 a minute", "3 slow queries per second", "30/min", "每分钟约 12
    次"): patterns whose groups are ``num`` (the count), ``every`` (a number of units, "every 5
    minutes") and ``unit`` (a time unit's spelling). Read before the lexer's units, so the time
    unit of a rate is its denominator, never a duration of its own."""

    def __init__(self, words: RateWords, by_spelling: dict[str, Unit]) -> None:
        times = sorted((s for s, u in by_spelling.items() if u.dimension == "time"), key=len, reverse=True)
        latin = "|".join(re.escape(s) for s in times if s.isascii())
        chinese = "|".join(re.escape(s) for s in times if not s.isascii())
        others = [s for s, u in by_spelling.items() if u.dimension != "count" and s[:1].isalpha()]
        per = _words_pattern(words.per)
        # what is counted: up to three words, none a stop word nor a unit but a count's ("2 GB a
        # minute" is a throughput, "5 ms each minute" a latency, "5 errors in a minute" a duration)
        stop, other = _words_pattern([*words.not_counted, *others]), _words_pattern(others)
        noun = rf"(?:\s+(?!{stop})[A-Za-z][A-Za-z_-]*){{0,3}}"
        after = _words_pattern(words.not_after)
        self.en = re.compile(
            # "one sweep every 14 seconds": the count one, spelled
            rf"(?<![\w.])(?P<num>{NUMBER}|(?i:one)){noun}\s+(?:{per})\s+(?:(?P<every>{NUMBER})\s+)?"
            rf"(?P<unit>{latin})(?![A-Za-z])(?!\s+(?:{after})(?![A-Za-z]))"
            rf"|(?<![\w.])(?P<snum>{NUMBER})(?:{noun}|\s?(?!{other})[A-Za-z]+|\s?[次个条])\s?/\s?(?P<sunit>{latin}|{chinese})"
            r"(?![A-Za-z])",
            re.IGNORECASE,
        )
        zh_per = "|".join(re.escape(w) for w in words.per_zh)
        self.zh = re.compile(
            rf"(?:{zh_per})\s*(?P<every>{NUMBER})?\s*个?(?P<unit>{chinese})[^\d\s,，。;；:：()（）]{{0,8}}?\s*"
            # a count, perhaps with its measure word; a unit after it is no count ("每小时 10 公里": a speed)
            rf"(?:(?P<num>{NUMBER})(?!\s*[:%.\d])(?:\s*[{_MEASURES}]|(?!\s*[{HAN}A-Za-z]))"
            # "每秒一条", "每 41 秒完成一台": 一 with its measure word is the count one (elsewhere a word: 一直)
            rf"|(?P<one>一)\s*[{_MEASURES}])"
        )
        #: "42 a minute": an article after a count (and what it counts) is a rate's, not "1 minute"
        self.article_after_count = re.compile(rf"(?<![\w.]){NUMBER}{noun}\s+$", re.IGNORECASE)
        #: a word ending right before a count of a line that makes it a level, no total
        self.level_before = re.compile(rf"(?:{_words_pattern(words.levels)})\s*[:=]?\s*$", re.IGNORECASE)
        #: a series' point, counted once per a time unit ("每 5 分钟一个点")
        self.point = re.compile(rf"(?:{_words_pattern(words.points)})", re.IGNORECASE) if words.points else None
        self.per_words = frozenset(w for word in words.per for w in (word, word.title()))
        self.zh_words = tuple(words.per_zh)
        #: a time unit as a whitespace token, bare or before a mark ("a minute." "per second,")
        self.time_tokens = frozenset(
            f"{s}{mark}" for s in times if s.isascii() for mark in ("", ",", ".", ";", ")", ":", "。", "，", "；", "）")
        )
        #: a slash before a time unit ("30/min", "12 次/分钟")
        self.slash = re.compile(rf"/\s?(?:{latin}|{chinese})(?![A-Za-z])", re.IGNORECASE)

    def may_hold(self, text: str, tokens: list[str]) -> bool:
        """Might ``text`` (split into whitespace ``tokens``) write a rate? Set and substring tests
        (in C) first: most texts have none, and the patterns then never run."""
        if not self.per_words.isdisjoint(tokens) and not self.time_tokens.isdisjoint(tokens):
            return True
        if any(word in text for word in self.zh_words):
            return True
        return "/" in text and self.slash.search(text) is not None


def _words_pattern(words: list[str]) -> str:
    ordered = sorted(set(words), key=len, reverse=True)
    return whole_words(ordered, edge="A-Za-z", boundary="A-Za-z", blanks=r"\s*") or "(?!)"


def _may_end(before: str, ends: frozenset[str]) -> bool:
    """Can a word ending in one of ``ends`` end ``before`` but for blanks? Asked of an ASCII
    last character only; any other is left to the pattern."""
    tail = before.rstrip()[-1:]
    return not tail.isascii() or tail.lower() in ends


def _ends(words: list[str]) -> frozenset[str]:
    """The last characters of ``words`` (as ``_words_pattern`` writes them), lower-cased. Refused
    for a last character outside ASCII that has an ASCII case (the Kelvin sign, the long s): an
    ASCII character ending a text could match it, and ``UnitTable.qualifier`` could not tell."""
    ends = {word.split()[-1][-1] for word in words if word.split()}
    for end in ends:
        if not end.isascii() and any(c.isascii() for c in (end.lower(), end.upper(), end.casefold())):
            raise ValueError(f"a qualifier word ends in {end!r}, which has an ASCII case")
    return frozenset(end.lower() for end in ends)


def _ending(words: list[str], then: list[str] | None = None) -> re.Pattern[str]:
    """One of ``words`` ending the text but for blanks, or followed by up to two of ``then``."""
    after = rf"(?:\s*(?:{_words_pattern(then)})){{0,2}}" if then else ""
    return re.compile(rf"(?:{_words_pattern(words)}){after}\s*$", re.IGNORECASE)


def _starting(words: list[str]) -> re.Pattern[str]:
    return re.compile(rf"\s*(?:{_words_pattern(words)})", re.IGNORECASE)


@lru_cache(maxsize=1)
def unit_table() -> UnitTable:
    """The bundled units (``text/units.yaml``), read once."""
    return UnitTable.from_words(bundled_words("veridiag.text", "units.yaml", UnitWords))
