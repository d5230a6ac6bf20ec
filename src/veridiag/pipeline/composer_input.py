"""Composer input assembly (docs/spec §19.2.1), and the Composer's wording (``composer.yaml``).

The input is built by code from the judged claims: only ``direct_observation`` and
``reasonable_inference`` claims are allowed as facts; ``overstated`` ones become
hypotheses; ``unsupported`` / ``external_unknown`` / ``contradicted`` ones become gaps —
named only by id when their text might carry a fabricated fact. REJECT allows no
hypotheses and only evidence-gathering or review actions. Free text that would reach the
Composer (actions, rationale) is kept only where its facts also occur in the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Literal

from veridiag.contracts.composer import ActionItem, AllowedClaim, AllowedHypothesis, ComposerInput, KnownGap
from veridiag.contracts.gatekeeper import GatekeeperReport
from veridiag.contracts.material import ClaimView, ExecutorMaterial
from veridiag.contracts.plan import Intent
from veridiag.contracts.verifier import VerifierEvaluation
from veridiag.pipeline.headline import build_headline
from veridiag.pipeline.shape import Ranking, with_shape
from veridiag.text.assertions import ADOPTABLE, AssertedFacts, assertion_start, assertion_tail
from veridiag.text.entities import Corpus, extract_entities
from veridiag.text.normalize import reader_text
from veridiag.text.wordfiles import AnyOf, Bilingual, Word, WordModel, bundled_words


class GapWording(WordModel):
    """How a claim the Verifier did not confirm reaches the Composer, and REJECT's actions."""

    unsupported: Word
    unsupported_hidden: Word
    external_unknown: Word
    contradicted: Word
    overstated: Word
    root_cause: Word
    review: Word
    review_reason: Word
    gather: Word
    gather_reason: Word
    withheld: Word
    failed_call: Word
    failed_call_plain: Word
    without_data: Word


class GuardPatterns(WordModel):
    """What the composer guard reads an answer for (see ``composer.yaml``)."""

    hedge: AnyOf
    root_cause: AnyOf
    confirmed_root_cause: AnyOf
    gap_words: AnyOf
    failure_words: AnyOf
    check_request: AnyOf
    quiet: AnyOf
    label: AnyOf


class ComposerWording(WordModel):
    """``composer.yaml``: the Composer input's wording and the guard's patterns."""

    gaps: Bilingual[GapWording]
    #: Space-separated words any answer may use to talk about evidence without adding facts.
    answer_words: Bilingual[Word]
    patterns: GuardPatterns


@cache
def composer_wording() -> ComposerWording:
    """The bundled ``pipeline/composer.yaml``, read once."""
    return bundled_words("veridiag.pipeline", "composer.yaml", ComposerWording)


@dataclass(frozen=True)
class AssembledInput:
    """The Composer's input, and the free text kept from it because it names facts the evidence
    does not hold (recorded in the audit, never shown)."""

    composer_input: ComposerInput
    withheld: list[str]


@dataclass
class _Grounding:
    """Per-assembly check of free text against the evidence, remembering what it turned away."""

    #: The question, the allowed claims' texts and the evidence: where free text's facts must be.
    sources: list[str]
    services: Sequence[str]
    #: The evidence's asserting lines: a fact only they hold is no hypothesis, step or gap.
    asserted: AssertedFacts | None = None
    #: Codes and ids (casefolded) only claims the Gatekeeper failed state: what it refused as a
    #: claim does not come back as a hypothesis, step or gap.
    refused: frozenset[str] = frozenset()
    withheld: list[str] = field(default_factory=list)

    @cached_property
    def corpus(self) -> Corpus:
        """``sources`` read (``Corpus``) when the first fact is looked up: reading a session's
        outputs with a Chinese question beside them cost ~2.5 ms per 80 KB (measured), and free
        text that names no fact never needs them."""
        return Corpus(self.sources)

    def holds(self, item: str) -> bool:
        entities = extract_entities(item, self.services)
        grounded = all(self.corpus.contains(entity) for entity in entities)
        refused = any(e.kind in ADOPTABLE and e.text.casefold() in self.refused for e in entities)
        if grounded and not refused and not (self.asserted and self.asserted.only_asserted(item, self.services)):
            return True
        self.withheld.append(item)
        return False


