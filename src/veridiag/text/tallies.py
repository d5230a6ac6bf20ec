"""A count a claim made by counting the lines it was shown.

"node-246 logged 3 of them", "2 errors on Dec 24", "dn228 出现了 4 次": a per-host or per-day tally
is no number any tool printed — the claim counted the listed lines that name its subject. It is
stated when the cited output lists exactly that many lines naming the subject (the lines a log
query lists after ``lines:``, else every line of the output but the call as made, its patterns
and their examples, and its headings).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

from veridiag.text.concepts import sentence as sentence_of
from veridiag.text.entities import Entity, fact_at

#: Where a log query's own lines begin: what is above (templates, their examples) repeats them.
_LINES_MARK = "\nlines:\n"
#: Kinds of fact a tally may count lines by.
_SUBJECT_KINDS = ("identifier", "service", "error_code", "timestamp")
#: A name from code a claim may count lines by ("两条 saveOneDetailData fail"): a camelCase or
#: snake_case word, which no prose writes and the lexer reads as no fact.
_CODE_NAME = re.compile(
    r"(?<![\w.])(?:[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*|[A-Za-z][a-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9])(?![\w.])"
)


def code_names(text: str) -> list[str]:
    """The names from code ``text`` writes (``_CODE_NAME``), each once."""
    return list(dict.fromkeys(_CODE_NAME.findall(text)))


#: The tools whose output lines (after the request's) are events, one each: log lines, changes, traces.
_EVENT_TOOLS = ("query_logs", "query_changes", "query_traces")
#: What an output without a ``lines:`` list writes besides its records: a pattern and its example
#: ("12× ERROR …", "e.g. …"), a heading ("templates:"). Its first line is the call as made.
_SUMMARY_LINE = re.compile(r"\s*(?:\d+×\s|e\.g\.\s)|[^\n]*:\s*$")


def listed_lines(output: str) -> list[str] | None:
    """The lines a log query's output lists after ``lines:`` (None: it lists none so)."""
    return output.split(_LINES_MARK, 1)[1].splitlines() if _LINES_MARK in output else None


#: Where a series' points begin in ``query_metrics`` output, each "2014-07-14T18:00:00Z 0ms".
_POINTS_MARK = "\npoints:\n"
_POINT_CLOCK = re.compile(r"\d{4}-\d{2}-\d{2}T(\d{2}):(\d{2})")
_CLAIM_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})")


def points_in_range(count: Entity, facts: Iterable[Entity], outputs: Iterable[str], claim_text: str = "") -> bool:
    """Is ``count`` the number of a series' listed points from the claim's first clock to its last
    (or to the last point, when it writes one clock): "from 18:00 UTC to the end of the window all
    twelve points read 0 ms"? Clocks as the lines write them (a zoned claim clock in UTC). Clocks
    the claim lists ("三个非零值：00:00 和 00:02") are its members, no range: ``enumerated``'s."""
    if count.kind != "quantity" or count.dimension != "count" or count.value is None:
        return False
    if _CLOCK_LIST.search(claim_text) is not None:
        return False
    minutes = sorted(  # each clock once: "18:00 UTC (11:30 pm IST)" is one
        {
            int(m.group(1)) * 60 + int(m.group(2))
            for f in facts
            if f.kind == "timestamp"
            for n in f.needles[-1:]
            if (m := _CLAIM_CLOCK.match(n))
        }
    )
    if not minutes:
        return False
    for output in outputs:
        if _POINTS_MARK not in output:
            continue
        listed = [
            int(m.group(1)) * 60 + int(m.group(2))
            for line in output.split(_POINTS_MARK, 1)[1].splitlines()
            if (m := _POINT_CLOCK.match(line))
        ]
        if not listed:
            continue
        last = minutes[-1] if len(minutes) > 1 else listed[-1]
        if sum(1 for at in listed if minutes[0] <= at <= last) == count.value:
            return True
    return False


