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
from functools import lru_cache
from typing import Any

from veridiag.agents.reply import RoleReply
from veridiag.contracts.invocation import InvocationSource, InvocationView
from veridiag.contracts.verdict import matrix_verdict
from veridiag.contracts.verifier import ClaimVerification
from veridiag.gatekeeper.matching import AnchoredMatcher
from veridiag.text.entities import Corpus, Entity, extract_entities
from veridiag.text.render import invocation_json
from veridiag.text.wordfiles import AnyOf, WordModel, bundled_words

_MATCHER = AnchoredMatcher()


class VerifierWording(WordModel):
    """``verifier.yaml``: the wording claims and hypotheses are judged by."""

    #: A hypothesis written as a certainty is overstated.
    absolutist: AnyOf
    #: A claim that denies what a log call found (or the reverse) is contradicted.
    negation: AnyOf


@lru_cache(maxsize=1)
def verifier_wording() -> VerifierWording:
    """The bundled ``agents/offline/verifier.yaml``, read once."""
    return bundled_words("veridiag.agents.offline", "verifier.yaml", VerifierWording)


class OfflineVerifier:
    name = "offline"

    def __init__(
        self,
        invocations: InvocationSource,
        known_services: list[str] | None = None,
        wording: VerifierWording | None = None,
    ) -> None:
        self.invocations = invocations
        self.known_services = known_services or []
        self.wording = wording or verifier_wording()

    def verify(self, payload: dict[str, Any]) -> RoleReply:
        structured = payload.get("executor_structured_output") or {}
        own = {i for entry in payload.get("tool_trace_summary") or [] for i in entry.get("invocation_ids", [])}
        claims = [c for c in structured.get("claims") or [] if isinstance(c, dict)]
        checks, labelled = [], []
        for claim in claims:
            label, detail, refs = self.judge(claim, own)
            checks.append(
                {"claim_id": str(claim.get("claim_id")), "verification": label, "detail": detail, "evidence_refs": refs}
            )
            labelled.append((claim, label))
        hypothesis_checks = [
            {"hypothesis_index": index, **self._hypothesis(item)}
            for index, item in enumerate(structured.get("hypotheses") or [])
            if isinstance(item, dict)
        ]
        verdict, why = matrix_verdict(labelled, None)
        gatekeeper = payload.get("gatekeeper_result") or {}
        if verdict == "PASS" and gatekeeper.get("status") == "fail":
            verdict, why = "LOW_CONFID", "the Gatekeeper failed"
        direct = sum(label == "direct_observation" for _c, label in labelled)
        inferred = sum(label == "reasonable_inference" for _c, label in labelled)
        score = round((direct + 0.6 * inferred) / len(labelled), 3) if labelled else 0.0
        output = {
            "verdict": verdict,
            "groundedness_score": score,
            "claim_checks": checks,
            "hypothesis_checks": hypothesis_checks,
            "rationale": why,
        }
        return RoleReply(text=json.dumps(output, ensure_ascii=False), engine=self.name)

    def judge(self, claim: dict[str, Any], own: set[int]) -> tuple[ClaimVerification, str, list[dict[str, Any]]]:
        bindings = [b for b in claim.get("evidence_bindings") or [] if isinstance(b, dict)]
        ids = {i for b in bindings for i in b.get("source_invocation_ids") or [] if isinstance(i, int) and i in own}
        found = self.invocations.get_invocations(sorted(ids))
        usable = {i: inv for i, inv in found.items() if inv.status != "error"}
        if not usable:
            return "unsupported", "no usable evidence: the claim cites no successful call of this session", []
        refs = [{"tool_name": inv.tool_name, "source_invocation_ids": [i]} for i, inv in usable.items()]
        corpus = Corpus([text for inv in usable.values() for text in _texts(inv)])
        text = str(claim.get("claim_text") or "")
        missing = [e for e in extract_entities(text, self.known_services) if not corpus.contains(e)]
        excerpts = [str(b.get("evidence_excerpt") or "") for b in bindings]
        best = max((self._score(e, usable) for e in excerpts if e.strip()), default=0.0)
        if missing:
            regions = excerpts + _aligned_regions(excerpts, usable)
            if any(_conflicts(e, regions) for e in missing):
                return "contradicted", f"the evidence states another value than {missing[0].text!r}", refs
            listed = ", ".join(e.text for e in missing)
            return "external_unknown", f"not in the cited output: {listed}", refs
        if self._denies(_without(text, excerpts), usable):
            return "contradicted", "the claim denies what the cited output shows", refs
        if self.wording.absolutist.search(text):
            return "overstated", "absolute wording the evidence cannot carry", refs
        if best < 0.7:
            return "unsupported", f"the excerpts do not match the cited output (best {best:.2f})", refs
        inference = claim.get("claim_type") == "root_cause" or claim.get("support_level") == "indirect"
        if best >= 1.0 and not inference:
            return "direct_observation", "quoted verbatim; every fact occurs in the cited output", refs
        return "reasonable_inference", "follows from the cited output without being stated in it", refs

    @staticmethod
    def _score(excerpt: str, usable: dict[int, InvocationView]) -> float:
        scores = [
            found.score
            for inv in usable.values()
            for text in _texts(inv)
            if (found := _MATCHER.locate(excerpt, text)) is not None
        ]
        return max(scores, default=0.0)

    def _denies(self, text: str, usable: dict[int, InvocationView]) -> bool:
        """ "没有错误日志" against a log call that matched lines (and the reverse)."""
        matched = [
            inv.retrieval_details.get("matched")
            for inv in usable.values()
            if inv.tool_name == "query_logs" and inv.retrieval_details
        ]
        if not matched:
            return False
        denies = bool(self.wording.negation.search(text))
        return (denies and any(m for m in matched)) or (not denies and all(m == 0 for m in matched))

    def _hypothesis(self, item: dict[str, Any]) -> dict[str, str]:
        text = str(item.get("hypothesis_text") or "")
        if self.wording.absolutist.search(text):
            return {"verification": "overstated_as_fact", "detail": "written as a certainty"}
        if not item.get("needed_evidence"):
            return {"verification": "unsupported_hypothesis", "detail": "says nothing about what would confirm it"}
        return {"verification": "reasonable_hypothesis", "detail": "marked as open, with the evidence it needs"}


def _texts(invocation: InvocationView) -> list[str]:
    details, arguments = invocation_json(invocation.retrieval_details), invocation_json(invocation.arguments)
    return [t for t in (invocation.output, invocation.output_preview, details, arguments) if t]


def _aligned_regions(excerpts: list[str], usable: dict[int, InvocationView]) -> list[str]:
    """The cited output around where each excerpt aligns: a doctored excerpt is judged by the real line."""
    regions = []
    for excerpt in excerpts:
        for inv in usable.values():
            for text in _texts(inv):
                found = _MATCHER.locate(excerpt, text) if excerpt.strip() else None
                if found is not None and found.score >= 0.5:
                    regions.append(text[found.start : found.end])
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


def _without(text: str, excerpts: list[str]) -> str:
    """The claim's own words: quoted excerpts removed (a log line saying "not available" denies nothing)."""
    for excerpt in sorted(excerpts, key=len, reverse=True):
        if excerpt.strip():
            text = text.replace(excerpt.strip(), " ")
    return text