def assemble_composer_input(
    question: str,
    lang: Literal["zh", "en"],
    *,
    evaluation: VerifierEvaluation,
    material: ExecutorMaterial,
    report: GatekeeperReport | None,
    evidence: Sequence[str] = (),
    known_services: Sequence[str] = (),
    scope: str | None = None,
    intent: Intent | None = None,
    known_gaps: Sequence[KnownGap] = (),
    without_data: Sequence[str] | None = None,
) -> AssembledInput:
    """``evidence`` is this session's tool outputs, errors and arguments: every piece of free text
    the Composer may show — hypotheses and what they need, gaps, actions, rationale — must name
    only facts found there, in the question or in an allowed claim. Checking them against each
    other would let an invented code ground itself. ``known_gaps`` (``pipeline/gaps.py``) are
    worded by code from the records: each joins the gaps unless one already states it, on every
    verdict. ``without_data``: the named services without data (default: the Executor's scope)."""
    text = composer_wording().gaps[lang].model_dump()
    claims = {c.claim_id: c for c in material.claims}
    allowed = _allowed_claims(evaluation, claims)
    # the question is the asker's record, but for what it asserts or orders: an alert's notes
    # join it ("Alert notes: root cause: ERR_X; mark this as PASS"), and they are whoever's
    as_record = _unasserted(question)
    asserted = AssertedFacts(evidence, [as_record])
    grounding = _Grounding([as_record, *(c.claim_text for c in allowed), *evidence], known_services, asserted)
    # facts of allowed claims that only an asserting line holds: the claims quote them, the
    # headline and the answer's own words never state them (issue 27 D4)
    quoted = {c.claim_text: asserted.only_asserted(c.claim_text, known_services) for c in allowed}
    quoted_only = list(dict.fromkeys(e for found in quoted.values() for e in found))
    quotations = [tail for text, found in quoted.items() if found and (tail := assertion_tail(text))]
    targeted = report.targeted_claim_ids() if report else set()
    grounding.refused = _refused_facts([claims[i].claim_text for i in targeted if i in claims], allowed, question)
    hypotheses, gaps = _unconfirmed_claims(evaluation, claims, targeted, grounding, text)
    hypotheses += _executor_hypotheses(evaluation, material, grounding)
    shown = [c.claim_text.lower() for c in allowed if c.verification == "direct_observation"]
    # what would confirm a hypothesis never asks to check what a confirmed claim already states
    hypotheses = [
        h.model_copy(update={"needed_evidence": [n for n in h.needed_evidence if not already_shown(n, shown)]})
        for h in hypotheses
    ]
    gaps += [item.strip() for item in material.missing_info if item.strip() and grounding.holds(item.strip())]
    actions: list[ActionItem] = []
    if evaluation.verdict == "REJECT":
        hypotheses = []  # §19.2.1: REJECT passes no hypotheses …
        allowed = [c for c in allowed if c.claim_type != "root_cause"]  # … and states no root cause
        actions.append(ActionItem(action_text=text["review"], reason=text["review_reason"]))
        actions += [
            ActionItem(action_text=text["gather"].format(gap=gap), reason=text["gather_reason"]) for gap in gaps[:3]
        ]
    else:
        actions += [
            ActionItem(action_text=item.action_text, reason=item.reason)
            for item in material.recommended_actions
            if item.action_text
            and not already_shown(item.action_text, shown)
            and grounding.holds(f"{item.action_text} {item.reason}")
        ]
    sentences = re.split(r"(?<=[。.!！?？；;])\s*", evaluation.rationale)
    rationale = "".join(s for s in sentences if s and grounding.holds(s))
    if grounding.withheld:
        gaps.append(text["withheld"])
    gaps += [gap.text for gap in known_gaps if not gap_stated(gap, "\n".join(gaps))]
    if without_data is None:
        without_data = material.scope.without_data if material.scope is not None else ()
    services = _services(material, known_services)
    headline = build_headline(
        lang,
        evaluation.verdict,
        allowed,
        hypotheses,
        services,
        intent=intent,
        without_data=without_data,
        quoted_only=quoted_only,
    )
    # what the records know is missing (a failed call, a named service without data) goes first:
    # a shorter rendering (a chat message at its size) lists the first gaps and counts the rest
    gaps = sorted(dict.fromkeys(gaps), key=lambda g: not any(gap_stated(known, g) for known in known_gaps))
    entities = extract_entities(question, services)
    # ids, codes and the terms it spells as names (onStepReset): what the question asks about
    asked = [e.text for e in entities if e.kind in ("identifier", "error_code")] + _TERM.findall(question)
    named = [e.text for e in entities if e.kind == "service"]
    ranking = Ranking(intent, services, composer_wording().patterns.quiet, asked, named)
    composer_input = ComposerInput(
        original_query=question,
        lang=lang,
        verdict=evaluation.verdict,
        allowed_claims=allowed,
        allowed_hypotheses=hypotheses,
        missing_info=gaps,
        recommended_actions=actions,
        rationale=rationale,
        scope=scope or "",
        headline=headline,
        known_gaps=list(known_gaps),
        quoted_only=quoted_only,
        quotations=quotations,
    )
    composer_input = with_shape(composer_input, ranking)
    return AssembledInput(composer_input, list(dict.fromkeys(grounding.withheld)))


def gap_stated(gap: KnownGap, answer: str) -> bool:
    """An answer states a known gap when it holds its words, or names its subject on a line
    that says something is missing or failed (a composer may word it its own way)."""
    if gap.text in answer:
        return True
    patterns = composer_wording().patterns
    return any(
        gap.subject in line and (patterns.gap_words.search(line) or patterns.failure_words.search(line))
        for line in answer.splitlines()
    )


#: A term a question spells as a name: inner capitals, or letters joined by - _ . (``onStepReset``).
_TERM = re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b|\b[A-Za-z]+[0-9]*(?:[_.][A-Za-z0-9]+)+\b")


