"""The time window a diagnosis question asks about, from the words people write (zh + en).

``interpret_time("昨天下午两点以后 checkout 报错", anchor=..., tz="Asia/Shanghai")`` gives the
window the tools should query, or ``None`` when the question names no time.

dateparser reads what it reads well: English and numeric dates (month names, weekdays,
"yesterday", "Dec 4 2005 04:47", ISO 8601 with zones, "2pm"). It is only ever handed a short
run of such tokens found here, never the whole question: its ``search_dates`` finds dates in
"port 8080" and costs milliseconds on text with no date at all. A thin layer adds what it
misses (measured with dateparser 1.5.0): Chinese dates without a year ("3月14日" → a wrong
day), 上周五 / 本周一, parts of the day (凌晨, 下午), N点 clocks and Chinese numerals (两点,
三点半), durations ("last 2h", 最近两小时), epoch numbers that are not ids, English hours
without am/pm ("at roughly 9", which dateparser reads as no time), and the words around a time
that make it a since / before / range window or an approximate point with its margin
("around 21:00", 9点前后一小时: 30 minutes either side unless the question says otherwise).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache
from importlib import resources
from typing import Literal, TypedDict
from zoneinfo import ZoneInfo

from pydantic import Field, field_validator

from veridiag.text.alternation import whole_words
from veridiag.text.cjk import has_cjk
from veridiag.text.normalize import ignorecase_key
from veridiag.text.wordfiles import Word, WordModel, bundled_words

TimeKind = Literal["range", "since", "until", "around", "day", "period", "relative"]


@dataclass(frozen=True)
class TimeWindow:
    """A half-open UTC window ``[start, end)`` and the words of the question it came from.

    ``spans`` are the character spans of those words in the question, in order; ``phrase`` is
    the question's text from the first span's start to the last span's end (one span unless a
    day and a clock time were written apart: "3月14日的订单在凌晨3点失败")."""

    start: datetime
    end: datetime
    phrase: str
    kind: TimeKind
    spans: tuple[tuple[int, int], ...]
    #: The moment asked about when the question names a point in time ("around 21:00",
    #: 9点左右, "at 21:00", "2 hours ago"): inside the window, which is ``AROUND`` either side of it.
    at: datetime | None = None


#: A point in time P the question asks about is [P − 30 min, P + 30 min): "around 21:00" means
#: about then, not the evening after it. A margin the question writes itself ("21:00 ± 15 min",
#: 9点前后一小时, ``when.yaml``) replaces it, up to ``_MAX_MARGIN``.
AROUND = timedelta(minutes=30)
_MAX_MARGIN = timedelta(hours=12)
#: "since P" with no data after P, and "before P", look this far.
_SIDE = timedelta(hours=2)
#: An "around" window clipped to the anchor still keeps this much after P.
_MIN_AFTER = timedelta(minutes=1)
#: Only this much of a question is read; nobody writes the time of an incident further in.
_MAX_CHARS = 20_000
#: At most this many date-like runs go to dateparser (each costs about 1-2 ms).
_MAX_CHUNKS = 8
#: Dates outside these years are not times of an incident (and keep the arithmetic in range).
_MIN_YEAR, _MAX_YEAR = 1900, 2200
_EPOCH_MIN, _EPOCH_MAX = 946_684_800, 4_102_444_800  # [2000-01-01, 2100-01-01)
_MASK = "\x00"  # stands in for words already read, so later readers skip them (no pattern matches it)

# Full-width ASCII (１０：００, ＰＭ) and the ideographic space become ASCII, one character for
# one, so a span found in the normalised text is the same span of the question.
_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}

# Parts of the day: hours from the day's midnight (24 = the next midnight).
_PARTS: dict[str, tuple[int, int]] = {
    "凌晨": (0, 6),
    "早上": (5, 9),
    "早晨": (5, 9),
    "清晨": (5, 9),
    "上午": (6, 12),
    "中午": (11, 14),
    "下午": (12, 18),
    "傍晚": (17, 20),
    "晚上": (18, 24),
    "夜里": (18, 24),
    "夜間": (18, 24),
    "夜间": (18, 24),
    "夜裡": (18, 24),
    "深夜": (22, 24),
    "半夜": (22, 24),
    "morning": (6, 12),
    "noon": (11, 14),
    "afternoon": (12, 18),
    "evening": (18, 22),
    "night": (18, 24),
}
# N点 in these parts is N+12 (下午2点 = 14:00)...
_PM_PARTS = frozenset({"下午", "傍晚", "afternoon", "evening"})
# ...and in these too, except that 12 is midnight and 1-4 are the small hours after it
# (晚上12点 = 24:00, 深夜2点 = 02:00 of the next day; 晚上1点 is never 13:00).
_LATE_PARTS = frozenset({"晚上", "夜里", "夜裡", "夜间", "夜間", "深夜", "半夜", "night"})
_SMALL_HOURS = 5

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5}
_CN_DIGITS |= {"六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_NUM = "[零〇一二两兩三四五六七八九十]"
_EN_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_EN_COUNTS |= {"eight": 8, "nine": 9, "ten": 10, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30}


def _number(text: str) -> int | None:
    """Arabic or Chinese numerals as an int: "14", "十四", "二十三", "两", "二〇一四"."""
    text = text.strip()
    if text.isascii():
        return int(text) if text.isdigit() else None
    if not any(unit in text for unit in _CN_UNITS):  # positional digits: 二〇一四, 零五
        digits = [_CN_DIGITS.get(char) for char in text]
        return int("".join(str(d) for d in digits)) if digits and None not in digits else None
    total, current = 0, 0
    for char in text:
        if char in _CN_DIGITS:
            current = _CN_DIGITS[char]
        elif char in _CN_UNITS:
            total += (current or 1) * _CN_UNITS[char]
            current = 0
        else:
            return None
    return total + current


# --- what the question says, piece by piece -------------------------------------------------


@dataclass(frozen=True)
class _Clock:
    """A time of day without a day."""

    hour: int
    minute: int = 0
    second: int = 0
    meridiem: bool = False  # written with am/pm: a part of the day does not move it
    zone: tzinfo | None = None  # written with a zone ("14:00 UTC"): it wins over ``tz``
    #: an English hour on a 12-hour clock without am/pm ("at 9", "9 o'clock"): a part of the day
    #: says which half; without one it is the half most recently before the anchor
    twelve: bool = False


@dataclass(frozen=True)
class _Atom:
    """One time expression (or a piece of one): which slots it fills, and where it stands."""

    start: int
    end: int
    day: date | None = None
    part: str | None = None
    clock: _Clock | None = None
    moment: datetime | None = None  # a complete point in time, aware
    duration: timedelta | None = None  # "last 2h": back from the anchor
    stretch: tuple[datetime, datetime] | None = None  # 上周, "this month": whole days, aware, [start, end)
    weak: bool = False  # a Chinese-numeral hour alone: "一点" is mostly "a little", not 1 o'clock
    digital: bool = False  # "1:50" read for a part of the day before it (written_clocks only)
    size: int = 1  # how many things it pins down (day + clock = 2): the more specific wins

    @property
    def dayless(self) -> bool:
        """A clock or part of the day that needs a day from somewhere."""
        return self.day is None and self.moment is None and self.duration is None and self.stretch is None

    @property
    def complete(self) -> bool:
        """Nothing can be added to it."""
        return self.moment is not None or self.duration is not None or self.stretch is not None


#: The anchor is an end: "now", or the minute just after imported data's newest point (23:59:53
#: gives 00:00 of the next day). What exists lies before it, so "today" is the day of the instant
#: just before it — the newest data's day, not the next one that the rounding reached.
_INSTANT = timedelta(microseconds=1)


@dataclass(frozen=True)
class _Context:
    anchor: datetime  # aware, UTC
    #: the wall time in ``tz`` of the last instant before the anchor, naive: "today" and the
    #: parts of the day that have begun are read from it
    local: datetime
    tz: tzinfo

    @classmethod
    def at(cls, anchor: datetime, tz: tzinfo) -> _Context:
        utc = anchor.astimezone(UTC)
        return cls(utc, (utc - _INSTANT).astimezone(tz).replace(tzinfo=None), tz)

    @property
    def today(self) -> date:
        return self.local.date()


def _aware(wall: datetime, zone: tzinfo) -> datetime:
    """A wall time in ``zone`` as an aware UTC datetime (pytz zones need ``localize``)."""
    localize: Callable[[datetime], datetime] | None = getattr(zone, "localize", None)
    local = localize(wall) if callable(localize) else wall.replace(tzinfo=zone)
    return local.astimezone(UTC)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time())


def _recent_date(month: int, day: int, ctx: _Context) -> date | None:
    """A date written without a year: the anchor's year, or the last year it was not ahead."""
    for year in range(ctx.today.year, ctx.today.year - 8, -1):
        try:
            found = date(year, month, day)
        except ValueError:  # 2月29日 outside a leap year, 4月31日
            continue
        if found <= ctx.today:
            return found
    return None


def _valid_date(year: int, month: int, day: int) -> date | None:
    if not _MIN_YEAR <= year < _MAX_YEAR:
        return None
    try:
        return date(year, month, day)
    except ValueError:
        return None


# Durations. dateparser has "2 hours ago" but not "last 2h", 最近两小时 or 半小时.
_FULL_UNITS = frozenset({"second", "minute", "hour", "day", "week"})  # "last hour" needs no count
_EN_UNIT = r"(?P<unit>seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|wks?|w)"
_EN_COUNT = r"(?P<count>[0-9]+(?:\.[0-9]+)?|" + "|".join(sorted(_EN_COUNTS, key=len, reverse=True)) + ")"
_EN_LAST = re.compile(
    r"(?<![A-Za-z])(?:(?:in|over|during|for|within)\s+(?:the\s+)?)?(?:last|past|previous)\s+"
    rf"(?:{_EN_COUNT}\s*)?(?P<half>half\s+(?:an?\s+)?)?{_EN_UNIT}(?![A-Za-z])",
    re.IGNORECASE,
)
_EN_AGO = re.compile(
    rf"(?<![A-Za-z0-9_.])(?:{_EN_COUNT}\s*)?(?P<half>half\s+(?:an?\s+)?)?{_EN_UNIT}\s+ago(?![A-Za-z])", re.IGNORECASE
)
_ZH_UNIT = (
    r"(?P<unit>秒钟?|秒鐘|分钟|分鐘|小时|小時|[个個]?钟头|[个個]?鐘頭|天|日(?![志誌期常均])|周|週|星期|礼拜|禮拜)"
)
_ZH_COUNT = r"(?<![0-9.])(?P<count>[0-9]+(?:\.[0-9]+)?|[零〇一二两兩三四五六七八九十百]+)?\s*[个個]?\s*(?P<half>半)?\s*"
_ZH_LAST = re.compile(r"(?:最近|过去|過去|近)的?\s*" + _ZH_COUNT + _ZH_UNIT)
_ZH_WITHIN = re.compile(_ZH_COUNT + _ZH_UNIT + r"\s*(?:以内|之内|以內|之內|内|內)")
_ZH_AGO = re.compile(_ZH_COUNT + _ZH_UNIT + r"\s*(?:之前|以前|前)(?![端台面])")


