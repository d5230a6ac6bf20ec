"""``claim.stated_content``: a confirmed claim says only what its own excerpts say.

Exact facts are ``claim.entity_grounding``'s. This rule reads the rest of a claim — the
concepts of ``text/concepts.yaml`` in its own words (``text/quotes.py``: what it quotes of its
evidence aside) — and asks whether the lines its excerpts quote state the same concept, in
any language:

- absolute ("所有请求都…", "every Full GC", "一直") or an interpretation of what happened
  ("the machine failed", "内存泄漏") not stated there ⇒ ``warn`` *unstated*: the guardrails
  carry the claim as a hypothesis (overstated). An absolute bound to a count ("all 50
  connections", "两个实例都") is a count, stated by its number;
- a direction ("dropped", "上升") that the quoted lines state the other way, or that runs
  against the claim's own numbers ("从 120 降到 900") ⇒ ``fail`` *contradicts*;
- a direction or evaluation ("sharply") not stated ⇒ ``warn`` *inferred* (at most an
  inference) — or *unstated* where the cited output says nothing changed;
- a ratio ("5 倍", "×5") no tool stated ⇒ *inferred* when two numbers of the claim or its
  lines give it, else *unstated*;
- a bound over a period ("never above 80%", "一直高于 2 秒", "都在 50 以下") is computed over every
  point the cited series lists in it (``text/bounds.py``): all on its side state its absolute;
  one across ⇒ ``fail`` *contradicts*.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, tzinfo
from decimal import Decimal
from functools import lru_cache, partial
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.gatekeeper import RuleStatus
from veridiag.contracts.invocation import InvocationView
from veridiag.gatekeeper.context import ClaimView, RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata
from veridiag.text.bounds import (
    ANY_TIME,
    Bound,
    Point,
    broken_by,
    claimed_bound,
    clocks_of_day,
    keeps_on,
    last_points,
    of_latest,
    onward,
    series_points,
    spans_times,
    unsure_bound,
)
from veridiag.text.comparisons import another_fields_value, claimed_comparisons, first_against, may_compare
from veridiag.text.comparisons import fields as line_fields
from veridiag.text.concepts import ConceptHit, concepts, owned
from veridiag.text.concepts import sentence as sentence_of
from veridiag.text.entities import (
    NO_BARE_AFTER,
    Corpus,
    Entity,
    EntityKind,
    TextFacts,
    claim_reading,
    extract_entities,
    fact_at,
    is_difference,
)
from veridiag.text.normalize import chinese_number, reader_text
from veridiag.text.quotes import fold, own_words, quoted_nowhere
from veridiag.text.spoken import calendar_dates
from veridiag.text.statistics import statistics
from veridiag.text.tallies import listed_lines
from veridiag.text.units import Unit, decimal_or_none, unit_table

#: How a reason starts says what the guardrails do with the claim (pipeline/guardrails.py).
UNSTATED = "unstated"
#: An absolute ("every", "都", "一直") its quoted lines do not state: a generalisation the claim
#: drew from them, shown as an inference (issue 27 D3), never as what they say — and never in a PASS.
ABSOLUTE = "absolute"
INFERRED = "inferred"
CONTRADICTS = "contradicts"

_OPPOSITE = {"up": "down", "down": "up"}
#: A multiple: "5 倍", "5x", "×5", "5-fold", "翻倍".
MULTIPLE = (
    r"(?:(?<![A-Za-z0-9])[×x]\s*(?P<before>\d+(?:\.\d+)?))(?![\d.])"
    r"|(?<![\w.])(?P<after>\d+(?:\.\d+)?)\s*(?:倍|x(?![A-Za-z])|×|-?fold)"
)
#: ``MULTIPLE`` after the character every match starts with: the engine passes other places at one
#: test instead of trying both alternatives' look-behinds (~2 % of a Gatekeeper check, measured).
_MULTIPLE = re.compile(rf"(?=[×x\d])(?:{MULTIPLE})")
#: A whole number counting what follows it ("6 services", "3 台机器"; not a clock, date, version,
#: decimal or a code at a clause's end).
_BARE_COUNT = re.compile(r"(?<![\d:.\-/])\d+\s?(?:[个台条次家项位]|[\u4e00-\u9fff]|(?P<word>[A-Za-z]+))")
_DIGIT = re.compile(r"\d")
_UNITS = unit_table()
#: The parts of a metric's name (``node_cpu_usage_rate`` → node, cpu, usage, rate).
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _other_scope(text: str, cited: list[InvocationView], scopes: dict[str, list[str]]) -> list[tuple[str, str]]:
    """The claim names a scope (a pod, a node) that no series it cites is of, while each is of
    one other scope its name says: it gives another thing's value as its subject's."""
    metrics = [str(inv.arguments.get("metric") or "") for inv in cited if inv.tool_name == "query_metrics"]
    if not scopes or not metrics or len(metrics) != len(cited):
        return []
    words_of = {scope: {w.lower() for w in words} for scope, words in scopes.items()}
    parts = [{p.lower() for p in _NAME_PART.findall(metric)} for metric in metrics]
    of = {scope for scope, words in words_of.items() for named in parts if named & words}
    if len(of) != 1 or not all(named & words_of[next(iter(of))] for named in parts):
        return []
    series = next(iter(of))
    read = reader_text(text).lower()
    named = {scope for scope, words in words_of.items() if any(_names(read, word) for word in words)}
    if series in named or not named:
        return []
    names, listed = "/".join(sorted(named)), ", ".join(metrics)
    return [(CONTRADICTS, f"it names the {names}, the series it cites are the {series}'s ({listed})")]


def _names(read: str, word: str) -> bool:
    """Does ``read`` name ``word`` (a Latin word whole, in the plural or possessive too)?"""
    if not word.isascii():
        return word in read
    return re.search(rf"(?<![a-z]){re.escape(word)}(?:s|'s|’s)?(?![a-z])", read) is not None


#: What ends a clause: an absolute counts what its own clause counts.
_CLAUSE_MARKS = ("，", ",", "；", ";", "。", ". ", "：", ": ", "\n")
#: What starts a clause of another subject: a sentence's end, a relative clause ("…, which set X
#: from 16 to 1"). A comma alone does not ("dropped to 2% at 03:54, down from 41%").
_SUBJECT_MARKS = ("；", ";", "。", ". ", "\n", ", which", ", where", ", who", "，其中", "，而", ", while")


class StatedParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    claim_types: list[str] = Field(default_factory=list, alias="claimTypes")
    #: Alignment from which an excerpt quotes a line of the output.
    aligned_at: float = Field(default=0.5, ge=0, le=1, alias="alignedAt")
    #: Relative tolerance of a ratio computed from two numbers against the one written.
    ratio_tolerance: float = Field(default=0.1, ge=0, le=1, alias="ratioTolerance")
    #: What a series is of (``node``, ``pod``) → the words that name it, in a claim or as a part
    #: of a metric's name: a claim naming one scope while every series it cites is of another
    #: states another thing's value ("the pod's CPU peaked at 5.05 %" of ``node_cpu_usage_rate``).
    scopes: dict[str, list[str]] = Field(default_factory=dict)
    #: Words that put an event on another day than the one before it ("次日", "the next day"): the
    #: claim states a change of date, which cited outputs on one date (or none) do not show.
    relative_days: list[str] = Field(default_factory=list, alias="relativeDays")


@register
class StatedContent(GatekeeperRule):
    id = "claim.stated_content"
    Params = StatedParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(StatedParams)
        result = RuleResult(self.id)
        for claim in context.claim_views():
            text = claim.claim.get("claim_text")
            if not isinstance(text, str) or (
                params.claim_types and claim.claim.get("claim_type") not in params.claim_types
            ):
                continue
            lines = context.quoted_lines(claim, params.aligned_at)
            if not lines:
                continue  # nothing quoted: excerpt and grounding rules speak for it
            cited = [inv for b in claim.bindings for inv in b.usable if inv.output]
            asked = "\n".join(dict.fromkeys(context.evidence(inv).context for inv in cited))
            inference = claim.claim.get("support_level") == "indirect"
            stated = partial(
                _stated_otherwise, context, text, lines, cited, inference, quoting=(claim, params.aligned_at)
            )
            outputs = _CitedOutputs(context, cited)
            claimed, denied = concepts().read_claim(text)  # read once: both judgements below need its words
            problems = _judge(
                text,
                claimed,
                lines,
                asked,
                outputs=outputs,
                params=params,
                stated=stated,
                inference=inference,
                denied=denied,
                zones=context.reader_zones,
            )
            ordinal = [
                *_ordinal_times(text, claimed, [inv.output for inv in cited]),
                *_swapped_change(text, lines),
                *_arrow_order(text, lines),
                *_field_values(text, lines),
                *_event_order(text, claim),
                *_order_undated(text, lines),
                *_quoted_nowhere(text, context, cited),
                *_value_at(text, valued := context.service_blind_entities(text, _VALUE_KINDS), outputs),
                *_statistic(text, valued, lines, outputs),
                *_another_fields_value(text, valued, lines),
                *_series_statistic(text, valued, lines, [_metric_name(inv) for inv in cited]),
                *_compared_values(text),
                *_recovered_in_episode(text, [inv.output or "" for inv in cited]),
                *_peak_time(text, valued, [inv.output or "" for inv in cited], context.reader_zones),
                *_other_scope(text, cited, params.scopes),
                *_unread_numbers(text, [inv.output or "" for inv in cited]),
                *_compound_durations(text, [inv.output or "" for inv in cited]),
                *_relative_day(text, [inv.output or "" for inv in cited], params.relative_days),
            ]
            if ordinal:
                problems = [*(problems or []), *ordinal]
            if problems is None:
                continue  # no concept word, no ratio: nothing for this rule to judge (kept out of the audit)
            if not problems:
                result.add(claim.target, "pass", "its concepts are its quoted lines'")
                continue
            worst = min(problems, key=lambda p: (CONTRADICTS, UNSTATED, ABSOLUTE, INFERRED).index(p[0]))
            outcome: RuleStatus = "fail" if worst[0] == CONTRADICTS else "warn"
            listed = "; ".join(reason for _kind, reason in problems)
            result.add(claim.target, outcome, f"{worst[0]}: {listed}")
        return result


#: A number as a claim may write it: digits (with a decimal part and an exponent, "4.38e2"), or a
#: Chinese numeral of two characters or more with a place in it ("六百一十七", "十二", "三十"; not
#: "一次", "十分").
_NUMERAL = re.compile(
    r"(?<![A-Za-z0-9_.:/-])(?P<digits>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![0-9:/]|\.\d|[eE][+-]?\d)"
    # (not opening with 百 千 万: "千万不要", "万一" are words)
    r"|(?P<zh>(?:[零〇一二两三四五六七八九]+[十百千万]|十[零〇一二三四五六七八九])[零〇一二两三四五六七八九十百千万]*)"
)
#: Fewer characters than this (a single digit) are left to the exact-fact checks: one digit is in
#: every output.
_NUMERAL_LEAST = 2


def _unread_numbers(text: str, outputs: list[str]) -> list[tuple[str, str]]:
    """Numbers no fact reader takes up — written in a form it does not read (scientific notation,
    a Chinese numeral outside a unit, a number before a word that is no unit) — that the cited
    outputs do not write either: whatever the number says is checked by nothing, so the claim is
    at most an inference (issue 27 D3: a confirmed claim says only what its excerpts say). Found by
    the red team: "4.38e2ms", "六百一十七 lines", "状态码 五百四十" and "Jan 82" reached CONFIRMED."""
    read = reader_text(text)
    # a digit, or a place of a Chinese numeral (one C call per character, no generator frame)
    if not (any(map(str.isdigit, read)) or any(place in read for place in "十百千万")):
        return []
    unread: list[tuple[str, str]] = []  # (as written, in digits): in no cited output, read by no other check
    dates = calendar_dates(read, re.findall(r"[A-Za-z]+", read))  # "15 May", "7 月 15 日": the date checks' to read
    for match in _NUMERAL.finditer(read):
        written = match.group()
        digits = match.group("digits")
        if any(start <= match.start() < end for start, end, _month, _day in dates):
            continue
        if _read_elsewhere(read, match.end(), digits is not None and "e" not in digits.lower()) and not (
            _date_part(read, match.end(), digits)
        ):
            continue
        if digits is None:
            value = chinese_number(written)
            if value is None:
                continue
            digits = value
        elif "e" not in digits.lower() and len(digits.replace(".", "")) < _NUMERAL_LEAST:
            continue
        number = _number_value(digits)
        if any(number in _values_in(output) for output in outputs) or (
            match.group("zh") is not None and any(written in output for output in outputs)
        ):
            continue
        unread.append((written, digits))
    if not unread:
        return []
    # a fact's own number is the exact-fact checks' to judge (read only when some number is left)
    covered = " ".join(part for e in extract_entities(read) for part in (e.text, *e.needles))
    return [
        (INFERRED, f"the number {written!r} is in no form a check reads, nor in the cited output")
        for written, digits in unread
        if "e" in digits.lower() or not _whole_number_in(digits, covered)
    ]


#: A duration glued in two or three units ("41m19s", "1h02m", "2h 5m", "3m 5.2s"): no fact reader
#: takes it up as one (its "m" reads as millicores), so it is stated only as its outputs write it.
_COMPOUND_DURATION = re.compile(
    r"(?<![\w.])\d+\s?h\s?\d{1,2}\s?m(?:\s?\d{1,2}(?:\.\d+)?\s?s)?(?![A-Za-z])"
    r"|(?<![\w.])\d+\s?m\s?\d{1,2}(?:\.\d+)?\s?s(?![A-Za-z])"
)


#: What every compound duration holds: a digit, "h" or "m", a digit.
_COMPOUND_HINT = re.compile(r"\d ?[hm] ?\d")


def _compound_durations(text: str, outputs: list[str]) -> list[tuple[str, str]]:
    """A compound duration the cited outputs do not write (blanks aside) is the claim's own reading:
    at most an inference. Found by the red team: "elapsed 42m19s" for a line's "elapsed 41m19s"
    reached CONFIRMED (its parts read as 42 millicores and 19 s)."""
    if _COMPOUND_HINT.search(text) is None:
        return []  # most claims (the full pattern's look-behinds cost ~4× this search, measured)
    found = _COMPOUND_DURATION.findall(text)
    if not found:
        return []
    written = "".join(output.replace(" ", "") for output in outputs)
    return [
        (INFERRED, f"the duration {duration!r} is written nowhere in the cited output")
        for duration in found
        if duration.replace(" ", "") not in written
    ]


#: After a number: a multiple (the ratio checks judge it: "约 234 倍", "5x", "3 times"), a part of a
#: clock or a date, or 多 ("二十多分钟": a range the duration checks read).
_OTHERS_AFTER = re.compile(rf"\s?(?:倍|[x×](?![A-Za-z])|times(?![A-Za-z])|-?fold(?![A-Za-z])|[{NO_BARE_AFTER}多])")
#: After digits: a unit (the lexer reads the quantity, the exact-fact checks judge it) or a degree.
_WITH_UNIT = re.compile(
    rf"\s?(?:°|(?i:{unit_table().alternation()})(?![A-Za-z_])"
    # the case-sensitive letters of sizes and millicores ("1931M", "1.52 m")
    rf"|(?:{'|'.join(sorted({*unit_table().size_letters, *unit_table().cpu_letters}, key=len, reverse=True))})"
    r"(?![A-Za-z_]))"
)


#: A date's part no date reader took up: a year before 年 (no date reads it: "2014 年 7 月 15 日" is
#: read as 7 月 15 日), a month or day outside a date read ("3 月 61 日", "30 月").
_DATE_PART = re.compile(r"\s?(?P<part>[年月日号])")


def _date_part(read: str, end: int, digits: str | None) -> bool:
    """Is the number ending at ``read[end]`` a year before 年, or a month or day no date reads?
    Found by the red team: "2104 年", "3 月 61 日" reached CONFIRMED, checked by nothing."""
    part = _DATE_PART.match(read, end)
    if part is None:
        return False
    if part.group("part") == "年":
        return digits is not None and len(digits) == 4
    return True


def _read_elsewhere(read: str, end: int, digits: bool) -> bool:
    """Is the number ending at ``read[end]`` one another check reads: a multiple, a clock's or a
    date's part, or — for digits, which the lexer reads, unlike a Chinese numeral — a quantity with
    its unit?"""
    return _OTHERS_AFTER.match(read, end) is not None or (digits and _WITH_UNIT.match(read, end) is not None)


@lru_cache(maxsize=8)
def _day_words(words: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for the relative-day words (Latin ones whole, as ``_names`` reads a word)."""
    return re.compile(
        "|".join(rf"(?<![a-z]){re.escape(w)}(?![a-z])" if w.isascii() else re.escape(w) for w in _day_spelled(words))
    )


