"""Numbers a claim spells out, as the digits its facts are checked in (``spoken.yaml``).

A capable model writes "two minutes later", "roughly half an hour", "a dozen errors", "将近一个
小时", "一个半小时", "two hours and 47 minutes". Unread, such a quantity is prose: a true one
cannot be grounded, a wrong one ("将近一个小时" for 28 minutes) passes unchecked. Read, each is a
quantity — "2 minutes", "0.5 hours", "12 errors", "1小时", "1.5小时", "167 minutes" — at the
precision its digits show, so the entity scanner checks it like any other and an approximate
word before it keeps its meaning. Only right before a unit of the unit table: elsewhere "one"
and 一 are words ("one of them", 一直). Applied to claim-sized texts only (``LIMIT``): tools write
digits, and a 64 KB output is not scanned for words no tool writes.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from pydantic import Field

from veridiag.text.alternation import whole_words
from veridiag.text.units import NUMBER, unit_table
from veridiag.text.wordfiles import Word, WordModel, bundled_words

#: Texts longer than this (tool outputs) are left as written.
LIMIT = 4096

_ZH_NUMERALS = "零〇一二两三四五六七八九十百"
_ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}


class SpokenWords(WordModel):
    en_numbers: dict[Word, Word] = Field(min_length=1)
    en_and_half: list[Word] = Field(default_factory=list)
    zh_time_units: dict[Word, Word] = Field(min_length=1)
    zh_half: Word
    zh_measure: Word
    zh_ordinal: list[Word] = Field(default_factory=list)
    compound_joiners: list[Word] = Field(default_factory=list)
    unit_words: dict[Word, str] = Field(default_factory=dict)
    unit_modifiers: list[Word] = Field(default_factory=list)
    reference_before: list[Word] = Field(default_factory=list)
    generic_after: list[Word] = Field(default_factory=list)
    per_hour_first: dict[Word, list[Word]] = Field(default_factory=dict)
    en_months: dict[Word, int] = Field(default_factory=dict)
    en_month_verbs: list[Word] = Field(default_factory=list)
    zh_month: Word = "月"
    zh_day: list[Word] = Field(default_factory=list)


#: "a second look" is no duration, "a requests" no count: the article counts only before a time
#: unit other than seconds ("a minute later", "an hour").
_ARTICLES = frozenset({"a", "an"})


class _Spoken:
    """The compiled patterns of ``spoken.yaml``."""

    def __init__(self, words: SpokenWords) -> None:
        table = unit_table()
        self.numbers = {k.lower(): Decimal(v) for k, v in words.en_numbers.items()}
        latin_units = sorted(
            (s for s in table.by_spelling if s.isascii() and s[:1].isalpha() and len(s) > 1), key=len, reverse=True
        )
        units = whole_words(latin_units, edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+")
        numbers = whole_words(
            sorted(self.numbers, key=len, reverse=True), edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+"
        )
        tens = "|".join(k for k, v in self.numbers.items() if v >= 20 and v % 10 == 0 and " " not in k)
        ones = "|".join(k for k, v in self.numbers.items() if 1 <= v <= 9 and len(k) > 2)
        half = "|".join(re.escape(w) for w in words.en_and_half) or "(?!)"
        self.en = re.compile(
            rf"(?<![A-Za-z0-9])(?:(?P<tens>{tens})[\s-](?P<ones>{ones})|(?P<word>{numbers}))"
            rf"(?P<half>\s+(?:{half}))?(?=\s+(?P<unit>{units}))",
            re.IGNORECASE,
        )
        # "an hour and a half": the half after the unit
        # "a 6-hour window": the number and its unit
        self.hyphen = re.compile(rf"(?<=\d)-(?=(?:{units}))", re.IGNORECASE)
        self.en_after = re.compile(rf"(?P<unit>\b(?:{units}))\s+(?:{half})(?![A-Za-z])", re.IGNORECASE)
        self.zh_units = dict(words.zh_time_units)
        self.ordinal = frozenset(words.zh_ordinal)
        zh_unit = "|".join(re.escape(u) for u in sorted(self.zh_units, key=len, reverse=True))
        self.zh = re.compile(
            rf"(?P<n>{NUMBER}|[{_ZH_NUMERALS}]+)?\s*(?P<ge>{re.escape(words.zh_measure)})?"
            rf"(?P<half>{re.escape(words.zh_half)})?(?P<unit>{zh_unit})"
        )
        self.unit_words = {k.lower(): v for k, v in words.unit_words.items()}
        spelled = whole_words(
            sorted(self.unit_words, key=len, reverse=True), edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+"
        )
        self.units = re.compile(rf"(?<=\d)\s*(?:{spelled})", re.IGNORECASE)
        modifiers = "|".join(re.escape(m) for m in sorted(words.unit_modifiers, key=len, reverse=True)) or "(?!)"
        latin_units = sorted((u for u in table.by_spelling if len(u) > 2 and u.isalpha() and u.isascii()), key=len)
        #: "20 full CPU cores": words between a number and its unit that leave it that unit
        units_after = "|".join(map(re.escape, reversed(latin_units)))
        self.modified = re.compile(
            rf"(?<=\d)\s+(?:(?:{modifiers})\s+){{1,2}}(?=(?:{units_after})(?![A-Za-z]))", re.IGNORECASE
        )
        self.modifier_words = frozenset(m.lower() for m in words.unit_modifiers)
        references = "|".join(re.escape(w) for w in words.reference_before) or "(?!)"
        #: "0.02 of one core": one unit named as what the number is a share of, no count of it
        self.reference = re.compile(rf"(?<![A-Za-z])(?:{references})\s+$", re.IGNORECASE)
        generic = "|".join(re.escape(w) for w in sorted(words.generic_after, key=len, reverse=True)) or "(?!)"
        #: "one sample alone cannot …": any one, no count of one
        self.generic = re.compile(rf"\s+(?:{generic})(?![A-Za-z])", re.IGNORECASE)
        pers = "|".join(re.escape(p) for p in words.per_hour_first)
        lengths = "|".join(re.escape(u) for units in words.per_hour_first.values() for u in units)
        #: "每小时 180 公里": a speed in km/h, its hour written first
        self.per_hour = re.compile(rf"(?:{pers or '(?!)'})\s*(?P<n>{NUMBER})\s*(?:{lengths or '(?!)'})")
        joiners = "|".join(re.escape(j) for j in words.compound_joiners)
        hours = "hours?|hrs?|h|小时"
        minutes = "minutes?|mins?|分钟|分"
        seconds = "seconds?|secs?|s|秒钟|秒"
        join = rf"\s*(?:(?:{joiners})\s*)?"
        self.compound = re.compile(
            rf"(?<![\d.])(?P<a>{NUMBER})\s*(?P<big>{hours}|{minutes})(?![A-Za-z]){join}"
            rf"(?P<b>\d{{1,2}})\s*(?P<small>{minutes}|{seconds})(?![A-Za-z])",
            re.IGNORECASE,
        )
        # Guards: each pattern above tries every position of a text (~90 µs for a check's ~100
        # excerpts and lines, measured), so it runs only on a text holding what it needs —
        # found by splitting and substring tests, which run in C.
        single = frozenset(t for k in self.numbers for t in k.split()) - _ARTICLES - {"of"}
        tens_words = [k for k, v in self.numbers.items() if v >= 20 and v % 10 == 0 and " " not in k]
        ones_words = [k for k, v in self.numbers.items() if 1 <= v <= 9 and len(k) > 2]
        #: every whitespace token a spelled number starts with ("two", "dozen", "twenty-five")
        self.tokens = single | {f"{t}-{o}" for t in tens_words for o in ones_words}
        self.time_units = tuple(s for s in latin_units if table.by_spelling[s].dimension == "time")
        #: "42 a minute": the article of a rate's denominator, no duration (``units.Rates``)
        self.after_count = table.rates.article_after_count if table.rates is not None else None
        #: a time unit as a whitespace token, bare or before a mark ("an hour," "a minute.")
        self.time_set = frozenset(f"{u}{mark}" for u in self.time_units for mark in ("", ",", ".", ";", ")"))
        starts = {k.split()[0].lstrip("个") for k in words.unit_words}
        #: a token any spelled-out quantity of a Latin text holds, in the cases a sentence writes it
        self.triggers = frozenset(
            t for w in (*self.tokens, *self.time_set, *starts, *words.unit_modifiers) for t in (w, w.title(), w.upper())
        )
        self.hyphen_guard = re.compile("|".join(f"-{re.escape(u)}" for u in self.time_units), re.IGNORECASE)
        #: what the Chinese and the spelled units need: found in C before their patterns run
        self.zh_guard = re.compile("|".join(re.escape(u) for u in self.zh_units))
        #: a word each spelled unit holds ("百分点", "percentage"), looked for as a substring (an
        #: IGNORECASE pattern costs ten times as much, measured)
        self.unit_starts = tuple({k.split()[0].lstrip("个") for k in self.unit_words})


class _Dates:
    """The calendar dates of ``spoken.yaml``, compiled."""

    def __init__(self, words: SpokenWords) -> None:
        self.months = {k.lower(): v for k, v in words.en_months.items()}
        names = "|".join(sorted(self.months, key=len, reverse=True))
        ordinal = r"(?:st|nd|rd|th)?"
        self.en = re.compile(
            rf"(?<![A-Za-z0-9])(?:(?P<d1>\d{{1,2}}){ordinal}\s+(?:of\s+)?(?P<m1>{names})\.?"
            rf"|(?P<m2>{names})\.?\s+(?P<d2>\d{{1,2}}){ordinal})(?![A-Za-z0-9])",
            re.IGNORECASE,
        )
        day = "|".join(re.escape(d) for d in words.zh_day) or "(?!)"
        self.zh = re.compile(rf"(?<!\d)(?P<m>\d{{1,2}})\s*{re.escape(words.zh_month)}\s*(?P<d>\d{{1,2}})\s*(?:{day})")
        self.zh_month = words.zh_month
        self.verbs = frozenset(w.lower() for w in words.en_month_verbs)
        #: a token an English date holds, in the cases a sentence writes it
        self.tokens = frozenset(
            t for k in self.months for m in ("", ".", ",") for t in (f"{k}{m}", f"{k.title()}{m}", f"{k.upper()}{m}")
        )


#: A date: where it stands in the text, its month and its day.
DateSpan = tuple[int, int, int, int]


def calendar_dates(text: str, tokens: list[str]) -> list[DateSpan]:
    """The dates ``text`` writes without a year ("30 October", "Oct 30", "7 月 26 日"), each as
    (start, end, month, day); none where no token names a month and no 月 is written."""
    dates = _dates()
    found: list[DateSpan] = []
    if not dates.tokens.isdisjoint(tokens):
        for m in dates.en.finditer(text):
            written = m.group("m1") or m.group("m2")
            if written.lower() in dates.verbs and not written[:1].isupper():
                continue  # "may 5": a verb before a number, not May
            month = dates.months[written.lower()]
            found.append((m.start(), m.end(), month, int(m.group("d1") or m.group("d2"))))
    if dates.zh_month in text:
        found += [(m.start(), m.end(), int(m.group("m")), int(m.group("d"))) for m in dates.zh.finditer(text)]
    return [f for f in found if 1 <= f[2] <= 12 and 1 <= f[3] <= 31]


@lru_cache(maxsize=1)
def _dates() -> _Dates:
    return _Dates(bundled_words("veridiag.text", "spoken.yaml", SpokenWords))


@lru_cache(maxsize=1)
def _spoken() -> _Spoken:
    return _Spoken(bundled_words("veridiag.text", "spoken.yaml", SpokenWords))


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _zh_value(numeral: str) -> Decimal | None:
    if numeral[0].isdigit():
        return Decimal(numeral)
    if all(c in _ZH_DIGITS for c in numeral) and len(numeral) == 1:
        return Decimal(_ZH_DIGITS[numeral])
    from veridiag.text.normalize import chinese_number  # cn2an, only for a longer numeral

    found = chinese_number(numeral)
    return Decimal(found) if found is not None else None


def may_spell(text: str, tokens: list[str]) -> bool:
    """Might ``text`` (split into whitespace ``tokens``) hold a spelled-out quantity or a date?
    False for most lines and claims at the cost of two set tests: ``spoken_text`` and
    ``calendar_dates`` are then not needed."""
    words = _spoken()
    if not text.isascii() or not words.triggers.isdisjoint(tokens) or not _dates().tokens.isdisjoint(tokens):
        return True
    if any(token[-1:] in "hH" and token[:-1].isdigit() for token in tokens):
        return True  # "2h 30min": a duration in two units, glued to its numbers
    hyphened = any(mark in text for mark in _HYPHENED)  # "a 6-hour window"
    return hyphened and words.hyphen_guard.search(text) is not None


#: A hyphen before the first letter of a time unit, in either case: tested before the pattern.
_HYPHENED = ("-h", "-m", "-s", "-H", "-M", "-S")


def spoken_text(text: str) -> str:
    """``text`` with its spelled-out quantities written in digits (see the module's docstring)."""
    if len(text) > LIMIT:
        return text
    words = _spoken()
    lower = text.lower()
    tokens = lower.split()
    hyphened = ("-h" in lower or "-m" in lower or "-s" in lower) and words.hyphen_guard.search(text) is not None
    if hyphened:
        text = words.hyphen.sub(" ", text)
    timed = hyphened or not words.time_set.isdisjoint(tokens)
    if not words.tokens.isdisjoint(tokens) or (timed and not _ARTICLES.isdisjoint(tokens)):
        if "half" in lower:
            text = words.en_after.sub(lambda m: f"{m.group('unit')} ½", text)
        text = words.en.sub(lambda m: _en(m, words), text)
        if "½" in text:
            text = re.sub(
                rf"(?<![\d.])({NUMBER})\s+(\S+) ½",
                lambda m: f"{Decimal(m.group(1)) + Decimal('0.5')} {m.group(2)}",
                text,
            )
            text = text.replace(" ½", "")
    if not text.isascii() and words.zh_guard.search(text):
        text = words.zh.sub(lambda m: _zh(m, words), text)
    if not words.modifier_words.isdisjoint(tokens):
        text = words.modified.sub(" ", text)
    if any(start in lower for start in words.unit_starts):
        text = words.units.sub(lambda m: words.unit_words[" ".join(m.group().lower().split())], text)
    if "每小时" in text:
        text = words.per_hour.sub(lambda m: f"{m.group('n')} km/h", text)
    minutes = "min" in lower or "分" in text
    if (
        minutes
        and (
            "hour" in lower
            or "hr" in lower
            or "小时" in text
            or "sec" in lower
            or "秒" in text
            # "1 h 26 min", "2h 30min", "21 min 41 s." (a mark may end the token)
            or any((u := t.rstrip(".,;:)")) in ("h", "s") or (u[-1:] in "hs" and u[:-1].isdigit()) for t in tokens)
        )
    ):
        text = words.compound.sub(_compound, text)
    return text


def _en(match: re.Match[str], words: _Spoken) -> str:
    word = match.group("word")
    unit = match.group("unit").lower()
    if word is not None and word.lower() == "one" and words.reference.search(match.string, 0, match.start()):
        return match.group()  # "0.02 of one core": the unit it is a share of
    if word is not None and word.lower() == "one" and words.generic.match(match.string, match.end("unit")):
        return match.group()  # "one sample alone cannot show a delay": any one, no count
    if word is not None and word.lower() in _ARTICLES:
        if unit.startswith("sec") or unit not in words.time_units:
            return match.group()
        if words.after_count is not None and words.after_count.search(match.string, 0, match.start()):
            return match.group()
    if match.group("tens"):
        value = words.numbers[match.group("tens").lower()] + words.numbers[match.group("ones").lower()]
    else:
        value = words.numbers[" ".join(match.group("word").lower().split())]
    if match.group("half"):
        value += Decimal("0.5")
    return _plain(value)


_EVERY = "每"


def _zh(match: re.Match[str], words: _Spoken) -> str:
    numeral, measure, half, unit = match.group("n"), match.group("ge"), match.group("half"), match.group("unit")
    if numeral is None and half is None:
        return match.group()
    before = match.string[match.start() - 1 : match.start()]
    every_half = before == _EVERY and numeral is None and half is not None  # 每半小时: every half hour
    if before and (before in words.ordinal or before in _ZH_NUMERALS) and not every_half:
        return match.group()  # 第一分钟: which minute, not how long
    plain = numeral is not None and measure is None and half is None and unit == words.zh_units[unit]
    if plain and numeral != "一":
        return match.group()  # digits, or a numeral the reader text already reads
    value = _zh_value(numeral) if numeral is not None else Decimal(0)
    if value is None:
        return match.group()
    if half is not None:
        value += Decimal("0.5")
    return f"{_plain(value)}{words.zh_units[unit]}"


def _compound(match: re.Match[str]) -> str:
    big, small = match.group("big").lower(), match.group("small").lower()
    a, b = Decimal(match.group("a")), Decimal(match.group("b"))
    big_hours = big.startswith("h") or big == "小时"
    small_seconds = small.startswith("s") or small.startswith("秒")
    if big_hours == small_seconds:
        return match.group()  # hours and seconds, or minutes and minutes: no one reading
    chinese = not small.isascii()
    if big_hours:
        return f"{_plain(a * 60 + b)} {'分钟' if chinese else 'minutes'}"
    return f"{_plain(a * 60 + b)} {'秒' if chinese else 'seconds'}"
