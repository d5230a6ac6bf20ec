"""``evidence.excerpt_similarity`` (docs/spec §11.3): the excerpt is found in what the
*cited* invocation returned — not anywhere in the session — and the matched span is
recorded so reviewers see the real source text, not the model's paraphrase."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from veridiag.contracts.gatekeeper import MatchedSpan, RuleStatus
from veridiag.contracts.invocation import InvocationView
from veridiag.gatekeeper.context import RuleResult, SourceName, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata


class ExcerptParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pass_threshold: float = Field(default=0.7, ge=0, le=1, alias="passThreshold")
    warn_threshold: float = Field(default=0.5, ge=0, le=1, alias="warnThreshold")
    compare_against: list[SourceName] = Field(
        default=["output", "output_preview", "retrieval_details", "tool_trace_summary"],
        alias="compareAgainst",
        min_length=1,
    )

    @model_validator(mode="after")
    def _ordered(self) -> ExcerptParams:
        if self.warn_threshold > self.pass_threshold:
            raise ValueError("warnThreshold must not exceed passThreshold")
        return self


@register
class ExcerptSimilarity(GatekeeperRule):
    id = "evidence.excerpt_similarity"
    Params = ExcerptParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(ExcerptParams)
        result = RuleResult(self.id)
        for claim in context.claim_views():
            for binding in claim.bindings:
                excerpt, target = binding.excerpt, binding.excerpt_target
                if not binding.usable:
                    continue  # nothing citable: evidence.invocation_ref reports it
                if not isinstance(excerpt, str) or not excerpt.strip():
                    result.add(target, "fail", "evidence_excerpt is empty")
                    continue
                self._check(context, result, params, target=target, excerpt=excerpt, invocations=binding.usable)
        return result

    @staticmethod
    def _check(
        context: ValidationContext,
        result: RuleResult,
        params: ExcerptParams,
        *,
        target: str,
        excerpt: str,
        invocations: tuple[InvocationView, ...],
    ) -> None:
        names = tuple(params.compare_against)
        found = [loc for inv in invocations if (loc := context.locate(excerpt, inv, names)) is not None]
        best = max(found, key=lambda loc: loc.score, default=None)
        score = best.score if best else 0.0
        span = None
        if best is not None and score > 0:
            start, end = best.alignment.start, best.alignment.end
            span = MatchedSpan(
                invocation_id=best.invocation.id,
                source=best.source,
                start=start,
                end=end,
                text=best.text[start:end],
            )
        invocation_id = best.invocation.id if best else invocations[0].id
        outcome: RuleStatus
        if score >= params.pass_threshold:
            outcome, reason = "pass", f"excerpt found in invocation {invocation_id} (similarity {score:.2f})"
        elif score >= params.warn_threshold:
            outcome, reason = "warn", f"excerpt only loosely matches invocation {invocation_id} ({score:.2f})"
        else:
            ids = ", ".join(str(inv.id) for inv in invocations)
            outcome, reason = (
                "fail",
                f"excerpt not found in the output of invocation {ids} (similarity {score:.2f})",
            )
        result.add(target, outcome, reason, invocation_id=invocation_id, score=round(score, 4), matched_span=span)