def tallied(count: Entity, facts: Iterable[Entity], outputs: Iterable[str], names: Iterable[str] = ()) -> bool:
    """Is ``count`` (a count quantity) the number of lines of one cited output naming one of the
    claim's subjects (``facts``: the claim's other facts; ``names``: the names from code it
    writes)? Each subject is counted by its first needle (a date by its date)."""
    if count.kind != "quantity" or count.dimension != "count" or count.value is None or count.value < 1:
        return False
    if count.value != count.value.to_integral_value():
        return False
    subjects = [f.needles[0] for f in facts if f.kind in _SUBJECT_KINDS and f is not count and f.needles]
    subjects += names
    if not subjects:
        return False
    wanted = int(count.value)
    for output in outputs:
        lines = listed_lines(output)
        if lines is None:
            if not output.startswith(_EVENT_TOOLS):
                continue  # a series' points and summaries are no events: "4 次" is no count of "11:00" lines
            lines = [line for line in output.splitlines()[1:] if not _SUMMARY_LINE.match(line)]
        if any(sum(1 for line in lines if subject in line) == wanted for subject in subjects):
            return True
    return False


#: A clock the claim lists (its minute, to the second when written).
#: (Not after a clock's digits, but after a colon read from ：, as in "值:00:00".)
_LISTED_CLOCK = re.compile(r"(?<!\d)(?<!\d:)(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])")
#: Between two clocks of a range ("21:33–21:35", "18:55 到 19:05"): a range names its ends, not its members.
_RANGE_JOIN = re.compile(r"\s*(?:[-–—~至到]|to)\s*$")
#: The addends of a sum the claim writes out ("(2.56 + 6.4) / 144").
_ADDENDS = re.compile(r"\d+(?:\.\d+)?(?:\s*\+\s*\d+(?:\.\d+)?)+")
#: The least and most members a claim counts by listing them.
_LEAST_LISTED, _MOST_LISTED = 2, 12


def enumerated(count: Entity, claim_text: str) -> bool:
    """Is ``count`` the number of things its own sentence lists: distinct clocks not joined as a
    range ("只有两个非零值：UTC 18:55 的 2.56 和 19:05 的 6.4", "11:19 和 11:20 两分钟"), or the
    addends of a sum it writes ("这两个点撑起来的：(2.56 + 6.4) / 144")? The claim counted what it
    names; each named thing is checked on its own."""
    if count.kind != "quantity" or count.value is None or count.dimension not in ("count", "time"):
        return False
    if count.value != count.value.to_integral_value() or not _LEAST_LISTED <= count.value <= _MOST_LISTED:
        return False
    wanted = int(count.value)
    at = fact_at(claim_text, count.text)
    if at < 0:
        return False
    start, end = sentence_of(claim_text, at, at + len(count.text))  # a count is of what its own sentence lists
    sentence = claim_text[start:end]
    clocks: list[tuple[int, int, int]] = []
    for match in _LISTED_CLOCK.finditer(sentence):
        if clocks and _RANGE_JOIN.search(sentence, 0, match.start()) and _ends_at_clock(sentence, match.start()):
            clocks.pop()  # the range's start was no member either
            continue
        clock = (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))
        if clock not in clocks:
            clocks.append(clock)
    if len(clocks) == wanted and (count.dimension == "count" or _consecutive(clocks, count)):
        return True
    if count.dimension != "count":
        return False
    # the addends of a sum it writes, or the values it lists ("4 个采样点：89.65%、82.21%、84.95%、76.32%")
    if any(len(re.split(r"\s*\+\s*", m.group())) == wanted for m in _ADDENDS.finditer(sentence)) or any(
        len(_LIST_MARK.split(m.group())) == wanted for m in _LISTED_VALUES.finditer(sentence)
    ):
        return True
    # the names it lists right before the count or after it and a colon ("WeChat、chrome、Dropbox 和
    # SogouCloud 四个程序", "three hosts: dn228, dn229 and dn231")
    here, after = at - start, at - start + len(count.text)
    beside = (
        m
        for m in _LISTED_NAMES.finditer(sentence)
        if (m.end() <= here and not sentence[m.end() : here].strip(" ,，—–-"))
        or (m.start() >= after and _AFTER_COUNT.fullmatch(sentence, after, m.start()))
    )
    return any(len(_LIST_MARK.split(m.group())) == wanted for m in beside)