@lru_cache(maxsize=8)
def _day_spelled(words: tuple[str, ...]) -> tuple[str, ...]:
    """The relative-day words as ``_day_words`` spells them: each of its matches is one of them,
    so a text holding none as a substring has no match (one ``str.__contains__`` each, ~2 µs a
    claim, where the pattern's look-behind at every position of every word cost ~10 µs, measured)."""
    return tuple(sorted({w.lower() for w in words}, key=len, reverse=True))


_ISO_DATE = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


def _relative_day(text: str, outputs: list[str], words: list[str]) -> list[tuple[str, str]]:
    """A day named relative to another ("前一天 15:00", "the next day at 14:30") where the cited
    outputs hold fewer than two dates: the change of date is the claim's own, at most an
    inference. Found by the red team: "the next day at 14:30Z" for a same-day clock reached
    CONFIRMED."""
    if not words:
        return []
    read, spelled = reader_text(text).lower(), tuple(words)
    if not any(map(read.__contains__, _day_spelled(spelled))):
        return []  # no word the pattern matches
    found = _day_words(spelled).search(read)
    if found is None:
        return []
    named = found.group()
    dates = {d for output in outputs for d in _ISO_DATE.findall(output)}
    if len(dates) >= 2:
        return []
    return [(INFERRED, f"{named!r} puts it on another day; the cited output shows {len(dates)} date(s)")]


def _number_value(number: str) -> Decimal | None:
    try:
        return Decimal(number).normalize()
    except ArithmeticError:
        return None


@lru_cache(maxsize=64)
def _values_in(text: str) -> frozenset[Decimal]:
    """Every number ``text`` writes, by value ("×11.00" writes 11; "438" is what "4.38e2" says)."""
    return frozenset(Decimal(n).normalize() for n in re.findall(r"\d+(?:\.\d+)?", text))


def _whole_number_in(number: str, text: str) -> bool:
    return re.search(rf"(?<![0-9.]){re.escape(number)}(?![0-9]|\.\d)", text) is not None


