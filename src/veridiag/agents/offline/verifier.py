"""Offline verifier: the six claim labels from the evidence itself, deterministically.

- verbatim excerpt and every fact of the claim found in the cited output ⇒ ``direct_observation``
- a paraphrased excerpt (≥ 0.7 similar), or a claim that is an inference (``root_cause``,
  ``support_level: indirect``), with its facts found ⇒ ``reasonable_inference``
- absolutist wording ("唯一根因", "definitely"; ``verifier.yaml``) ⇒ ``overstated``
- a number, code, id or service the cited output does not contain ⇒ ``external_unknown``
  — ``contradicted`` when the output states the same kind of quantity with another value
  at the quoted place, or the claim denies what the output shows
- no usable evidence ⇒ ``unsupported``

It reads the cited invocations itself (this session's only) and never calls a model.
"""

from __future__ import annotations

import json
from datetime import tzinfo
from functools import lru_cache

from pydantic import Field

from veridiag.agents.reply import OFFLINE, RoleReply
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.invocation import InvocationSource, InvocationView
from veridiag.contracts.material import ClaimView, ExecutorMaterial, HypothesisView
from veridiag.contracts.verdict import groundedness, matrix_verdict
from veridiag.contracts.verifier import (
    ClaimCheck,
    ClaimVerification,
    EvidenceRef,
    HypothesisCheck,
    HypothesisVerification,
    VerifierPayload,
)
from veridiag.gatekeeper.matching import AnchoredMatcher
from veridiag.text.concepts import concepts
from veridiag.text.derived import Cited, derived
from veridiag.text.entities import Corpus, Entity, claim_reading, extract_entities, level_for_difference, period_lengths
from veridiag.text.quotes import own_words
from veridiag.text.render import invocation_json
from veridiag.text.wordfiles import AnyOf, Word, WordModel, bundled_words
from veridiag.text.zones import named_zones, read_in

_MATCHER = AnchoredMatcher()


class LevelDenial(WordModel):
    """A denial of one kind of line and what shows lines of that kind."""

    denial: AnyOf
    levels: list[Word] = Field(min_length=1)
    #: A concept (``text/concepts.yaml``) lines state at any level ("status=500" at INFO).
    concept: str | None = None


class VerifierWording(WordModel):
    """``verifier.yaml``: the wording claims and hypotheses are judged by."""

    #: A hypothesis written as a certainty is overstated.
    absolutist: AnyOf
    #: A claim that says no lines were logged, against a log call that matched some, is contradicted.
    denies_lines: AnyOf
    #: Words that scope a denial to a later time.
    later: AnyOf
    #: A claim with no negation at all, citing only log calls that matched nothing, is contradicted.
    negation: AnyOf
    #: Denials of one kind of line, judged by the matched lines of that kind.
    denied_levels: list[LevelDenial] = Field(default_factory=list)
    #: An output saying its lines wrote no level: its level counts decide nothing.
    unleveled: AnyOf | None = None


@lru_cache(maxsize=1)
def verifier_wording() -> VerifierWording:
    """The bundled ``agents/offline/verifier.yaml``, read once."""
    return bundled_words("veridiag.agents.offline", "verifier.yaml", VerifierWording)


