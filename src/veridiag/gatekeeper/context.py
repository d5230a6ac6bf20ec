"""What a rule sees (``ValidationContext``) and what it returns (``RuleResult``).

Rules never raise on odd input: the helpers below walk the parsed output defensively
(claims that are not objects, bindings that are not lists) and name every place they
look at with a field path, so an error can always say which target it is about.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any, Literal

from veridiag.contracts.gatekeeper import CheckRecord, MatchedSpan, RuleStatus
from veridiag.contracts.invocation import InvocationView
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.contracts.parsing import ParseStatus
from veridiag.contracts.trace import ToolTraceEntry
from veridiag.gatekeeper.evidence import EvidenceIndex, EvidenceIndexCache
from veridiag.gatekeeper.matching import Alignment, AnchoredMatcher, ExcerptMatcher
from veridiag.text.entities import SERVICE_BLIND, Entity, EntityKind, TextFacts
from veridiag.text.records import indent

SourceName = Literal["output", "output_preview", "retrieval_details", "tool_trace_summary"]
ALL_SOURCES: tuple[SourceName, ...] = ("output", "output_preview", "retrieval_details", "tool_trace_summary")
_DEFAULT_MATCHER = AnchoredMatcher()


@dataclass(frozen=True)
class Located:
    """Where an excerpt best aligns in one invocation: which text, which span, how well."""

    invocation: InvocationView
    source: SourceName
    text: str
    alignment: Alignment

    @property
    def score(self) -> float:
        return self.alignment.score

    def region(self) -> str:
        """The matched span widened to whole lines: what the output says *there*."""
        start = self.text.rfind("\n", 0, self.alignment.start) + 1
        end = self.text.find("\n", self.alignment.end)
        return self.text[start : end if end >= 0 else len(self.text)]

    def record(self) -> str:
        """``region`` with the lines indented under it (a log pattern's ``e.g.`` line) and the
        line it is indented under when that line stands for it alone (a pattern of one line,
        whose UTC time its example shows in local time): one record of the output, whose facts
        are the quoted line's own. A pattern of several lines is not its example's: its count
        and times are all of theirs."""
        text = self.text
        start = text.rfind("\n", 0, self.alignment.start) + 1
        stop = text.find("\n", self.alignment.end)
        stop = len(text) if stop < 0 else stop
        first, depth = start, indent(text, start)
        if depth and start:
            at = start - 1  # the line break before the region; walked up line by line
            for _ in range(_RECORD_LINES):
                begin = text.rfind("\n", 0, at) + 1
                if text[begin:at].strip() and indent(text, begin) < depth:
                    first = begin if _OF_ONE_LINE.match(text, begin) else start
                    break
                if not begin:
                    break
                at = begin - 1
        last, end = indent(text, max(start, text.rfind("\n", start, stop) + 1)), stop
        for _ in range(_RECORD_LINES):
            if end >= len(text) or text[end + 1 : end + 1 + last + 1] != " " * (last + 1):
                break  # the next line is not indented deeper than the region's last
            following = text.find("\n", end + 1)
            end = len(text) if following < 0 else following
        return text[first:end]


#: How far a record runs around its quoted line: a pattern's example is one line; a block that
#: runs on (a header over a list) is no one record, and the cap keeps the look-around cheap.
_RECORD_LINES = 4


#: A ``query_logs`` pattern of one line ("  1× INFO 2005-11-09T20:10:55Z – …"): its figures are its example's.
_OF_ONE_LINE = re.compile(r"\s*1×\s")


@dataclass(frozen=True, slots=True)
class BindingView:
    """One evidence binding of a claim as every rule reads it, resolved once per check."""

    #: ``claims[i].evidence_bindings[j]``
    target: str
    binding: JsonObject
    #: ``evidence_excerpt`` as written (any JSON value).
    excerpt: object
    #: ``source_invocation_ids`` as written; ``[]`` when not a list.
    cited: list[JsonValue]
    #: The cited invocations that exist and are this session's, in citation order.
    usable: tuple[InvocationView, ...]

    @property
    def excerpt_target(self) -> str:
        return f"{self.target}.evidence_excerpt"


@dataclass(frozen=True, slots=True)
class ClaimView:
    """One claim that is a JSON object, with its bindings that are JSON objects."""

    index: int
    #: ``claims[i]``
    target: str
    claim: JsonObject
    bindings: tuple[BindingView, ...]


@dataclass
class ValidationContext:
    """One Gatekeeper run: the (normalised) output and the cited invocations.

    It is the per-check object: what several rules need of the output — each claim's
    bindings with their cited invocations resolved, each excerpt's alignment — is worked out
    here once per check and shared by the rules. Nothing in it outlives the check, so a
    check never answers from an earlier check's work on the same claims.
    """

    #: The output as parsed (any JSON value), and its normalised copy when it is an object.
    output: JsonValue
    normalized: JsonObject | None
    session_id: str
    invocations: Mapping[int, InvocationView]
    parse_status: ParseStatus | None = None
    trace_summary: list[ToolTraceEntry] = field(default_factory=list)
    matcher: ExcerptMatcher | None = None
    #: Where the per-invocation indexes come from; the Gatekeeper's own outlives the run.
    evidence_cache: EvidenceIndexCache = field(default_factory=EvidenceIndexCache)
    #: What the user asked, when the caller knows: a zone it names is its reader's.
    question: str | None = None
    #: Per-run memo for rules (entity look-ups); never outlives the run.
    memo: dict[Any, Any] = field(default_factory=dict)
    #: This run's own memos, typed: each invocation's index, its texts, each excerpt's alignment.
    _indexes: dict[int, EvidenceIndex] = field(default_factory=dict, init=False, repr=False)
    _texts: dict[tuple[int, tuple[SourceName, ...]], list[tuple[SourceName, str]]] = field(
        default_factory=dict, init=False, repr=False
    )
    _located: dict[tuple[str, int, tuple[SourceName, ...]], Located | None] = field(
        default_factory=dict, init=False, repr=False
    )
    _claim_views: list[ClaimView] | None = field(default=None, init=False, repr=False)
    #: Each text's facts as rules asked for them (by services and ignored tokens), and per text
    #: the first asked for: lexed at most once per check.
    _facts: dict[tuple[str, tuple[str, ...], tuple[str, ...]], TextFacts] = field(
        default_factory=dict, init=False, repr=False
    )
    _facts_of: dict[str, TextFacts] = field(default_factory=dict, init=False, repr=False)
    _reader_zones: tuple[tzinfo, ...] | None = field(default=None, init=False, repr=False)

    def reader_zones(self) -> tuple[tzinfo, ...]:
        """The zones other than UTC the question or the answer's claims name (``text/zones.named_zones``):
        a clock a claim writes without a zone may be in one of them — at most an inference then."""
        if self._reader_zones is None:
            from veridiag.text.zones import named_zones  # only a check with a clock to place asks

            texts = [text for view in self.claim_views() if isinstance(text := view.claim.get("claim_text"), str)]
            if self.question:
                texts.append(self.question)
            self._reader_zones = named_zones(texts)
        return self._reader_zones

    def claim_views(self) -> list[ClaimView]:
        """Every claim that is a JSON object, with its bindings and their usable invocations
        (built on first use, then shared by the rules of this check)."""
        if self._claim_views is None:
            claims = self.normalized.get("claims") if self.normalized else None
            self._claim_views = [
                self._claim_view(index, claim)
                for index, claim in enumerate(claims if isinstance(claims, list) else [])
                if isinstance(claim, dict)
            ]
        return self._claim_views

    def _claim_view(self, index: int, claim: JsonObject) -> ClaimView:
        target = f"claims[{index}]"
        views = []
        for binding_target, binding in bindings(target, claim):
            cited = cited_ids(binding)
            usable = tuple(inv for raw in cited if (inv := self.usable_invocation(raw)) is not None)
            views.append(BindingView(binding_target, binding, binding.get("evidence_excerpt"), cited, usable))
        return ClaimView(index, target, claim, tuple(views))

    def text_facts(self, text: str, services: Sequence[str] = (), ignore: Sequence[str] = ()) -> TextFacts:
        """``text``'s facts (``TextFacts``) read with ``services`` and ``ignore``: one per check
        for every rule reading them so, lexed once (when first asked)."""
        key = (text, tuple(services), tuple(ignore))
        facts = self._facts.get(key)
        if facts is None:
            facts = self._facts[key] = TextFacts(text, services, ignore)
            self._facts_of.setdefault(text, facts)
        return facts

    def entities_any_services(self, text: str) -> list[Entity]:
        """``text``'s facts, none ignored, as a rule of this check lexed them, told of whichever
        services it was (none, when no rule asked yet): for a reader that keeps no service
        (``AssertedFacts``), which then needs no lexing of its own."""
        return (self._facts_of.get(text) or self.text_facts(text)).entities(ignored_too=True)

    def service_blind_entities(self, text: str, kinds: frozenset[EntityKind]) -> list[Entity]:
        """``extract_entities(text)``'s facts of ``kinds`` (each in ``SERVICE_BLIND``), from the
        lexing a rule of this check already did, whatever services it was told of: services
        only decide what a plain word is (a service, a host, a name), never these kinds."""
        if not kinds <= SERVICE_BLIND:
            raise ValueError(f"facts of kinds {sorted(kinds - SERVICE_BLIND)} depend on the services")
        return [entity for entity in self.entities_any_services(text) if entity.kind in kinds]

    def claims(self) -> Iterator[tuple[int, str, JsonObject]]:
        """``(index, target path, claim)`` for every claim that is a JSON object."""
        for view in self.claim_views():
            yield view.index, view.target, view.claim

    def evidence(self, invocation: InvocationView) -> EvidenceIndex:
        """The invocation's index: what depends on it alone, built once per invocation."""
        index = self._indexes.get(invocation.id)
        if index is None:
            index = self._indexes[invocation.id] = self.evidence_cache.index(invocation)
        return index

    def source_texts(
        self, invocation: InvocationView, names: tuple[SourceName, ...] = ALL_SOURCES
    ) -> list[tuple[SourceName, str]]:
        """The non-empty texts of ``invocation`` an excerpt may be compared with (memoised)."""
        memo_key = (invocation.id, names)
        known = self._texts.get(memo_key)
        if known is not None:
            return known
        index = self.evidence(invocation)
        texts: list[tuple[SourceName, str]] = []
        for name in names:
            if name == "output":
                text = index.output
            elif name == "output_preview":
                text = index.output_preview
                if "output" in names and index.preview_in_output:
                    continue  # the preview is the output's head: searching it again finds nothing new
            elif name == "retrieval_details":
                text = index.retrieval_details
            else:
                text = "\n".join(
                    entry.output_summary for entry in self.trace_summary if invocation.id in entry.invocation_ids
                )
            if text:
                texts.append((name, text))
        self._texts[memo_key] = texts
        return texts

    def locate(
        self, excerpt: str, invocation: InvocationView, names: tuple[SourceName, ...] = ALL_SOURCES
    ) -> Located | None:
        """Best alignment of ``excerpt`` across the invocation's texts (memoised per run,
        so the excerpt and grounding rules share one search)."""
        key = (excerpt, invocation.id, names)
        if key in self._located:
            return self._located[key]
        matcher = self.matcher or _DEFAULT_MATCHER
        index = self.evidence(invocation)
        best: Located | None = None
        for name, text in self.source_texts(invocation, names):
            if name == "output":
                found = matcher.locate(excerpt, text, index.output_tokens, runs=index.output_runs)
            else:
                found = matcher.locate(excerpt, text)
            if found is not None and (best is None or found.score > best.score):
                best = Located(invocation, name, text, found)
                if found.score >= 1.0:
                    break
        self._located[key] = best
        return best

    def quoted_lines(self, claim: ClaimView, aligned_at: float = 0.5) -> list[str]:
        """The claim's excerpts and the whole lines of its cited outputs they align with (at
        ``aligned_at`` or better): what the claim's own evidence says, memoised per run."""
        key = ("quoted_lines", claim.index, aligned_at)
        if key not in self.memo:
            lines: list[str] = []
            for binding in claim.bindings:
                if not isinstance(binding.excerpt, str) or not binding.excerpt.strip():
                    continue
                lines.append(binding.excerpt)
                for invocation in binding.usable:
                    located = self.locate(binding.excerpt, invocation)
                    if located is not None and located.score >= aligned_at:
                        lines.append(located.region())
            self.memo[key] = lines
        return list(self.memo[key])

    def usable_invocation(self, raw_id: JsonValue) -> InvocationView | None:
        """The invocation behind a cited id if it exists and belongs to this session."""
        invocation_id = as_invocation_id(raw_id)
        if invocation_id is None:
            return None
        invocation = self.invocations.get(invocation_id)
        if invocation is None or invocation.session_id != self.session_id:
            return None
        return invocation


def bindings(claim_target: str, claim: Mapping[str, JsonValue]) -> Iterator[tuple[str, JsonObject]]:
    """``(target path, binding)`` for each binding of a claim that is a JSON object."""
    items = claim.get("evidence_bindings")
    if not isinstance(items, list):
        return
    for index, binding in enumerate(items):
        if isinstance(binding, dict):
            yield f"{claim_target}.evidence_bindings[{index}]", binding


def cited_ids(binding: Mapping[str, JsonValue]) -> list[JsonValue]:
    ids = binding.get("source_invocation_ids")
    return ids if isinstance(ids, list) else []


def as_invocation_id(raw: object) -> int | None:
    """Accept ints and digit strings (a harmless model habit); reject bools and the rest."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit() and len(raw.strip()) < 19:
        return int(raw.strip())
    return None


@dataclass
class RuleResult:
    """A rule's checks; its status is the worst outcome among them."""

    rule_id: str
    checks: list[CheckRecord] = field(default_factory=list)

    def add(
        self,
        target: str,
        outcome: RuleStatus,
        reason: str = "",
        *,
        invocation_id: int | None = None,
        score: float | None = None,
        matched_span: MatchedSpan | None = None,
    ) -> CheckRecord:
        record = CheckRecord(
            rule_id=self.rule_id,
            target=target,
            outcome=outcome,
            reason=reason,
            invocation_id=invocation_id,
            score=score,
            matched_span=matched_span,
        )
        self.checks.append(record)
        return record

    @property
    def status(self) -> RuleStatus:
        outcomes = {check.outcome for check in self.checks}
        if "fail" in outcomes:
            return "fail"
        if "warn" in outcomes:
            return "warn"
        return "pass"
