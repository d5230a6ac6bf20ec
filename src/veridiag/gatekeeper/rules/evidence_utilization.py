"""``claim.evidence_utilization`` (docs/spec §11.5): how many of a claim's keywords its
excerpts contain. Warn-only and disabled by default — Chinese segmentation makes it a
hint, never a verdict."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from veridiag.gatekeeper.context import RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata
from veridiag.text.tokens import keywords


class UtilizationParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    min_keyword_coverage: float = Field(default=0.5, ge=0, le=1, alias="minKeywordCoverage")


@register
class EvidenceUtilization(GatekeeperRule):
    id = "claim.evidence_utilization"
    Params = UtilizationParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(UtilizationParams)
        result = RuleResult(self.id)
        for claim in context.claim_views():
            claim_target = claim.target
            text = claim.claim.get("claim_text")
            if not isinstance(text, str):
                continue
            claim_words = keywords(text)
            if not claim_words:
                continue
            excerpt_words: set[str] = set()
            for binding in claim.bindings:
                excerpt = binding.excerpt
                if isinstance(excerpt, str):
                    excerpt_words |= keywords(excerpt)
            coverage = len(claim_words & excerpt_words) / len(claim_words)
            missing = ", ".join(sorted(claim_words - excerpt_words)[:8])
            if coverage >= params.min_keyword_coverage:
                result.add(f"{claim_target}.claim_text", "pass", f"keyword coverage {coverage:.2f}", score=coverage)
            else:
                result.add(
                    f"{claim_target}.claim_text",
                    "fail",
                    f"keyword coverage {coverage:.2f} below {params.min_keyword_coverage}; not in excerpts: {missing}",
                    score=round(coverage, 4),
                )
        return result
