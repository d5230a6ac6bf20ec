"""Code guardrails over the Verifier's judgement (docs/spec §15.3–§15.4, §17).

The Verifier is a model; these rules are not. Each is a small class registered by id —
claim guards cap one claim's label, verdict guards cap the verdict — and every change one
makes is recorded as a ``Correction`` with its id and ``OnFail`` action. They only ever make
the outcome *less* confident:

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
  Both hold for a claim of another type whose words name a cause: ``claim.root_cause_support``
  checks it (its ``causalWording``), and a claim that rule checked is a root cause.
- ``content.contradicts`` / ``content.unstated`` / ``content.absolute`` / ``content.inferred``:
  what ``claim.stated_content`` found a claim says beyond its quoted lines ⇒ at most
  ``contradicted`` (a direction they state the other way), ``overstated`` (an interpretation,
  denial or ratio they do not state: carried as a hypothesis), ``reasonable_inference`` (an
  absolute — every, 都, 一直 — or a direction or evaluation they do not state: issue 27 D3).
- ``content.absolute_drawn`` (verdict): a claim shown as an inference for an absolute its lines
  do not state ⇒ the verdict is at best LOW_CONFID (a generalisation is no answer to act on).
- ``grounding.elsewhere``: a fact of a claim found in the cited output but not in the claim's
  own excerpts (``claim.entity_grounding`` warns: it may count another window or incident)
  ⇒ that claim is at most ``unsupported``, so the verdict is at most LOW_CONFID.
- ``grounding.zone_reading``: a claim's clock stated in one reading of a zone its words do not
  pin ("08:22 CST": China or US Central) ⇒ at most ``reasonable_inference`` (true in one reading:
  no REJECT, no PASS on it alone).
- ``evidence.beside_instruction``: a claim quoting planted words as the evidence's, or quoting data
  beside them on one line (``evidence.instruction_language`` warns) ⇒ at most
  ``reasonable_inference``.
- ``verdict.matrix``: the §17 matrix over the final labels and the Gatekeeper result; the
  verdict is the more severe of the verifier's and the matrix's (gatekeeper fail ⇒ never
  PASS, a failed ``reject_on_fail`` rule ⇒ REJECT, zero claims ⇒ never PASS).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from veridiag.contracts.gatekeeper import CheckRecord, GatekeeperReport
from veridiag.contracts.material import ClaimView
from veridiag.contracts.registry import Registry
from veridiag.contracts.verdict import groundedness, matrix_verdict
from veridiag.contracts.verifier import (
    FACT_MAPPING,
    VERDICT_SEVERITY,
    ClaimCheck,
    ClaimVerification,
    Correction,
    FactChecked,
    OnFail,
    Verdict,
    VerifierEvaluation,
)
from veridiag.gatekeeper.rules.entity_grounding import ZONE_UNPINNED
from veridiag.gatekeeper.rules.stated_content import ABSOLUTE, CONTRADICTS, INFERRED, UNSTATED
from veridiag.pipeline.hook import HookResult
from veridiag.pipeline.verifier_reply import ParsedVerifier

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


@dataclass(frozen=True)
class GuardContext:
    """What one evaluation's guards read: made per ``evaluate`` call, never shared."""

    parsed: ParsedVerifier
    hook: HookResult
    #: Claims a failed Gatekeeper check names (or, with the Gatekeeper off, that cite nothing of this session).
    targeted: frozenset[str]

    @property
    def report(self) -> GatekeeperReport | None:
        return self.hook.report

    @cached_property
    def _checks(self) -> dict[str, list[CheckRecord]]:
        """Each claim's Gatekeeper checks, in the order of its traces: the guards ask about every
        claim several times (~10 look-ups a claim), each of which walked every claim's trace."""
        checks: dict[str, list[CheckRecord]] = {}
        for trace in self.report.claim_traces if self.report else []:
            checks.setdefault(trace.claim_id, []).extend(trace.checks)
        return checks

    @cached_property
    def _reasons(self) -> dict[tuple[str, str, str | None], list[str]]:
        """The reasons of each claim's checks by outcome (rule ``None``) and by outcome and rule,
        in the order of ``_checks``: the guards ask ~12 times a claim, and each question read
        every check of the claim again."""
        reasons: dict[tuple[str, str, str | None], list[str]] = {}
        for claim_id, checks in self._checks.items():
            for check in checks:
                reasons.setdefault((claim_id, check.outcome, None), []).append(check.reason)
                reasons.setdefault((claim_id, check.outcome, check.rule_id), []).append(check.reason)
        return reasons

    def checks_of(self, claim_id: str, outcome: str, rule_id: str | None = None) -> list[str]:
        """Reasons of the Gatekeeper checks on ``claim_id`` with this outcome (and rule)."""
        return list(self._reasons.get((claim_id, outcome, rule_id), ()))

    def is_root_cause(self, claim: ClaimView) -> bool:
        """Typed so, or named so: ``claim.root_cause_support`` checks a claim whose words name
        a cause whatever its type, so a cause called a symptom is still one."""
        if claim.claim_type == "root_cause":
            return True
        return bool(
            self.checks_of(claim.claim_id, "pass", _ROOT_CAUSE_RULE)
            or self.checks_of(claim.claim_id, "warn", _ROOT_CAUSE_RULE)
        )


