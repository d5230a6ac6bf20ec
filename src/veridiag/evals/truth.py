"""Truth rates of labelled cases (``claim_truth``): how many true claims reach the user, how
many false ones are stopped, and which sessions end REJECT with no false claim in them.

A claim reaches the user when the Composer input allows it: ``confirmed`` (a direct
observation) or ``inferred`` (a reasonable inference). Anything else — a hypothesis, a gap, a
claim dropped by REJECT — is ``withheld``. A true claim is kept when it reaches the user; a
false claim is caught when it does not reach the user as confirmed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from veridiag.contracts.audit import RoundRecord, VerifierEvaluationRecord
from veridiag.contracts.material import ExecutorMaterial
from veridiag.evals.fixtures import Case

Shown = Literal["confirmed", "inferred", "withheld"]


class ClaimOutcomeSummary(TypedDict):
    """One labelled claim as ``veridiag eval --json`` reports it."""

    claim_id: str
    claim_type: str
    claim_text: str
    truth: bool
    mistake: str | None
    shown: Shown
    verification: str | None
    reasons: list[str]


@dataclass(frozen=True)
class ClaimOutcome:
    claim_id: str
    claim_type: str
    claim_text: str
    truth: bool
    mistake: str | None
    shown: Shown
    #: The final label of the claim (after the guardrails), if it was judged.
    verification: str | None
    #: What acted on the claim: corrections, Gatekeeper checks that failed or warned, the label's detail.
    reasons: tuple[str, ...] = ()

    @property
    def kept(self) -> bool:
        """A true claim that reaches the user."""
        return self.truth and self.shown != "withheld"

    @property
    def caught(self) -> bool:
        """A false claim that does not reach the user as confirmed."""
        return not self.truth and self.shown != "confirmed"

    def public(self) -> ClaimOutcomeSummary:
        return ClaimOutcomeSummary(
            claim_id=self.claim_id,
            claim_type=self.claim_type,
            claim_text=self.claim_text,
            truth=self.truth,
            mistake=self.mistake,
            shown=self.shown,
            verification=self.verification,
            reasons=list(self.reasons),
        )


def _stated_claims(case: Case, evaluation: VerifierEvaluationRecord | None) -> dict[str, tuple[str, str]]:
    """Claim id → (type, text): as the pipeline read them, else from the fixture's last output."""
    structured = evaluation.executor_structured_output if evaluation else None
    if structured is None:
        try:
            raw = json.loads(case.rounds[-1] or "")
        except ValueError:
            raw = None
        structured = raw if isinstance(raw, dict) else None
    material = ExecutorMaterial.read(structured)
    return {claim.claim_id: (claim.claim_type, claim.claim_text) for claim in material.claims}


def claim_outcomes(
    case: Case, evaluation: VerifierEvaluationRecord | None, final_round: RoundRecord | None
) -> tuple[list[ClaimOutcome], list[str]]:
    """The outcome of each labelled claim, and the labelling's own failures (a label for a claim
    the output lacks, a claim without a label)."""
    stated = _stated_claims(case, evaluation)
    failures = [
        f"claim_truth labels {claim_id}, which the executor output lacks"
        for claim_id in case.claim_truth
        if claim_id not in stated
    ]
    failures += [f"{claim_id} has no claim_truth label" for claim_id in stated if claim_id not in case.claim_truth]
    allowed = (
        {c.claim_id: c for c in evaluation.composer_input.allowed_claims}
        if evaluation and evaluation.composer_input
        else {}
    )
    labels = {c.claim_id: c for c in evaluation.claim_checks} if evaluation else {}
    traces = {t.claim_id: t for t in (final_round.gatekeeper_trace or [])} if final_round else {}
    corrections = evaluation.corrections if evaluation else []
    outcomes = []
    for claim_id, label in case.claim_truth.items():
        if claim_id not in stated:
            continue
        claim_type, claim_text = stated[claim_id]
        shown: Shown = "withheld"
        if claim_id in allowed:
            shown = "confirmed" if allowed[claim_id].verification == "direct_observation" else "inferred"
        reasons = [f"{c.guard}: {c.reason}" for c in corrections if c.target == claim_id]
        trace = traces.get(claim_id)
        reasons += [
            f"{c.rule_id} ({c.outcome}): {c.reason}" for c in (trace.checks if trace else []) if c.outcome != "pass"
        ]
        check = labels.get(claim_id)
        if check is not None and check.detail:
            reasons.append(f"verifier: {check.detail}")
        if evaluation is None:
            reasons.append("the session has no verifier evaluation (the run failed)")
        elif (
            shown == "withheld"
            and evaluation.verdict == "REJECT"
            and claim_type == "root_cause"
            and check is not None
            and check.verification in ("direct_observation", "reasonable_inference")
        ):
            reasons.append("REJECT states no root cause")
        outcomes.append(
            ClaimOutcome(
                claim_id=claim_id,
                claim_type=claim_type,
                claim_text=claim_text,
                truth=label.truth,
                mistake=label.mistake,
                shown=shown,
                verification=check.verification if check else None,
                reasons=tuple(reasons),
            )
        )
    return outcomes, failures


