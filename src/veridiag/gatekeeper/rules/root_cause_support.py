"""``claim.root_cause_support``: a root cause is an inference over independent observations.

A ``root_cause`` claim must cite at least ``minInvocations`` different invocations of this
session (a structured change event and the symptom that started after it, say). Resting on
one output — one log line that *says* what the cause is — it is a warning here, and the
guardrails carry the claim as a hypothesis with the evidence it still needs.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from veridiag.gatekeeper.context import RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata


class RootCauseParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    claim_types: list[str] = Field(default=["root_cause"], alias="claimTypes")
    min_invocations: int = Field(default=2, ge=1, le=10, alias="minInvocations")


@register
class RootCauseSupport(GatekeeperRule):
    id = "claim.root_cause_support"
    Params = RootCauseParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(RootCauseParams)
        result = RuleResult(self.id)
        for claim in context.claim_views():
            if claim.claim.get("claim_type") not in params.claim_types:
                continue
            cited = {
                invocation.id
                for binding in claim.bindings
                for invocation in binding.usable
                if invocation.status != "error"
            }
            if len(cited) >= params.min_invocations:
                result.add(claim.target, "pass", f"rests on {len(cited)} invocations: {sorted(cited)}")
            else:
                result.add(
                    claim.target,
                    "fail",
                    f"a root cause resting on {len(cited)} invocation(s) is a hypothesis: it needs "
                    f"{params.min_invocations} independent observations from different invocations",
                )
        return result