def _unit(word: str) -> timedelta:
    word = word.lower()
    if word.startswith(("s", "秒")):
        return timedelta(seconds=1)
    if word.startswith(("mi", "分")) or word == "m":
        return timedelta(minutes=1)
    if word.startswith(("h", "小", "钟", "鐘", "个", "個")):
        return timedelta(hours=1)
    if word.startswith(("d", "天", "日")):
        return timedelta(days=1)
    return timedelta(weeks=1)


def _length(match: re.Match[str]) -> timedelta | None:
    """How long a duration match says, or None when it says no length."""
    count_text, half, unit = match.group("count"), match.group("half"), match.group("unit")
    if (
        count_text is None
        and half is None
        and (match.re is not _EN_LAST or unit.lower().rstrip("s") not in _FULL_UNITS)
    ):
        return None  # only "last hour" may leave out its count: 最近一直重启, 天内, "last min changes" are not
    if len(unit) == 1 and unit.isascii() and not (count_text and count_text[0].isdigit()):
        return None  # a one-letter unit only right after digits: "last 2h", not "past m"
    if count_text is None:
        count = 0.0 if half else 1.0
    elif count_text[0].isdigit():
        count = float(count_text)
    else:
        number = _EN_COUNTS.get(count_text.lower()) or _number(count_text)
        if number is None:
            return None
        count = float(number)
    length = _unit(unit) * (count + (0.5 if half else 0.0))
    return length if timedelta(0) < length <= timedelta(days=3660) else None


def _durations(text: str, ctx: _Context) -> Iterator[_Atom]:
    patterns = [_EN_LAST, _EN_AGO]
    if has_cjk(text):
        patterns += [_ZH_LAST, _ZH_WITHIN, _ZH_AGO]
    for pattern in patterns:
        for match in pattern.finditer(text):
            length = _length(match)
            if length is None:
                continue
            if pattern in (_EN_AGO, _ZH_AGO):  # a point back in time; days ago is that day
                if length >= timedelta(days=1):
                    yield _Atom(match.start(), match.end(), day=(ctx.local - length).date())
                else:
                    yield _Atom(match.start(), match.end(), moment=ctx.anchor - length)
            else:
                yield _Atom(match.start(), match.end(), duration=length)


# Epoch seconds / milliseconds: ours, because only context tells them from an order id.
_EPOCH = re.compile(r"(?<![A-Za-z0-9_.#:/-])([0-9]{13}|[0-9]{10})(?![A-Za-z0-9_]|\.[0-9])")
_ID_BEFORE = re.compile(
    r"(?:order|订单|訂單|单号|單號|id|no\.?|号|號|trace|request|req|user|uid|pid|txn)\s*[-_:=：#]?\s*$", re.IGNORECASE
)
_NUMBER_SUFFIX = re.compile(r"\s*[号號]")


def _epochs(text: str, ctx: _Context) -> Iterator[_Atom]:
    for match in _EPOCH.finditer(text):
        digits = match.group(1)
        seconds = int(digits) / (1000 if len(digits) == 13 else 1)
        if not _EPOCH_MIN <= seconds < _EPOCH_MAX:
            continue
        if _ID_BEFORE.search(text, max(0, match.start() - 16), match.start()):
            continue
        if _NUMBER_SUFFIX.match(text, match.end()):
            continue
        yield _Atom(match.start(), match.end(), moment=datetime.fromtimestamp(seconds, tz=UTC), size=2)


# Numeric days without a year, as logs and people write them: 7/5, 07-05 (month first, as
# dateparser reads 7/5/2014 and as Chinese writes 7月5日; 13/5 can only be day first), and 20140705. Alone, such numbers
# are as often ratios, ranges or ids ("3/4 replicas", "2-4 pods", order 20140705), so one is a
# day only next to a clock ("7/5 10:00", "07-05 10:00:01") or after "on" / 日期. dateparser does
# not read these without a year (measured: "7/5 10:00" gave today), so the clock took today's day.
_NUMERIC_DAY = re.compile(
    r"(?<![A-Za-z0-9_.:/-])(?:(?P<year>(?:19|20|21)[0-9]{2})(?P<month8>0[1-9]|1[0-2])(?P<day8>0[1-9]|[12][0-9]|3[01])"
    r"|(?P<month>0?[1-9]|1[0-2])(?P<sep>[/.-])(?P<day>0?[1-9]|[12][0-9]|3[01])"
    r"|(?P<day_first>1[3-9]|2[0-9]|3[01])[/-](?P<month_second>0?[1-9]|1[0-2]))(?![A-Za-z0-9_/.-]|:[0-9])"
)
_CLOCK_NEXT = re.compile(
    r"[\s,，]*(?:(?:at|@)\s*)?[0-9]{1,2}(?::[0-9]{2}|\s?[ap]\.?m\.?(?![A-Za-z])|\s*[点點时時])", re.IGNORECASE
)
_CLOCK_RIGHT = re.compile(r"\s+[0-9]{1,2}:[0-9]{2}")
_VERSION_BEFORE = re.compile(
    r"(?<![A-Za-z])(?:version|release|ver|v)|版本|发布|發佈|升级|升級|回滚|回滾", re.IGNORECASE
)
_DAY_BEFORE = re.compile(r"(?:(?<![A-Za-z])on|日期|date)\s*[:：]?\s*$", re.IGNORECASE)


def _numeric_days(text: str, ctx: _Context) -> Iterator[_Atom]:
    for match in _NUMERIC_DAY.finditer(text):
        end = match.end()
        clock_next = _CLOCK_NEXT.match(text, end)
        if match.group("sep") == ".":  # 7.3 only right before a clock or 号 (7.3号, "[10.30 16:49:06]")
            suffix = _DAY_SUFFIX.match(text, end)
            if not (_CLOCK_RIGHT.match(text, end) or suffix) or _VERSION_BEFORE.search(
                text, max(0, match.start() - 12), match.start()
            ):
                continue  # a decimal or a version ("released 2.3 at 14:00")
            end = suffix.end() if suffix else end
        elif not (clock_next or _DAY_BEFORE.search(text, max(0, match.start() - 8), match.start())):
            continue
        if match.group("year"):
            found = _valid_date(int(match.group("year")), int(match.group("month8")), int(match.group("day8")))
        elif match.group("day_first"):
            found = _recent_date(int(match.group("month_second")), int(match.group("day_first")), ctx)
        else:
            found = _recent_date(int(match.group("month")), int(match.group("day")), ctx)
        if found is not None:
            yield _Atom(match.start(), end, day=found)


# A day of the month alone: 3号 / 3日 (3号下午, 12号的订单) and "the 3rd": this month's, or the last
# month's when it is still ahead. 3号机, 1号线, 订单3号 or 近3日 are no day: the number must stand
# where a day does (before a part of the day, a clock, 的, a range word or the end of a clause).
_DAY_SUFFIX = re.compile(r"\s*[号號日]")
_ZH_MONTH_DAY = re.compile(
    r"(?<![0-9A-Za-z.月第#＃/近去前后後内內-])(?<!订单)(?<!訂單)(?<!单号)(?<!單號)(?<!编号)(?<!編號)(?<!工单)(?<!工單)"
    r"(?P<day>[0-9]{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*[号號日]"
    r"(?=\s*(?:$|[,，。;；?？!！、]|的|早|上午|中午|下午|晚|夜|凌晨|傍晚|深夜|半夜|[0-9一二三四五六七八九十两兩]+\s*[点點:：]"
    r"|到|至|之间|之間|以来|以來|以后|以後|之后|之後|前后|前後|左右|发生|發生|出现|出現|开始|開始))"
)
_EN_MONTH_DAY = re.compile(
    r"(?<![A-Za-z])(?:on\s+)?the\s+(?P<day>[0-9]{1,2})(?:st|nd|rd|th)(?![A-Za-z0-9])", re.IGNORECASE
)


def _month_day(day: int, ctx: _Context) -> date | None:
    """This month's ``day``, or the last month's it was not ahead in."""
    year, month = ctx.today.year, ctx.today.month
    for _ in range(3):
        found = _valid_date(year, month, day)
        if found is not None and found <= ctx.today:
            return found
        year, month = (year - 1, 12) if month == 1 else (year, month - 1)
    return None


def _month_days(text: str, ctx: _Context) -> Iterator[_Atom]:
    patterns = [_EN_MONTH_DAY, _ZH_MONTH_DAY] if has_cjk(text) else [_EN_MONTH_DAY]
    for pattern in patterns:
        for match in pattern.finditer(text):
            day = _number(match.group("day"))
            found = _month_day(day, ctx) if day is not None and 1 <= day <= 31 else None
            if found is not None:
                yield _Atom(match.start(), match.end(), day=found)


# Chinese dates. dateparser reads 2014年3月14日 but turns 3月14日 into 2013-12-07 and knows no
# Chinese numerals, so one rule serves both.
_ZH_DATE = re.compile(
    r"(?<![0-9])(?:(?P<year>[0-9]{4}|[零〇一二三四五六七八九]{4})\s*年\s*)?"
    r"(?P<month>[0-9]{1,2}|十[一二]?|[一二三四五六七八九])\s*月\s*"
    r"(?P<day>[0-9]{1,2}|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])\s*(?:[日号號]|(?![0-9]))"
)


def _zh_dates(text: str, ctx: _Context) -> Iterator[_Atom]:
    for match in _ZH_DATE.finditer(text):
        month, day = _number(match.group("month")), _number(match.group("day"))
        if month is None or day is None:
            continue
        if match.group("year"):
            year = _number(match.group("year"))
            found = _valid_date(year, month, day) if year is not None else None
        else:
            found = _recent_date(month, day, ctx) if 1 <= month <= 12 else None
        if found is not None:
            yield _Atom(match.start(), match.end(), day=found)