_ROOT_CAUSE_RULE = "claim.root_cause_support"
_STATED_RULE = "claim.stated_content"
_INSTRUCTION_RULE = "evidence.instruction_language"


# --- claim guards: the best label a claim may have, whatever the verifier said ------------


class ClaimGuard(ABC):
    id: ClassVar[str]
    ceiling: ClassVar[ClaimVerification]
    on_fail: ClassVar[OnFail] = OnFail.CAP_LABEL

    @abstractmethod
    def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
        """The reason this guard caps ``claim``, or None."""


_CLAIM_GUARDS: Registry[ClaimGuard] = Registry("claim guard")
claim_guard = _CLAIM_GUARDS.register
claim_guards = _CLAIM_GUARDS.as_dict


@claim_guard
class GatekeeperTargeted(ClaimGuard):
    id = "gatekeeper.targeted_claim"
    ceiling = "unsupported"

    def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
        if context.report is None or claim.claim_id not in context.targeted:
            return None
        return "; ".join(context.checks_of(claim.claim_id, "fail")[:3]) or "a Gatekeeper check failed"


@claim_guard
class UnknownInvocation(ClaimGuard):
    id = "citation.unknown_invocation"
    ceiling = "unsupported"

    def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
        if context.report is not None or claim.claim_id not in context.targeted:
            return None
        return "cites no invocation of this session"


@claim_guard
class GroundingElsewhere(ClaimGuard):
    id = "grounding.elsewhere"
    ceiling: ClassVar[ClaimVerification] = "unsupported"

    #: whether this guard takes the warnings about a zone the claim does not pin
    zone: ClassVar[bool] = False

    def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
        warned = context.checks_of(claim.claim_id, "warn", "claim.entity_grounding")
        found = [reason for reason in warned if reason.startswith(ZONE_UNPINNED) == self.zone]
        return found[0] if found else None


@claim_guard
class GroundingZoneReading(GroundingElsewhere):
    id = "grounding.zone_reading"
    ceiling = "reasonable_inference"
    zone = True


class _StatedContent(ClaimGuard):
    """``claim.stated_content`` checks whose reason starts with ``kind`` cap the claim."""

    outcome: ClassVar[str]
    kind: ClassVar[str]

    def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
        found = [r for r in context.checks_of(claim.claim_id, self.outcome, _STATED_RULE) if r.startswith(self.kind)]
        return found[0] if found else None


@claim_guard
class ContentContradicts(_StatedContent):
    id = "content.contradicts"
    ceiling = "contradicted"
    outcome, kind = "fail", CONTRADICTS


@claim_guard
class ContentUnstated(_StatedContent):
    id = "content.unstated"
    ceiling = "overstated"
    outcome, kind = "warn", UNSTATED


