"""``claim.entity_grounding`` (DESIGN §4): every exact fact — number with unit,
percentage, ratio, error code, order/request id, service name, timestamp — in a claim's
text or an excerpt must occur in an invocation that claim (or binding) cites.

Excerpt similarity forgives one changed number; this rule does not."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.invocation import InvocationView
from veridiag.gatekeeper.context import RuleResult, ValidationContext, bindings, cited_ids
from veridiag.gatekeeper.entities import Corpus, Entity, extract_entities
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata


class GroundingParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    check_claim_text: bool = Field(default=True, alias="checkClaimText")
    check_excerpts: bool = Field(default=True, alias="checkExcerpts")
    known_services: list[str] = Field(default_factory=list, alias="knownServices")
    ignore_tokens: list[str] = Field(default_factory=list, alias="ignoreTokens")


def corpus_for(context: ValidationContext, invocation: InvocationView) -> Corpus:
    """Everything the invocation says or was asked, memoised for this run."""
    key = ("corpus", invocation.id)
    corpus = context.memo.get(key)
    if corpus is None:
        extra = [
            json.dumps(part, ensure_ascii=False, sort_keys=True, default=str)
            for part in (invocation.arguments, invocation.retrieval_details)
            if part
        ]
        corpus = Corpus([invocation.output or "", invocation.output_preview or "", *extra])
        context.memo[key] = corpus
    return corpus


@register
class EntityGrounding(GatekeeperRule):
    id = "claim.entity_grounding"
    Params = GroundingParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(GroundingParams)
        result = RuleResult(self.id)
        for _index, claim_target, claim in context.claims():
            claim_sources: list[InvocationView] = []
            per_binding: list[tuple[str, object, list[InvocationView]]] = []
            for binding_target, binding in bindings(claim_target, claim):
                usable = [inv for raw in cited_ids(binding) if (inv := context.usable_invocation(raw))]
                claim_sources.extend(usable)
                per_binding.append((f"{binding_target}.evidence_excerpt", binding.get("evidence_excerpt"), usable))
            if params.check_claim_text and claim_sources:
                self._check(context, result, params, f"{claim_target}.claim_text", claim.get("claim_text"), claim_sources)
            if params.check_excerpts:
                for target, excerpt, usable in per_binding:
                    if usable:
                        self._check(context, result, params, target, excerpt, usable)
        return result

    @staticmethod
    def _check(
        context: ValidationContext,
        result: RuleResult,
        params: GroundingParams,
        target: str,
        text: object,
        sources: list[InvocationView],
    ) -> None:
        if not isinstance(text, str):
            return
        entities = extract_entities(text, params.known_services, params.ignore_tokens)
        if not entities:
            return
        corpora = [(inv.id, corpus_for(context, inv)) for inv in {inv.id: inv for inv in sources}.values()]
        missing: list[Entity] = []
        grounded_in: int | None = None
        for entity in entities:
            hit = next((inv_id for inv_id, corpus in corpora if corpus.contains(entity)), None)
            if hit is None:
                missing.append(entity)
            elif grounded_in is None:
                grounded_in = hit
        score = round(1 - len(missing) / len(entities), 4)
        ids = ", ".join(str(inv_id) for inv_id, _ in corpora)
        if missing:
            listed = ", ".join(f"{e.kind} {e.text!r}" for e in missing)
            result.add(target, "fail", f"not in the cited output of invocation {ids}: {listed}", score=score,
                       invocation_id=corpora[0][0])
        else:
            result.add(target, "pass", f"{len(entities)} entities grounded in invocation {ids}", score=score,
                       invocation_id=grounded_in)
