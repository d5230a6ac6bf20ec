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
  lines give it, else *unstated*.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from functools import partial

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.gatekeeper import RuleStatus
from veridiag.contracts.invocation import InvocationView
from veridiag.gatekeeper.context import RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata
from veridiag.text.concepts import ConceptHit, concepts, owned
from veridiag.text.entities import extract_entities
from veridiag.text.normalize import reader_text
from veridiag.text.quotes import own_words

#: How a reason starts says what the guardrails do with the claim (pipeline/guardrails.py).
UNSTATED = "unstated"
INFERRED = "inferred"
CONTRADICTS = "contradicts"

_OPPOSITE = {"up": "down", "down": "up"}
#: A multiple: "5 倍", "5x", "×5", "5-fold", "翻倍".
_MULTIPLE = re.compile(
    r"(?:(?<![A-Za-z0-9])[×x]\s*(?P<before>\d+(?:\.\d+)?))(?![\d.])|(?<![\w.])(?P<after>\d+(?:\.\d+)?)\s*(?:倍|x(?![A-Za-z])|×|-?fold)"
)
#: A whole number counting what follows it ("6 services", "3 台机器"; not a clock, date, version,
#: decimal or a code at a clause's end).
_BARE_COUNT = re.compile(r"(?<![\d:.\-/])\d+\s?(?:[个台条次家项位]|[A-Za-z\u4e00-\u9fff])")
#: What ends a clause: an absolute counts what its own clause counts.
_CLAUSE_MARKS = ("，", ",", "；", ";", "。", ". ", "：", ": ", "\n")


class StatedParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    claim_types: list[str] = Field(default_factory=list, alias="claimTypes")
    #: Alignment from which an excerpt quotes a line of the output.
    aligned_at: float = Field(default=0.5, ge=0, le=1, alias="alignedAt")
    #: Relative tolerance of a ratio computed from two numbers against the one written.
    ratio_tolerance: float = Field(default=0.1, ge=0, le=1, alias="ratioTolerance")


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
            claimed = concepts().in_claim(text)  # read once: both judgements below need its words
            problems = _judge(
                text, claimed, lines, asked, output_is_calm=partial(_any_calm, context, cited), params=params
            )
            ordinal = _ordinal_times(text, claimed, [inv.output for inv in cited])
            if ordinal:
                problems = [*(problems or []), *ordinal]
            if problems is None:
                continue  # no concept word, no ratio: nothing for this rule to judge (kept out of the audit)
            if not problems:
                result.add(claim.target, "pass", "its concepts are its quoted lines'")
                continue
            worst = min(problems, key=lambda p: (CONTRADICTS, UNSTATED, INFERRED).index(p[0]))
            outcome: RuleStatus = "fail" if worst[0] == CONTRADICTS else "warn"
            listed = "; ".join(reason for _kind, reason in problems)
            result.add(claim.target, outcome, f"{worst[0]}: {listed}")
        return result


def _any_calm(context: ValidationContext, invocations: list[InvocationView]) -> bool:
    return any(_calm(context, invocation) for invocation in invocations)


def _calm(context: ValidationContext, invocation: InvocationView) -> bool:
    """Does the invocation's output say nothing changed? Read once per run: an output may be
    64 KB, and most claims never ask (only a direction or evaluation does)."""
    key = ("calm", invocation.id)
    if key not in context.memo:
        context.memo[key] = concepts().states("calm", invocation.output)
    return bool(context.memo[key])


