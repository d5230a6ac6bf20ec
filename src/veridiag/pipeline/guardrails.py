"""Code guardrails over the Verifier's judgement (docs/spec §15.3–§15.4, §17).

The Verifier is a model; these rules are not. Each one is named, and every change it
makes is recorded as a ``Correction``. They only ever make the outcome *less* confident:

- ``parse.unusable``: Executor output missing/malformed ⇒ LOW_CONFID, groundedness 0, no
  claims extracted from prose (§15.4).
- ``verifier.unusable``: verifier output missing/malformed/failed ⇒ every claim
  ``unsupported``, verdict at best LOW_CONFID.
- ``verifier.missing_claim``: a claim without a check ⇒ ``unsupported``.
- ``verifier.unknown_claim``: checks for claims that do not exist ⇒ ignored, at best LOW_CONFID.
- ``gatekeeper.targeted_claim``: a claim a Gatekeeper error names ⇒ at most ``unsupported``.
- ``citation.unknown_invocation``: with the Gatekeeper switched off, a claim none of whose
  bindings cites only this session's (non-errored) invocations ⇒ at most ``unsupported``.
- ``root_cause.single_source``: a root cause resting on fewer independent invocations than
  ``claim.root_cause_support`` asks ⇒ at most ``overstated`` (the Composer carries it as a
  hypothesis with the evidence it still needs).
- ``root_cause.inference_only``: a root cause is never a direct observation ⇒ at most
  ``reasonable_inference``, however well its excerpts match.
- ``grounding.elsewhere``: a fact of a claim found in the cited output but not in the claim's
  own excerpts (``claim.entity_grounding`` warns: it may count another window or incident)
  ⇒ that claim is at most ``unsupported``, so the verdict is at most LOW_CONFID.
- ``verdict.matrix``: the §17 matrix over the final labels and the Gatekeeper result; the
  verdict is the more severe of the verifier's and the matrix's (gatekeeper fail ⇒ never
  PASS, a failed ``reject_on_fail`` rule ⇒ REJECT, zero claims ⇒ never PASS).
"""

from __future__ import annotations

from typing import Any

from veridiag.contracts.gatekeeper import GatekeeperReport
from veridiag.contracts.verdict import is_critical, matrix_verdict
from veridiag.contracts.verifier import (
    FACT_MAPPING,
    VERDICT_SEVERITY,
    ClaimCheck,
    ClaimVerification,
    Correction,
    FactChecked,
    Verdict,
    VerifierEvaluation,
)
from veridiag.pipeline.hook import HookResult
from veridiag.pipeline.verifier import ParsedVerifier

#: Labels ordered from best supported to worst; "at most unsupported" caps at index 3.
_ORDER: tuple[ClaimVerification, ...] = (
    "direct_observation",
    "reasonable_inference",
    "overstated",
    "unsupported",
    "external_unknown",
    "contradicted",
)


def _worse(a: Verdict, b: Verdict) -> Verdict:
    return a if VERDICT_SEVERITY[a] >= VERDICT_SEVERITY[b] else b


def _cites_own(claim: dict[str, Any], citable: set[int]) -> bool:
    """At least one binding whose cited ids are all invocations of this session."""
    for binding in claim.get("evidence_bindings") or []:
        ids = binding.get("source_invocation_ids") if isinstance(binding, dict) else None
        if isinstance(ids, list) and ids and all(isinstance(i, int) and i in citable for i in ids):
            return True
    return False


def _groundedness(labels: list[ClaimVerification]) -> float:
    if not labels:
        return 0.0
    weight = {"direct_observation": 1.0, "reasonable_inference": 0.6, "overstated": 0.3}
    return round(sum(weight.get(label, 0.0) for label in labels) / len(labels), 4)


def _warnings(report: GatekeeperReport | None, claim_id: str, rule_id: str) -> list[str]:
    return [
        c.reason
        for t in (report.claim_traces if report else [])
        if t.claim_id == claim_id
        for c in t.checks
        if c.rule_id == rule_id and c.outcome == "warn"
    ]


def _verifier_cap(parsed: ParsedVerifier, known: set[str], corrections: list[Correction]) -> Verdict:
    """The best verdict a verifier reply allows: LOW_CONFID when it is unusable, judges claims
    that do not exist or gives no verdict."""
    cap: Verdict = "PASS"
    if parsed.status != "ok":
        corrections.append(
            Correction(
                guard="verifier.unusable",
                target="$",
                after="unsupported",
                reason=f"verifier output {parsed.status}: {parsed.detail}",
            )
        )
        cap = "LOW_CONFID"
    unknown = sorted(set(parsed.checks) - known)
    if unknown:
        corrections.append(
            Correction(
                guard="verifier.unknown_claim",
                target=", ".join(unknown),
                after="ignored",
                reason="verifier judged claims that the Executor did not make",
            )
        )
        cap = "LOW_CONFID"
    if parsed.status == "ok" and parsed.verdict is None:
        cap = "LOW_CONFID"
        corrections.append(
            Correction(
                guard="verifier.unusable", target="verdict", after="LOW_CONFID", reason="verifier gave no valid verdict"
            )
        )
    return cap