@dataclass(frozen=True, slots=True)
class _Stated:
    """What states a claim's concepts besides its lines' words."""

    concepts: frozenset[str] = frozenset()
    #: Templates that are every line their query matched: *all* of those lines say their text.
    templates: tuple[str, ...] = ()
    #: The lines the cited outputs list (after ``lines:``): *all* of them, or *the same* thing
    #: in each, is stated when every one names it.
    listed: tuple[str, ...] = ()
    #: The headings the quoted lines stand under ("slowest traces of X in the window …:"): what
    #: a heading says, it says of each line of its list.
    headings: tuple[str, ...] = ()
    #: The spans of time the quoted template lines' lines fall in ("26× INFO 05:05:50 – 05:12:56 …"),
    #: each as its count of lines and its first and last minute of the day.
    spans: tuple[tuple[int, int, int], ...] = ()
    #: The episode (a range of two instants) of each place of an output the claim quotes.
    episodes: tuple[str, ...] = ()
    #: The quoted template lines with their counts: one whose count the claim gives its set ("180
    #: 条慢查询，全部是同一种语句" quoting "180× … UPDATE t_stock …") is every line of that set.
    counted: tuple[tuple[int, str], ...] = ()
    #: The claim as written: ``own`` blanks the words it quotes, which may be what an absolute is
    #: about ("全部是同一种语句：UPDATE t_stock …" quoting that statement).
    claim: str = ""
    #: The clocks of the quoted lines, in order, each as its minute of the day: the events an
    #: interval the claim names ("every half hour") is between, when it writes none of them.
    clocks: tuple[int, ...] = ()
    #: What the cited log searches searched for (their ``query`` argument): every line they list
    #: holds it because they were asked for it.
    searched: tuple[str, ...] = ()

    def holds(self, hit: ConceptHit, own: str) -> bool:
        """Is ``hit`` stated — an *all* or *the same* by a template that is every line matched, or
        every line of the set the claim counts (``counted``), about what the template says of each
        line ("这些错误都是 IllegalStateException": a word of it there, and
        every fact), not what it varies on (``<*>``: "所有接口都…", "all on node-246"), or by what
        the claim's own clocks or quoted episodes compute (``_computed_sameness``)?"""
        if hit.concept in self.concepts:
            return True
        if hit.concept in ("all", "same") and _computed_sameness(own, hit, self.episodes, self.clocks):
            return True
        if any(concepts().states(hit.concept, heading) for heading in self.headings):
            return True
        if hit.concept in ("all", "same") and self._in_every_listed_line(hit, own):
            return True
        if hit.concept == "all" and self._within_a_span(hit, own):
            return True
        if hit.concept not in ("all", "same"):
            return False
        templates = list(self.templates)
        counted: list[str] = []
        if self.counted:
            counts = {int(n) for n in _COUNT.findall(reader_text(own))}
            counted = [template for count, template in self.counted if count in counts]
        if hit.concept == "same":  # an *all* of a count is the count's (``_counted``)
            templates += counted
        if not templates and not counted:
            return False
        end = _clause(own, hit)[1]
        if own[end : end + 1] in ("：", ":"):  # "全部是同一种语句：UPDATE …": what follows names it
            end = min((at for mark in _CLAUSE_MARKS if (at := own.find(mark, end + 1)) >= 0), default=len(own))
        said = (self.claim if len(self.claim) == len(own) else own)[hit.end : end]
        facts = [e.text.lower() for e in extract_entities(said)] + _ASSIGNMENT.findall(said.lower())
        terms = [*facts, *_TERM.findall(said.lower())]
        fixed = [" ".join(t.lower().split("<*>")) for t in templates]
        if any(all(f in text for f in facts) and any(t in text for t in terms) for text in fixed):
            return True
        # what the template varies on, the same in every one of its lines the output lists, all of
        # them ("30 条 Unknown base file，指向同一个 base 文件 a489c868…", "… all name the same
        # file, a489c868…": the name may follow in the sentence's next clause)
        names = self._unsearched(_shared_names(self.claim if len(self.claim) == len(own) else own, hit))
        return bool(names) and any(_every_instance_names(t, self.listed, names) for t in [*templates, *counted])

    def _unsearched(self, named: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """Of facts (each by its needles), those no cited log search searched for: one it did is on
        every line it listed by construction ("所有接口都返回了 504" of the lines a search for 504
        found says nothing of every endpoint)."""
        return [needles for needles in named if not any(n in term for n in needles for term in self.searched)]

    def outside_a_span(self, hit: ConceptHit, own: str) -> bool:
        """ "The 71 opens all happened between 05:05 and 05:12" while the quoted 71× template's
        lines run 04:00–06:40: the clocks of the hit's clause do not hold the span of a template
        whose count the claim names (a count states *all*, not when)."""
        found = self._spans_and_clocks(hit, own)
        if found is None:
            return False
        (low, high), counts = found
        return any(not (low <= first and last <= high) for count, first, last in self.spans if count in counts)

    def _within_a_span(self, hit: ConceptHit, own: str) -> bool:
        """ "All between 05:05 and 05:12": the two clocks of the hit's clause hold the first and
        last time of a quoted template's lines (a line of one day, to the minute); of several
        quoted, of each whose count the claim names ("the 71 opens all …" is not the 26 failures')."""
        found = self._spans_and_clocks(hit, own)
        if found is None:
            return False
        (low, high), counts = found
        # which template's lines, of several: those whose count the claim names
        spans = self.spans if len(self.spans) == 1 else tuple(span for span in self.spans if span[0] in counts)
        return bool(spans) and all(low <= first and last <= high for _, first, last in spans)

    def _spans_and_clocks(self, hit: ConceptHit, own: str) -> tuple[tuple[int, int], set[int]] | None:
        """The two clocks of the hit's clause (earlier first) and the counts the claim names; None
        without quoted template spans or two clocks."""
        if not self.spans:
            return None
        start, end = _clause(own, hit)
        clocks = clocks_of_day(reader_text(own[start:end]))
        if len(clocks) != 2:
            return None
        low, high = sorted(clocks)
        return (low, high), {int(n) for n in _COUNT.findall(reader_text(own))}

    def _in_every_listed_line(self, hit: ConceptHit, own: str) -> bool:
        """ "All on node-246", "都来自同一个主机 dn228": a host, service, code or id of the hit's
        clause that every listed line (two or more) names."""
        if len(self.listed) < 2:
            return False
        start, end = _clause(own, hit)
        named = [
            e.needles
            for e in extract_entities(own[start:end])
            if e.kind in ("identifier", "service", "error_code", "name")
        ]
        named += [(m.group(),) for m in _BARE_VALUE.finditer(reader_text(own[hit.end : end]))]
        named = self._unsearched(named)
        return any(all(any(n in line for n in needles) for line in self.listed) for needles in named)


#: Where a sentence ends (a full stop before a blank or the end, not a decimal point or an ellipsis).
_SENTENCE_END = re.compile(r"[。；;!！?？]|(?<!\.)\.(?!\.)(?=\s|$)")
#: The kinds of fact a template's ``<*>`` may hold the same in every line: names, not counts.
_NAME_KINDS = frozenset({"identifier", "name", "error_code", "service"})
#: A template line's count and message ("  30× WARN <first> – <last> Unknown base file: …/<*>").
_TEMPLATE_MESSAGE = re.compile(r"^\s*(\d+)× \S+ \S+ [–-] \S+ (.+)$")


#: A bare number of four digits or more: a value a claim may say every member shares ("pri 都是 1624553").
#: Not one a word follows: "all 4,102 entries" is a count.
_BARE_VALUE = re.compile(r"(?<![\w.])\d{4,}(?!\w|\.\d|\s*[^\W\d_])")


def _shared_names(own: str, hit: ConceptHit) -> list[tuple[str, ...]]:
    """What an *all* or *the same* says each member shares, by the needles each is found by: the
    names (ids, hosts, codes, services) and bare values of four digits or more in the rest of its
    clause, or in a short clause after it that names it ("… 都指向同一个文件 a489c868…", "… pri 都是
    1624553", "all name the same file, a489c868…")."""
    end = _clause(own, hit)[1]
    rest = own[hit.end : end]
    names = _names_in(rest)
    if not names and own[end : end + 1] in (",", "，"):
        after = own[end + 1 :]
        after = after[: next((m.start() for m in _SENTENCE_END.finditer(after)), len(after))]
        if len(after.split()) <= _APPOSITION_WORDS:
            names = _names_in(after)
    return names


#: How many words a clause naming what the clause before shares may hold ("…, a489c868…").
_APPOSITION_WORDS = 3


def _names_in(text: str) -> list[tuple[str, ...]]:
    facts = extract_entities(text)
    for fact in facts:
        if not fact.text.isdigit():  # a bare number the lexer reads as a count is still a value here
            text = text.replace(fact.text, " ")
    named = [fact.needles for fact in facts if fact.kind in _NAME_KINDS]
    return named + [(m.group(),) for m in _BARE_VALUE.finditer(reader_text(text))]


#: A pattern's field whose value varies: "ambient=<*>", "latency: <*>".
_VARIED_FIELD = re.compile(r"(?P<key>[A-Za-z_][\w.-]*)\s*[=:]\s*\(?<\*>")


def _pattern_values(evidence: str, rows: tuple[str, ...]) -> list[Point]:
    """The values a quoted log pattern's varying field takes in the lines of it the output lists,
    each a point of no time: one over a bound said of all of them crosses it, listed all or not."""
    points: list[Point] = []
    for line in evidence.splitlines():
        found = _TEMPLATE_MESSAGE.match(line)
        field = _VARIED_FIELD.search(line) if found else None
        if found is None or field is None:
            continue
        parts = [part.strip() for part in found.group(2).split("<*>") if part.strip()]
        instances = [row for row in rows if _in_order(row, parts)]
        if not parts:
            continue
        value = re.compile(rf"(?<![\w.]){re.escape(field.group('key'))}\s*[=:]\s*\(?(-?\d+(?:\.\d+)?)")
        for row in instances:
            number = value.search(row)
            if number is not None:
                points.append(Point(ANY_TIME, Decimal(number.group(1)), None))
    return points


def _unshared(own: str, hit: ConceptHit, lines: list[str]) -> bool:
    """Does the *all* say its members share a name or value no quoted template says of each of its
    lines (one log line's value said of all five nodes)?"""
    templates = [line for line in lines if _TEMPLATE_COUNT.match(line)]
    # the members the claim quotes one by one ("7731 和 7732，原因都是 fx-rates-service …")
    # (an excerpt and the whole line it quotes are one member)
    rows = [line for line in dict.fromkeys(lines) if line not in templates]
    members = [row for row in rows if not any(row != other and row in other for other in rows)]
    members = members if len(members) > 1 else []
    return any(
        not any(needle in template for template in templates for needle in needles)
        and not (members and all(any(needle in line for needle in needles) for line in members))
        for needles in _shared_names(own, hit)
    )


def _every_instance_names(template: str, rows: tuple[str, ...], facts: list[tuple[str, ...]]) -> bool:
    """Does every listed row that is an instance of ``template`` name each of ``facts`` (each by
    any of its needles), the rows being all its count says there are (a listing cut short states
    nothing of the rest)?"""
    found = _TEMPLATE_MESSAGE.match(template)
    if found is None:
        return False
    parts = [part.strip() for part in found.group(2).split("<*>") if part.strip()]
    if not parts:
        return False
    instances = [row for row in rows if _in_order(row, parts)]
    return len(instances) == int(found.group(1)) and all(
        any(needle in row for needle in fact) for row in instances for fact in facts
    )


def _in_order(row: str, parts: list[str]) -> bool:
    at = 0
    for part in parts:
        at = row.find(part, at)
        if at < 0:
            return False
        at += len(part)
    return True


#: A Latin word of five letters or more a template may hold (identifiers, exceptions, messages;
#: shorter words — them, were, full — say little about which lines).
_TERM = re.compile(r"[a-z][a-z0-9_.$]{4,}")
#: A field and its value as a claim writes one ("syncaction=2", lowered): a fact the template must
#: hold as written, not as ``syncAction=<*>``, the field it varies on.
_ASSIGNMENT = re.compile(r"(?<![\w.])[a-z_][\w.]*=[\w-]+(?:\.[\w-]+)*")


def _stated_otherwise(
    context: ValidationContext,
    text: str,
    lines: list[str],
    cited: list[InvocationView],
    inference: bool,
    *,
    quoting: tuple[ClaimView, float],
) -> _Stated:
    """What states a claim's concepts besides its lines' words: their structure, and for an
    inference the session — it explains what the session observed: the state it names ("支付
    超时的根因") may stand in any output the session cites, not only its own. ``quoting``: the
    claim and the alignment from which an excerpt quotes a line."""
    stated = replace(
        # each call once: two excerpts of one call cite it twice, which lists its rows twice
        _whole_set(lines, list({inv.id: inv.output or "" for inv in cited}.values())),
        episodes=_quoted_episodes(context, *quoting),
        searched=tuple(
            str(query) for inv in cited if inv.tool_name == "query_logs" and (query := inv.arguments.get("query"))
        ),
        claim=reader_text(text),
    )
    if inference:
        return replace(stated, concepts=stated.concepts | _session_states(context, text))
    return stated


def _quoted_episodes(context: ValidationContext, claim: ClaimView, aligned_at: float) -> tuple[str, ...]:
    """The episode (a range of two instants) of each place of an output the claim quotes: one per
    place, however many of its excerpts quote it."""
    places: dict[tuple[int, str], None] = {}
    for binding in claim.bindings:
        if not isinstance(binding.excerpt, str) or not binding.excerpt.strip():
            continue
        for invocation in binding.usable:
            located = context.locate(binding.excerpt, invocation)
            if located is not None and located.score >= aligned_at:
                places[invocation.id, located.region()] = None
    return tuple(episode.group() for _, region in places if (episode := _EPISODE.search(region)))


def _session_states(context: ValidationContext, text: str) -> frozenset[str]:
    """The state concepts of ``text`` some output the session cites states."""
    session = _CitedOutputs(context, list(context.invocations.values()))
    return frozenset(
        hit.concept for hit in concepts().in_claim(text) if hit.kind == "state" and session.state(hit.concept)
    )


class _CitedOutputs:
    """What a claim's cited outputs state as a whole, each output read once per concept per
    run: an output may be 64 KB, and most claims never ask (only a direction or an evaluation
    does)."""

    def __init__(self, context: ValidationContext, invocations: list[InvocationView]) -> None:
        self._context, self._invocations = context, invocations

    def state(self, concept: str) -> bool:
        return any(self._states(invocation, concept) for invocation in self._invocations)

    def calm(self) -> bool:
        """Does a cited output say nothing changed?"""
        return self.state("calm")

    def points(self) -> list[Point]:
        """Every point the cited metric outputs list (each output read once per run)."""
        return [point for points in self.series() for point in points]

    def series(self) -> list[list[Point]]:
        """Each cited output's points (a metric output is one series)."""
        found: list[list[Point]] = []
        for invocation in self._invocations:
            key = ("points", invocation.id)
            if key not in self._context.memo:
                self._context.memo[key] = series_points(invocation.output or "")
            found.append(self._context.memo[key])
        return found

    def rows(self) -> tuple[str, ...]:
        """The lines the cited log outputs list (each call once)."""
        outputs = {invocation.id: invocation.output or "" for invocation in self._invocations}
        return tuple(row for output in outputs.values() for row in listed_lines(output) or () if row.strip())

    def during(self, concept: str, when: frozenset[int]) -> bool:
        """Does a cited output state ``concept`` on a line whose episode holds one of the minutes
        ``when`` (``_ROUNDING`` either side: "rose at 10:00" of an episode from 10:01)?"""
        vocabulary = concepts()
        for invocation in self._invocations:
            output = invocation.output or ""
            for episode in _EPISODE.finditer(output):
                start = output.rfind("\n", 0, episode.start()) + 1
                end = output.find("\n", episode.end())
                line = output[start : end if end >= 0 else len(output)]
                if _holds(episode, when, _ROUNDING) and vocabulary.states(concept, line):
                    return True
        return False

    def _states(self, invocation: InvocationView, concept: str) -> bool:
        key = ("states", concept, invocation.id)
        memo = self._context.memo
        if key not in memo:
            memo[key] = bool(invocation.output) and concepts().states(concept, invocation.output or "")
        return bool(memo[key])


#: A log template as query_logs writes it ("840× ERROR …") and the count of lines it matched.
_TEMPLATE_COUNT = re.compile(r"^\s*(\d+)× ")
_MATCHED = re.compile(r"^matched (\d+) lines?\b", re.MULTILINE)
#: A window summary whose least and greatest values are one ("min 50 connections, max 50 connections").
_MIN_MAX = re.compile(r"\bmin (?P<low>-?\d+(?:\.\d+)?)\b.*?\bmax (?P<high>-?\d+(?:\.\d+)?)\b")


#: Where an output's header lists its templates and anomalies (they come first).
_HEAD = 16384
_TEMPLATE_LINE = re.compile(r"^\s+\d+× .*$", re.MULTILINE)
#: A template line's first and last time, on one day ("26× INFO 2017-07-27T05:05:50Z – 2017-07-27T05:12:56Z …").
_TEMPLATE_SPAN = re.compile(
    r"^\s*(?P<count>\d+)× \S+ (?P<day>\d{4}-\d{2}-\d{2})T(?P<h1>\d{2}):(?P<m1>\d{2})\S* [–-] "
    r"(?P=day)T(?P<h2>\d{2}):(?P<m2>\d{2})"
)
#: A whole number in a claim, not part of a clock, decimal or id ("the 71 opens").
_COUNT = re.compile(r"(?<![\d:.\w])(\d+)(?![\d:.]\d|\w)")
_ANOMALY_LINE = re.compile(r"^anomaly (\d+):", re.MULTILINE)


def _whole_set(lines: list[str], outputs: list[str]) -> _Stated:
    """The absolutes the quoted lines state by their structure, not a word: a template whose
    count is every line the query matched ("12×" of "matched 12 lines"), or an output's only
    template when it is all the output matched, says *all* those lines say its text; a window
    whose min is its max is that value *always* (and at *all* its points); a quoted anomaly of
    an output that lists one is *the only* one."""
    stated: set[str] = set()
    matched = {int(m.group(1)) for output in outputs for m in _MATCHED.finditer(output[:4096])}
    templates = [line for line in lines if _TEMPLATE_COUNT.match(line)]
    for output in outputs:
        listed = [m.group(0) for m in _TEMPLATE_LINE.finditer(output[:_HEAD])]
        if len(listed) == 1:
            templates.append(listed[0])
        if any(line.startswith("anomaly 1:") for line in lines) and len(_ANOMALY_LINE.findall(output[:_HEAD])) == 1:
            stated.add("same")
        if any(_sole_item(output, line) for line in lines if not _TEMPLATE_COUNT.match(line)):
            # (a template is judged by its count against what was matched, above)
            stated.add("all")
    for line in lines:
        bounds = _MIN_MAX.search(line)
        if bounds is not None and Decimal(bounds.group("low")) == Decimal(bounds.group("high")):
            stated |= {"always", "all"}
    whole = tuple(t for t in templates if (count := _TEMPLATE_COUNT.match(t)) and int(count.group(1)) in matched)
    shown = tuple(row for output in outputs for row in listed_lines(output) or () if row.strip())
    spans = tuple(
        (int(m["count"]), int(m["h1"]) * 60 + int(m["m1"]), int(m["h2"]) * 60 + int(m["m2"]))
        for line in lines
        if (m := _TEMPLATE_SPAN.match(line))
    )
    counted = tuple((int(count.group(1)), t) for t in templates if (count := _TEMPLATE_COUNT.match(t)))
    clocks = tuple(dict.fromkeys(clocks_of_day("\n".join(lines))))  # an excerpt and its whole line: once
    return _Stated(frozenset(stated), whole, shown, _headings(lines, outputs), spans, counted=counted, clocks=clocks)


def _sole_item(output: str, line: str) -> bool:
    """Is ``line`` the one line of the list its heading opens ("calls (caller → callee) in the
    window …:" over a single call)? What it says, it says of every member: "every call into
    ts-price-service came from ts-basic-service"."""
    at = output.find(line) if line.strip() and not line.rstrip().endswith((":", "：")) else -1
    if at < 0:
        return False
    start = output.rfind("\n", 0, at) + 1
    above = output.rfind("\n", 0, max(start - 1, 0)) + 1
    if start == 0 or not output[above : start - 1].rstrip().endswith((":", "：")):
        return False  # not right under its heading: a list of more than one
    end = output.find("\n", at + len(line))
    if end < 0:
        return True  # the output's last line
    stop = output.find("\n", end + 1)
    following = output[end + 1 : stop if stop >= 0 else len(output)]
    return not following.strip() or following.rstrip().endswith((":", "："))


def _headings(lines: list[str], outputs: list[str]) -> tuple[str, ...]:
    """The heading each quoted line stands under in its output: the nearest line above it that
    ends with a colon (a list's title: "slowest traces of ts-price-service in the window (by its
    longest span in each):", "templates:"). A quoted line that is itself a heading has none."""
    found: list[str] = []
    for output in outputs:
        for line in lines:
            at = output.find(line) if line.strip() and not line.rstrip().endswith(":") else -1
            if at < 0:
                continue
            end = output.rfind("\n", 0, at)  # row by row upwards, without splitting 64 KB
            while end > 0:
                start = output.rfind("\n", 0, end) + 1
                row = output[start:end].rstrip()
                if row.endswith((":", "：")):
                    found.append(row)
                    break
                end = start - 1
    return tuple(dict.fromkeys(found))


def _judge(
    text: str,
    claimed: list[ConceptHit],
    lines: list[str],
    asked: str,
    *,
    outputs: _CitedOutputs,
    params: StatedParams,
    stated: Callable[[], _Stated] = _Stated,
    inference: bool = False,
    denied: list[ConceptHit] | None = None,
    zones: Callable[[], tuple[tzinfo, ...]] = tuple,
) -> list[tuple[str, str]] | None:
    """What the claim says that its lines do not; None when it says nothing this rule reads.
    What a line is about may stand in what the call asked for instead (``asked``: its metric or
    query): "the error rate rose" quoting "peak 12.49%" of ``gateway_error_rate`` states an
    error; its absolutes, directions and evaluations must be the lines' own. ``claimed``: the
    claim's concept words (``Concepts.in_claim(text)``). ``stated``: the concepts stated
    otherwise (by the lines' structure, or the session for an inference), asked only when a word
    is not stated by the lines. An ``inference`` may interpret: what it reads into its lines
    makes it an inference, which it says it is, not a hypothesis. ``denied``: the interpretations
    the claim denies (``Concepts.denied_in_claim(text)``, read with ``claimed``). ``zones``: the
    zones the answer names for its reader, a clock written without one may be in (asked only for a
    direction)."""
    vocabulary = concepts()
    evidence = "\n".join(lines)
    own = own_words(text, lines, quoted=False)
    problems: list[tuple[str, str]] = []
    otherwise: _Stated | None = None
    hits = owned(claimed, own)
    # a denied word copied from the line is still denied
    denials = vocabulary.denied_in_claim(text) if denied is None else denied
    stated_bound = claimed_bound(own)
    every_point = keeps_on(own) or (stated_bound is not None and stated_bound.turned)
    at_the_end = stated_bound is not None and stated_bound.period is None and of_latest(own)
    compared = _fields_compared(own, lines, outputs, every=any(hit.kind == "absolute" for hit in hits) or every_point)
    if (
        not compared
        and not hits
        and not denials
        and not every_point
        and not at_the_end
        and not _MULTIPLE.search(reader_text(own))
        and not vocabulary.ratio_words(own)
        # "N times" and "N% of expected" need a digit: most claims without a concept word have none
        and not vocabulary.times_ratios(own)  # "five times higher" has no digit
        and not vocabulary.factor_ratios(own)  # nor "a factor of three"
        and not (_DIGIT.search(own) and vocabulary.percent_ratios(own))
    ):
        return None
    # A bound is a statement about every point only with an absolute ("一直", "never", "all"):
    # "exceeded 2s at 10:05" speaks of one point.
    over_time = any(hit.kind == "absolute" for hit in hits) or every_point
    bound = stated_bound if over_time else None
    if bound is None and over_time and unsure_bound(own):
        problems.append((UNSTATED, "its bound's side is unsure: a negation before it, of it or of something else"))
    broken = _bound_broken(bound, evidence, outputs, to_the_end=onward(own)) if bound is not None else False
    if isinstance(broken, Point):
        problems.append((CONTRADICTS, _crossed(broken)))
    problems += compared
    if at_the_end and stated_bound is not None:
        problems += _bound_at_the_end(stated_bound, outputs)
    # A rise and a fall in one claim tell an episode's course ("rose to 95% and fell back to 20%"):
    # a line stating one of them does not contradict the other.
    both = {hit.concept for hit in hits if hit.kind == "direction"} >= set(_OPPOSITE)
    for hit in hits:
        if hit.kind == "ordinal":
            continue  # checked against the whole output (``_ordinal_times``)
        if (
            vocabulary.states(hit.concept, evidence)
            or (hit.kind == "state" and vocabulary.states(hit.concept, asked))
            or (otherwise := stated() if otherwise is None else otherwise).holds(hit, own)
        ):
            continue
        if hit.kind == "absolute" and broken is None:
            continue  # every point of the period keeps the bound it states: computed, as stated
        if hit.concept == "all":
            otherwise = stated() if otherwise is None else otherwise
            if otherwise.outside_a_span(hit, own):
                problems.append((UNSTATED, f"{hit.word!r} ({hit.concept}): its counted lines fall outside its clocks"))
                continue
        if (
            hit.kind == "absolute"
            # a count or share states an *all* of what it counts; a level is no count of the times
            # it held ("一直处在 100% 左右" is every point of the period, not 100% of something)
            # (not when it says what each member shares: "五台节点的 pri 都是 1624553" is no count's)
            and (hit.concept == "always" or not _counted(own, hit) or _unshared(own, hit, lines))
            and not (hit.concept == "always" and vocabulary.calm_always(own[slice(*_clause(own, hit))], evidence))
            and not vocabulary.absence_counted(own, hit, evidence)
            and not vocabulary.enumerated(own, hit)
        ):
            problems.append((ABSOLUTE, f"{hit.word!r} ({hit.concept}) is not what its quoted lines say"))
        elif hit.kind == "state":
            kind = INFERRED if inference else UNSTATED
            problems.append((kind, f"{hit.word!r} ({hit.concept}) interprets what its quoted lines do not state"))
        elif hit.kind == "direction":
            problems += _direction(own, hit, evidence, outputs, both=both, zones=zones)
        elif hit.kind == "evaluative":
            if hit.concept == _STEADY and _steady(evidence, outputs):
                continue
            calm = outputs.calm()
            kind = UNSTATED if calm else INFERRED
            problems.append((kind, f"{hit.word!r} evaluates what its quoted lines do not" + (_CALM if calm else "")))
    problems += [
        (UNSTATED, f"it denies {hit.word!r} ({hit.concept}), which its quoted lines state")
        for hit in denials
        # a line naming the concept only to deny it ("average 0 restarts") agrees with the claim
        if vocabulary.states(hit.concept, evidence) and not vocabulary.denies(hit.concept, evidence)
    ]
    problems += _ratios(own, evidence, params.ratio_tolerance)
    return problems


_CALM = "; the cited output says nothing changed"


def _clause(own: str, hit: ConceptHit) -> tuple[int, int]:
    """Where the clause holding ``hit`` starts and ends (``_CLAUSE_MARKS``)."""
    return _clause_between(own, hit.start, hit.end, _CLAUSE_MARKS)


def _clause_between(text: str, start: int, end: int, marks: tuple[str, ...]) -> tuple[int, int]:
    """Where the clause holding ``text[start:end]`` starts and ends, clauses parted by ``marks``."""
    first = max((text.rfind(mark, 0, start) for mark in marks), default=-1) + 1
    ends = [at for mark in marks if (at := text.find(mark, end)) >= 0]
    return first, min(ends, default=len(text))


def _computed_sameness(own: str, hit: ConceptHit, episodes: tuple[str, ...], quoted: tuple[int, ...] = ()) -> bool:
    """An absolute over what the claim's own clocks (else its quoted lines' ``quoted``) or its
    quoted episodes compute: "间隔都是 30 分钟" over the clocks 11:34, 12:04 and 12:34 (every
    interval between them that long), "every half hour" of three restarts quoted at 12:01, 12:31
    and 13:00 (the first duration after the word), "时间完全重合" of quoted episodes that are one
    period (each from the same instant to the same instant). Unequal intervals or periods leave it
    unstated."""
    vocabulary = concepts()
    start, end = _clause(own, hit)
    clause = own[start:end]
    if vocabulary.names_intervals(clause):
        spans = [e for e in extract_entities(clause) if e.kind == "quantity" and e.dimension == "time"]
        clocks = clocks_of_day(own)
        clocks = clocks if len(clocks) >= 3 else list(quoted)
        if len(spans) > 1:  # "every half hour — 30 minutes, then 29 minutes apart": the one named after it
            spans = [
                e for e in extract_entities(own[hit.start : end]) if e.kind == "quantity" and e.dimension == "time"
            ]
        if not spans and (unit := _UNIT_AFTER.match(own, hit.end)) is not None:  # "every hour": one of it
            spans = [e for e in extract_entities(f"1 {unit.group(1)}") if e.dimension == "time"]
        return bool(spans) and _equal_intervals(clocks, spans[0])
    if vocabulary.names_periods(clause):
        return len(episodes) >= 2 and len(set(episodes)) == 1
    return False


#: The word right after an interval word ("every hour"): a unit of time, one of it.
_UNIT_AFTER = re.compile(r"\s*([A-Za-z]+)")


def _equal_intervals(clocks: list[int], interval: Entity) -> bool:
    """Are three clocks or more, in the order written, each ``interval`` after the one before
    (within the rounding it is written to)?"""
    if len(clocks) < 3 or interval.value is None or interval.factor is None or interval.precision is None:
        return False
    seconds, tolerance = interval.value * interval.factor, interval.precision * interval.factor / 2
    gaps = [(later - earlier) % _DAY * 60 for earlier, later in itertools.pairwise(clocks)]
    return all(abs(gap - seconds) <= tolerance for gap in gaps)


def _counted(own: str, hit: ConceptHit) -> bool:
    """An absolute in the clause of a count ("all 50 connections", "2个实例都", "全部日志中…共
    10525 条") is that count, stated by its number."""
    start, end = _clause(own, hit)
    clause = own[start:end]
    if own[start : hit.start].strip(" 也还") == "":
        # An absolute opening its clause sums up the set the clause before counted: "180 条慢查询，
        # 都是 UPDATE" — that clause is its count.
        before = max((own.rfind(mark, 0, max(start - 1, 0)) for mark in _CLAUSE_MARKS), default=-1) + 1
        clause = own[before:start] + clause
    facts = extract_entities(clause)
    if any(e.kind == "quantity" and e.dimension in ("count", "percent") for e in facts):
        return True
    for fact in facts:  # an order number, a status code, a duration count nothing
        clause = clause.replace(fact.text, " ")
    # "none of the 6 services", "3 台机器都"; not "at 50 the whole time"
    function_words = concepts().function_words
    if concepts().spelled_count(own[hit.end : hit.end + 24]):
        return True  # "all twelve points": the count right after the absolute it bounds
    return any(
        (word := count.group("word")) is None or word.lower() not in function_words
        for count in _BARE_COUNT.finditer(clause)
    )


def _bound_at_the_end(bound: Bound, outputs: _CitedOutputs) -> list[tuple[str, str]]:
    """A bound the claim places at the end of the data ("still above 9 s") against each cited
    series' last point: one on the other side contradicts it (it was checked against the point
    it quoted, from before the series recovered)."""
    for point in last_points(outputs.series()):
        same = point.dimension == bound.dimension or point.dimension is None or bound.dimension is None
        if same and not bound.kept_by(point.value):
            at = f"{point.minute // 60:02d}:{point.minute % 60:02d}"
            return [
                (
                    CONTRADICTS,
                    f"its bound is not kept at the end of the data: the cited series is {point.value} at {at}",
                )
            ]
    return []


def _rounded_edge(point: Point, period: tuple[int, int]) -> bool:
    """A point near an end of the period that end is rounded to (a five-minute mark: "10:00–10:30"
    for an episode 10:01–10:29): the edge the claim rounded past. Near is five minutes, or a
    quarter of a shorter period: "10:00–10:05" keeps its middle to be judged (within five minutes
    of either end, every point was dropped and the bound decided by nothing)."""
    near = min(5, (period[1] - period[0]) // 4)
    return any(abs(point.minute - end) <= near for end in period if end % 5 == 0)


def _crossed(point: Point) -> str:
    """What crosses a claim's bound: a point of the series at its time, or a line of a pattern."""
    if point.minute == ANY_TIME:
        return f"its bound is crossed: a line of its quoted pattern gives {point.value}"
    return (
        f"its bound is crossed: the cited series is {point.value} at {point.minute // 60:02d}:{point.minute % 60:02d}"
    )


def _fields_compared(own: str, lines: list[str], outputs: _CitedOutputs, *, every: bool) -> list[tuple[str, str]]:
    """Two fields of a line the claim compares ("Lock_time 都小于 Query_time": ``text/comparisons.py``),
    against a line that writes both: every line the cited outputs list when the claim says all
    of them (``every``), its quoted lines otherwise."""
    if not may_compare(own):
        return []  # most claims compare nothing
    keys = {key for line in lines for key in line_fields(line)}
    if len(keys) < 2:
        return []
    comparisons = claimed_comparisons(own, keys)
    if not comparisons:
        return []
    against = first_against(comparisons, [*lines, *outputs.rows()] if every else lines)
    if against is None:
        return []
    compared, row = against
    side = "above" if compared.above else "below"
    return [
        (CONTRADICTS, f"{compared.left} is not {side} {compared.right} on a line it speaks of: {row.strip()[:160]}")
    ]


def _bound_broken(
    bound: Bound, evidence: str, outputs: _CitedOutputs, *, to_the_end: bool = False
) -> Point | Literal[False] | None:
    """Over the period its clocks give, every point of the cited series; without one, only the
    points its lines quote — "stayed above 90% for 20 minutes" is about the episode, not the
    window — and those keep it for the whole series only when they are the window's min and max.
    ``to_the_end`` ("for the rest of the window"): every point from the first quoted on."""
    if bound.period is not None:
        return broken_by(bound, [p for p in outputs.points() if not _rounded_edge(p, bound.period)])
    # a quoted pattern's field, every line of it listed ("ambient=<*>" of 34 lines: "都没有超过 30")
    crossed = broken_by(bound, _pattern_values(evidence, outputs.rows()))
    if isinstance(crossed, Point):
        return crossed
    quoted = series_points(evidence)
    timed = [(p.day or "", p.minute) for p in quoted if p.minute != ANY_TIME]
    if to_the_end and not timed:
        # an episode's line quoted for "never … again" ("anomaly 1: 00:40Z – 11:55Z … down"): from its start
        timed = [(m["day"], int(m["hour"]) * 60 + int(m["minute"])) for m in _ISO_INSTANT.finditer(evidence)]
    if to_the_end and timed:
        start = min(timed)
        return broken_by(
            bound, [p for p in outputs.points() if p.minute != ANY_TIME and (p.day or "", p.minute) >= start]
        )
    broken = broken_by(bound, quoted)
    if broken is None and not any(p.minute == ANY_TIME for p in quoted):
        return False  # kept by the points it quotes: nothing said of the rest
    return broken


def _direction(
    own: str,
    hit: ConceptHit,
    evidence: str,
    outputs: _CitedOutputs,
    *,
    both: bool = False,
    zones: Callable[[], tuple[tzinfo, ...]] = tuple,
) -> list[tuple[str, str]]:
    """A direction: contradicted by its lines or its numbers; stated by them, or by its cited
    outputs when they state it and not the other way ("spiked" quoting a point of the series
    whose anomaly line says "up"); else at most an inference. A direction the claim gives a time
    ("12:51 回落到 8.37%") is of that time: a line stating the other way over an episode that
    time falls outside of (an "up" episode 12:45–12:50) does not contradict it, and the quoted
    point there moving its way from the series' point before states it."""
    vocabulary = concepts()
    opposite = _OPPOSITE.get(hit.concept, "")
    returning = _RETURN.match(own, hit.end) is not None
    when: frozenset[int] | None = None  # the direction's own time, read when a judgement needs it
    if (
        opposite
        and not both
        and not returning
        and vocabulary.states(opposite, evidence)
        and not _outside_episodes(opposite, evidence, when := _given_times(own, hit, zones))
    ):
        return [(CONTRADICTS, f"{hit.word!r} ({hit.concept}): its quoted lines say {opposite}")]
    ends = _from_to(own, hit)
    # A from–to phrase orders its two values; two quantities in the claim's order are ordered
    # by the clocks of the lines holding them (a window's min and max are in no order).
    earlier = None if ends is None or ends.first == ends.last else (ends.told or _earlier(ends, evidence))
    if ends is not None and earlier is not None:
        rise = ends.last > ends.first if earlier == "first" else ends.first > ends.last
        if rise == (hit.concept == "up"):
            return []  # its numbers say it, and entity grounding finds them in its lines
        return [(CONTRADICTS, f"{hit.word!r} ({hit.concept}) runs against its own numbers")]
    moves = _moves(evidence)
    if hit.concept in moves:
        return []  # the points it quotes rise (fall): stated by the series itself
    if moves and opposite in moves:
        return [(CONTRADICTS, f"{hit.word!r} ({hit.concept}): the points it quotes only go {opposite}")]
    if _moved_at(hit.concept, evidence, outputs, lambda: _given_times(own, hit, zones) if when is None else when):
        return []  # the quoted point at its time went its way from the one before: the series states it
    if outputs.calm():
        return [(UNSTATED, f"{hit.word!r} ({hit.concept}){_CALM}")]
    if opposite and outputs.state(hit.concept) and not outputs.state(opposite):
        # stated by a cited output's episode — of the claim's own time, when it gives one ("still
        # climbing at 15:50" of a series whose rise ended at 15:44 was confirmed)
        given = _given_times(own, hit, zones, sentence=True)
        if not given and of_latest(own):  # "still climbing": at the series' last point
            given = frozenset(point.minute for point in last_points(outputs.series()))
        if not given or outputs.during(hit.concept, given):
            return []
        return [(INFERRED, f"{hit.word!r} ({hit.concept}): no episode of its cited outputs holds its time")]
    return [(INFERRED, f"{hit.word!r} ({hit.concept}) is not stated by its quoted lines")]


#: Days a clock's reading in a zone is taken on: winter and summer (a zone with summer time gives both).
_SEASONS = (datetime(2026, 1, 15), datetime(2026, 7, 15))


def _given_times(
    own: str, hit: ConceptHit, zones: Callable[[], tuple[tzinfo, ...]], *, sentence: bool = False
) -> frozenset[int]:
    """The minutes of the UTC day the clocks of ``hit``'s clause (``sentence``: its sentence, "at
    15:50, lock waits were still climbing") may name: as written, and in each zone the answer names
    for its reader. Empty when it gives no clock: the direction is then of no time of its own."""
    start, end = sentence_of(own, hit.start, hit.end) if sentence else _clause(own, hit)
    written = clocks_of_day(reader_text(own[start:end]))
    if not written:
        return frozenset()
    offsets = {0}
    for zone in zones():
        offsets |= {int(delta.total_seconds()) // 60 for day in _SEASONS if (delta := zone.utcoffset(day)) is not None}
    return frozenset((minute - offset) % _DAY for minute in written for offset in offsets)


_DAY = 24 * 60
#: Minutes a claim's time may round an episode's end by.
_ROUNDING = 2
#: A range of two instants on a line ("2022-08-22T04:45:19Z – 2022-08-22T04:50:19Z").
_EPISODE = re.compile(
    r"(?P<day1>\d{4}-\d{2}-\d{2})T(?P<h1>\d{2}):(?P<m1>\d{2})\S*\s*[–—-]\s*"
    r"(?P<day2>\d{4}-\d{2}-\d{2})T(?P<h2>\d{2}):(?P<m2>\d{2})[\d:.]*Z?"
)


def _outside_episodes(opposite: str, evidence: str, when: frozenset[int]) -> bool:
    """Does every quoted line stating ``opposite`` state it over an episode (a range of two
    instants) that none of the minutes ``when`` falls in? A line without one, or a claim time
    inside one, leaves the lines saying the other way of the claim's time."""
    if not when:
        return False
    vocabulary = concepts()
    against = [line for line in evidence.splitlines() if vocabulary.states(opposite, line)]
    if not against:
        return False  # stated only across lines: no one line's episode to place it in
    for line in against:
        episode = _EPISODE.search(line)
        if episode is None or _holds(episode, when):
            return False
    return True


def _holds(episode: re.Match[str], when: frozenset[int], slack: int = 0) -> bool:
    """Does the ``_EPISODE`` range hold one of the minutes of the day ``when`` (``slack`` minutes of
    rounding either side)? A range over more than a day holds every minute."""
    first = int(episode["h1"]) * 60 + int(episode["m1"]) - slack
    last = int(episode["h2"]) * 60 + int(episode["m2"]) + slack
    days = (date.fromisoformat(episode["day2"]) - date.fromisoformat(episode["day1"])).days
    if days > 1 or last - first >= _DAY:
        return True
    first, last = first % _DAY, last % _DAY
    return any((first <= m <= last) if first <= last else (m >= first or m <= last) for m in when)


def _moved_at(concept: str, evidence: str, outputs: _CitedOutputs, when: Callable[[], frozenset[int]]) -> bool:
    """Does a quoted point at one of the minutes ``when()`` (asked only when a point is quoted) go
    the way of ``concept`` from the point before it in its cited series?"""
    quoted = series_points(evidence)
    if not quoted:
        return False
    minutes = when()
    quoted = [p for p in quoted if p.minute in minutes]
    for points in outputs.series():
        ordered = sorted((p for p in points if p.minute != ANY_TIME), key=lambda p: p.at)
        for before, point in itertools.pairwise(ordered):
            if point in quoted and before.dimension == point.dimension and before.value != point.value:
                return (point.value > before.value) is (concept == "up")
    return False


#: After a direction word, a return from an episode ("fell back to 20%", "dropped back"): the
#: line's own direction (the episode's "up") is what it returns from, no contradiction.
_RETURN = re.compile(r"\s*(?:back|again)\b", re.IGNORECASE)


#: The evaluation of a course point by point ("rose steadily", "一路涨到"), which a series states.
_STEADY = "steady"


def _steady(evidence: str, outputs: _CitedOutputs) -> bool:
    """Does the cited series holding every point the claim quotes move one way at each of its
    points from the first quoted to the last (three at least, no two alike)? Two ends say nothing
    of the way between them; another output's series says nothing of this one; a level held then
    left in one jump (12, 12, 12, 390) is no steady course."""
    quoted = [p for p in series_points(evidence) if p.minute != ANY_TIME]
    times = sorted({p.at for p in quoted})
    if len(times) < 2:
        return False
    dimensions = {p.dimension for p in quoted}
    for points in outputs.series():
        if not set(quoted) <= set(points):
            continue
        span = sorted(
            (p for p in points if times[0] <= p.at <= times[-1] and p.dimension in dimensions), key=lambda p: p.at
        )
        steps = {(b.value > a.value) - (b.value < a.value) for a, b in itertools.pairwise(span)}
        if len(span) >= 3 and steps in ({1}, {-1}):
            return True
    return False


def _moves(evidence: str) -> frozenset[str]:
    """The directions the quoted points of a series go, in time order: "up" when a later point
    is higher than an earlier one, "down" when lower (none: fewer than two points). A window's
    extremes hold at some time of it, which one unsaid (``ANY_TIME``): no order, so no direction —
    its min written before its max made every summary line say "up"."""
    points = sorted((p for p in series_points(evidence) if p.minute != ANY_TIME), key=lambda p: p.at)
    moves: set[str] = set()
    for i, earlier in enumerate(points):
        for later in points[i + 1 :]:
            if later.dimension == earlier.dimension and later.value != earlier.value:
                moves.add("up" if later.value > earlier.value else "down")
    return frozenset(moves)


#: "from 0 to a peak of 37", "从 120 降到 900", "0.2% → 12.49%": the two values a direction runs between.
_FROM_TO = re.compile(
    # (a clock of the first value's between: "from 0.9 ms at 12:10 to a peak of 35.64 ms")
    r"(?:from|从|由)\s*(?P<a>\d+(?:\.\d+)?)(?:[^\d，,。；;]|(?<![\d.])\d{1,2}:\d{2}(?::\d{2})?(?![\d.:])){0,24}?"
    r"(?:to|到|至|成|为)(?:[^\d，,。；;]|(?<![\d.])\d{1,2}:\d{2}(?::\d{2})?(?![\d.:])){0,16}?"
    r"(?<![\d.:])(?P<b>\d+(?:\.\d+)?)(?![\d:])"
    r"|(?P<c>\d+(?:\.\d+)?)\S{0,4}\s*(?:→|->)\s*(?P<d>\d+(?:\.\d+)?)"
    # the end first: "jumped to 80.53%, up from 25.73% a minute earlier"
    r"|(?:to|reached|hit)\s+(?P<e>\d+(?:\.\d+)?)[^。；;]{0,32}?\bfrom\s+(?P<f>\d+(?:\.\d+)?)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Ends:
    """The first and last value of a claim's direction or change."""

    first: Decimal
    last: Decimal
    #: "first" when a from–to phrase told them ("from 20% to 95%"); else the claim's quantities,
    #: in its order, whose order in time is the lines'.
    told: Literal["first"] | None = None
    quantities: tuple[Entity, Entity] | None = None


def _from_to(own: str, hit: ConceptHit | None = None) -> _Ends | None:
    """The first and last value of the claim's direction: a from–to phrase (the one after the
    direction word, where a claim tells a rise and a fall), else its first and last quantities
    of one dimension."""
    read = reader_text(own)
    found = list(_FROM_TO.finditer(read))
    if hit is not None:  # of the direction's own clause: "the rise …, which set workers from 16 to 1" is another's
        start, end = _clause_between(read, hit.start, hit.end, _SUBJECT_MARKS)
        found = [m for m in found if start <= m.start() and m.end() <= end]
    after = [m for m in found if hit is not None and m.end() > hit.start]
    match = after[0] if after else (found[0] if found else None)
    if match is not None:
        first_at = next(g for g in ("a", "c", "f") if match.group(g) is not None)
        last_at = next(g for g in ("b", "d", "e") if match.group(g) is not None)
        first = decimal_or_none(match.group(first_at))
        last = decimal_or_none(match.group(last_at))
        if first is not None and last is not None:
            # each in its own unit when both write one of a dimension ("from 186 ms … to 1.8 s")
            units = _unit_at(read, match.end(first_at)), _unit_at(read, match.end(last_at))
            if units[0] is not None and units[1] is not None and units[0].dimension == units[1].dimension:
                first, last = first * units[0].factor, last * units[1].factor
            return _Ends(first, last, told="first")
    numbers = [e for e in extract_entities(own) if e.kind == "quantity" and e.value is not None and e.factor]
    if len(numbers) >= 2:
        # a difference ("高出 4.9 秒", "up 12 pp") is no level the direction runs through
        facts = claim_reading(own)
        while numbers and is_difference(numbers[-1], facts):
            numbers.pop()
        while numbers and is_difference(numbers[0], facts):
            numbers.pop(0)
    if len(numbers) >= 2 and numbers[0].dimension == numbers[-1].dimension:
        ends = [n.value * n.factor for n in (numbers[0], numbers[-1]) if n.value is not None and n.factor]
        return _Ends(ends[0], ends[1], quantities=(numbers[0], numbers[-1]))
    return None


_SPELLED_UNIT = re.compile(r"\s?([A-Za-z%µμ/]+|[\u4e00-\u9fff]{1,2})")


def _unit_at(text: str, at: int) -> Unit | None:
    """The unit spelled right after a number ending at ``text[at]``, if it is one."""
    found = _SPELLED_UNIT.match(text, at)
    if found is None:
        return None
    spelled = found.group(1).lower()
    by_spelling = unit_table().by_spelling
    return by_spelling.get(spelled) or (by_spelling.get(spelled[:1]) if not spelled.isascii() else None)


def _earlier(ends: _Ends, evidence: str) -> Literal["first", "last"] | None:
    """Which of the claim's two quantities its lines show first: each on a line of its own that
    has a clock, the clocks apart (None: not so, and the claim's order tells nothing)."""
    if ends.quantities is None:
        return None
    lines = evidence.splitlines()
    clocks = []
    for quantity in ends.quantities:
        held = [line for line in lines if any(needle in line for needle in quantity.needles)]
        times = {(clock["day"] or "", clock["clock"]) for line in held if (clock := _LINE_INSTANT.search(line))}
        if len(held) != 1 or len(times) != 1:
            return None
        clocks.append(times.pop())
    if clocks[0] == clocks[1] or (clocks[0][0] == "") != (clocks[1][0] == ""):
        return None  # one time, or a clock of no date against one of a date
    return "first" if clocks[0] < clocks[1] else "last"


#: A line's clock as outputs write it (``2026-07-07T12:00:41Z``, ``12:00:41``).
_LINE_CLOCK = re.compile(r"(?<![\d:])(\d{2}):(\d{2})(?::\d{2})?(?![\d])")
#: A line's clock with its date when it has one: 23:59 comes before 00:01 of the next day.
_LINE_INSTANT = re.compile(r"(?:(?P<day>\d{4}-\d{2}-\d{2})[T ])?(?<![\d:])(?P<clock>\d{2}:\d{2}(?::\d{2})?)(?!\d)")


#: A line's clock with the date written before it (``2017-12-24T00:28:48Z``, ``20171223-22:15:34``):
#: 00:28 of the next day comes after 22:15.
_DATED_CLOCK = re.compile(
    r"(?:(?P<day>\d{4}-?\d{2}-?\d{2})[T -])?(?<![\d:])(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2}))?(?!\d)"
)
#: A dated instant as tools write it ("2014-01-29T00:40:00Z").
_ISO_INSTANT = re.compile(r"(?P<day>\d{4}-\d{2}-\d{2})T(?P<hour>\d{2}):(?P<minute>\d{2})")
#: A number of four or more digits standing alone (no clock, date, decimal or part of a word): a code.
_BARE_CODE = re.compile(r"(?<![\w.:/-])\d{4,}(?![\w.:/-])")
#: An instant as the lines place it: its date's digits ("" when none is written) and second of the day.
_Instant = tuple[str, int]


def _ordinal_times(text: str, words: list[ConceptHit], outputs: list[str]) -> list[tuple[str, str]]:
    """ "The first OutOfMemoryError came at 12:30" while a cited line shows one at 12:00 is false:
    a first (or last) at a time is checked against every clock of every line of the cited outputs
    that names the same code or id — an earlier (later) one contradicts it. The claim's clock is
    placed on the date of the line clock it names, and clocks of dated lines are compared by date,
    then clock: a last one at 00:28 after lines from 22:15 the day before is no contradiction. A
    claim without a code, a clock or an ordinal word is not judged. A clock its zone reads two ways
    ("伦敦时间 15:00", GMT or summer time) contradicts only when every reading does."""
    hits = [hit for hit in words if hit.kind == "ordinal"]
    if not hits or not outputs:
        return []
    facts = extract_entities(text)
    subjects = [e for e in facts if e.kind in ("error_code", "identifier")]
    # a bare code the claim names ("第一次 10061 错误"): what the lines of that error write
    subjects = subjects or [Entity("identifier", code, (code,)) for code in _BARE_CODE.findall(text)]
    stamps = [e for e in facts if e.kind == "timestamp"]
    clocks = [[_minute(n) for n in stamp.needles if ":" in n] for stamp in stamps]
    if not subjects or [len(c) for c in clocks] != [1] or clocks[0][0] is None:
        return []
    readings = [stamps[0], *stamps[0].alternatives]
    if len(readings) > 1:  # the readings the lines' days hold (summer time on a July line), if any
        cited = Corpus(outputs)
        readings = [r for r in readings if cited.contains(r)] or readings
    minutes = sorted({m for r in readings for n in r.needles if ":" in n and (m := _minute(n)) is not None})
    # a clock written to the second is checked to the second ("第一次 … 05:05:56" of a first at 05:05:53)
    seconds = [m for r in readings for n in r.needles if n.count(":") == 2 and (m := _second_of_day(n)) is not None]
    unit = 1 if seconds and len(seconds) == len(minutes) else 60
    ats = sorted(set(seconds)) if unit == 1 else [m * 60 for m in minutes]
    seen = _subject_instants(subjects, outputs)
    found = [_ordinal_problems(hits, subjects[0], at, seen, unit) for at in ats]
    return found[0] if all(found) else []


def _subject_instants(subjects: list[Entity], outputs: list[str]) -> list[_Instant]:
    """Every clock of every line of ``outputs`` that names one of ``subjects``."""
    seen: list[_Instant] = []
    for output in outputs:
        for line in output.splitlines():
            if any(needle in line for subject in subjects for needle in subject.needles):
                seen += [
                    (
                        (m["day"] or "").replace("-", ""),
                        int(m["hour"]) * 3600 + int(m["minute"]) * 60 + int(m["second"] or 0),
                    )
                    for m in _DATED_CLOCK.finditer(line)
                ]
    return seen


def _ordinal_problems(
    hits: list[ConceptHit], subject: Entity, at: int, seen: list[_Instant], unit: int = 60
) -> list[tuple[str, str]]:
    """A first (last) at the second ``at`` against the lines' instants ``seen``, to the ``unit``
    (seconds) its clock is written to: a minute either way for one written to the minute."""
    named = [instant for instant in seen if abs(instant[1] // unit - at // unit) <= 1]
    problems: list[tuple[str, str]] = []
    for hit in hits:
        first = hit.concept == "first"
        # the line clock the claim names, the latest (earliest) of them for a last (first)
        anchor = (min(named) if first else max(named)) if named else ("", at)
        other = [instant for instant in seen if _beyond(instant, anchor, earlier=first, unit=unit)]
        if other:
            shown = min(other) if first else max(other)
            problems.append(
                (
                    CONTRADICTS,
                    f"{hit.word!r} at {_spelled_instant(('', at))}: its cited output shows "
                    f"{subject.text} at {_spelled_instant(shown)}",
                )
            )
    return problems


#: A calendar date's month and day as a date fact's needle gives it ("-03-31").
_MONTH_DAY = re.compile(r"-\d{2}-\d{2}")
#: An anomaly line as ``query_metrics`` writes it: its episode (``_EPISODE``), first anomalous point to last.
_ANOMALY_EPISODE = re.compile(r"^anomaly \d+: ", re.MULTILINE)


def _recovered_in_episode(text: str, outputs: list[str]) -> list[tuple[str, str]]:
    """ "发送量在北京时间 20:38 已经恢复到正常水平" while the cited series' anomaly runs 12:10–12:39Z:
    a recovery (``concepts.yaml`` recovery_words) at a clock inside an episode of the cited
    series, before its last anomalous point, is contradicted — in every reading of the clock."""
    recoveries = concepts().recoveries(text)
    if not recoveries:
        return []
    facts = extract_entities(text)
    stamps = [e for e in facts if e.kind == "timestamp"]
    if len(stamps) != 1:
        return []
    # the clock of a recovery's own clause ("同一分钟（14:51:10）同时异常、又几乎同时恢复": its clock
    # is the onset's, and the recovery has none)
    clauses = [_clause_between(text, start, end, (*_CLAUSE_MARKS, "、")) for start, end in recoveries]
    if not any(e.kind == "timestamp" for first, last in clauses for e in extract_entities(text[first:last])):
        return []
    # a day the claim writes apart from its clock ("on 31 March … at 2 p.m."): episodes of that day only
    days = [n for e in facts if e.kind == "date" for n in e.needles if _MONTH_DAY.fullmatch(n)]
    episodes = [
        ((m["day1"], int(m["h1"]) * 60 + int(m["m1"])), (m["day2"], int(m["h2"]) * 60 + int(m["m2"])))
        for output in outputs
        for line in _ANOMALY_EPISODE.finditer(output[:_HEAD])
        if (m := _EPISODE.match(output, line.end()))
        and (not days or any(m["day1"].endswith(d) or m["day2"].endswith(d) for d in days))
    ]
    readings = [
        (day, minute)
        for reading in (stamps[0], *stamps[0].alternatives)
        for day, clock in [_day_and_clock(reading.needles)]
        if clock is not None and (minute := _minute(clock)) is not None
    ]
    if not episodes or not readings:
        return []
    inside = [
        (start, end)
        for day, minute in readings
        for start, end in episodes
        if (not day or day == start[0] == end[0]) and start[1] <= minute < end[1]
    ]
    if len(inside) < len(readings):
        return []  # a reading outside every episode: nothing to say
    start, end = inside[0]
    return [
        (
            CONTRADICTS,
            f"recovered within anomaly {start[1] // 60:02d}:{start[1] % 60:02d}–"
            f"{end[1] // 60:02d}:{end[1] % 60:02d} of its cited series",
        )
    ]


#: A peak as ``query_metrics`` writes it, with its time: "peak 50.89 at 2014-07-15T11:35:00Z".
_PEAK_AT = re.compile(
    r"\bpeak (?P<value>-?\d+(?:\.\d+)?)\s?[^\s;,]* at (?P<day>\d{4}-\d{2}-\d{2})T(?P<h>\d{2}):(?P<m>\d{2})"
)
#: How far from a number the claim's word naming it the peak may stand ("The 50.89 peak", "峰值 50.89").
_PEAK_REACH = 12


def _peak_time(
    text: str, facts: list[Entity], outputs: list[str], zones: Callable[[], tuple[tzinfo, ...]] = tuple
) -> list[tuple[str, str]]:
    """ "The 50.89 peak came at 11:30" where its output says "peak 50.89 at …11:35": a peak (by
    the claim's word for it, beside the value) at one clock is at the time its output gives it, in
    some reading of the clock — a zone the answer names for its reader among them. A claim with
    more than one clock is not judged (which is whose). ``facts``: the claim's clocks and
    quantities, from the check's own lexing."""
    stamps = [e for e in facts if e.kind == "timestamp"]
    if len(stamps) != 1 or not any(e.kind == "quantity" for e in facts):
        return []
    heads = [output[:_HEAD] for output in outputs if "peak " in output[:_HEAD]]  # where query_metrics writes it
    if not heads:
        return []
    read = reader_text(text)
    peaks = []
    for value in (e for e in facts if e.kind == "quantity" and e.value is not None and e.precision is not None):
        at = read.find(value.text)
        if at >= 0 and "max" in statistics().near(read, at, at + len(value.text), _PEAK_REACH, _PEAK_REACH):
            peaks.append(value)
    if not peaks:
        return []
    from veridiag.text.zones import read_in  # a peak beside a clock: its reader's readings too

    every = (stamps[0], *stamps[0].alternatives, *read_in(stamps[0], zones()))
    readings = {minute for r in every for n in r.needles if ":" in n and (minute := _minute(n)) is not None}
    for head in heads:
        for m in _PEAK_AT.finditer(head):
            given = int(m["h"]) * 60 + int(m["m"])
            for value in peaks:
                assert value.value is not None and value.precision is not None
                same = abs(Decimal(m["value"]) - value.value) <= value.precision / 2
                # a minute apart either way round midnight (23:59 is 00:00's minute before)
                if same and readings and all(min(abs(r - given), 1440 - abs(r - given)) > 1 for r in readings):
                    return [(CONTRADICTS, f"the peak {value.text} is at {m['h']}:{m['m']} in its cited output")]
    return []


def _day_and_clock(needles: tuple[str, ...]) -> tuple[str, str | None]:
    """A timestamp's day (empty when it writes none) and clock, from its needles."""
    day = next((n for n in needles if len(n) == 10 and n[4] == "-"), "")
    return day, next((n for n in needles if ":" in n), None)


def _beyond(instant: _Instant, anchor: _Instant, *, earlier: bool, unit: int = 60) -> bool:
    """Is ``instant`` more than a ``unit`` (seconds) earlier (later) than ``anchor``: by date, then
    clock, when both are dated; by the clock of the day when either is not."""
    if instant[0] and anchor[0] and instant[0] != anchor[0]:
        return (instant[0] < anchor[0]) is earlier
    mine, theirs = instant[1] // unit, anchor[1] // unit
    return mine < theirs - 1 if earlier else mine > theirs + 1


def _spelled_instant(instant: _Instant) -> str:
    day, second = instant
    clock = f"{second // 3600:02d}:{second // 60 % 60:02d}" + (f":{second % 60:02d}" if second % 60 else "")
    return f"{day[:4]}-{day[4:6]}-{day[6:]} {clock}" if day else clock


#: A setting a change line states with its old value ("maximum-pool-size=50 (was 100)").
_CHANGED = re.compile(r"=\s*(?P<new>-?\d+(?:\.\d+)?)\S*\s*\(was (?P<old>-?\d+(?:\.\d+)?)")


def _swapped_change(text: str, lines: list[str]) -> list[tuple[str, str]]:
    """ "从 50 改成 100" of a line "=50 (was 100)" tells the change backwards."""
    stated = [(Decimal(m.group("old")), Decimal(m.group("new"))) for line in lines for m in _CHANGED.finditer(line)]
    if not stated:
        return []  # no line states a change: nothing to read the claim's from–to against
    ends = _from_to(text)
    # only a from–to phrase tells which value came first: two values in the claim's order may be
    # the line's own, quoted ("maximum-pool-size=50 (was 100)")
    if ends is None or ends.told != "first" or (ends.first, ends.last) in stated:
        return []
    if (ends.last, ends.first) in stated:
        return [
            (CONTRADICTS, f"the change runs from {ends.last} to {ends.first} in its quoted lines, not the other way")
        ]
    return []


#: An arrow between two named things: a call, a hop, a flow from one to the other.
_ARROW = re.compile(r"\s*(?:→|->|⇒|=>|⟶)\s*")
#: Its arrows: a text holds one where ``_ARROW`` finds one.
_ARROWS = ("→", "->", "⇒", "=>", "⟶")


def _has_arrow(text: str) -> bool:
    """Does ``text`` hold an arrow (``_ARROW.search``: its blanks may be none)? A substring test
    for each: the pattern, starting with blanks, was tried at every character of every claim."""
    return any(arrow in text for arrow in _ARROWS)


def _arrow_pairs(text: str) -> set[tuple[str, str]]:
    """The ordered pairs of names ``text`` joins with an arrow ("A → B"; in a chain, each to the next):
    the first service or id of each segment, case-blind."""
    pairs: set[tuple[str, str]] = set()
    for line in text.splitlines():
        if not _has_arrow(line):
            continue
        names: list[str | None] = []
        for segment in _ARROW.split(line):
            named = [e.text.lower() for e in extract_entities(segment) if e.kind in ("service", "identifier")]
            # the name right before an arrow, the first right after it
            names.append((named[0] if names else named[-1]) if named else None)
        pairs |= {(a, b) for a, b in itertools.pairwise(names) if a and b and a != b}
    return pairs


def _arrow_order(text: str, lines: list[str]) -> list[tuple[str, str]]:
    """ "调用方向是 A → B" of a quoted line "call B → A": the claim turns the arrow its lines draw.
    Only names both join with an arrow are compared; a pair its lines draw both ways is either."""
    if not _has_arrow(text):
        return []
    stated = _arrow_pairs("\n".join(lines))
    return [
        (CONTRADICTS, f"its quoted lines draw {b} → {a}, not {a} → {b}")
        for a, b in sorted(_arrow_pairs(text))
        if (b, a) in stated and (a, b) not in stated
    ]


def _field_values(text: str, lines: list[str]) -> list[tuple[str, str]]:
    """ "appSynTimes = 1" of a quoted line "stepSyncOrNot appSynTimes is 0": a value the claim
    gives a field its quoted lines also give one is theirs — another number there contradicts it.
    Only fields named as code names them (camelCase, snake_case, dotted), read case-blind."""
    claimed = {key.lower(): value for key, value in _fields(text, code_only=True)}
    if not claimed:
        return []
    problems = []
    folded = [line.lower() for line in lines]
    for key, value in claimed.items():
        given = {
            Decimal(found)
            for line in folded
            if key in line  # a substring test first: most lines name no such field
            for name, found in _fields(line)
            if name == key
        }
        if given and Decimal(value) not in given:
            listed = ", ".join(sorted(map(str, given)))
            problems.append((CONTRADICTS, f"{key} is {listed} in its quoted lines, not {value}"))
    return problems


def _fields(text: str, *, code_only: bool = False) -> list[tuple[str, str]]:
    """The fields of ``text`` given a number right after them ("appSynTimes = 1", "retries: 3",
    "errorCode 为 4"); ``code_only``: only names written as code writes them (or glued to "=").
    Found from each
    sign and number back to the name before it: a scan for names at every position costs a
    claim ~45 k instructions, most of a rule's share (measured)."""
    found = []
    for sign in _FIELD_SIGN.finditer(text):
        end = sign.start()
        while end > 0 and text[end - 1] == " ":
            end -= 1
        start = end
        while start > 0 and end - start < _NAME_LONGEST and text[start - 1] in _NAME_CHARACTERS:
            start -= 1
        name = text[start:end].strip(".")
        # a name glued to "=" is written as code writes it, whatever its letters ("ambient=28")
        glued = end == sign.start() and text.startswith("=", end)
        if not name or name[0].isdigit() or (code_only and not glued and _CODE_KEY.search(name) is None):
            continue  # "10:05": a clock's minutes, no field's value
        found.append((name, sign.group("value")))
    return found


#: A sign and the number it gives the name before it: "= 1", " is 0", ": 3", " 为 4".
_FIELD_SIGN = re.compile(
    r"(?:=|:|：|\s(?:is|was|are|were|of|为|是|=)\s|为|是)\s*(?P<value>-?\d+(?:\.\d+)?)(?![\d.]\d|[\w%:])"
)
#: What the name right before a sign (blanks between) is written with, and how long it may be.
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")
_NAME_LONGEST = 64
#: A name as code writes it: an inner capital, an underscore or a dot between letters.
_CODE_KEY = re.compile(r"[a-z][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]|[A-Za-z]\.[A-Za-z]")


def _event_order(text: str, claim: ClaimView) -> list[tuple[str, str]]:
    """ "第一次重启发生在堆冲到峰值 1923 MB 之后" quoting the peak at 12:59 and the restart at 12:01,
    "inventory-service only slowed down after the gateway started timing out at 08:11" quoting
    inventory's onset at 08:05: two quoted events and one word ordering them — each event tied to
    its side of the word by a fact of the claim its line holds, or the service its call asked
    about — are in that order in their lines' times, or the claim contradicts them. Any doubt
    (one side tied to both, three events, two order words) leaves it unjudged."""
    if len(claim.bindings) != 2:
        return []  # two events, each quoted once
    found = concepts().order_words(text)
    if len(found) != 1:
        return []
    events = [
        (moment, binding.excerpt, {str(inv.arguments.get("service", "")).lower() for inv in binding.usable} - {""})
        for binding in claim.bindings
        if isinstance(binding.excerpt, str) and (moment := _FIRST_INSTANT.search(binding.excerpt)) is not None
    ]
    if len(events) != 2 or events[0][0].group() == events[1][0].group():
        return []
    (start, end, later) = found[0]
    clause_start, clause_end = _clause_between(text, start, start, _EVENT_CLAUSE_MARKS)
    if text[start].isascii():  # "A came after B": the reference follows the word
        subject, reference = (clause_start, start), (end, clause_end)
    else:  # "A 发生在 B 之后": the reference follows 在 / 于 / 比
        marks = [at for mark in _REFERENCE_MARKS if (at := text.find(mark, clause_start, start)) >= 0]
        if not marks:
            return []
        marker = min(marks)  # the first: "A 发生在 B 在 T 开始超时之后" — B's own 在 is inside the reference
        subject, reference = (clause_start, marker), (marker + 1, start)
    facts = extract_entities(text)
    # the service a call asked about ties its event first: "after gateway started timing out at
    # 00:30" names the gateway's onset, though 00:30 is also where the other episode ends
    part = text[reference[0] : reference[1]].lower()
    tied = [any(service in part for service in services) for _moment, _excerpt, services in events]
    if tied.count(True) != 1:
        tied = [_tied(text, reference, facts, excerpt, services) for _moment, excerpt, services in events]
    if tied.count(True) != 1:
        return []
    ref = tied.index(True)
    other = 1 - ref
    if _tied(text, subject, facts, events[ref][1], events[ref][2]):
        return []  # the reference event is tied to the subject's side too: the sides say nothing
    first, then = events[other][0].group(), events[ref][0].group()  # the subject's time, the reference's
    if (later and first < then) or (not later and first > then):
        way = "after" if later else "before"
        return [(CONTRADICTS, f"it orders {first} {way} {then}: its quoted lines' times are the other way")]
    return []


def _quoted_nowhere(text: str, context: ValidationContext, cited: list[InvocationView]) -> list[tuple[str, str]]:
    """A phrase the claim quotes that its cited outputs and calls do not hold: at most its inference
    (``text/quotes.py`` ``quoted_nowhere``). Each call's text is folded once per check."""
    if not any(mark in text for mark in _QUOTE_MARKS):
        return []

    def folded() -> Iterator[str]:
        for invocation in cited:
            key = ("quotable", invocation.id)
            if key not in context.memo:
                evidence = context.evidence(invocation)
                context.memo[key] = fold(f"{evidence.output}\n{evidence.context}")
            yield str(context.memo[key])

    return [
        (INFERRED, f"it quotes {phrase!r}, which its cited calls do not hold")
        for phrase in quoted_nowhere(text, folded())
    ]


#: What opens a quotation (``text/quotes.py``): a claim without one quotes nothing.
_QUOTE_MARKS = ('"', "“", "「", "『", "‘", "`")


def _order_undated(text: str, lines: list[str]) -> list[tuple[str, str]]:
    """ "The CDN slowdown was logged before the workers change" citing the CDN line alone: an order of
    two events is stated only by quoted lines dating both (``_event_order`` then checks it), or by
    a clock of the claim's own; else it is the claim's inference. An order word beside a period,
    a count or a previous value orders no two events (``concepts.orders_events``)."""
    found = concepts().orders_events(text)
    if not found or any(e.kind == "timestamp" for e in extract_entities(text)):
        return []  # a clock of the claim's own places its event: the grounding of clocks judges it
    if len({m.group() for m in _FIRST_INSTANT.finditer("\n".join(lines))}) >= 2:
        return []
    word = text[found[0][0] : found[0][1]]
    return [(INFERRED, f"{word!r} orders two events its quoted lines do not both date")]


def _tied(text: str, span: tuple[int, int], facts: list[Entity], excerpt: str, services: set[str]) -> bool:
    """Does ``text[span]`` name a fact ``excerpt`` holds, or a service its call asked about?"""
    part = text[span[0] : span[1]]
    if any(service in part.lower() for service in services):
        return True
    line = Corpus([excerpt])
    return any(fact.text in part and line.contains(fact) for fact in facts)


#: An event's time: the first instant its quoted line writes (an episode's onset).
_FIRST_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?")
#: What ends the clause an order word orders two events in.
_EVENT_CLAUSE_MARKS = ("，", ",", "；", ";", "。", ". ", "\n")
#: What a Chinese order word's reference follows ("发生在 B 之后", "早于", "比 B 晚").
_REFERENCE_MARKS = ("在", "于", "比")


#: What ``_value_at`` reads of a claim: its clocks and its quantities.
_VALUE_KINDS: frozenset[EntityKind] = frozenset({"timestamp", "quantity"})


def _value_at(text: str, facts: list[Entity], outputs: _CitedOutputs) -> list[tuple[str, str]]:
    """A value a claim gives at one clock ("at 10:05 CPU was 80%") is the series' point at that
    minute, where the cited series lists one: another point's value there is a wrong number.
    ``facts``: the claim's clocks and quantities (``extract_entities``), in order; of its
    quantities only the levels (``_level``) are values at the clock."""
    clocks = {m for e in facts if e.kind == "timestamp" for n in e.needles if (m := _minute(n)) is not None}
    if len(clocks) != 1:
        return []
    values = [e for e in facts if e.kind == "quantity" and e.value is not None and e.factor is not None]
    if values:
        read = claim_reading(text)
        values = [e for e in values if _level(e, read)]
    if len(values) != 1:
        return []
    points = outputs.points()  # only now: reading the cited series costs ~0.5 ms per 64 KB
    if not points:
        return []
    (minute,) = clocks
    value = values[0]
    assert value.value is not None and value.factor is not None and value.precision is not None
    # a point without a unit may count anything: only a point of the claim's dimension is judged
    there = [p for p in points if p.minute == minute and p.dimension == value.dimension]
    if not there:
        return []
    written, tolerance = value.value * value.factor, value.precision * value.factor
    if any(abs(p.value - written) <= tolerance for p in there):
        return []
    return [(CONTRADICTS, f"the cited series is {there[0].value} at {minute // 60:02d}:{minute % 60:02d}")]


def _level(quantity: Entity, read: str) -> bool:
    """Is ``quantity`` (of the claim ``read``: its ``claim_reading``) a level a series may hold at
    the claim's clock — not a difference ("up 88 threads"), a ratio ("twelve times the usual 8"),
    a duration between two times ("about 90 seconds before the anomaly began", "持续了 5 分钟") or
    the reference it is compared with ("the usual 8", "平时约 0.46 秒")? Each of those is checked
    as what it is (``derived_difference``, ``_ratios``, ``derived_duration``, grounding)."""
    if is_difference(quantity, read):
        return False
    whole = re.search(rf"(?<![\d.]){re.escape(quantity.text)}(?!\d)", read)  # not "5 threads" of "165 threads"
    if whole is None:
        return True
    at, end = whole.span()
    vocabulary = concepts()
    if any(spelled.startswith(quantity.text) for spelled, _ in vocabulary.times_ratios(read[at : end + 40])):
        return False
    if quantity.dimension == "time" and spans_times(read, at, end):
        return False
    return not vocabulary.reference_before(read, at)


#: How far before a number the statistic it stands for may be named ("内存峰值达到了", "the peak memory was").
_STATISTIC_REACH = 24


_PERCENTILE = re.compile(r"(?<![A-Za-z0-9])[pP]\d{2,3}(?![\d.])")


#: A comparison of two of the claim's own values: "1923 MB，远高于平时的约 690 MB", "dipped to 2.07 %,
#: below its usual 2.81 %", "(368.22 ms) is far above the window p99 of 25.59 ms". The first value
#: ends right before the word (a mark, "is", a degree between: "5% above baseline" is a difference);
#: the second is the first value after it in its clause.
_COMPARED = re.compile(
    r"(?P<a>\d+(?:\.\d+)?)\s?(?P<au>%|[A-Za-z]+|毫秒|秒|分钟|小时)?"
    r"(?P<between>[\s)）]*[,，)）][\s)）]*(?:(?:is|was|are|were|still|都)\s*)?"
    r"(?:(?:far|well|much|slightly|a\s+little|just|significantly|远|明显|略|大大)\s*)?|\)\s*(?:is|was)\s+(?:far\s+|well\s+)?)"
    r"(?P<word>higher\s+than|lower\s+than|above|below|高于|低于)"
    r"(?P<gap>[^,，;；。]{0,40}?)(?<![\w.])(?P<b>\d+(?:\.\d+)?)\s?(?P<bu>%|[A-Za-z]+|毫秒|秒|分钟|小时)?",
    re.IGNORECASE,
)
_ABOVE_WORDS = ("higher", "above", "高于")
_COMPARE_WORD = re.compile(r"higher\s+than|lower\s+than|above|below|高于|低于")
#: How far before its word a comparison's first value, and after it its second, may stand.
_COMPARED_BEFORE, _COMPARED_AFTER = 40, 64


def _in_base(number: str, unit: str | None) -> tuple[Decimal, str] | None:
    """A value in its unit's base and its dimension; as written, by its spelling, when the unit
    table does not know it ("8.32 m" of millicores against "7.3 m")."""
    value = Decimal(number)
    if not unit:
        return value, ""
    known = _UNITS.by_spelling.get(unit.lower())
    if known is None:
        return value, unit
    return value * known.factor, known.dimension


def _compared_values(text: str) -> list[tuple[str, str]]:
    """A comparison of two of the claim's own values that runs against them ("1923 MB，远低于平时的
    约 690 MB"): *contradicts*. Found by the red team: flipped comparisons (高于 ↔ 低于, above ↔
    below) of true claims reached CONFIRMED."""
    if not any(w in text for w in ("above", "below", "higher", "lower", "高于", "低于")):
        return []
    problems: list[tuple[str, str]] = []
    read = reader_text(text)
    # the full pattern only around each comparison word (tried at every digit of a claim, ~5× this)
    windows = {(max(0, w.start() - _COMPARED_BEFORE), w.end() + _COMPARED_AFTER) for w in _COMPARE_WORD.finditer(read)}
    for match in (m for start, end in sorted(windows) for m in _COMPARED.finditer(read[start:end])):
        au, bu = match["au"], match["bu"]
        if au != bu:  # a word after a number that is no unit ("25.59 of") is none
            au, bu = (u if u and (u == "%" or u.lower() in _UNITS.by_spelling) else None for u in (au, bu))
        first, second = _in_base(match["a"], au), _in_base(match["b"], bu)
        if first is None or second is None or first[1] != second[1] or first[0] == second[0]:
            continue
        above = match["word"].lower().startswith(_ABOVE_WORDS)
        if (first[0] > second[0]) != above:
            problems.append((CONTRADICTS, f"{match['word']!r}: {match['a']} against {match['b']} runs the other way"))
    return problems


def _metric_name(invocation: InvocationView) -> str | None:
    """The series a metric call read (``None``: no metric call)."""
    return str(invocation.arguments.get("metric") or "") if invocation.tool_name == "query_metrics" else None


@lru_cache(maxsize=1024)
def _percentiles(text: str) -> frozenset[str]:
    """The percentiles ``text`` writes as labels ("p99", "latency_p90"): a series' own name, unlike
    a word "median", which is a statistic over any series."""
    vocabulary = statistics()
    found = _PERCENTILE.findall(text.replace("_", " "))
    return frozenset().union(*(vocabulary.named(p) for p in found)) & vocabulary.series if found else frozenset()


def _series_statistic(
    text: str, facts: list[Entity], lines: list[str], metrics: Sequence[str | None] = ()
) -> list[tuple[str, str]]:
    """ "The p50 nearly doubled, from 6.69 ms to 12.35 ms" quoting "duration p99: 12.35ms in the
    window, 6.69ms in the baseline": a value of the claim found only on quoted lines that each name
    a series statistic (p50, p90, p99; ``statistics.yaml`` series) none of which the claim names is
    another series' value — at most an inference. Found by the red team: p50 ↔ p90 ↔ p99 swaps of
    true claims reached CONFIRMED."""
    if _PERCENTILE.search(text) is None:
        return []  # most claims name no percentile (one search)
    named = _percentiles(text)
    if not named:
        return []
    # every series it cites is of a percentile ("pod_server_latency_p90"), none the one it names
    of_series = [_percentiles(metric) if metric else frozenset() for metric in metrics]
    if of_series and all(of_series) and not any(labels & named for labels in of_series):
        series, own = "/".join(sorted(set().union(*of_series))), "/".join(sorted(named))
        return [(INFERRED, f"it names the {own}, the series it cites are the {series}'s")]
    # a line's series by its percentile label ("duration p99: 12.35ms"): its "median 0.0046s" of
    # the history is a statistic over its series, whichever that is
    of_line = [(line, _percentiles(line)) for line in lines]
    if not any(labels for _line, labels in of_line):
        return []  # no quoted line is a percentile's
    problems: list[tuple[str, str]] = []
    for fact in facts:
        if fact.kind != "quantity" or fact.value is None:
            continue
        written = format(fact.value.normalize(), "f")  # as written on a line: "2.30", "12", "12.0"
        tail = r"0*(?!\d)" if "." in written else r"(?:\.0+)?(?!\d|\.\d)"
        on_line = re.compile(rf"(?<![\d.]){re.escape(written)}{tail}")
        holding = [labels for line, labels in of_line if on_line.search(line)]
        if holding and all(holding) and not any(labels & named for labels in holding):
            other, own = "/".join(sorted(set().union(*holding))), "/".join(sorted(named))
            problems.append((INFERRED, f"{fact.text!r} is on a line of the {other}, not of the {own}"))
    return problems


def _statistic(
    text: str, facts: list[Entity], lines: list[str], outputs: _CitedOutputs | None = None
) -> list[tuple[str, str]]:
    """ "Memory peaked at 1303 MB" quoting "min 812 avg 1303 max 1740": a number of the claim
    that its lines label with another statistic than the one its words name is not that
    statistic — *contradicts* where the line labels the claim's one statistic with another
    value, else at most an inference. A number named the max or min ("the slowest was … 0.57 s")
    that no line labels is checked against the lines of its quoted line's kind the outputs list
    (``_beyond_extreme``). Only a claim naming a statistic is read (one search)."""
    vocabulary = statistics()
    if not vocabulary.named(text):
        return []
    read = reader_text(text)
    named_at: list[tuple[Entity, Decimal, Decimal, Decimal, frozenset[str]]] = []
    for fact in facts:  # the claim's clocks and quantities (``_value_at``'s, lexed once)
        if fact.kind != "quantity" or fact.value is None or fact.precision is None or fact.factor is None:
            continue
        at = fact_at(read, fact.text)
        # the statistic its words name: one written right before it ("peaked at") or after ("on average")
        named = vocabulary.near(read, at, at + len(fact.text), _STATISTIC_REACH, 12) if at >= 0 else None
        if named:
            named_at.append((fact, fact.value, fact.precision, fact.factor, named))
    # the lines' labels are read only for a value the claim names a statistic of
    labelled = vocabulary.labelled(lines) if named_at else []
    problems: list[tuple[str, str]] = []
    if not labelled and outputs is not None:
        problems += _beyond_extreme(vocabulary.named(text), facts, lines, outputs.rows())
    for fact, value, precision, factor, named in named_at if labelled else ():
        half = precision / 2
        readings = (value, value * factor)
        under = [item for item in labelled if any(abs(item.value - r) <= half for r in readings)]
        if not under or any(item.statistic in named for item in under):
            continue
        other = ", ".join(sorted({item.statistic for item in under}))
        own = [item for item in labelled if item.statistic in named]
        if not own and named <= vocabulary.series:
            continue  # "p99 reached 47.85 s" of a p99 series whose max is 47.85: its window says nothing of p99
        if len(named) == 1 and own:
            problems.append(
                (CONTRADICTS, f"{fact.text!r} is its line's {other}, not its {own[0].statistic} ({own[0].value})")
            )
        else:
            problems.append(
                (INFERRED, f"{fact.text!r} is its line's {other}, not the {'/'.join(sorted(named))} it names")
            )
    return problems


#: How far before its number a claim names the field it gives ("光等锁就等了 47.1 s").
_FIELD_NAMED_REACH = 24
#: A total is no statistic a line labels a field's number with ("这条查询总共执行了 47.1 s").
_TOTAL = frozenset({"total"})
#: Where a claim's clause begins: the words naming a field are of the number's clause.
_CLAUSE_MARK = re.compile(r"[,，;；。!?！？]")


def _another_fields_value(text: str, facts: list[Entity], lines: list[str]) -> list[tuple[str, str]]:
    """ "SKU-49648 那条 UPDATE 光等锁就等了 47.1 s" quoting "Query_time: 47.1 Lock_time: 24.5": a number
    the claim gives by the words of one field of its quoted line (a part of its name, or its
    Chinese word: ``comparisons.yaml``) that another field of that line holds is that field's,
    not the one named — a contradiction."""
    quantities = [e for e in facts if e.kind == "quantity" and e.value is not None and e.precision is not None]
    fielded = [line for line in lines if len(line_fields(line)) >= 2] if quantities else []
    if not fielded:
        return []  # most quoted lines write fewer than two numbered fields
    read = claim_reading(text)
    for fact in quantities:
        assert fact.value is not None and fact.precision is not None
        at = fact_at(read, fact.text)
        number = fact.text.split()[0].rstrip("sS")
        if at < 0:
            continue
        clause = max([0, *(m.end() for m in _CLAUSE_MARK.finditer(read, 0, at))])
        start = max(clause, at - _FIELD_NAMED_REACH)
        for line in fielded:
            if number not in line:
                continue
            close = _CLAUSE_MARK.search(read, at)
            before, after = read[start:at], read[at + len(fact.text) : close.start() if close else len(read)]
            if statistics().named(read[clause:at]) - _TOTAL:
                continue  # "memory average 100 MB": a statistic's number, ``_statistic``'s to judge
            found = another_fields_value(before, fact.value, fact.precision / 2, line, after)
            # a field named by a statistic ("total=100", "p90=100") is ``_statistic``'s to judge
            if found is not None and not statistics().named(found[0].replace("_", " ")):
                holder, named = found
                return [(CONTRADICTS, f"{fact.text!r} is its line's {holder}, not its {named}")]
    return []


#: A token holding a digit: what differs between two lines of one kind (clocks, ids, values).
_DIGIT_TOKEN = re.compile(r"\S*\d\S*")
#: The extremes a claim may name a number by, and which way a line of its kind goes beyond one.
_EXTREMES = {"max": 1, "min": -1}


def _beyond_extreme(
    named: frozenset[str], facts: list[Entity], lines: list[str], rows: tuple[str, ...]
) -> list[tuple[str, str]]:
    """ "The slowest was instance 17288ea8…, at 0.57 s" quoting one of many "Took <n> seconds to
    deallocate network" lines: the one quantity of a claim naming one extreme (max or min) must be
    no less (more) than the value of its dimension on every listed line of its quoted line's kind
    (the same words once tokens with digits are masked); a line beyond it contradicts."""
    sides = [side for statistic, side in _EXTREMES.items() if statistic in named]
    quantities = [e for e in facts if e.kind == "quantity" and e.dimension not in (None, "count")]
    if len(sides) != 1 or len(quantities) != 1:
        return []
    (fact,) = quantities
    assert fact.value is not None and fact.factor is not None and fact.precision is not None
    kinds = {_DIGIT_TOKEN.sub("#", line).strip() for line in lines if fact.text.split()[0] in line}
    claimed, half = fact.value * fact.factor, fact.precision * fact.factor / 2
    for row in rows if kinds else ():
        if _DIGIT_TOKEN.sub("#", row).strip() not in kinds:
            continue
        found = [
            e.value * e.factor
            for e in TextFacts(row).entities()
            if e.dimension == fact.dimension and e.value is not None and e.factor is not None
        ]
        if len(found) == 1 and (found[0] - claimed) * sides[0] > half:
            more = "more" if sides[0] > 0 else "less"
            return [(CONTRADICTS, f"{fact.text!r} is no extreme: a line of its kind gives {more}: {row.strip()[:160]}")]
    return []


def _second_of_day(needle: str) -> int | None:
    clock = re.fullmatch(r"(\d{1,2}):(\d{2}):(\d{2})", needle)
    return int(clock.group(1)) * 3600 + int(clock.group(2)) * 60 + int(clock.group(3)) if clock else None


def _minute(needle: str) -> int | None:
    clock = _LINE_CLOCK.fullmatch(needle) or re.fullmatch(r"(\d{1,2}):(\d{2})(?::\d{2})?", needle)
    return int(clock.group(1)) * 60 + int(clock.group(2)) if clock else None


#: A number standing on its own (not part of a clock, date, version or id, nor a percentage).
_BARE_NUMBER = re.compile(r"(?<![\w.:/-])(\d+(?:\.\d+)?)(?![\w.:/%-]|\.\d)")


def _ratios(own: str, evidence: str, tolerance: float) -> list[tuple[str, str]]:
    """A ratio ("5 倍", "×5", "five times", "doubled") is the claim's own computation: stated when
    a tool wrote it, or when two cited values of one kind compute it within the rounding it is
    written to (``tolerance``, relative, for a word like "doubled" or a ratio written as
    approximate) — one of them a value the claim names, when it names any. Otherwise it is
    *unstated*: a hypothesis, never a confirmed fact."""
    read = reader_text(own)
    written_ratios: list[tuple[str, Decimal, Decimal]] = []
    for match in _MULTIPLE.finditer(read):
        number = match.group("before") or match.group("after")
        written = decimal_or_none(number)
        if written is not None and written > 1:
            written_ratios.append((match.group().strip(), written, _half_unit(number)))
    vocabulary = concepts()
    relative = Decimal(str(tolerance))
    written_ratios += [(w, v, v * relative) for w, v in vocabulary.ratio_words(own)]
    written_ratios += [
        (w, v, _half_unit(w)) for w, v in [*vocabulary.times_ratios(own), *vocabulary.factor_ratios(own)]
    ]
    written_ratios += [(w, v, _half_unit(w) / 100) for w, v in vocabulary.percent_ratios(own)]
    problems: list[tuple[str, str]] = []
    for spelled, written, rounding in written_ratios:
        if any(_close(stated, written, Decimal("0.05")) for stated in _multiples(evidence)):
            continue
        at = read.find(spelled)
        kind = _UNITS.qualifier(read[max(0, at - 16) : max(at, 0)], read[at + len(spelled) :][:16]) if at >= 0 else None
        low, high = written - rounding, written + rounding
        if kind == "approximate":
            low, high = min(low, written * (1 - relative)), max(high, written * (1 + relative))
        elif kind == "at_least":
            high = Decimal("Infinity")
        elif kind == "at_most":
            low = Decimal(0)
        if _computed(read.replace(spelled, " "), evidence, low, high, _reference(read, at, spelled)):
            continue
        problems.append((UNSTATED, f"the ratio {spelled!r} is stated by no tool nor computed from its cited values"))
    return problems


#: A value and half the unit of its last written digit: the interval it was rounded from.
_Value = tuple[Decimal, Decimal]
_NUMBER_IN = re.compile(r"\d+(?:\.\d+)?")


def _half_unit(written: str) -> Decimal:
    """Half the unit of the last digit of the number ``written`` holds (0.5 for a number word)."""
    number = (_NUMBER_IN.findall(written) or ["0"])[0]
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    return Decimal(5).scaleb(-decimals - 1)


def _values(text: str) -> dict[str, list[_Value]]:
    """The positive values of ``text`` by kind: quantities by dimension (in base units, with
    their rounding), and bare numbers ("active=50", "from 50 to 25")."""
    groups: dict[str, list[_Value]] = {}
    for e in extract_entities(text):
        if e.kind == "quantity" and e.value is not None and e.factor and e.precision is not None and e.value > 0:
            groups.setdefault(e.dimension or "", []).append((e.value * e.factor, e.precision * e.factor / 2))
    groups["bare"] = [
        (v, _half_unit(n)) for n in _BARE_NUMBER.findall(text) if (v := decimal_or_none(n)) is not None and v > 0
    ]
    return groups


#: A change from one value to another the claim writes ("from 192.5 ms to 9.8 s", "从 1.56 毫秒涨到 88.87 毫秒").
_CHANGE_BETWEEN = re.compile(
    r"(?i:\bfrom\b|从|從|由)[^,，;；。]{0,40}?\d[^,，;；。]{0,40}?(?i:\bto\b|到|至)\s*\S{0,4}?\d"
)


#: The value a multiple is of, written beside it: "是中位数 0.05 s 的 5 倍" (before 的), "5 times
#: its 0.05 s median", "5× the baseline of 0.05 s" (after it, a few words on).
_REFERENCE_BEFORE = re.compile(r"(\d+(?:\.\d+)?\s*[^\s\d的]{0,4})\s*的\s*(?:约|大约|近|将近)?\s*$")
_REFERENCE_AFTER = re.compile(
    r"^\s*(?:(?:the|its|their|that|than|of|as|much|usual|normal|median|baseline|average|typical|expected)\s+){0,3}"
    r"(\d+(?:\.\d+)?(?![\d:.])\s*[A-Za-z%µμ/]*)",
    re.IGNORECASE,
)


def _reference(read: str, at: int, spelled: str) -> tuple[str, _Value] | None:
    """The value (its kind and rounding) the multiple ``spelled`` at ``read[at:]`` is of, when
    the claim writes it beside the multiple; else None."""
    if at < 0:
        return None
    before = _REFERENCE_BEFORE.search(read, max(0, at - 16), at)
    after = None if before else _REFERENCE_AFTER.match(read[at + len(spelled) : at + len(spelled) + 48])
    found = before or after
    if found is None:
        return None
    for kind, values in _values(found.group(1)).items():
        if values and kind != "bare":
            return kind, values[0]
    bare = _values(found.group(1)).get("bare", [])
    return ("bare", bare[0]) if bare else None


def _computed(
    claimed: str, evidence: str, low: Decimal, high: Decimal, reference: tuple[str, _Value] | None = None
) -> bool:
    """Do two values of one kind give a ratio in ``[low, high]`` (each read anywhere in the
    interval it was rounded from)? Both are the claim's own when it writes two of that kind; one
    is when it writes one ("是基线 200ms 的 5 倍": 200ms against a cited value); else both are its
    lines'. With a ``reference`` the multiple names as what it is of, that is the divisor: of
    the claim's other value of its kind, when it writes one, else of a cited one."""
    # a multiple a tool wrote ("×1.46") is a ratio of its own, no value to compute one from
    own, cited = _values(claimed), _values(_MULTIPLE.sub(" ", reader_text(evidence)))
    if reference is not None:
        kind, (base, rounding) = reference
        others = [v for v in own.get(kind, []) if v[0] != base] or cited.get(kind, [])
        return any(
            base - rounding > 0 and (a - da) / (base + rounding) <= high and (a + da) / (base - rounding) >= low
            for a, da in others
        )
    for kind in own.keys() | cited.keys():
        mine, lines = own.get(kind, []), cited.get(kind, [])
        if len({a for a, _ in mine}) >= 2 and _CHANGE_BETWEEN.search(claimed):
            # a change between two values of its own ("from 192.5 ms to 9.8 s, roughly five times
            # higher"): the ratio is theirs, not one of them against any of a series' many values
            pairs = [(a, b) for a in mine for b in mine]
        elif mine:
            pairs = [(a, b) for a in mine for b in (*mine, *lines)] + [(b, a) for a in mine for b in lines]
        else:
            pairs = [(a, b) for a in lines for b in lines]
        for (a, da), (b, db) in pairs:
            if b - db <= 0:
                continue
            if (a - da) / (b + db) <= high and (a + da) / (b - db) >= low:
                return True
    return False


def _multiples(evidence: str) -> list[Decimal]:
    found = []
    for match in _MULTIPLE.finditer(reader_text(evidence)):
        value = decimal_or_none(match.group("before") or match.group("after"))
        if value is not None:
            found.append(value)
    return found


def _close(a: Decimal, b: Decimal, tolerance: Decimal) -> bool:
    return abs(a - b) <= tolerance * b
