"""What the Gatekeeper returns (docs/spec §12), plus the per-check audit trace.

``GatekeeperResult`` is exactly the spec's minimal shape (status, failed_rules,
warnings, errors). Everything richer — scores, matched spans, per-claim outcomes —
lives in ``CheckRecord`` so the audit workbench can show *why* without bloating the
persisted result (docs/spec §12.2 asks for no extra fields there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.json import JsonObject

RuleStatus = Literal["pass", "warn", "fail"]
Severity = Literal["error", "warning"]
VerdictImpact = Literal["reject_on_fail", "low_confid_on_fail", "warn_only"]


class GatekeeperError(BaseModel):
    """One failed check, naming the field path it is about (docs/spec §12.1)."""

    model_config = ConfigDict(frozen=True)

    rule_id: str
    target: str = Field(description="Field path such as `claims[0].evidence_bindings[0]`; `$` is the root.")
    message: str


class GatekeeperResult(BaseModel):
    """The persisted Gatekeeper verdict (docs/spec §12)."""

    status: RuleStatus
    failed_rules: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    errors: list[GatekeeperError] = Field(default_factory=list)


# The audit records below are plain (slotted) dataclasses: a Gatekeeper run makes
# hundreds of them and they are built from trusted values, so they skip validation;
# pydantic still validates and serialises them wherever they cross a boundary inside
# ``GatekeeperReport``.


@dataclass(slots=True)
class MatchedSpan:
    """Where an excerpt was found in a cited invocation, in that source's own characters."""

    invocation_id: int
    source: Literal["output", "output_preview", "retrieval_details", "tool_trace_summary"]
    start: int
    end: int
    text: str


@dataclass(slots=True)
class CheckRecord:
    """One rule applied to one target: the unit of the audit trail."""

    rule_id: str
    target: str
    outcome: RuleStatus
    reason: str = ""
    invocation_id: int | None = None
    score: float | None = None
    matched_span: MatchedSpan | None = None


@dataclass(slots=True)
class ClaimTrace:
    """Every check that touched one claim, so a reviewer can see why it passed or not."""

    claim_id: str
    claim_index: int
    checks: list[CheckRecord] = field(default_factory=list)


class GatekeeperReport(BaseModel):
    """One Gatekeeper run: the spec result plus what the audit chain and guards need."""

    result: GatekeeperResult
    normalized_output: JsonObject | None = Field(
        default=None, description="The output with missing optional arrays set to [] (docs/spec §11.1)."
    )
    claim_traces: list[ClaimTrace] = Field(default_factory=list)
    other_checks: list[CheckRecord] = Field(default_factory=list, description="Checks not about one claim.")
    failed_rule_impacts: dict[str, VerdictImpact] = Field(
        default_factory=dict, description="verdictImpact of each failed rule, for the verifier guard."
    )
    rules_run: list[str] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict, description="Wall time per rule, for latency metrics.")

    def targeted_claim_ids(self) -> set[str]:
        """Claims that a failed check names: the verifier guard caps them at `unsupported`."""
        return {trace.claim_id for trace in self.claim_traces if any(check.outcome == "fail" for check in trace.checks)}
