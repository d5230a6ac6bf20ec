"""``claim.entity_grounding`` (DESIGN §4): every exact fact — number with unit,
percentage, ratio, error code, order/request id, service name, timestamp — in a claim's
text or an excerpt must occur in an invocation that claim (or binding) cites.

Excerpt similarity forgives one changed number; this rule does not. An excerpt that
aligns with a place in the output must carry the facts the output has *at that place*
(a misquoted ``cost=5800ms`` fails even if 5800ms occurs elsewhere). Claim text is
looked up in the aligned lines first, then the invocation's arguments and details, and
only then in the whole output — which keeps a session's check in milliseconds.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

from veridiag.contracts.invocation import InvocationView
from veridiag.gatekeeper.context import Located, RuleResult, ValidationContext, bindings, cited_ids
from veridiag.gatekeeper.entities import Corpus, Entity, entities_outside
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata


class GroundingParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    check_claim_text: bool = Field(default=True, alias="checkClaimText")
    check_excerpts: bool = Field(default=True, alias="checkExcerpts")
    #: Alignment score from which an excerpt is taken to quote one place of the output.
    aligned_at: float = Field(default=0.3, ge=0, le=1, alias="alignedAt")
    known_services: list[str] = Field(default_factory=list, alias="knownServices")
    ignore_tokens: list[str] = Field(default_factory=list, alias="ignoreTokens")


def _full_corpus(context: ValidationContext, invocation: InvocationView) -> Corpus:
    key = ("corpus", invocation.id)
    corpus = context.memo.get(key)
    if corpus is None:
        corpus = Corpus([invocation.output or "", invocation.output_preview or "", _context_text(context, invocation)])
        context.memo[key] = corpus
    return corpus


def _context_text(context: ValidationContext, invocation: InvocationView) -> str:
    """Arguments and retrieval details: small, and often where the service name lives."""
    key = ("context_text", invocation.id)
    text = context.memo.get(key)
    if text is None:
        text = "\n".join(
            json.dumps(part, ensure_ascii=False, sort_keys=True, default=str)
            for part in (invocation.arguments, invocation.retrieval_details)
            if part
        )
        context.memo[key] = text
    return str(text)


class _Binding:
    def __init__(self, target: str, excerpt: object, sources: list[InvocationView]) -> None:
        self.target = target
        self.excerpt = excerpt
        self.sources = sources
        self.located: list[Located] = []


@register
class EntityGrounding(GatekeeperRule):
    id = "claim.entity_grounding"
    Params = GroundingParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(GroundingParams)
        result = RuleResult(self.id)
        for _index, claim_target, claim in context.claims():
            claim_bindings = []
            for target, binding in bindings(claim_target, claim):
                usable = [inv for raw in cited_ids(binding) if (inv := context.usable_invocation(raw))]
                entry = _Binding(f"{target}.evidence_excerpt", binding.get("evidence_excerpt"), usable)
                if isinstance(entry.excerpt, str) and entry.excerpt.strip():
                    entry.located = [
                        loc for inv in usable
                        if (loc := context.locate(entry.excerpt, inv)) is not None and loc.score >= params.aligned_at
                    ]
                claim_bindings.append(entry)
            if params.check_excerpts:
                for entry in claim_bindings:
                    if entry.sources:
                        self._check_excerpt(context, result, params, entry)
            sources = {inv.id: inv for entry in claim_bindings for inv in entry.sources}
            if params.check_claim_text and sources:
                regions = [loc.region() for entry in claim_bindings for loc in entry.located]
                self._check_text(
                    context, result, params, f"{claim_target}.claim_text", claim.get("claim_text"),
                    regions, list(sources.values()),
                )
        return result

    def _check_excerpt(
        self, context: ValidationContext, result: RuleResult, params: GroundingParams, entry: _Binding
    ) -> None:
        exact = next((loc for loc in entry.located if loc.score >= 1.0), None)
        if exact is not None:
            result.add(entry.target, "pass", f"excerpt is verbatim from invocation {exact.invocation.id}",
                       score=1.0, invocation_id=exact.invocation.id)
        elif entry.located:
            # The excerpt quotes a place: its facts must be the ones written there.
            regions = [loc.region() for loc in entry.located]
            near = Corpus(regions)
            entities = self._entities(entry.excerpt, params, near.tokens)
            missing = [e for e in entities if not near.contains(e)]
            ids = ", ".join(str(loc.invocation.id) for loc in entry.located)
            self._record(result, entry.target, entities, missing, entry.located[0].invocation.id,
                         f"the quoted lines of invocation {ids}")
        else:
            self._check_text(context, result, params, entry.target, entry.excerpt, [], entry.sources)

    def _check_text(
        self,
        context: ValidationContext,
        result: RuleResult,
        params: GroundingParams,
        target: str,
        text: object,
        regions: list[str],
        sources: list[InvocationView],
    ) -> None:
        near = Corpus([*regions, *(_context_text(context, inv) for inv in sources)])
        entities = self._entities(text, params, near.tokens)
        missing = []
        for entity in entities:
            if near.contains(entity):
                continue
            if not any(_full_corpus(context, inv).contains(entity) for inv in sources):
                missing.append(entity)
        ids = ", ".join(str(inv.id) for inv in sources)
        self._record(result, target, entities, missing, sources[0].id, f"the output of invocation {ids}")

    @staticmethod
    def _entities(text: object, params: GroundingParams, known_tokens: frozenset[str]) -> list[Entity]:
        if not isinstance(text, str):
            return []
        return entities_outside(text, known_tokens, params.known_services, params.ignore_tokens)

    @staticmethod
    def _record(
        result: RuleResult, target: str, entities: list[Entity], missing: list[Entity], invocation_id: int, where: str
    ) -> None:
        if not entities:
            result.add(target, "pass", f"every fact also occurs in {where}", score=1.0, invocation_id=invocation_id)
            return
        score = round(1 - len(missing) / len(entities), 4)
        if missing:
            listed = ", ".join(f"{e.kind} {e.text!r}" for e in missing)
            result.add(target, "fail", f"not in {where}: {listed}", score=score, invocation_id=invocation_id)
        else:
            result.add(target, "pass", f"{len(entities)} entities found in {where}", score=score,
                       invocation_id=invocation_id)