# Calendar weeks and months, which neither dateparser nor the durations read: 本周 / "this week"
# (Monday to now), 上周 (Monday to Monday), 本月 / "this month", 上个月; and 这两天 (the last two
# days, as 近两天). After the weekdays, so 上周五 stays a Friday. "last week" stays the last 7 days.
_ZH_WEEK = re.compile(
    r"(?P<which>上上|上|本|这|這)\s*(?:[个個]\s*)?(?:周|週|星期|礼拜|禮拜)(?![一二三四五六日天1-7末期边邊年])"
)
_ZH_MONTH = re.compile(r"(?P<which>上上|上|本|这|這)\s*(?:[个個]\s*)?月(?![0-9一二三四五六七八九十份]|[初底中末])")
_ZH_RECENT_DAYS = re.compile(r"(?:这|這|近|最近)(?:两|兩|2)天")
_EN_THIS = re.compile(r"(?<![A-Za-z])this\s+(?P<unit>week|month)(?![A-Za-z])", re.IGNORECASE)
# Weekends: 周末 and "the weekend" alone are the last one begun, 上周末 / "last weekend" last week's.
_ZH_WEEKEND = re.compile(r"(?P<which>上上|上|本|这|這)?\s*(?:[个個]\s*)?(?:周末|週末)")
_EN_WEEKEND = re.compile(
    r"(?<![A-Za-z])(?:(?P<which>this|last|past)\s+|the\s+|over\s+the\s+)?weekend(?![A-Za-z])", re.IGNORECASE
)
_PERIOD_BACK = {"上上": 2, "上": 1, "本": 0, "这": 0, "這": 0, "this": 0}
_WEEKEND_BACK = {**_PERIOD_BACK, "last": 1, "past": 1}


def _week_start(day: date, back: int) -> date:
    return day - timedelta(days=day.weekday() + 7 * back)


def _month_start(day: date, back: int) -> date:
    months = day.year * 12 + day.month - 1 - back
    return date(months // 12, months % 12 + 1, 1)


def _calendar_stretch(unit: str, back: int, ctx: _Context) -> tuple[datetime, datetime]:
    """A whole week or month ``back`` periods before the anchor's, ending at the anchor when current."""
    if unit == "weekend":
        first = _week_start(ctx.today, back) + timedelta(days=5)
        after = first + timedelta(days=2)
    elif unit == "week":
        first, after = _week_start(ctx.today, back), _week_start(ctx.today, back - 1)
    else:
        first, after = _month_start(ctx.today, back), _month_start(ctx.today, back - 1)
    start = _aware(_midnight(first), ctx.tz)
    end = min(ctx.anchor, _aware(_midnight(after), ctx.tz))
    return start, end


def _calendar(text: str, ctx: _Context) -> Iterator[_Atom]:
    chinese = has_cjk(text)
    begun = 0 if ctx.today.weekday() >= 5 else 1  # the last weekend begun: this week's from Saturday
    found = [(m, m.group("unit").lower(), 0) for m in _EN_THIS.finditer(text)]
    found += [
        (m, "weekend", _WEEKEND_BACK.get((m.group("which") or "").lower(), begun)) for m in _EN_WEEKEND.finditer(text)
    ]
    if chinese:
        found += [(m, "week", _PERIOD_BACK[m.group("which")]) for m in _ZH_WEEK.finditer(text)]
        found += [(m, "month", _PERIOD_BACK[m.group("which")]) for m in _ZH_MONTH.finditer(text)]
        found += [(m, "weekend", _WEEKEND_BACK.get(m.group("which") or "", begun)) for m in _ZH_WEEKEND.finditer(text)]
    for match, unit, back in found:
        start, end = _calendar_stretch(unit, back, ctx)
        if start < end:
            yield _Atom(match.start(), match.end(), stretch=(start, end))
    if chinese:
        for match in _ZH_RECENT_DAYS.finditer(text):
            yield _Atom(match.start(), match.end(), duration=timedelta(days=2))


# Chinese weekdays. dateparser reads 周五 / 星期五 but not 上周五, 本周一 or 这周三.
_ZH_WEEKDAY = re.compile(
    r"(?P<which>上上|上|本|这|這|下)?\s*[个個]?\s*(?:周|週|星期|礼拜|禮拜)\s*(?P<weekday>[一二三四五六日天1-7])"
    # not 一直 (all along), 一次 (once), 日志 (logs), 日期 (date) ...
    r"(?![0-9一二三四五六七八九十]|(?<=一)[直次般样樣些切共定下]|(?<=日)[志誌期常均活报報])"
)
_WEEKDAY_INDEX = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "7": 6}
_WEEK_OFFSET = {"上上": -14, "上": -7, "本": 0, "这": 0, "這": 0, "下": 7}


def _zh_weekdays(text: str, ctx: _Context) -> Iterator[_Atom]:
    for match in _ZH_WEEKDAY.finditer(text):
        char = match.group("weekday")
        index = _WEEKDAY_INDEX.get(char, int(char) - 1 if char.isdigit() else 0)
        which = match.group("which")
        if which is None:  # 周五 alone: the last Friday before today, as dateparser reads "Friday"
            back = (ctx.today.weekday() - index) % 7 or 7
            yield _Atom(match.start(), match.end(), day=ctx.today - timedelta(days=back))
        else:  # weeks start on Monday
            monday = ctx.today - timedelta(days=ctx.today.weekday())
            yield _Atom(match.start(), match.end(), day=monday + timedelta(days=_WEEK_OFFSET[which] + index))


# Chinese day words. dateparser has 昨天 and 前天, but not 昨晚 / 今早, and none of them can
# take a part of the day or a clock it does not read, so they live beside those.
_ZH_DAY_WORDS: dict[str, tuple[int, str | None]] = {
    "大前天": (-3, None),
    "前天": (-2, None),
    "昨天": (-1, None),
    "昨日": (-1, None),
    "今天": (0, None),
    "今日": (0, None),
    "明天": (1, None),
    "昨晚": (-1, "晚上"),
    "昨夜": (-1, "夜里"),
    "今晚": (0, "晚上"),
    "今早": (0, "早上"),
    "今晨": (0, "清晨"),
}
_ZH_DAY_WORD = re.compile("|".join(sorted(_ZH_DAY_WORDS, key=len, reverse=True)))
_ZH_PART = re.compile("|".join(word for word in _PARTS if has_cjk(word)))


def _zh_day_words(text: str, ctx: _Context) -> Iterator[_Atom]:
    for match in _ZH_DAY_WORD.finditer(text):
        offset, part = _ZH_DAY_WORDS[match.group()]
        day = ctx.today + timedelta(days=offset)
        yield _Atom(match.start(), match.end(), day=day, part=part, size=2 if part else 1)


# 晚9点, 早8点: one character for the part, only right before a clock (晚了, 早就, 最晚9点 are no part).
_ZH_SHORT_PARTS = {"晚": "晚上", "早": "早上"}
_ZH_SHORT_PART = re.compile(
    rf"(?<![最较較太更很稍])(?P<part>[晚早])(?=\s*(?:[0-9]{{1,2}}|{_CN_NUM}{{1,3}})\s*(?:[点點]|[:：][0-9]))"
)


def _zh_parts(text: str, ctx: _Context) -> Iterator[_Atom]:
    for match in _ZH_PART.finditer(text):
        yield _Atom(match.start(), match.end(), part=match.group())
    if "晚" not in text and "早" not in text:
        return  # every short part is one of them: no scan of the whole text (~1.6 ms per 80 KB of logs)
    for match in _ZH_SHORT_PART.finditer(text):  # after the whole words: 晚上 is theirs
        yield _Atom(match.start(), match.end(), part=_ZH_SHORT_PARTS[match.group("part")])


# N点 clocks: dateparser reads none of 10点, 两点, 三点半, 十点十五分, 2点一刻.
_ZH_CLOCK = re.compile(
    rf"(?<![0-9.])(?P<hour>[0-9]{{1,2}}|{_CN_NUM}{{1,3}})\s*(?:[点點]|[时時](?![间間候长長区區段刻]))(?P<zhong>\s*[钟鐘])?"
    rf"(?:\s*(?P<half>半)|\s*(?P<quarter>[一1]刻)|\s*(?P<quarters>[三3]刻)"
    rf"|\s*(?P<minute>[0-9]{{1,2}}|{_CN_NUM}{{1,3}})\s*分(?![钟鐘])"
    rf"(?:\s*(?P<second>[0-9]{{1,2}}|{_CN_NUM}{{1,3}})\s*秒)?"
    # a bare minute; one numeral before another word is that word's ("10 点一共", "点一直", "点一次")
    rf"|(?P<bare_minute>[0-9]{{2}}|{_CN_NUM}{{2,3}}|{_CN_NUM}(?![\u4e00-\u9fff]))(?![0-9月日号號个個天小周年秒分钟]))?"
    r"(?P<sharp>\s*整)?"
)


_LIST_WORDS = frozenset("第有这這那几幾")


def _zh_clocks(text: str, ctx: _Context) -> Iterator[_Atom]:
    for match in _ZH_CLOCK.finditer(text):
        if text[max(0, match.start() - 1) : match.start()] in _DIGITAL_BEFORE:
            continue  # "12:10 时": the minutes of a digital clock, then 时 ("at"), no clock of 10
        hour = _number(match.group("hour"))
        minute_text = match.group("minute") or match.group("bare_minute")
        minute = _number(minute_text) if minute_text else 0
        second = _number(match.group("second")) if match.group("second") else 0
        if match.group("half"):
            minute = 30
        elif match.group("quarter"):
            minute = 15
        elif match.group("quarters"):
            minute = 45
        if hour is None or minute is None or second is None or hour > 24 or minute > 59 or second > 59:
            continue
        alone = not (minute_text or match.group("half") or match.group("quarter") or match.group("quarters"))
        alone = alone and not (match.group("zhong") or match.group("sharp"))
        # 一点 is mostly "a little" (慢了一点), 第二点 / 有两点 / 这两点 are points of a list
        weak = alone and (match.group("hour") == "一" or text[match.start() - 1 : match.start()] in _LIST_WORDS)
        yield _Atom(match.start(), match.end(), clock=_Clock(hour, minute, second), weak=weak)


#: Right before a Chinese clock word's hour, what makes it part of a digital clock ("12:10 时").
_DIGITAL_BEFORE = frozenset(":：0123456789")

# English parts of the day: dateparser makes "this morning" 09:00 sharp and knows no window.
_EN_PART = re.compile(
    r"(?<![A-Za-z])(?<!good )(?:(?P<which>this|last)\s+)?(?P<part>morning|afternoon|evening|night|noon|tonight)"
    r"(?![A-Za-z])",
    # ASCII case only: under full Unicode folding "EVENİNG" matched and lowered to "eveni̇ng",
    # which names no part (a KeyError in _extent, found by tests/test_case_blind_words.py)
    re.IGNORECASE | re.ASCII,
)


def _en_parts(text: str, ctx: _Context) -> Iterator[_Atom]:
    for match in _EN_PART.finditer(text):
        part, which = match.group("part").lower(), (match.group("which") or "").lower()
        if part == "tonight":
            yield _Atom(match.start(), match.end(), day=ctx.today, part="night", size=2)
        elif which:
            day = ctx.today - timedelta(days=1 if which == "last" else 0)
            yield _Atom(match.start(), match.end(), day=day, part=part, size=2)
        else:
            yield _Atom(match.start(), match.end(), part=part)