def _claim_ceilings(
    claim: dict[str, Any], claim_id: str, report: GatekeeperReport | None, targeted: bool
) -> list[tuple[str, ClaimVerification, str]]:
    """The best label a claim may have whatever the verifier said: (guard, ceiling, reason)."""
    ceilings: list[tuple[str, ClaimVerification, str]] = []
    if targeted:
        errors = [
            c.reason
            for t in (report.claim_traces if report else [])
            if t.claim_id == claim_id
            for c in t.checks
            if c.outcome == "fail"
        ]
        guard = "gatekeeper.targeted_claim" if report else "citation.unknown_invocation"
        ceilings.append((guard, "unsupported", "; ".join(errors[:3]) or "cites no invocation of this session"))
    elsewhere = _warnings(report, claim_id, "claim.entity_grounding")
    if elsewhere:
        ceilings.append(("grounding.elsewhere", "unsupported", elsewhere[0]))
    if claim.get("claim_type") == "root_cause":
        single = _warnings(report, claim_id, "claim.root_cause_support")
        if single:
            ceilings.append(("root_cause.single_source", "overstated", single[0]))
        ceilings.append(
            ("root_cause.inference_only", "reasonable_inference", "a root cause is inferred, never observed")
        )
    return ceilings


def evaluate(parsed: ParsedVerifier, hook: HookResult) -> VerifierEvaluation:
    corrections: list[Correction] = []
    report = hook.report
    if not hook.parsed.ok:
        reason = f"executor output {hook.parsed.status.status}: {hook.parsed.status.detail}"
        corrections.append(
            Correction(
                guard="parse.unusable",
                target="$",
                before=parsed.verdict,
                after="LOW_CONFID",
                reason=reason + "; nothing is extracted from prose",
            )
        )
        return VerifierEvaluation(
            verdict="LOW_CONFID",
            groundedness_score=0.0,
            rationale=reason,
            verifier_verdict=parsed.verdict,
            verifier_status=parsed.status,
            corrections=corrections,
        )

    claims = hook.claims
    usable = parsed.status == "ok"
    cap = _verifier_cap(parsed, {claim_id for claim_id, _claim in claims}, corrections)
    targeted = report.targeted_claim_ids() if report else set()
    if report is None:  # the Gatekeeper is off: still, nothing may rest on a citation that does not exist
        citable = {i for entry in hook.trace_summary if entry.status != "error" for i in entry.invocation_ids}
        for claim_id, claim in claims:
            if not _cites_own(claim, citable):
                targeted.add(claim_id)
    final_checks: list[ClaimCheck] = []
    labelled: list[tuple[dict[str, Any], ClaimVerification]] = []
    for claim_id, claim in claims:
        check = parsed.checks.get(claim_id) if usable else None
        if check is None:
            if usable:
                corrections.append(
                    Correction(
                        guard="verifier.missing_claim",
                        target=claim_id,
                        after="unsupported",
                        reason="the verifier did not judge this claim",
                    )
                )
            check = ClaimCheck(claim_id=claim_id, verification="unsupported", detail="no verifier judgement")
        label = check.verification
        for guard, ceiling, reason in _claim_ceilings(claim, claim_id, report, claim_id in targeted):
            if _ORDER.index(label) < _ORDER.index(ceiling):
                corrections.append(Correction(guard=guard, target=claim_id, before=label, after=ceiling, reason=reason))
                label = ceiling
                check = check.model_copy(update={"verification": label})
        final_checks.append(check)
        labelled.append((claim, label))
    computed, why = matrix_verdict(labelled, report)
    stated: Verdict = parsed.verdict or "LOW_CONFID"
    verdict = _worse(_worse(stated, computed), cap)
    if verdict != stated:
        corrections.append(
            Correction(
                guard="verdict.matrix",
                target="verdict",
                before=parsed.verdict,
                after=verdict,
                reason=why if verdict == computed else "verifier output not usable",
            )
        )

    code_score = _groundedness([label for _claim, label in labelled])
    score = min(code_score, parsed.groundedness) if parsed.groundedness is not None and usable else code_score
    claim_by_id = dict(claims)
    facts = [
        FactChecked(
            fact=f"{check.claim_id}: {claim_by_id[check.claim_id].get('claim_text', '')}",
            verification=FACT_MAPPING[check.verification],
            is_critical=is_critical(claim_by_id[check.claim_id]),
            evidence_refs=check.evidence_refs,
        )
        for check in final_checks
    ]
    hypotheses = (hook.structured or {}).get("hypotheses") or []
    hypothesis_checks = [h for h in parsed.hypothesis_checks if 0 <= h.hypothesis_index < len(hypotheses)]
    return VerifierEvaluation(
        verdict=verdict,
        groundedness_score=score,
        claim_checks=final_checks,
        hypothesis_checks=hypothesis_checks,
        facts_checked=facts,
        rationale=parsed.rationale,
        verifier_verdict=parsed.verdict,
        verifier_status=parsed.status,
        corrections=corrections,
    )