def _judge(
    text: str,
    claimed: list[ConceptHit],
    lines: list[str],
    asked: str,
    *,
    output_is_calm: Callable[[], bool],
    params: StatedParams,
) -> list[tuple[str, str]] | None:
    """What the claim says that its lines do not; None when it says nothing this rule reads.
    What a line is about may stand in what the call asked for instead (``asked``: its metric or
    query): "the error rate rose" quoting "peak 12.49%" of ``gateway_error_rate`` states an
    error; its absolutes, directions and evaluations must be the lines' own. ``claimed``: the
    claim's concept words (``Concepts.in_claim(text)``)."""
    vocabulary = concepts()
    evidence = "\n".join(lines)
    own = own_words(text, lines, quoted=False)
    problems: list[tuple[str, str]] = []
    hits = owned(claimed, own)
    if not hits and not _MULTIPLE.search(reader_text(own)) and not vocabulary.ratio_words(own):
        return None
    for hit in hits:
        if hit.kind == "ordinal":
            continue  # checked against the whole output (``_ordinal_times``)
        if vocabulary.states(hit.concept, evidence) or (hit.kind == "state" and vocabulary.states(hit.concept, asked)):
            continue
        if hit.kind == "absolute" and not _counted(own, hit) and not vocabulary.denies_after(own, hit.end):
            problems.append((UNSTATED, f"{hit.word!r} ({hit.concept}) is not what its quoted lines say"))
        elif hit.kind == "state":
            problems.append((UNSTATED, f"{hit.word!r} ({hit.concept}) interprets what its quoted lines do not state"))
        elif hit.kind == "direction":
            problems += _direction(own, hit, evidence, output_is_calm())
        elif hit.kind == "evaluative":
            calm = output_is_calm()
            kind = UNSTATED if calm else INFERRED
            problems.append((kind, f"{hit.word!r} evaluates what its quoted lines do not" + (_CALM if calm else "")))
    problems += _ratios(own, evidence, params.ratio_tolerance)
    return problems


_CALM = "; the cited output says nothing changed"


def _counted(own: str, hit: ConceptHit) -> bool:
    """An absolute in the clause of a count ("all 50 connections", "2个实例都", "全部日志中…共
    10525 条") is that count, stated by its number."""
    start = max((own.rfind(mark, 0, hit.start) for mark in _CLAUSE_MARKS), default=-1) + 1
    ends = [at for mark in _CLAUSE_MARKS if (at := own.find(mark, hit.end)) >= 0]
    clause = own[start : min(ends, default=len(own))]
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
    return _BARE_COUNT.search(clause) is not None  # "none of the 6 services", "3 台机器都"


def _direction(own: str, hit: ConceptHit, evidence: str, calm: bool) -> list[tuple[str, str]]:
    vocabulary = concepts()
    opposite = _OPPOSITE.get(hit.concept, "")
    if opposite and vocabulary.states(opposite, evidence):
        return [(CONTRADICTS, f"{hit.word!r} ({hit.concept}): its quoted lines say {opposite}")]
    bounds = _from_to(own)
    if bounds is not None and bounds[0] != bounds[1]:
        if (bounds[1] > bounds[0]) == (hit.concept == "up"):
            return []  # its numbers say it, and entity grounding finds them in its lines
        return [(CONTRADICTS, f"{hit.word!r} ({hit.concept}) runs against its own numbers")]
    if calm:
        return [(UNSTATED, f"{hit.word!r} ({hit.concept}){_CALM}")]
    return [(INFERRED, f"{hit.word!r} ({hit.concept}) is not stated by its quoted lines")]


#: "from 0 to a peak of 37", "从 120 降到 900", "0.2% → 12.49%": the two values a direction runs between.
_FROM_TO = re.compile(
    r"(?:from|从|由)\s*(?P<a>\d+(?:\.\d+)?)[^\d，,。；;]{0,24}?(?:to|到|至)[^\d，,。；;]{0,16}?(?P<b>\d+(?:\.\d+)?)"
    r"|(?P<c>\d+(?:\.\d+)?)\S{0,4}\s*(?:→|->)\s*(?P<d>\d+(?:\.\d+)?)",
    re.IGNORECASE,
)


def _from_to(own: str) -> tuple[Decimal, Decimal] | None:
    """The first and last value of the claim's direction: a from–to phrase, else its first and
    last quantities of one dimension."""
    read = reader_text(own)
    match = _FROM_TO.search(read)
    if match is not None:
        first, last = _decimal(match.group("a") or match.group("c")), _decimal(match.group("b") or match.group("d"))
        if first is not None and last is not None:
            return first, last
    numbers = [e for e in extract_entities(own) if e.kind == "quantity" and e.value is not None and e.factor]
    if len(numbers) >= 2 and numbers[0].dimension == numbers[-1].dimension:
        ends = [n.value * n.factor for n in (numbers[0], numbers[-1]) if n.value is not None and n.factor]
        return ends[0], ends[1]
    return None