class OfflineVerifier:
    name = OFFLINE

    def __init__(
        self,
        invocations: InvocationSource,
        known_services: list[str] | None = None,
        wording: VerifierWording | None = None,
    ) -> None:
        self.invocations = invocations
        self.known_services = known_services or []
        self.wording = wording or verifier_wording()

    def verify(self, payload: VerifierPayload) -> RoleReply:
        material = ExecutorMaterial.read(payload.executor_structured_output)
        own = {i for entry in payload.tool_trace_summary for i in entry.invocation_ids}
        checks: list[ClaimCheck] = []
        labelled: list[tuple[ClaimView, ClaimVerification]] = []
        zones = named_zones([*(claim.claim_text for claim in material.claims), payload.original_query])
        previous: ClaimView | None = None
        for claim in material.claims:
            label, detail, refs = self.judge(claim, own, zones, previous)
            previous = claim
            checks.append(ClaimCheck(claim_id=claim.claim_id, verification=label, detail=detail, evidence_refs=refs))
            labelled.append((claim, label))
        hypothesis_checks = [_hypothesis(item, self.wording) for item in material.hypotheses]
        verdict, why = matrix_verdict(labelled, None)
        if verdict == "PASS" and payload.gatekeeper_result and payload.gatekeeper_result.status == "fail":
            verdict, why = "LOW_CONFID", "the Gatekeeper failed"
        score = groundedness([label for _claim, label in labelled])
        output = {
            "verdict": verdict,
            "groundedness_score": score,
            "claim_checks": [check.model_dump(exclude_none=True) for check in checks],
            "hypothesis_checks": [check.model_dump() for check in hypothesis_checks],
            "rationale": why,
        }
        return RoleReply(text=json.dumps(output, ensure_ascii=False), answered_by=EngineUse(engine=self.name))

    def _usable(self, claim: ClaimView, own: set[int]) -> dict[int, InvocationView]:
        """The successful calls of this session ``claim`` cites."""
        ids = {i for b in claim.bindings for i in b.source_invocation_ids if i in own}
        found = self.invocations.get_invocations(sorted(ids))
        return {i: inv for i, inv in found.items() if inv.status != "error"}

    def _quoted(self, claim: ClaimView, usable: dict[int, InvocationView]) -> Corpus:
        """The lines ``claim`` quotes: its excerpts and the whole lines they align with."""
        excerpts = [b.evidence_excerpt for b in claim.bindings]
        return Corpus(excerpts + _aligned_regions(excerpts, usable, whole_lines=True))

    def judge(
        self,
        claim: ClaimView,
        own: set[int],
        zones: tuple[tzinfo, ...] = (),
        previous: ClaimView | None = None,
    ) -> tuple[ClaimVerification, str, list[EvidenceRef]]:
        """``zones``: the zones the answer names for its reader (``text/zones.named_zones``);
        ``previous``: the answer's claim before this one (the event "1 秒后" counts from)."""
        usable = self._usable(claim, own)
        if not usable:
            return "unsupported", "no usable evidence: the claim cites no successful call of this session", []
        refs = [EvidenceRef(tool_name=inv.tool_name, source_invocation_ids=[i]) for i, inv in usable.items()]
        corpus = Corpus([text for inv in usable.values() for text in _texts(inv)])
        text = claim.claim_text
        facts = extract_entities(text, self.known_services)
        excerpts = [b.evidence_excerpt for b in claim.bindings]
        # a date belongs to the lines the claim quotes, not to any line of the output
        quoted_lines = self._quoted(claim, usable) if any(e.kind == "date" for e in facts) else corpus
        missing = [e for e in facts if not (quoted_lines if e.kind == "date" else corpus).contains(e)]
        read = claim_reading(text)
        missing += [e for e in facts if e not in missing and level_for_difference(e, read, corpus)]
        # a clock without a zone, true in the zone the answer names for its reader: an inference
        in_reader_zone = [e for e in missing if any(corpus.contains(r) for r in read_in(e, zones))]
        missing = [e for e in missing if e not in in_reader_zone]
        # a clock true in one reading of a zone its words do not pin ("08:22 CST"): an inference
        unpinned = bool(in_reader_zone) or any(e not in missing and e.uncertain and not corpus.pins(e) for e in facts)
        best = max((self._score(e, usable) for e in excerpts if e.strip()), default=0.0)
        if missing:
            regions = excerpts + _aligned_regions(excerpts, usable)

            def periods() -> tuple[int, ...]:
                return tuple(p for inv in usable.values() for p in period_lengths(inv.arguments, inv.retrieval_details))

            def before() -> Corpus | None:
                return self._quoted(previous, self._usable(previous, own)) if previous is not None else None

            cited = Cited(
                self._quoted(claim, usable),
                outputs=[inv.output or "" for inv in usable.values()],
                context=[invocation_json(v) for inv in usable.values() for v in (inv.arguments, inv.retrieval_details)],
                periods=periods,
                previous=before,
                facts=facts,
            )
            missing = [e for e in missing if not derived(e, text, cited)]
        if missing:
            if any(_conflicts(e, regions) for e in missing):
                return "contradicted", f"the evidence states another value than {missing[0].text!r}", refs
            listed = ", ".join(e.text for e in missing)
            return "external_unknown", f"not in the cited output: {listed}", refs
        if _denies(
            own_words(text, [*excerpts, *_aligned_regions(excerpts, usable)], quoted=False), usable, self.wording
        ):
            return "contradicted", "the claim denies what the cited output shows", refs
        if self.wording.absolutist.search(text):
            return "overstated", "absolute wording the evidence cannot carry", refs
        if best < 0.7:
            return "unsupported", f"the excerpts do not match the cited output (best {best:.2f})", refs
        inference = claim.claim_type == "root_cause" or claim.support_level == "indirect" or unpinned
        if best >= 1.0 and not inference:
            return "direct_observation", "quoted verbatim; every fact occurs in the cited output", refs
        return "reasonable_inference", "follows from the cited output without being stated in it", refs

    @staticmethod
    def _score(excerpt: str, usable: dict[int, InvocationView]) -> float:
        """The best alignment over the cited texts; a verbatim one ends the search (aligning a
        long excerpt against the texts that lack it costs its length times theirs)."""
        best = 0.0
        for inv in usable.values():
            for text in _texts(inv):
                found = _MATCHER.locate(excerpt, text)
                if found is not None and found.score > best:
                    best = found.score
                    if best >= 1.0:
                        return best
        return best