# English and numeric dates and times: found here as runs of date-like tokens, read by
# dateparser. A month name counts only beside a day number ("may" is mostly a verb); bare
# numbers only beside a month ("504 errors" is no date).
_ZONE = (
    r"(?:\s?(?:UTC|GMT)(?:[+-][0-9]{1,2}(?::?[0-9]{2})?)?(?![A-Za-z])|Z(?![A-Za-z0-9])"
    r"|\s?\+[0-9]{2}:?[0-9]{2}(?![0-9]))"
)
# a "-hh:mm" offset only right after seconds: "10:00-11:00" is a range
_TIME = r"[0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?(?:-[0-9]{2}:?[0-9]{2}(?![0-9]))?)?"
_MERIDIEM = r"\s?(?:a\.?m\.?|p\.?m\.?)(?![A-Za-z])"
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_MONTHS += "|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec"
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_EN_TOKEN = re.compile(
    # not the hours of an offset: "(UTC+8:00) 10:00" names one time, 10:00
    r"(?<![A-Za-z0-9_.:/])(?<!UTC[+-])(?<!GMT[+-])(?:"
    rf"(?P<iso>[0-9]{{4}}(?:-[0-9]{{1,2}}-|/[0-9]{{1,2}}/|\.[0-9]{{1,2}}\.)[0-9]{{1,2}}"
    rf"(?:(?:T|\s+){_TIME}(?:{_MERIDIEM})?(?:{_ZONE})?)?)"
    r"|(?P<dmy>[0-9]{1,2}/[0-9]{1,2}/[0-9]{4})"
    rf"|(?P<clock>{_TIME}(?:{_MERIDIEM})?(?:{_ZONE})?)"
    rf"|(?P<hourm>[0-9]{{1,2}}{_MERIDIEM}(?:{_ZONE})?)"
    rf"|(?P<month>(?:{_MONTHS})\.?(?![A-Za-z]))"
    rf"|(?P<weekday>(?:(?:last|this|next)\s+)?(?:{_WEEKDAYS})(?![A-Za-z]))"
    r"|(?P<rel>the\s+day\s+before\s+yesterday|yesterday|today|tomorrow)(?![A-Za-z])"
    r"|(?P<num>[0-9]{1,4}(?:st|nd|rd|th)?)"
    r")(?![A-Za-z0-9_:]|\.[0-9])",
    re.IGNORECASE,
)
_CHUNK_GAP = re.compile(r"(?:[\s,]+|(?<![A-Za-z])(?:at|on|of|the)(?![A-Za-z]))*", re.IGNORECASE)
_AM_PM = re.compile(r"[ap]\.?m\.?(?![A-Za-z])", re.IGNORECASE)
_DATE_KINDS = frozenset({"iso", "dmy", "month", "weekday", "rel"})


@dataclass(frozen=True)
class _Token:
    kind: str
    start: int
    end: int
    text: str

    @property
    def day_number(self) -> bool:
        return self.kind == "num" and len(self.text.rstrip("stndrhSTNDRH")) <= 2

    @property
    def year_number(self) -> bool:
        return self.kind == "num" and len(self.text) == 4


def _runs(text: str) -> Iterator[list[_Token]]:
    """Runs of date-like tokens with only spaces, commas, "at", "on", "of" between them."""
    run: list[_Token] = []
    for match in _EN_TOKEN.finditer(text):
        kind = match.lastgroup or "num"
        token = _Token(kind, match.start(), match.end(), match.group())
        if run and not _CHUNK_GAP.fullmatch(text, run[-1].end, token.start):
            yield run
            run = []
        run.append(token)
    if run:
        yield run


def _chunks(run: list[_Token]) -> Iterator[list[_Token]]:
    """The parts of a run worth reading: months with their day (and year), anything but bare
    numbers; a bare number elsewhere splits the run."""
    keep = [token.kind not in ("num", "month") for token in run]
    for index, token in enumerate(run):
        if token.kind != "month":
            continue
        days = [j for j in (index - 1, index + 1) if 0 <= j < len(run) and run[j].day_number]
        if not days:
            continue
        keep[index] = True
        for j in days:
            keep[j] = True
        after = max([*days, index]) + 1
        if after < len(run) and run[after].year_number:
            keep[after] = True
    chunk: list[_Token] = []
    for token, kept in zip(run, keep, strict=True):
        if kept:
            chunk.append(token)
        elif chunk:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _DateparserSettings(TypedDict):
    """The dateparser settings these readings use (dateparser takes them as a plain dict)."""

    RELATIVE_BASE: datetime
    PREFER_DATES_FROM: Literal["past", "future", "current_period"]
    PARSERS: list[str]


def _dateparser(text: str, ctx: _Context) -> datetime | None:
    """dateparser's reading of a short English / numeric run, relative to the anchor's wall time."""
    import dateparser  # imported on first use: its language data cost ~0.2 s, most questions never need it

    settings = _DateparserSettings(
        RELATIVE_BASE=ctx.local,
        PREFER_DATES_FROM="past",
        PARSERS=["relative-time", "absolute-time"],  # epoch numbers are read here, with their context
    )
    try:
        value = dateparser.parse(text, languages=["en"], settings=settings)
    except Exception:  # third-party parser on arbitrary text: a run it cannot read is no time
        return None
    if not isinstance(value, datetime) or not _MIN_YEAR <= value.year < _MAX_YEAR:
        return None
    return value


_CLOCK_ONLY = re.compile(r"(\d{1,2}):(\d{1,2})(?::(\d{2}))?")


