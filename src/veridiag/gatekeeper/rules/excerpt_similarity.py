"""``evidence.excerpt_similarity`` (spec §11.3): the excerpt is found in what the
*cited* invocation returned — not anywhere in the session — and the matched span is
recorded so reviewers see the real source text, not the model's paraphrase."""

from __future__ import annotations

import json
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from veridiag.contracts.gatekeeper import MatchedSpan
from veridiag.contracts.invocation import InvocationView
from veridiag.gatekeeper.context import RuleResult, ValidationContext, bindings, cited_ids
from veridiag.gatekeeper.matching import AnchoredMatcher, ExcerptMatcher
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata

SourceName = Literal["output", "output_preview", "retrieval_details", "tool_trace_summary"]
_DEFAULT_MATCHER = AnchoredMatcher()


class ExcerptParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pass_threshold: float = Field(default=0.5, ge=0, le=1, alias="passThreshold")
    warn_threshold: float = Field(default=0.3, ge=0, le=1, alias="warnThreshold")
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


def source_texts(context: ValidationContext, invocation: InvocationView, names: list[SourceName]) -> list[
    tuple[SourceName, str]
]:
    """The texts of ``invocation`` an excerpt may be compared with, by source name."""
    texts: list[tuple[SourceName, str]] = []
    for name in names:
        if name == "output":
            texts.append((name, invocation.output or ""))
        elif name == "output_preview":
            texts.append((name, invocation.output_preview or ""))
        elif name == "retrieval_details":
            key = ("retrieval_details", invocation.id)
            if key not in context.memo:
                details = invocation.retrieval_details
                context.memo[key] = (
                    json.dumps(details, ensure_ascii=False, sort_keys=True, default=str) if details else ""
                )
            texts.append((name, cast(str, context.memo[key])))
        else:
            summary = "\n".join(
                entry.output_summary for entry in context.trace_summary if invocation.id in entry.invocation_ids
            )
            texts.append((name, summary))
    return [(name, text) for name, text in texts if text]


@register
class ExcerptSimilarity(GatekeeperRule):
    id = "evidence.excerpt_similarity"
    Params = ExcerptParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(ExcerptParams)
        matcher: ExcerptMatcher = context.matcher or _DEFAULT_MATCHER
        result = RuleResult(self.id)
        for _index, claim_target, claim in context.claims():
            for binding_target, binding in bindings(claim_target, claim):
                excerpt = binding.get("evidence_excerpt")
                target = f"{binding_target}.evidence_excerpt"
                invocations = [inv for raw in cited_ids(binding) if (inv := context.usable_invocation(raw))]
                if not invocations:
                    continue  # nothing citable: evidence.invocation_ref reports it
                if not isinstance(excerpt, str) or not excerpt.strip():
                    result.add(target, "fail", "evidence_excerpt is empty")
                    continue
                self._check(context, result, params, matcher, target, excerpt, invocations)
        return result

    @staticmethod
    def _check(
        context: ValidationContext,
        result: RuleResult,
        params: ExcerptParams,
        matcher: ExcerptMatcher,
        target: str,
        excerpt: str,
        invocations: list[InvocationView],
    ) -> None:
        best: tuple[float, MatchedSpan | None, int] = (0.0, None, invocations[0].id)
        for invocation in invocations:
            for name, text in source_texts(context, invocation, params.compare_against):
                found = matcher.locate(excerpt, text)
                if found is None or found.score <= best[0]:
                    continue
                span = MatchedSpan(
                    invocation_id=invocation.id, source=name, start=found.start, end=found.end,
                    text=text[found.start : found.end],
                )
                best = (found.score, span, invocation.id)
                if found.score >= 1.0:
                    break
            if best[0] >= 1.0:
                break
        score, span, invocation_id = best
        if score >= params.pass_threshold:
            outcome, reason = "pass", f"excerpt found in invocation {invocation_id} (similarity {score:.2f})"
        elif score >= params.warn_threshold:
            outcome, reason = "warn", f"excerpt only loosely matches invocation {invocation_id} ({score:.2f})"
        else:
            ids = ", ".join(str(inv.id) for inv in invocations)
            outcome, reason = "fail", f"excerpt not found in the output of invocation {ids} (similarity {score:.2f})"
        result.add(
            target, cast(Literal["pass", "warn", "fail"], outcome), reason,
            invocation_id=invocation_id, score=round(score, 4), matched_span=span,
        )