class TruthRatesSummary(TypedDict):
    """``summary.truth`` of ``veridiag eval --json`` when any case is labelled."""

    labelled_sessions: int
    true_claims: int
    true_kept: int
    faithful_kept_rate: float | None
    false_claims: int
    false_caught: int
    mistakes_caught_rate: float | None
    sessions_without_false_claims: int
    reject_without_false_claims: int
    reject_sessions: int
    mistakes_by_kind: dict[str, list[int]]


@dataclass
class TruthRates:
    labelled_sessions: int = 0
    true_claims: int = 0
    true_kept: int = 0
    false_claims: int = 0
    false_caught: int = 0
    sessions_without_false_claims: int = 0
    reject_without_false_claims: int = 0
    reject_sessions: int = 0
    #: Mistake kind → [caught, total].
    by_kind: dict[str, list[int]] = field(default_factory=dict)

    @property
    def faithful_kept(self) -> float | None:
        return self.true_kept / self.true_claims if self.true_claims else None

    @property
    def mistakes_caught(self) -> float | None:
        return self.false_caught / self.false_claims if self.false_claims else None

    def public(self) -> TruthRatesSummary:
        def rate(value: float | None) -> float | None:
            return None if value is None else round(value, 4)

        return TruthRatesSummary(
            labelled_sessions=self.labelled_sessions,
            true_claims=self.true_claims,
            true_kept=self.true_kept,
            faithful_kept_rate=rate(self.faithful_kept),
            false_claims=self.false_claims,
            false_caught=self.false_caught,
            mistakes_caught_rate=rate(self.mistakes_caught),
            sessions_without_false_claims=self.sessions_without_false_claims,
            reject_without_false_claims=self.reject_without_false_claims,
            reject_sessions=self.reject_sessions,
            mistakes_by_kind={kind: list(counts) for kind, counts in sorted(self.by_kind.items())},
        )


def truth_rates(sessions: Sequence[tuple[str | None, Sequence[ClaimOutcome]]]) -> TruthRates:
    """Rates over labelled sessions, each given as (verdict, its claims' outcomes)."""
    rates = TruthRates()
    for verdict, outcomes in sessions:
        if not outcomes:
            continue
        rates.labelled_sessions += 1
        rates.reject_sessions += verdict == "REJECT"
        if all(o.truth for o in outcomes):
            rates.sessions_without_false_claims += 1
            rates.reject_without_false_claims += verdict == "REJECT"
        for outcome in outcomes:
            if outcome.truth:
                rates.true_claims += 1
                rates.true_kept += outcome.kept
            else:
                rates.false_claims += 1
                rates.false_caught += outcome.caught
                counts = rates.by_kind.setdefault(outcome.mistake or "", [0, 0])
                counts[0] += outcome.caught
                counts[1] += 1
    return rates