def _bare_clock(chunk: list[_Token], ctx: _Context) -> datetime | None:
    """A lone clock time ("10:05", "23:59:59") as dateparser reads it — the last such wall time
    at or before the anchor's — without loading dateparser: its first call costs ~0.22 s (its
    language data), a third of an ``ask`` of the demo, for the commonest time people write.
    Anything else (am/pm, dates, words) is dateparser's."""
    if len(chunk) != 1 or (found := _CLOCK_ONLY.fullmatch(chunk[0].text)) is None:
        return None
    hour, minute, second = int(found[1]), int(found[2]), int(found[3] or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    value = ctx.local.replace(hour=hour, minute=minute, second=second, microsecond=0)
    return value - timedelta(days=1) if value > ctx.local else value


def _en_dates(text: str, ctx: _Context) -> Iterator[_Atom]:
    budget = _MAX_CHUNKS
    for run in _runs(text):
        for chunk in _chunks(run):
            if budget <= 0:
                return
            atom = _read_chunk(text, chunk, ctx)
            budget -= 1
            if atom is not None:
                yield atom


def _read_chunk(text: str, chunk: list[_Token], ctx: _Context) -> _Atom | None:
    start, end = chunk[0].start, chunk[-1].end
    words = text[start:end]
    kinds = {token.kind for token in chunk}
    has_date = bool(kinds & _DATE_KINDS)
    has_time = bool(kinds & {"clock", "hourm"}) or any(t.kind == "iso" and ":" in t.text for t in chunk)
    if not (has_date or has_time):
        return None
    value = _bare_clock(chunk, ctx) or _dateparser(words, ctx)
    if value is None:
        return None
    if "month" in kinds and not any(t.year_number for t in chunk):  # "March 14": our year rule, stated
        written = _recent_date(value.month, value.day, ctx)
        if written is None:
            return None
        value = value.replace(year=written.year)
    offset = value.utcoffset()
    if has_date and has_time:
        moment = value.astimezone(UTC) if offset is not None else _aware(value, ctx.tz)
        return _Atom(start, end, moment=moment, size=2)
    if has_date:
        return _Atom(start, end, day=value.date())
    zone = timezone(offset) if offset is not None else None
    clock = _Clock(value.hour, value.minute, value.second, meridiem=bool(_AM_PM.search(words)), zone=zone)
    return _Atom(start, end, clock=clock)


# English hours without minutes or am/pm, which dateparser does not read as times ("at 9", "9
# o'clock"). A bare number is mostly a count ("about 9 pods", "went up to 9"), so it is an hour
# only with "o'clock"; after "at" (an approximate word may stand between: "at roughly 9") where
# the question or a sentence ends or a day or part of the day follows; or after an approximate
# word right before a day or part of the day ("around 9 last night"). Never as an end of a range
# ("9 to 10", "between 8 and 9 o'clock"): which half of the day each end is in is not said.
_EN_HOUR = re.compile(
    r"(?<![A-Za-z0-9_.:/+#-])(?P<hour>1[0-2]|0?[1-9])(?P<oclock>\s*o['’]?\s*clock(?![A-Za-z]))?"
    r"(?![0-9:%]|\.[0-9]|\s*[ap]\.?m\.?(?![A-Za-z]))",
    re.IGNORECASE,
)
#: a day or part of the day right after it ("at 9 this morning", "around 9 in the evening")
_EN_HOUR_DAY_NEXT = re.compile(
    r"\s*,?\s*(?:(?:this|last)\s+(?:morning|afternoon|evening|night)|tonight|yesterday|today"
    r"|in\s+the\s+(?:morning|afternoon|evening)|at\s+night)(?![A-Za-z])",
    re.IGNORECASE,
)
_EN_HOUR_END = re.compile(r"\s*(?:$|[?!;)]|\.(?![0-9]))")
_EN_HOUR_RANGE_NEXT = re.compile(r"\s*(?:-|–|~|to|till|until|and|through|thru)(?![A-Za-z])", re.IGNORECASE)
_EN_HOUR_RANGE_BEFORE = re.compile(
    r"[0-9](?:\s*(?:[ap]\.?m\.?|o['’]?\s*clock))?\s*(?:-|–|~|to|till|until|and|through|thru)\s*$", re.IGNORECASE
)


def _en_hours(text: str, ctx: _Context) -> Iterator[_Atom]:
    words = _point_words()
    for match in _EN_HOUR.finditer(text):
        start, end = match.start(), match.end()
        if _EN_HOUR_RANGE_NEXT.match(text, end) or _before(_EN_HOUR_RANGE_BEFORE, text, start) is not None:
            continue
        if not match.group("oclock"):
            day_next = _EN_HOUR_DAY_NEXT.match(text, end) is not None
            after_at = _before(words.at, text, start) is not None
            approximate = _before(words.before, text, start) is not None
            if not ((after_at and (day_next or _EN_HOUR_END.match(text, end))) or (approximate and day_next)):
                continue
        yield _Atom(start, end, clock=_Clock(int(match.group("hour")), twelve=True))


_Producer = Callable[[str, _Context], Iterator[_Atom]]
# Earlier producers claim their words first: "2小时前" is a duration before 前 can mean "before".
_PRODUCERS: tuple[tuple[_Producer, bool], ...] = (  # (producer, only for text with Chinese)
    (_durations, False),
    (_epochs, False),
    (_numeric_days, False),
    (_zh_dates, True),
    (_month_days, False),  # after the full dates: 7月3号 is theirs
    (_zh_day_words, True),
    (_zh_parts, True),  # before weekdays: 晚上周五 keeps its 上
    (_zh_weekdays, True),
    (_calendar, False),
    (_zh_clocks, True),
    (_en_hours, False),  # before the parts and dates, which its checks read beside it
    (_en_parts, False),
    (_en_dates, False),
)


def _atoms(text: str, ctx: _Context) -> list[_Atom]:
    chinese = has_cjk(text)
    masked, found = text, []
    for producer, needs_chinese in _PRODUCERS:
        if needs_chinese and not chinese:
            continue
        for atom in list(producer(masked, ctx)):
            if _MASK in masked[atom.start : atom.end]:
                continue
            found.append(atom)
            masked = masked[: atom.start] + _MASK * (atom.end - atom.start) + masked[atom.end :]
    return sorted(found, key=lambda atom: atom.start)


# --- pieces into expressions, expressions into windows --------------------------------------

# Pieces of one expression stand side by side: 昨天下午两点, "Friday, 3pm", 3月14日的凌晨.
_JOIN = re.compile(r"[\s,，、]*(?:(?:的|at|on|in\s+the|@)\s*)?", re.IGNORECASE)


def _merge(left: _Atom, right: _Atom) -> _Atom | None:
    """One expression from two side by side, if they fill different slots."""
    if left.complete or right.complete:
        return None
    for slot in ("day", "part", "clock"):
        if getattr(left, slot) is not None and getattr(right, slot) is not None:
            return None
    return _Atom(
        left.start,
        right.end,
        day=left.day or right.day,
        part=left.part or right.part,
        clock=left.clock or right.clock,
        weak=left.weak and right.weak,
        size=left.size + right.size,
    )


def _expressions(text: str, atoms: list[_Atom]) -> list[_Atom]:
    merged: list[_Atom] = []
    for atom in atoms:
        if merged and _JOIN.fullmatch(text, merged[-1].end, atom.start):
            joined = _merge(merged[-1], atom)
            if joined is not None:
                merged[-1] = joined
                continue
        merged.append(atom)
    return merged


def _clock_offset(clock: _Clock, part: str | None) -> timedelta:
    """The clock's time after its day's midnight, read with the part of the day (下午2点 = 14:00)."""
    hour = clock.hour % 12 if clock.twelve and part else clock.hour
    if part and not clock.meridiem:
        if part == "凌晨" and hour == 12:
            hour = 0
        elif part == "中午" and 1 <= hour <= 3:
            hour += 12
        elif part in _LATE_PARTS and (hour == 12 or hour < _SMALL_HOURS):
            hour += 24 if hour < _SMALL_HOURS else 12
        elif part in _PM_PARTS | _LATE_PARTS and hour < 12:
            hour += 12
    return timedelta(hours=hour, minutes=clock.minute, seconds=clock.second)


@dataclass(frozen=True)
class _Extent:
    """Where an expression lies: a point (start == end) or a stretch of a day."""

    start: datetime
    end: datetime
    grain: Literal["point", "period", "day", "relative"]


def _extent(atom: _Atom, ctx: _Context, default_day: date | None = None) -> _Extent | None:
    if atom.stretch is not None:
        return _Extent(atom.stretch[0], atom.stretch[1], "period")
    if atom.duration is not None:
        return _Extent(ctx.anchor - atom.duration, ctx.anchor, "relative")
    if atom.moment is not None:
        return _Extent(atom.moment, atom.moment, "point")
    day = atom.day or default_day
    if atom.clock is not None and atom.clock.twelve and atom.part is None:
        if day is not None:  # "yesterday at 9": 09:00 or 21:00 — the whole day holds both, a guess would not
            return _Extent(_aware(_midnight(day), ctx.tz), _aware(_midnight(day + timedelta(1)), ctx.tz), "day")
        hour = atom.clock.hour % 12  # each reading the most recent at or before the anchor: the later one
        halves = (replace(atom, clock=replace(atom.clock, hour=h, twelve=False)) for h in (hour, hour + 12))
        readings = [r for half in halves if (r := _extent(half, ctx)) is not None]
        return max(readings, key=lambda r: r.start, default=None)
    if atom.clock is not None:
        offset = _clock_offset(atom.clock, atom.part)
        zone = atom.clock.zone or ctx.tz
        if day is None:  # the most recent such time at or before the anchor
            wall_now = ctx.anchor.astimezone(zone).replace(tzinfo=None)
            wall = _midnight(wall_now.date()) + offset
            while wall > wall_now:
                wall -= timedelta(days=1)
        else:
            wall = _midnight(day) + offset
        point = _aware(wall, zone)
        return _Extent(point, point, "point")
    if atom.part is not None:
        low, high = _PARTS[atom.part]
        if day is None:  # today's, or yesterday's if today's has not begun
            day = ctx.today if _midnight(ctx.today) + timedelta(hours=low) <= ctx.local else ctx.today - timedelta(1)
        begin = _midnight(day)
        return _Extent(
            _aware(begin + timedelta(hours=low), ctx.tz), _aware(begin + timedelta(hours=high), ctx.tz), "period"
        )
    if day is not None:
        return _Extent(_aware(_midnight(day), ctx.tz), _aware(_midnight(day + timedelta(1)), ctx.tz), "day")
    return None


def around(
    point: datetime, anchor: datetime, *, before: timedelta = AROUND, after: timedelta = AROUND
) -> tuple[datetime, datetime]:
    """The window of a point in time P: [P − ``before``, P + ``after``), its end clipped to
    ``anchor`` ("now": nothing lies after it) but keeping a minute after P, so it always holds P.
    A question's point is ``AROUND`` either side; the planner gives an alert's start its own."""
    end = _moved(point, after)
    if point < anchor:
        end = min(end, max(anchor, _moved(point, _MIN_AFTER)))
    return _moved(point, -before), end


def _moved(point: datetime, by: timedelta) -> datetime:
    """``point + by``, stopped at the calendar's edge: an alert at 9999-12-31 23:50Z is a time UTC
    holds, though the two hours after it are not."""
    try:
        return point + by
    except OverflowError:
        return (datetime.max if by > timedelta(0) else datetime.min).replace(tzinfo=point.tzinfo)


_SINCE_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])(?:since|after|from|starting(?:\s+(?:at|from))?|as\s+of)|自从|自從|自打|从|從|自)\s*$",
    re.IGNORECASE,
)
_SINCE_AFTER = re.compile(
    r"\s*(?:以后|以後|之后|之後|以来|以來|开始|開始|起(?![来來])|后(?![台端续續面果来來])"
    r"|(?:到|至)(?:现在|現在|目前|今|当前|當前)|onwards?(?![A-Za-z])|(?:and|or)\s+later|(?:until|till|to)\s+now)",
    re.IGNORECASE,
)
_UNTIL_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])(?:before|until|till|til|prior\s+to|up\s+to)|截至|截止到?|直到)\s*$", re.IGNORECASE
)
_UNTIL_AFTER = re.compile(r"\s*(?:之前|以前|前(?![端台面后後])|为止|為止)")
_RANGE_GAP = re.compile(r"\s*(?:-|–|—|~|～|〜|to|till|until|through|thru|and|到|至|直到)\s*", re.IGNORECASE)
_RANGE_BEFORE = re.compile(r"(?:(?<![A-Za-z])(?:between|from)|从|從|自)\s*$", re.IGNORECASE)
_RANGE_AFTER = re.compile(r"\s*(?:之间|之間|期间|期間|间|間|为止|為止)")
_BARE_HOUR = re.compile(
    rf"(?<![A-Za-z0-9_.:])(?P<hour>[0-9]{{1,2}}|{_CN_NUM}{{1,3}})\s*(?P<gap>-|~|～|to|and|到|至)\s*$", re.IGNORECASE
)
#: A range's second end written as a bare hour ("from 9:30 to 10", 9点半到10): ends the question,
#: a clause or a range word, so "9:30 to 10 minutes later" or "10个" is no clock.
_BARE_END = re.compile(
    rf"(?P<gap>\s*(?:-|–|~|～|to|till|until|and|到|至)\s*)(?P<hour>[0-9]{{1,2}}|{_CN_NUM}{{1,3}})"
    r"(?=\s*(?:$|[,.;?!，。；？！、)）]|之间|之間|期间|期間|为止|為止))",
    re.IGNORECASE,
)
_LOOK = 24  # characters either side searched for the words around an expression
_RANK = {"range": 5, "since": 4, "until": 4, "around": 3, "relative": 3, "period": 2, "day": 1}


@dataclass(frozen=True)
class _Candidate:
    start: datetime
    end: datetime
    kind: TimeKind
    spans: tuple[tuple[int, int], ...]
    size: int
    at: datetime | None = None  # the point asked about, for "around"

    @property
    def rank(self) -> tuple[int, int, int]:
        """Most specific first, then the first written."""
        return (_RANK[self.kind], self.size, -self.spans[0][0])


def _before(pattern: re.Pattern[str], text: str, position: int) -> int | None:
    """Where ``pattern`` (ending in $) matches right before ``position``."""
    match = pattern.search(text, max(0, position - _LOOK), position)
    return match.start() if match else None


def _after(pattern: re.Pattern[str], text: str, position: int) -> int | None:
    match = pattern.match(text, position, position + _LOOK)
    return match.end() if match else None


@dataclass(frozen=True)
class _Loan:
    """A day written apart from a clock or part of the day that has none ("3月14日的订单在凌晨3点")."""

    day: date
    span: tuple[int, int]


def _spans(start: int, end: int, loan: _Loan | None) -> tuple[tuple[int, int], ...]:
    return ((start, end),) if loan is None else tuple(sorted([(start, end), loan.span]))


def _single(text: str, atom: _Atom, ctx: _Context, loan: _Loan | None) -> _Candidate | None:
    """The window of one expression, with since / before words around it."""
    loan = loan if atom.dayless else None
    extent = _extent(atom, ctx, loan.day if loan else None)
    if extent is None:
        return None
    if extent.grain == "relative":
        return _Candidate(extent.start, extent.end, "relative", _spans(atom.start, atom.end, None), atom.size)
    for kind, before, after in (("since", _SINCE_BEFORE, _SINCE_AFTER), ("until", _UNTIL_BEFORE, _UNTIL_AFTER)):
        lead, tail = _before(before, text, atom.start), _after(after, text, atom.end)
        if lead is None and tail is None:
            continue
        spans = _spans(atom.start if lead is None else lead, atom.end if tail is None else tail, loan)
        point = extent.start
        if kind == "since":
            return _Candidate(point, ctx.anchor if ctx.anchor > point else point + _SIDE, "since", spans, atom.size)
        return _Candidate(point - _SIDE, point, "until", spans, atom.size)
    if atom.weak and not _approximate(text, atom):  # 慢了一点 is no time; 一点左右, 大约一点 are
        return None
    if extent.grain == "point":
        return _point(text, atom, extent.start, ctx, loan)
    spans = _spans(atom.start, atom.end, loan)
    return _Candidate(extent.start, extent.end, extent.grain, spans, atom.size)