@claim_guard
class ContentAbsolute(_StatedContent):
    id = "content.absolute"
    ceiling = "reasonable_inference"
    outcome, kind = "warn", ABSOLUTE


@claim_guard
class ContentInferred(_StatedContent):
    id = "content.inferred"
    ceiling = "reasonable_inference"
    outcome, kind = "warn", INFERRED


@claim_guard
class BesideInstruction(ClaimGuard):
    id = "evidence.beside_instruction"
    ceiling = "reasonable_inference"

    def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
        warned = context.checks_of(claim.claim_id, "warn", _INSTRUCTION_RULE)
        return warned[0] if warned else None


@claim_guard
class RootCauseSingleSource(ClaimGuard):
    id = "root_cause.single_source"
    ceiling = "overstated"

    def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
        if not context.is_root_cause(claim):
            return None
        single = context.checks_of(claim.claim_id, "warn", _ROOT_CAUSE_RULE)
        return single[0] if single else None


@claim_guard
class RootCauseInferenceOnly(ClaimGuard):
    id = "root_cause.inference_only"
    ceiling = "reasonable_inference"

    def fires(self, claim: ClaimView, context: GuardContext) -> str | None:
        return "a root cause is inferred, never observed" if context.is_root_cause(claim) else None


# --- verdict guards: the best verdict a verifier reply allows -----------------------------


class VerdictGuard(ABC):
    id: ClassVar[str]
    on_fail: ClassVar[OnFail] = OnFail.CAP_VERDICT

    @abstractmethod
    def fires(self, context: GuardContext) -> Correction | None:
        """The correction when the verdict must be at best LOW_CONFID, or None."""


_VERDICT_GUARDS: Registry[VerdictGuard] = Registry("verdict guard")
verdict_guard = _VERDICT_GUARDS.register
verdict_guards = _VERDICT_GUARDS.as_dict


@verdict_guard
class VerifierUnusable(VerdictGuard):
    id = "verifier.unusable"

    def fires(self, context: GuardContext) -> Correction | None:
        parsed = context.parsed
        if parsed.status != "ok":
            reason = f"verifier output {parsed.status}: {parsed.detail}"
            return Correction(guard=self.id, on_fail=self.on_fail, target="$", after="unsupported", reason=reason)
        if parsed.verdict is None:
            reason = "verifier gave no valid verdict"
            return Correction(guard=self.id, on_fail=self.on_fail, target="verdict", after="LOW_CONFID", reason=reason)
        return None


@verdict_guard
class VerifierUnknownClaim(VerdictGuard):
    id = "verifier.unknown_claim"
    on_fail = OnFail.IGNORE

    def fires(self, context: GuardContext) -> Correction | None:
        unknown = sorted(set(context.parsed.checks) - {c.claim_id for c in context.hook.material.claims})
        if not unknown:
            return None
        reason = "verifier judged claims that the Executor did not make"
        return Correction(
            guard=self.id, on_fail=self.on_fail, target=", ".join(unknown), after="ignored", reason=reason
        )


@verdict_guard
class AbsoluteDrawn(VerdictGuard):
    """A generalisation its lines do not state is shown as an inference; an answer resting on one
    is not one to act on without looking (PASS), however well the rest is observed."""

    id = "content.absolute_drawn"

    def fires(self, context: GuardContext) -> Correction | None:
        drawn = [
            claim.claim_id
            for claim in context.hook.material.claims
            if any(r.startswith(ABSOLUTE) for r in context.checks_of(claim.claim_id, "warn", _STATED_RULE))
        ]
        if not drawn:
            return None
        reason = "a claim generalises beyond its quoted lines (shown as an inference)"
        return Correction(
            guard=self.id, on_fail=self.on_fail, target=", ".join(drawn), after="LOW_CONFID", reason=reason
        )


# --- the evaluation ----------------------------------------------------------------------