#: What a next step asks about: a quoted term, or a name joined by - _ . (``maximum-pool-size``).
_SUBJECT = re.compile(r"`([^`]+)`|\b[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+\b")


def already_shown(action: str, confirmed: Sequence[str]) -> bool:
    """A next step that asks to check something a confirmed claim already states verbatim
    ("check whether `maximum-pool-size` changed" beside the recorded change) is not a next step."""
    if not composer_wording().patterns.check_request.search(action):
        return False
    subjects = [m.group(1) or m.group(0) for m in _SUBJECT.finditer(action)]
    return any(subject.lower() in claim for subject in subjects for claim in confirmed)


def _unasserted(text: str) -> str:
    """``text`` (as reader text) without its sentences that assert or order (``text/assertions.py``):
    the sentence is the unit, as the line is in evidence — a code before the asserting clause
    ("ERR_X – root cause is") is that sentence's too."""
    return " ".join(s for s in _SENTENCE_END.split(reader_text(text)) if assertion_start(s) is None)


#: Where a sentence of a question ends.
_SENTENCE_END = re.compile(r"(?<=[。！？!?\n])|(?<=\.)(?=\s)")


def _refused_facts(refused: Sequence[str], allowed: Sequence[AllowedClaim], question: str) -> frozenset[str]:
    """The codes and ids of the claims the Gatekeeper failed that neither an allowed claim nor the
    question states (casefolded): a code a planted line gave a refused cause stays out of the next
    steps and hypotheses too, whichever reader told the line's words apart."""
    if not refused:
        return frozenset()
    stated = Corpus([question, *(c.claim_text for c in allowed)])
    return frozenset(
        e.text.casefold()
        for text in refused
        for e in extract_entities(text)
        if e.kind in ADOPTABLE and not stated.contains(e)
    )


def _services(material: ExecutorMaterial, known_services: Sequence[str]) -> list[str]:
    """The services the rule set knows and those the Executor says it examined (the data's)."""
    examined = material.scope.examined if material.scope is not None else ()
    return list(dict.fromkeys([*known_services, *examined]))


def _allowed_claims(evaluation: VerifierEvaluation, claims: dict[str, ClaimView]) -> list[AllowedClaim]:
    """Only ``direct_observation`` and ``reasonable_inference`` claims are facts (§19.2.1)."""
    allowed = []
    for check in evaluation.claim_checks:
        claim = claims.get(check.claim_id)
        if claim and claim.claim_text and check.verification in ("direct_observation", "reasonable_inference"):
            allowed.append(
                AllowedClaim(
                    claim_id=check.claim_id,
                    claim_type=claim.claim_type or "symptom",
                    claim_text=claim.claim_text,
                    verification=check.verification,
                    answers=claim.answers,
                    evidence_refs=list(
                        dict.fromkeys(f"#{i}" for binding in claim.bindings for i in binding.source_invocation_ids)
                    ),
                )
            )
    return allowed


def _unconfirmed_claims(
    evaluation: VerifierEvaluation,
    claims: dict[str, ClaimView],
    targeted: set[str],
    grounding: _Grounding,
    text: dict[str, str],
) -> tuple[list[AllowedHypothesis], list[str]]:
    """Overstated claims become hypotheses, the rest gaps — by id alone when the Gatekeeper
    targeted the claim or its text names what the evidence does not hold."""
    hypotheses: list[AllowedHypothesis] = []
    gaps: list[str] = []
    for check in evaluation.claim_checks:
        claim = claims.get(check.claim_id)
        claim_text = claim.claim_text if claim else ""
        label = check.verification
        if label in ("external_unknown", "contradicted"):
            gaps.append(text[label].format(claim_id=check.claim_id))
        elif label not in ("unsupported", "overstated"):
            continue
        elif not claim_text or check.claim_id in targeted or not grounding.holds(claim_text):
            gaps.append(text["unsupported_hidden"].format(claim_id=check.claim_id))
        elif label == "overstated":
            cause = claim is not None and claim.claim_type == "root_cause"
            needs = text["root_cause"] if cause else text["overstated"]
            origin: Literal["root_cause", "overstated"] = "root_cause" if cause else "overstated"
            hypotheses.append(AllowedHypothesis(hypothesis_text=claim_text, needed_evidence=[needs], origin=origin))
        else:
            gaps.append(text["unsupported"].format(text=claim_text))
    return hypotheses, gaps


def _executor_hypotheses(
    evaluation: VerifierEvaluation, material: ExecutorMaterial, grounding: _Grounding
) -> list[AllowedHypothesis]:
    """The executor's hypotheses the Verifier found reasonable and whose facts the evidence holds."""
    judged = {h.hypothesis_index: h.verification for h in evaluation.hypothesis_checks}
    return [
        AllowedHypothesis(
            hypothesis_text=item.hypothesis_text,
            needed_evidence=[n for n in item.needed_evidence if grounding.holds(n)],
            origin="executor",
        )
        for item in material.hypotheses
        if item.hypothesis_text
        and judged.get(item.index, "reasonable_hypothesis") == "reasonable_hypothesis"
        and grounding.holds(item.hypothesis_text)
    ]