def _point(text: str, atom: _Atom, point: datetime, ctx: _Context, loan: _Loan | None) -> _Candidate:
    """A point in time ("at 21:00", "around 9pm", 9点左右, 大约九点): ``AROUND`` either side of it,
    or the margin the question writes ("21:00 ± 15 min", 9点前后一小时, "within 10 minutes of
    21:00"). The words that make it approximate (``when.yaml``) join the phrase only: written or
    not, a point is asked about as a little before and after it."""
    words = _point_words()
    lead, tail = _before(words.before, text, atom.start), _after(words.after, text, atom.end)
    margin = _margin_after(text, atom.end if tail is None else tail, written_after=tail is not None)
    if margin is not None:
        length, tail = margin
    elif (margin := _margin_before(text, atom.start if lead is None else lead)) is not None:
        length, lead = margin
    else:
        length = AROUND
    spans = _spans(atom.start if lead is None else lead, atom.end if tail is None else tail, loan)
    start, end = around(point, ctx.anchor, before=length, after=length)
    return _Candidate(start, end, "around", spans, atom.size, at=point)


def _approximate(text: str, atom: _Atom) -> bool:
    """An approximate word stands right before or after ``atom``."""
    words = _point_words()
    return _before(words.before, text, atom.start) is not None or _after(words.after, text, atom.end) is not None


def _margin_after(text: str, position: int, *, written_after: bool) -> tuple[timedelta, int] | None:
    """A margin written after a point: its length and where it ends. Right after an "after" word
    (9点前后15分钟) it needs no word of its own; elsewhere a margin word (``±``) comes first."""
    for pattern in _point_words().margin_after:
        match = pattern.match(text, position, position + 2 * _LOOK)
        if match is None or not (written_after or match.group("word")):
            continue
        length = _length(match)
        if length is not None and length <= _MAX_MARGIN:
            return length, match.end()
    return None


def _margin_before(text: str, position: int) -> tuple[timedelta, int] | None:
    """ "within 10 minutes of 21:00": the margin's length and where its words start."""
    match = _point_words().margin_before.search(text, max(0, position - 2 * _LOOK), position)
    length = _length(match) if match else None
    if match is None or length is None or length > _MAX_MARGIN:
        return None
    return length, match.start()


def _between(text: str, lead: int | None, gap: str) -> bool:
    """ "and" joins a range only after "between"."""
    return gap.strip().lower() != "and" or (lead is not None and text[lead:].lower().startswith("between"))


def _range(text: str, first: _Atom, second: _Atom, ctx: _Context, loan: _Loan | None) -> _Candidate | None:
    """``first`` to ``second``, when only a range word stands between them."""
    gap = _RANGE_GAP.fullmatch(text, first.end, second.start)
    if gap is None or first.duration is not None or second.duration is not None:
        return None
    lead = _before(_RANGE_BEFORE, text, first.start)
    if not _between(text, lead, gap.group()):
        return None
    loan = loan if first.dayless and second.dayless else None
    window = _range_window(first, second, ctx, loan.day if loan else None)
    if window is None:
        return None
    tail = _after(_RANGE_AFTER, text, second.end)
    spans = _spans(first.start if lead is None else lead, second.end if tail is None else tail, loan)
    return _Candidate(window[0], window[1], "range", spans, first.size + second.size)


def _range_window(first: _Atom, second: _Atom, ctx: _Context, day: date | None) -> tuple[datetime, datetime] | None:
    if first.clock is not None and second.clock is not None:  # "10:00-10:30 UTC+8": one zone for both ends
        zone = first.clock.zone or second.clock.zone
        first = replace(first, clock=replace(first.clock, zone=zone))
        second = replace(second, clock=replace(second.clock, zone=second.clock.zone or zone))
    if second.clock is not None and second.part is None and not second.clock.meridiem and first.part:
        second = replace(second, part=first.part)  # 下午2点到4点: 4点 is in the afternoon too
    borrowed = first.dayless and second.day is not None
    if borrowed:
        first = replace(first, day=second.day)  # 23点到3月15日2点
    start = _extent(first, ctx, day)
    if start is None:
        return None
    if second.dayless:  # on the first's day, or the next if that would end before it starts
        own_day = start.start.astimezone(ctx.tz).date()
        stop = _extent(second, ctx, own_day)
        if stop is not None and stop.start <= start.start:
            stop = _extent(second, ctx, own_day + timedelta(1))
    else:
        stop = _extent(second, ctx)
    if stop is None:
        return None
    end = stop.end if stop.grain in ("day", "period") else stop.start
    if borrowed and start.start >= end and first.day is not None:
        start = _extent(replace(first, day=first.day - timedelta(1)), ctx)
        if start is None:
            return None
    return (start.start, end) if start.start < end else None


def _bare_range(
    text: str, second: _Atom, ctx: _Context, loan: _Loan | None, before: _Atom | None = None
) -> _Candidate | None:
    """ "between 10 and 11am", "10到11点", "下午2到3点半": the first end is a bare hour, read like
    the second; a day or part of the day written just before it (``before``) is the range's."""
    if second.clock is None or not second.dayless:
        return None
    match = _BARE_HOUR.search(text, max(0, second.start - _LOOK), second.start)
    hour = _number(match.group("hour")) if match else None
    if match is None or hour is None or hour > 24:
        return None
    lead = _before(_RANGE_BEFORE, text, match.start())
    if not _between(text, lead, match.group("gap")):
        return None
    clock = second.clock
    if clock.meridiem and clock.hour >= 12 and hour + 12 <= clock.hour:
        hour += 12  # "2-4pm"
    # A bare hour is on the hour: "10到10点半" starts at 10:00, not at the second end's 10:30.
    start_clock = replace(clock, hour=hour, minute=0, second=0)
    first = _Atom(match.start("hour"), match.end("hour"), part=second.part, clock=start_clock)
    if (
        before is not None
        and before.clock is None
        and not before.complete
        and _JOIN.fullmatch(text, before.end, match.start("hour"))
    ):
        joined = _merge(before, first)
        if joined is not None:
            first, lead = joined, before.start if lead is None else min(lead, before.start)
    loan = loan if first.dayless else None
    window = _range_window(first, second, ctx, loan.day if loan else None)
    if window is None:
        return None
    tail = _after(_RANGE_AFTER, text, second.end)
    spans = _spans(match.start() if lead is None else lead, second.end if tail is None else tail, loan)
    return _Candidate(window[0], window[1], "range", spans, first.size + second.size)


def _bare_end(text: str, first: _Atom, ctx: _Context, loan: _Loan | None) -> _Candidate | None:
    """ "from 9:30 to 10", 9点半到10: the second end is a bare hour, on the hour, in the first's
    part of the day; one not after the first in a 12-hour reading is taken 12 hours on."""
    # Not after a complete moment ("2014-03-14T10:00+08:00 to 11"): it is held in UTC, and the
    # zone its wall clock was written in, which the bare hour shares, is gone.
    if first.clock is None or first.complete:
        return None
    match = _BARE_END.match(text, first.end)
    hour = _number(match.group("hour")) if match else None
    if match is None or hour is None or hour > 24:
        return None
    lead = _before(_RANGE_BEFORE, text, first.start)
    if not _between(text, lead, match.group("gap")):
        return None
    begins = _clock_offset(first.clock, first.part)
    if first.part is None and timedelta(hours=hour) <= begins and timedelta(hours=hour + 12) > begins and hour < 12:
        hour += 12  # "11:30 to 1": 13:00
    clock = _Clock(hour, zone=first.clock.zone, meridiem=first.clock.meridiem or hour >= 12)
    second = _Atom(match.start("hour"), match.end("hour"), clock=clock)
    loan = loan if first.dayless else None
    window = _range_window(first, second, ctx, first.day or (loan.day if loan else None))
    if window is None:
        return None
    tail = _after(_RANGE_AFTER, text, second.end)
    spans = _spans(first.start if lead is None else lead, second.end if tail is None else tail, loan)
    return _Candidate(window[0], window[1], "range", spans, first.size + 1)


def _candidates(text: str, expressions: list[_Atom], ctx: _Context) -> Iterator[_Candidate]:
    # A day written apart from a clock lends it that day, when the question names one day only.
    only_days = [e for e in expressions if e.day is not None and e.part is None and e.clock is None]
    loan = None
    if only_days and len({e.day for e in only_days}) == 1 and only_days[0].day is not None:
        loan = _Loan(only_days[0].day, (only_days[0].start, only_days[0].end))
    for index, expression in enumerate(expressions):
        before = expressions[index - 1] if index else None
        found = [
            _single(text, expression, ctx, loan),
            _bare_range(text, expression, ctx, loan, before),
            _bare_end(text, expression, ctx, loan),
        ]
        if index + 1 < len(expressions):
            found.append(_range(text, expression, expressions[index + 1], ctx, loan))
        yield from (c for c in found if c is not None and c.start < c.end)


class AroundWords(WordModel):
    """Words that make a point in time approximate, written before it (around) or after it (左右)."""

    before: list[Word]
    after: list[Word]


class MarginWords(WordModel):
    """Words that introduce the margin a question gives its point: after it (±) or before it (within)."""

    after: list[Word]
    before: list[Word]


class WhenWords(WordModel):
    """``text/when.yaml``."""

    #: word → IANA zone key
    zones: dict[Word, Word]
    #: the same, read only in a question with Chinese in it (CST: China there; in English it is as
    #: often US Central, so it is not read)
    in_chinese_text: dict[Word, Word] = Field(default_factory=dict)
    #: word → the zones it may name (CST): a claim's clock written with it alone is uncertain
    ambiguous: dict[Word, list[Word]] = Field(default_factory=dict)
    #: words a tool output states its zone with ("timezone: Asia/Shanghai")
    output_zone: list[Word] = Field(default_factory=list)
    around: AroundWords
    margin: MarginWords

    @field_validator("zones", "in_chinese_text")
    @classmethod
    def _known(cls, zones: dict[str, str]) -> dict[str, str]:
        for key in zones.values():
            _zone(key)  # an unknown key fails here, named by the file
        return zones

    @field_validator("ambiguous")
    @classmethod
    def _all_known(cls, zones: dict[str, list[str]]) -> dict[str, list[str]]:
        for keys in zones.values():
            for key in keys:
                _zone(key)
        return zones


@lru_cache(maxsize=1)
def _when_words() -> WhenWords:
    """``when.yaml``, with the tz database's abbreviations it does not list (``_abbreviations``)."""
    words = bundled_words("veridiag.text", "when.yaml", WhenWords)
    listed = {*words.zones, *words.in_chinese_text, *words.ambiguous}
    zones, ambiguous = dict(words.zones), dict(words.ambiguous)
    for name, keys in _abbreviations().items():
        if name in listed or not keys:
            continue
        if len(keys) == 1:
            zones[name] = keys[0]
        else:
            ambiguous[name] = keys
    return words.model_copy(update={"zones": zones, "ambiguous": ambiguous})