#: Values written one after another, apart by list marks ("89.65%、82.21%、84.95%", "3.1 s, 2.9 s and 4 s").
_LIST_MARK = re.compile(r"\s*(?:[、,，]\s*(?:and\s+|和\s*)?|\s(?:and|和)\s+|和)\s*")
_LISTED_VALUE = r"\d+(?:\.\d+)?\s?(?:%|[A-Za-z]{1,3}\b)?"
#: Two clocks the claim lists, a list mark between ("00:00 和 00:02", "18:55, 19:05 and 19:15").
_CLOCK_LIST = re.compile(
    r"(?<!\d)(?<!\d:)\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?(?:\s?[A-Z]{2,5})?"
    rf"{_LIST_MARK.pattern}\d{{1,2}}:\d{{2}}(?![\d:]|\.\d)"
)
_LISTED_NAME = r"[A-Za-z][\w.\-]*"
_LISTED_NAMES = re.compile(rf"(?<![\w.\-])(?:{_LISTED_NAME})(?:{_LIST_MARK.pattern}(?:{_LISTED_NAME}))+(?![\w\-])")
#: Between a count and the list it names: its noun, then a colon ("三个程序：", "three hosts: ").
_AFTER_COUNT = re.compile(r"[^\n:：。.;；]{0,12}[:：]\s*")
_LISTED_VALUES = re.compile(
    rf"(?<![\d.])(?<!\d:)(?:{_LISTED_VALUE})(?:{_LIST_MARK.pattern}(?:{_LISTED_VALUE}))+(?!\d|[.:]\d)"
)


def _ends_at_clock(text: str, at: int) -> bool:
    """Does the text right before ``at`` (a range's joining mark) follow a clock?"""
    before = _RANGE_JOIN.sub("", text[:at])
    return _LISTED_CLOCK.search(before[-8:]) is not None and before[-1:].isdigit()


def _consecutive(clocks: list[tuple[int, int, int]], duration: Entity) -> bool:
    """Listed clocks one unit of the duration apart each ("11:19 和 11:20 两分钟": two minutes)."""
    if duration.factor is None:
        return False
    step = int(duration.factor)
    seconds = sorted(h * 3600 + m * 60 + s for h, m, s in clocks)
    return step in (60, 3600) and all(b - a == step for a, b in pairwise(seconds))


#: A numbered record an output lists ("anomaly 2: …", "trace 1 …", "#3 mysql …").
_NUMBERED = re.compile(r"^\s*(?:(?P<label>[A-Za-z][A-Za-z_]*)\s+|#)(?P<n>\d{1,3})\b", re.MULTILINE)


def quoted_records(count: Entity, own: str, outputs: Iterable[str] = ()) -> bool:
    """Is ``count`` the number of numbered records of one kind the claim quotes ("三次都涨到 1.9 GB
    左右" quoting anomalies 1, 2 and 3 of a series), or of that kind a cited output lists, one of
    them quoted ("两次下跌之间" quoting anomaly 2 of an output listing anomalies 1 and 2)?"""
    if count.kind != "quantity" or count.dimension != "count" or count.value is None:
        return False
    if count.value != count.value.to_integral_value() or not _LEAST_LISTED <= count.value <= _MOST_LISTED:
        return False
    kinds = _records(own)
    if any(len(numbers) == int(count.value) for numbers in kinds.values()):
        return True
    return any(
        len(listed.get(kind, ())) == int(count.value)
        for listed in (_records(output[:_RECORDS_HEAD]) for output in outputs)
        for kind in kinds
    )


#: Where an output lists its numbered records (anomalies, traces): its head, not 64 KB of lines.
_RECORDS_HEAD = 16384


def _records(text: str) -> dict[str, set[str]]:
    """The numbers of each kind of numbered record ``text`` lists ("anomaly" → {"1", "2"})."""
    kinds: dict[str, set[str]] = {}
    for match in _NUMBERED.finditer(text):
        kinds.setdefault((match.group("label") or "#").lower(), set()).add(match.group("n"))
    return kinds