#: A line's clock as outputs write it (``2026-07-07T12:00:41Z``, ``12:00:41``).
_LINE_CLOCK = re.compile(r"(?<![\d:])(\d{2}):(\d{2})(?::\d{2})?(?![\d])")


def _ordinal_times(text: str, words: list[ConceptHit], outputs: list[str]) -> list[tuple[str, str]]:
    """ "The first OutOfMemoryError came at 12:30" while a cited line shows one at 12:00 is false:
    a first (or last) at a time is checked against every line of the cited outputs that names
    the same code or id — an earlier (later) one contradicts it. Lines without a clock, or a
    claim without a code, a clock or an ordinal word, are not judged."""
    hits = [hit for hit in words if hit.kind == "ordinal"]
    if not hits or not outputs:
        return []
    facts = extract_entities(text)
    subjects = [e for e in facts if e.kind in ("error_code", "identifier")]
    clocks = [_minute(n) for e in facts if e.kind == "timestamp" for n in e.needles if ":" in n]
    claimed = [c for c in clocks if c is not None]
    if not subjects or len(claimed) != 1:
        return []
    at = claimed[0]
    seen: list[int] = []
    for output in outputs:
        for line in output.splitlines():
            if any(needle in line for subject in subjects for needle in subject.needles):
                clock = _LINE_CLOCK.search(line)
                if clock is not None:
                    seen.append(int(clock.group(1)) * 60 + int(clock.group(2)))
    problems: list[tuple[str, str]] = []
    for hit in hits:
        other = [m for m in seen if (m < at - 1 if hit.concept == "first" else m > at + 1)]
        if other:
            shown = min(other) if hit.concept == "first" else max(other)
            problems.append(
                (
                    CONTRADICTS,
                    f"{hit.word!r} at {at // 60:02d}:{at % 60:02d}: its cited output shows "
                    f"{subjects[0].text} at {shown // 60:02d}:{shown % 60:02d}",
                )
            )
    return problems


def _minute(needle: str) -> int | None:
    clock = _LINE_CLOCK.fullmatch(needle) or re.fullmatch(r"(\d{1,2}):(\d{2})(?::\d{2})?", needle)
    return int(clock.group(1)) * 60 + int(clock.group(2)) if clock else None


def _ratios(own: str, evidence: str, tolerance: float) -> list[tuple[str, str]]:
    read = reader_text(own)
    written_ratios: list[tuple[str, Decimal]] = []
    for match in _MULTIPLE.finditer(read):
        written = _decimal(match.group("before") or match.group("after"))
        if written is not None and written > 1:
            written_ratios.append((match.group().strip(), written))
    written_ratios += concepts().ratio_words(own)
    problems: list[tuple[str, str]] = []
    for spelled, written in written_ratios:
        if any(_close(stated, written, Decimal("0.05")) for stated in _multiples(evidence)):
            continue
        values = [
            e.value * e.factor
            for e in extract_entities(f"{read}\n{evidence}")
            if e.kind == "quantity" and e.value is not None and e.factor and e.value > 0
        ]
        derived = any(_close(a / b, written, Decimal(str(tolerance))) for a in values for b in values if b)
        kind = INFERRED if derived else UNSTATED
        problems.append(
            (
                kind,
                f"the ratio {spelled!r} is stated by no tool" + ("" if derived else " nor given by two of its numbers"),
            )
        )
    return problems


def _multiples(evidence: str) -> list[Decimal]:
    found = []
    for match in _MULTIPLE.finditer(reader_text(evidence)):
        value = _decimal(match.group("before") or match.group("after"))
        if value is not None:
            found.append(value)
    return found


def _decimal(text: str | None) -> Decimal | None:
    try:
        return Decimal(text) if text else None
    except InvalidOperation:
        return None


def _close(a: Decimal, b: Decimal, tolerance: Decimal) -> bool:
    return abs(a - b) <= tolerance * b