def _abbreviations() -> dict[str, list[str]]:
    """``zone_abbreviations.json`` (``scripts/zone_abbreviations.py``, from the tz database): each
    abbreviation → the fixed zones of the offsets it has stood for ("MSD" → UTC+4; "MSK" → UTC+3
    or +4, read in each). An offset of part of an hour ("NST" −3:30, "IRDT" +4:30) has no tz key:
    it is written as one (``UTC-03:30``) that ``_zone`` reads as a fixed offset."""
    written = json.loads(resources.files("veridiag.text").joinpath("zone_abbreviations.json").read_text("utf-8"))
    return {
        name: [_fixed_key(minutes) for minutes in offsets if minutes] + (["UTC"] if 0 in offsets else [])
        for name, offsets in written.items()
    }


def _fixed_key(minutes: int) -> str:
    """The zone key of a fixed offset: tz's ``Etc/GMT-8`` for whole hours (its sign reversed), our
    ``UTC+05:45`` for part of an hour."""
    if minutes % 60 == 0:
        return f"Etc/GMT{-minutes // 60:+d}"
    sign, whole = ("+" if minutes > 0 else "-"), abs(minutes)
    return f"UTC{sign}{whole // 60:02d}:{whole % 60:02d}"


#: A fixed offset of part of an hour, as ``_fixed_key`` writes it.
_FIXED_KEY = re.compile(r"UTC([+-])(\d{2}):(\d{2})")


def _any_phrase(words: list[str]) -> str:
    """Listed words as a pattern: their spaces any run of spaces; whole where they begin or end
    with a Latin letter ("near" not in "linear")."""
    ordered = sorted(words, key=len, reverse=True)
    return "(?:" + whole_words(ordered, edge="A-Za-z", boundary="A-Za-z", blanks=r"\s+") + ")"


@dataclass(frozen=True)
class _PointWords:
    before: re.Pattern[str]  # ends in $: searched right before a point
    at: re.Pattern[str]  # "at", and an approximate word after it, right before a point
    after: re.Pattern[str]  # matched right after a point
    margin_after: tuple[re.Pattern[str], ...]  # (word)? (各)? duration, in English and Chinese counts
    margin_before: re.Pattern[str]  # word duration "of", ending in $


#: A margin's length: the count and unit of a duration (``_length`` reads the groups).
_EN_MARGIN = rf"(?:{_EN_COUNT}\s*)?(?P<half>half\s+(?:an?\s+)?)?{_EN_UNIT}(?![A-Za-z])"
_ZH_MARGIN = _ZH_COUNT + _ZH_UNIT


@lru_cache(maxsize=1)
def _point_words() -> _PointWords:
    """The around and margin words of ``when.yaml`` as patterns."""
    words = _when_words()
    margin = rf"(?:[\s,，]*(?P<word>{_any_phrase(words.margin.after)})\s*|\s*)(?:各\s*|each\s+)?"
    return _PointWords(
        before=re.compile(_any_phrase(words.around.before) + r"\s*$", re.IGNORECASE),
        at=re.compile(rf"(?<![A-Za-z])at\s+(?:{_any_phrase(words.around.before)}\s*)?$", re.IGNORECASE),
        after=re.compile(r"\s*" + _any_phrase(words.around.after), re.IGNORECASE),
        margin_after=tuple(re.compile(margin + unit, re.IGNORECASE) for unit in (_EN_MARGIN, _ZH_MARGIN)),
        margin_before=re.compile(_any_phrase(words.margin.before) + rf"\s+{_EN_MARGIN}\s+of\s*$", re.IGNORECASE),
    )


@lru_cache(maxsize=1)
def _zone_words() -> tuple[re.Pattern[str], dict[str, str], frozenset[str]]:
    """The zone words of ``when.yaml`` as one pattern, each word (as matched, folded) → key, and
    the words read only in Chinese text. A word in capitals is an abbreviation, matched in
    capitals only ("est" is Latin, "EST" a zone); a Latin word matches whole."""
    words = _when_words()
    zones = {**words.zones, **words.in_chinese_text}
    parts = []
    for word in sorted(zones, key=len, reverse=True):
        body = r"\s+".join(map(re.escape, word.split()))
        if word.isascii():
            body = rf"(?<![A-Za-z]){body}(?![A-Za-z])"
        parts.append(body if word.isupper() else f"(?i:{body})")
    keys = {_fold_zone_word(word): key for word, key in zones.items()}
    # a word matched in any case written all in capitals ("EASTERN", "PACIFIC TIME") folds as an
    # abbreviation does: it is the same word
    keys |= {_fold_zone_word(word.upper()): key for word, key in zones.items() if not word.isupper()}
    return re.compile("|".join(parts)), keys, frozenset(map(_fold_zone_word, words.in_chinese_text))


#: A place a reader names a zone by, then the word for time ("Berlin time", "India Time", "Central
#: European Time", "柏林时间", "印度時間", "Anchorage 时间"): up to four capitalised words before "time"
#: or 时间, or the Chinese run before 时间, looked up in ``zone_places.json`` (CLDR's places,
#: ``scripts/zone_places.py``).
_PLACE_TIME = re.compile(
    r"(?<![A-Za-z])(?P<en>(?:[A-Z][\w'’.&-]*?\s+){0,3}[A-Z][\w'’.&-]*?)(?:\s+(?i:time)(?![A-Za-z])|\s*(?:时间|時間))"
    r"|(?P<zh>[\u4e00-\u9fff]{2,16})[ \t]*(?:时间|時間)"
)
_WORD_AT = re.compile(r"\S+")


@lru_cache(maxsize=1)
def _zone_places() -> dict[str, str]:
    """``zone_places.json``: place (``_place_key``) → IANA key, read once. CLDR writes "São Paulo"
    and "St. John’s"; a writer may not ("Sao Paulo time", "St. John's")."""
    places: dict[str, str] = json.loads(
        resources.files("veridiag.text").joinpath("zone_places.json").read_text("utf-8")
    )
    return {**places, **{_place_key(place): key for place, key in places.items()}}


