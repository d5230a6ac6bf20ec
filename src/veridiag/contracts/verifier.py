"""What the Verifier returns (docs/spec §16) and the audit of what code did to it.

``claim_checks`` is the V2 primary field; ``facts_checked`` is generated from it for
compatibility (§16.1.1). ``corrections`` records every change the code guardrails made,
so a reviewer sees "the verifier said PASS, code said LOW_CONFID, because …".
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.gatekeeper import GatekeeperResult
from veridiag.contracts.json import JsonObject
from veridiag.contracts.parsing import ParseStatus
from veridiag.contracts.trace import ToolTraceEntry

Verdict = Literal["PASS", "LOW_CONFID", "REJECT"]
ClaimVerification = Literal[
    "direct_observation", "reasonable_inference", "overstated", "unsupported", "external_unknown", "contradicted"
]
HypothesisVerification = Literal["reasonable_hypothesis", "unsupported_hypothesis", "overstated_as_fact"]
FactVerification = Literal["direct_evidence", "indirect_support", "no_evidence", "contradicted"]

#: §16.1.1 mapping table.
FACT_MAPPING: dict[str, FactVerification] = {
    "direct_observation": "direct_evidence",
    "reasonable_inference": "indirect_support",
    "overstated": "indirect_support",
    "unsupported": "no_evidence",
    "external_unknown": "no_evidence",
    "contradicted": "contradicted",
}
#: §16.1.1 is_critical rule.
CRITICAL_CLAIM_TYPES = frozenset({"root_cause", "symptom", "impact", "risk"})
VERDICT_SEVERITY: dict[str, int] = {"PASS": 0, "LOW_CONFID": 1, "REJECT": 2}


class EvidenceRef(BaseModel):
    model_config = ConfigDict(extra="allow")

    trace_ref: str | None = None
    tool_name: str | None = None
    source_invocation_ids: list[int] = Field(default_factory=list)
    note: str | None = None


class ClaimCheck(BaseModel):
    claim_id: str
    verification: ClaimVerification
    detail: str = ""
    evidence_refs: list[EvidenceRef] = Field(default_factory=list)


class HypothesisCheck(BaseModel):
    hypothesis_index: int
    verification: HypothesisVerification
    detail: str = ""


class FactChecked(BaseModel):
    fact: str
    verification: FactVerification
    is_critical: bool
    evidence_refs: list[EvidenceRef] = Field(default_factory=list)


class OnFail(StrEnum):
    """What a guard does when it fires: one vocabulary for every code guard and check."""

    #: The claim's label is lowered to the guard's ceiling.
    CAP_LABEL = "cap_label"
    #: The verdict is at best LOW_CONFID (or what the matrix says).
    CAP_VERDICT = "cap_verdict"
    #: The offending judgement or text is dropped and recorded.
    IGNORE = "ignore"
    #: The composed answer is replaced by the code template.
    FALLBACK = "fallback"


class Correction(BaseModel):
    """One change code made to the verifier's judgement, and why (audited)."""

    guard: str
    on_fail: OnFail | None = None
    target: str
    before: str | None = None
    after: str | None = None
    reason: str


class VerifierEvaluation(BaseModel):
    """The verifier's judgement after the code guardrails: what the Composer input is built from."""

    verdict: Verdict
    groundedness_score: float = Field(ge=0, le=1)
    claim_checks: list[ClaimCheck] = Field(default_factory=list)
    hypothesis_checks: list[HypothesisCheck] = Field(default_factory=list)
    facts_checked: list[FactChecked] = Field(default_factory=list)
    rationale: str = ""
    verifier_verdict: Verdict | None = Field(default=None, description="What the verifier itself said, if anything.")
    verifier_status: Literal["ok", "malformed", "missing", "unavailable", "skipped"] = "ok"
    corrections: list[Correction] = Field(default_factory=list)


class RetryContext(BaseModel):
    """What a retried Executor round is told of the previous one (docs/spec §0.6–§0.7): its verdict, the
    judgement of each claim and the gaps it stated — never the Verifier's free text."""

    previous_round: int
    verdict: Verdict
    claim_checks: list[ClaimCheck] = Field(default_factory=list)
    missing_info: list[str] = Field(default_factory=list)


class VerifierPayload(BaseModel):
    """What the Verifier is given (docs/spec §14), built by the VerifierInputHook. A model
    Verifier reads its JSON; the offline one reads it typed."""

    original_query: str
    executor_raw_output: str | None
    #: Deprecated alias of ``executor_raw_output`` (docs/spec §14), kept for older verifiers.
    executor_final_answer: str | None
    executor_structured_output: JsonObject | None
    executor_output_parse_status: ParseStatus
    tool_trace_summary: list[ToolTraceEntry] = Field(default_factory=list)
    gatekeeper_result: GatekeeperResult | None = None
    retry_context: RetryContext | None = None
    round: int = 1