def _targeted(hook: HookResult) -> frozenset[str]:
    claims = hook.material.claims
    if hook.report is not None:
        return frozenset(hook.report.targeted_claim_ids())
    # The Gatekeeper is off: still, nothing may rest on a citation that does not exist.
    citable = {i for entry in hook.trace_summary if entry.status != "error" for i in entry.invocation_ids}
    return frozenset(claim.claim_id for claim in claims if not claim.cites_only(citable))


def _judged(claim: ClaimView, context: GuardContext, corrections: list[Correction]) -> ClaimCheck:
    """The verifier's check of ``claim`` (``unsupported`` without one), capped by every claim guard."""
    usable = context.parsed.status == "ok"
    check = context.parsed.checks.get(claim.claim_id) if usable else None
    if check is None:
        if usable:
            corrections.append(
                Correction(
                    guard="verifier.missing_claim",
                    on_fail=OnFail.CAP_LABEL,
                    target=claim.claim_id,
                    after="unsupported",
                    reason="the verifier did not judge this claim",
                )
            )
        check = ClaimCheck(claim_id=claim.claim_id, verification="unsupported", detail="no verifier judgement")
    for guard in _CLAIM_GUARDS:
        label = check.verification
        if _ORDER.index(label) >= _ORDER.index(guard.ceiling):
            continue
        reason = guard.fires(claim, context)
        if reason is not None:
            corrections.append(
                Correction(
                    guard=guard.id,
                    on_fail=guard.on_fail,
                    target=claim.claim_id,
                    before=label,
                    after=guard.ceiling,
                    reason=reason,
                )
            )
            check = check.model_copy(update={"verification": guard.ceiling})
    return check


def _unparsed(parsed: ParsedVerifier, hook: HookResult) -> VerifierEvaluation:
    """``parse.unusable``: nothing is extracted from prose (§15.4)."""
    reason = f"executor output {hook.parsed.status.status}: {hook.parsed.status.detail}"
    correction = Correction(
        guard="parse.unusable",
        on_fail=OnFail.CAP_VERDICT,
        target="$",
        before=parsed.verdict,
        after="LOW_CONFID",
        reason=reason + "; nothing is extracted from prose",
    )
    return VerifierEvaluation(
        verdict="LOW_CONFID",
        groundedness_score=0.0,
        rationale=reason,
        verifier_verdict=parsed.verdict,
        verifier_status=parsed.status,
        corrections=[correction],
    )


def evaluate(parsed: ParsedVerifier, hook: HookResult) -> VerifierEvaluation:
    if not hook.parsed.ok:
        return _unparsed(parsed, hook)
    context = GuardContext(parsed, hook, _targeted(hook))
    corrections = [c for guard in _VERDICT_GUARDS if (c := guard.fires(context)) is not None]
    cap: Verdict = "LOW_CONFID" if corrections else "PASS"
    claims = hook.material.claims
    final_checks = [_judged(claim, context, corrections) for claim in claims]
    labelled = [(claim, check.verification) for claim, check in zip(claims, final_checks, strict=True)]
    computed, why = matrix_verdict(labelled, hook.report)
    stated: Verdict = parsed.verdict or "LOW_CONFID"
    verdict = _worse(_worse(stated, computed), cap)
    if verdict != stated:
        corrections.append(
            Correction(
                guard="verdict.matrix",
                on_fail=OnFail.CAP_VERDICT,
                target="verdict",
                before=parsed.verdict,
                after=verdict,
                reason=why if verdict == computed else "verifier output not usable",
            )
        )
    usable = parsed.status == "ok"
    code_score = groundedness([label for _claim, label in labelled])
    score = min(code_score, parsed.groundedness) if parsed.groundedness is not None and usable else code_score
    facts = [
        FactChecked(
            fact=f"{claim.claim_id}: {claim.claim_text}",
            verification=FACT_MAPPING[check.verification],
            is_critical=claim.is_critical,
            evidence_refs=check.evidence_refs,
        )
        for claim, check in zip(claims, final_checks, strict=True)
    ]
    made = {h.index for h in hook.material.hypotheses}
    hypothesis_checks = [h for h in parsed.hypothesis_checks if h.hypothesis_index in made]
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