def _place_key(place: str) -> str:
    """A place's name as looked up: lower case, without accents, with a straight apostrophe."""
    decomposed = unicodedata.normalize("NFKD", place.lower().replace("’", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def place_zones(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[tuple[int, int], str]]:
    """The zones ``text[start:end]`` names by a place (``_PLACE_TIME``), each with its span (the
    place and the word for time) and its IANA key; the longest place that is one, so "at the
    Berlin time" names Berlin from "Berlin"."""
    places = _zone_places()
    for match in _PLACE_TIME.finditer(text, start, len(text) if end is None else end):
        if match.group("en") is not None:
            words = list(_WORD_AT.finditer(match.group("en")))
            for at, word in enumerate(words):
                key = places.get(_place_key(" ".join(w.group() for w in words[at:])))
                if key is not None:
                    yield (match.start("en") + word.start(), match.end()), key
                    break
        else:
            run = match.group("zh")
            for at in range(len(run) - 1):
                key = places.get(run[at:])
                if key is not None:
                    yield (match.start("zh") + at, match.end()), key
                    break


#: A place named right beside a clock, without the word for time: "(Berlin 15:24)", "台北 14:13:20",
#: "6:30 pm in Auckland". Only beside a clock: a city alone in a sentence names no zone.
_PLACE_BEFORE_CLOCK = re.compile(
    r"(?<![A-Za-z])(?P<en>(?:[A-Z][\w'.&-]*[ \t]+){0,2}[A-Z][\w'.&-]*)[ \t]*(?=\d{1,2}:\d{2})"
    r"|(?P<zh>[\u4e00-\u9fff]{2,8})[ \t]*(?=\d{1,2}:\d{2})"
)
_PLACE_AFTER_CLOCK = re.compile(
    r"\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]*[AaPp]\.?[Mm]\.?)?[ \t]+in[ \t]+"
    r"(?P<en>[A-Z][\w'.&-]*(?:[ \t]+[A-Z][\w'.&-]*){0,2})"
)


def places_beside_clocks(text: str) -> Iterator[tuple[tuple[int, int], str]]:
    """The zones ``text`` names by a place written right beside a clock (``_PLACE_BEFORE_CLOCK``,
    ``_PLACE_AFTER_CLOCK``), each with the place's span and its IANA key: the longest place of
    the words (its last words, before a clock; its first, after "in")."""
    places = _zone_places()
    for match in _PLACE_BEFORE_CLOCK.finditer(text):
        group = "en" if match.group("en") is not None else "zh"
        words = match.group(group)
        starts = [w.start() for w in _WORD_AT.finditer(words)] if group == "en" else range(len(words) - 1)
        for at in starts:
            key = places.get(_place_key(" ".join(words[at:].split())))
            if key is not None:
                yield (match.start(group) + at, match.end(group)), key
                break
    for match in _PLACE_AFTER_CLOCK.finditer(text):
        words = list(_WORD_AT.finditer(match.group("en")))
        for last in range(len(words), 0, -1):
            key = places.get(_place_key(" ".join(w.group() for w in words[:last])))
            if key is not None:
                yield (match.start("en"), match.start("en") + words[last - 1].end()), key
                break


def within_place(span: tuple[int, int], places: list[tuple[tuple[int, int], str]]) -> bool:
    """Is ``span`` (a zone word's) part of a longer place's name ("Pacific" of "Mexican Pacific Time")?"""
    return any(at[0] <= span[0] and span[1] <= at[1] and at != span for at, _key in places)


def _overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(start < span[1] and span[0] < end for start, end in spans)


def _fold_zone_word(word: str) -> str:
    """A zone word as its key: an abbreviation as written, any other word case-blind ("eaſtern",
    matched case-insensitively, is "eastern")."""
    return " ".join(word.split()) if word.isupper() else " ".join(ignorecase_key(word).split())


#: An offset right after a zone word: "UTC+8" names UTC+8, not UTC.
_OFFSET_AFTER = re.compile(r"\s*[+-]\s*[0-9]")


#: "UTC+8", "GMT-05:00", "UTC +8" anywhere in a question (a clock's own "10:00 UTC+8" too).
_OFFSET_NAME = re.compile(
    r"(?<![A-Za-z])(?:UTC|GMT)\s*(?P<sign>[+-])\s*(?P<hours>[0-9]{1,2})(?::?(?P<minutes>[0-9]{2}))?(?![0-9])"
)


def question_zone(question: str) -> tuple[tzinfo, tuple[int, int]] | None:
    """The one time zone ``question`` names ("北京时间", "PST", "(UTC+8)") and where it is first
    named, or None when it names none or several different ones (then each time is read in its
    own zone or the caller's)."""
    named: dict[str, tuple[tzinfo, tuple[int, int]]] = {}
    for match in _OFFSET_NAME.finditer(question):
        hours, minutes = int(match.group("hours")), int(match.group("minutes") or 0)
        if hours > 14 or minutes >= 60:
            continue
        offset = timedelta(hours=hours, minutes=minutes) * (-1 if match.group("sign") == "-" else 1)
        key = "UTC" if not offset else f"offset {offset}"  # UTC+0 and UTC are one zone
        named.setdefault(key, (UTC if not offset else timezone(offset), match.span()))
    pattern, keys, chinese_only = _zone_words()
    chinese = has_cjk(question)
    places = list(place_zones(question))
    listed: list[tuple[int, int]] = []
    for match in pattern.finditer(question):
        if within_place(match.span(), places):
            continue  # "Pacific" of "Mexican Pacific Time"
        word = _fold_zone_word(match.group())
        listed.append(match.span())
        if (word in chinese_only and not chinese) or _OFFSET_AFTER.match(question, match.end()):
            continue  # CST in English text; "UTC" of "UTC+8", read above as that offset
        named.setdefault(keys[word], (_zone(keys[word]), match.span()))
    for span, key in places:
        if not _overlaps(span, listed):  # "China time" is listed
            named.setdefault(key, (_zone(key), span))
    return next(iter(named.values())) if len(named) == 1 else None


#: What may stand between a time and the zone named beside it: "10:00 (UTC+8)", "北京时间 10点".
_ZONE_GAP = re.compile(r"[\s,，(（)）]*")


def _with_zone(spans: tuple[tuple[int, int], ...], text: str, mention: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    """``spans`` with the zone's words when they stand right beside them (the phrase then says
    which zone the times were read in)."""
    start, end = mention
    if start and text[start - 1] in "(（" and text[end : end + 1] in (")", "）"):
        mention = (start - 1, end + 1)  # "(UTC+8)" whole
    if _ZONE_GAP.fullmatch(text, spans[-1][1], mention[0]):
        return (*spans[:-1], (spans[-1][0], mention[1]))
    if _ZONE_GAP.fullmatch(text, mention[1], spans[0][0]):
        return ((mention[0], spans[0][1]), *spans[1:])
    return spans


def _zone(tz: tzinfo | str) -> tzinfo:
    if isinstance(tz, tzinfo):
        return tz
    fixed = _FIXED_KEY.fullmatch(tz)
    if fixed is not None:
        sign = 1 if fixed.group(1) == "+" else -1
        return timezone(sign * timedelta(hours=int(fixed.group(2)), minutes=int(fixed.group(3))), tz)
    try:
        return ZoneInfo(tz)
    except (KeyError, ValueError) as error:  # ZoneInfoNotFoundError is a KeyError
        raise ValueError(f"unknown time zone {tz!r}") from error


_MAYBE_TIME = re.compile(
    r"[0-9点點时時月日号號天周週期拜晚早午夜晨钟鐘]"
    r"|(?<![A-Za-z])(?:yesterday|today|tomorrow|tonight|morning|afternoon|evening|night|noon|hour|minute|day|week"
    rf"|month|{_WEEKDAYS})",
    re.IGNORECASE,
)


def interpret_time(question: str, *, anchor: datetime, tz: tzinfo | str = "UTC") -> TimeWindow | None:
    """The time window ``question`` asks about, or None when it names no time.

    ``anchor`` is "now" (aware): the newest data point for imported data, the wall clock for
    live backends; relative words ("yesterday", "10点以后") resolve against it as seen in
    ``tz``, the zone of times written without one (a zoneinfo key or a tzinfo) — unless the
    question names one ("北京时间", "PST": ``when.yaml``), which it then means. The window is
    in UTC. Never raises on any question; raises ValueError for a naive anchor or an unknown
    zone, which are the caller's mistakes."""
    zone = _zone(tz)
    if anchor.tzinfo is None or anchor.utcoffset() is None:
        raise ValueError("anchor must be timezone-aware")
    text = question[:_MAX_CHARS].translate(_WIDTH)
    if not _MAYBE_TIME.search(text):
        return None
    named = question_zone(text)
    if named is not None:  # "北京时间10点": the question's own zone wins over the caller's
        zone = named[0]
    try:
        ctx = _Context.at(anchor, zone)
        expressions = _expressions(text, _atoms(text, ctx))
        best = max(_candidates(text, expressions, ctx), key=lambda c: c.rank, default=None)
    except OverflowError:  # an anchor at the edge of datetime's range
        return None
    if best is None:
        return None
    if named is not None:
        best = replace(best, spans=_with_zone(best.spans, text, named[1]))
    phrase = question[best.spans[0][0] : best.spans[-1][1]]
    at = best.at.astimezone(UTC) if best.at is not None else None
    return TimeWindow(best.start.astimezone(UTC), best.end.astimezone(UTC), phrase, best.kind, best.spans, at)


# --- clocks as facts: what the claim checks read a written time as ----------------------------


@dataclass(frozen=True)
class WrittenClock:
    """A clock written in words ("下午1点", "两点半", "14点05分") where it stands in the text,
    as a 24-hour time of day (``hour`` 24 is the next midnight: 晚上12点)."""

    start: int
    end: int
    hour: int
    minute: int
    second: int

    @property
    def spelled(self) -> str:
        """``HH:MM`` (``HH:MM:SS`` when seconds were written): how tool outputs write it."""
        clock = f"{self.hour:02d}:{self.minute:02d}"
        return f"{clock}:{self.second:02d}" if self.second else clock


#: Characters every Chinese clock word has (点 / 時 …): a text without any holds none.
_ZH_CLOCK_HINT = re.compile("[点點时時]")


def written_clocks(text: str) -> list[WrittenClock]:
    """The Chinese clock words of ``text`` with the part of the day written right before them
    (下午1点 is 13:00, 凌晨12点 is 00:00, 晚上12点 is 24:00), read by the same rules as a
    question's times, and digital clocks a part stands before (下午 1:50 is 13:50). The second
    clock of a range takes the first's part (下午 1 点到 3 点, 晚上 8:42 到 9:17). "一点" alone
    ("慢了一点") and list items (第二点) are no clocks."""
    clock_words = _ZH_CLOCK_HINT.search(text) is not None
    if not clock_words and not _ZH_PART_HINT.search(text):
        return []
    ctx = _Context.at(datetime(2000, 1, 2, tzinfo=UTC), UTC)  # no day is read: any anchor does
    parts = sorted(_zh_parts(text, ctx), key=lambda atom: atom.start)
    # Every N点 clock holds a hint character: a text without one (a question with 下单 beside 80 KB
    # of logs) is not scanned for them at every digit (~3 ms per 80 KB, measured).
    zh_clocks = _zh_clocks(text, ctx) if clock_words else ()
    atoms = sorted([*zh_clocks, *_digital_clocks(text, parts)], key=lambda atom: atom.start)
    found = []
    previous: tuple[int, str] | None = None  # where the last clock with a part ended, and its part
    for atom in atoms:
        part_atom = next(
            (p for p in reversed(parts) if p.end <= atom.start and not text[p.end : atom.start].strip()), None
        )
        part = part_atom.part if part_atom else None
        if part is None and previous is not None and _RANGE_JOIN.fullmatch(text, previous[0], atom.start):
            part = previous[1]  # 下午 1 点到 3 点: the range's end is in the afternoon too
        if atom.clock is None or (atom.weak and part is None):  # 凌晨一点 is a clock, 慢了一点 is not
            continue
        if atom.digital and part is None:
            continue  # 14:05 is already how outputs write it
        offset = _clock_offset(atom.clock, part)
        hours, rest = divmod(int(offset.total_seconds()), 3600)
        start = part_atom.start if part_atom else atom.start
        hour = hours if hours == 24 and not rest else hours % 24  # 晚上1点 is 01:00 of the next day
        found.append(WrittenClock(start, atom.end, hour, rest // 60, rest % 60))
        previous = (atom.end, part) if part else None
    return found


#: A part of the day in Chinese (下午, 晚上 …): a text with one may write its clocks digitally.
_ZH_PART_HINT = re.compile("[上下中晚早傍凌午夜]")
#: What joins the two ends of a range of clocks.
_RANGE_JOIN = re.compile(r"\s*(?:到|至|-|–|—|~|～)\s*")
_RANGE_JOIN_BEFORE = re.compile(r"(?:到|至|-|–|—|~|～)\s*$")
_DIGITAL_CLOCK = re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")


def _digital_clocks(text: str, parts: list[_Atom]) -> Iterator[_Atom]:
    """``1:50`` as a clock atom where a part of the day or a range's joiner stands right before
    it (read with a part only: see ``written_clocks``). Only there: a Chinese log holds
    thousands of clocks no part of the day concerns."""
    ends = {p.end for p in parts}
    if not ends:
        return
    for match in _DIGITAL_CLOCK.finditer(text):
        before = len(text[: match.start()].rstrip())
        if before not in ends and not _RANGE_JOIN_BEFORE.search(text, max(0, before - 2), match.start()):
            continue
        hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
        if hour <= 24 and minute <= 59 and second <= 59:
            yield _Atom(match.start(), match.end(), clock=_Clock(hour, minute, second), digital=True)


def zone_beside(text: str, start: int, end: int) -> tzinfo | None:
    """The zone named right before or after ``text[start:end]`` ("北京时间 13:40", "13:40 PST",
    "10:00 (UTC+8)"), or None."""
    pattern, keys, chinese_only = _zone_words()
    window_start, window_end = max(0, start - 24), min(len(text), end + 24)
    chinese = has_cjk(text[window_start:window_end])
    for match in _OFFSET_NAME.finditer(text, window_start, window_end):
        if _beside(text, (start, end), match.span()):
            hours, minutes = int(match.group("hours")), int(match.group("minutes") or 0)
            if hours <= 14 and minutes < 60:
                sign = -1 if match.group("sign") == "-" else 1
                return timezone(sign * timedelta(hours=hours, minutes=minutes))
    places = list(place_zones(text, window_start, window_end))
    for match in pattern.finditer(text, window_start, window_end):
        word = _fold_zone_word(match.group())
        if (word in chinese_only and not chinese) or _OFFSET_AFTER.match(text, match.end()):
            continue
        if _beside(text, (start, end), match.span()) and not within_place(match.span(), places):
            return _zone(keys[word])
    for span, key in places:
        if _beside(text, (start, end), span):
            return _zone(key)
    return None


#: What may stand between a written time and its zone as a fact: blanks, brackets, 的.
_ZONE_JOIN = re.compile(r"[\s(（)）的]*")


def _beside(text: str, span: tuple[int, int], mention: tuple[int, int]) -> bool:
    return bool(_ZONE_JOIN.fullmatch(text, mention[1], span[0]) or _ZONE_JOIN.fullmatch(text, span[1], mention[0]))