def _texts(invocation: InvocationView) -> list[str]:
    details, arguments = invocation_json(invocation.retrieval_details), invocation_json(invocation.arguments)
    return [t for t in (invocation.output, invocation.output_preview, details, arguments) if t]


def _aligned_regions(excerpts: list[str], usable: dict[int, InvocationView], *, whole_lines: bool = False) -> list[str]:
    """The cited output around where each excerpt aligns: a doctored excerpt is judged by the real
    line. ``whole_lines``: the lines it aligns with, whole — as the Gatekeeper reads a claim's own
    lines for what it computed (an excerpt cut after a line's clock still dates that line). Only
    where it aligns best: quoted verbatim from the output, its partial echo in the retrieval
    details (one long JSON line) is no line of the claim's."""
    regions = []
    for excerpt in excerpts:
        if not excerpt.strip():
            continue
        best: list[tuple[float, str]] = []  # per call, its output before its details on a tie
        for inv in usable.values():
            aligned = None
            for text in _texts(inv):
                found = _MATCHER.locate(excerpt, text)
                if found is not None and found.score >= 0.5 and (aligned is None or found.score > aligned[0].score):
                    aligned = (found, text)
            if aligned is not None:
                found, text = aligned
                start, end = found.start, found.end
                if whole_lines:
                    start = text.rfind("\n", 0, start) + 1
                    end = len(text) if (stop := text.find("\n", end)) < 0 else stop
                best.append((found.score, text[start:end]))
        top = max((score for score, _region in best), default=0.0)
        regions += [region for score, region in best if score >= top]
    return regions


def _conflicts(entity: Entity, regions: list[str]) -> bool:
    """The claim's quantity is missing, but the quoted evidence states the same kind with another value."""
    if entity.kind not in ("quantity", "ratio"):
        return False
    for region in regions:
        for other in extract_entities(region):
            if other.kind == entity.kind and other.dimension == entity.dimension and other.text != entity.text:
                return True
    return False


def _denies(text: str, usable: dict[int, InvocationView], wording: VerifierWording) -> bool:
    """ "没有错误日志" against a log call that matched lines of that kind — unless scoped to a later
    time ("回滚后没有再出现错误") — and a claim without any negation citing only calls that matched none."""
    logs = [inv for inv in usable.values() if inv.tool_name == "query_logs" and inv.retrieval_details]
    if not logs:
        return False
    matched = [(inv.retrieval_details or {}).get("matched") for inv in logs]
    denial = wording.denies_lines.search(text)
    if denial is not None and any(m for m in matched):
        clause = max(text.rfind(mark, 0, denial.start()) for mark in "，,；;。.\n") + 1
        if wording.later.search(text, clause, denial.start()) is not None:
            return False
        return any(_shows_denied(inv, denial.group(), wording) for inv in logs)
    return not wording.negation.search(text) and all(m == 0 for m in matched)


def _shows_denied(invocation: InvocationView, denied: str, wording: VerifierWording) -> bool:
    """Does this log call show lines of the kind ``denied`` ("no errors") denies: at one of its
    levels, by the level counts of every line it matched, or stating its concept at any level?
    Without counts it can trust, any matched line does."""
    details = invocation.retrieval_details or {}
    matched = details.get("matched")
    if not isinstance(matched, int) or matched <= 0:
        return False
    kind = next((kind for kind in wording.denied_levels if kind.denial.search(denied)), None)
    by_level = details.get("by_level")
    output = invocation.output or ""
    if (
        kind is None
        or not isinstance(by_level, dict)
        or sum(n for n in by_level.values() if isinstance(n, int)) != matched  # a part of them counted
        or (wording.unleveled is not None and wording.unleveled.search(output) is not None)
    ):
        return True
    levels = {level.upper() for level in kind.levels}
    if any(isinstance(n, int) and n > 0 and str(level).upper() in levels for level, n in by_level.items()):
        return True
    return kind.concept is not None and concepts().states(kind.concept, output)


def _hypothesis(item: HypothesisView, wording: VerifierWording) -> HypothesisCheck:
    def check(verification: HypothesisVerification, detail: str) -> HypothesisCheck:
        return HypothesisCheck(hypothesis_index=item.index, verification=verification, detail=detail)

    if wording.absolutist.search(item.hypothesis_text):
        return check("overstated_as_fact", "written as a certainty")
    if not item.needed_evidence:
        return check("unsupported_hypothesis", "says nothing about what would confirm it")
    return check("reasonable_hypothesis", "marked as open, with the evidence it needs")
