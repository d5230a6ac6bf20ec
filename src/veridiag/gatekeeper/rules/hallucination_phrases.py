"""``claim.hallucination_phrases`` (docs/spec §11.4): confirmed claims may not hedge or
lean on experience; hypotheses may (they are not in ``targetFields``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator

from veridiag.contracts.json import JsonObject
from veridiag.gatekeeper.context import RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata
from veridiag.text.concepts import concepts
from veridiag.text.normalize import reader_text
from veridiag.text.phrases import phrase_list

_FIELD_PATH = re.compile(r"^([a-z_]+)\[\]\.([a-z_]+)$")


class PhraseParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    target_fields: list[str] = Field(default=["claims[].claim_text"], alias="targetFields")
    blacklist: list[str] = Field(default_factory=list)
    allow_in_fields: list[str] = Field(default_factory=list, alias="allowInFields")
    #: Claims that state themselves as inferences (a root cause is never observed; a claim the
    #: Executor marks indirect): hedging there is honest, as in a hypothesis.
    inference_claim_types: list[str] = Field(default_factory=list, alias="inferenceClaimTypes")
    inference_support_levels: list[str] = Field(default_factory=list, alias="inferenceSupportLevels")

    @field_validator("target_fields", "allow_in_fields")
    @classmethod
    def _paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if not _FIELD_PATH.match(path):
                raise ValueError(f"field path {path!r} must look like 'claims[].claim_text'")
        return paths


def _targets(output: JsonObject | None, path: str) -> Iterator[tuple[str, str]]:
    match = _FIELD_PATH.match(path)
    if not output or not match:
        return
    array, field = match.groups()
    items = output.get(array)
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        text = item.get(field) if isinstance(item, dict) else None
        if isinstance(text, str):
            yield f"{array}[{index}].{field}", text


def _without_stated_usual(text: str, lines: list[str]) -> str:
    """``text`` without its ``usual`` words ("usually", "通常": text/concepts.yaml) when the
    quoted lines state a median or a baseline: "usually 180 ms" then reports the baseline and
    is no hedge; any other hedge in it still is."""
    vocabulary = concepts()
    usual = [hit for hit in vocabulary.in_claim(text) if hit.kind == "usual"]
    if not usual or not lines or not vocabulary.states("usual", "\n".join(lines)):
        return text
    read = reader_text(text)
    for hit in reversed(usual):
        read = read[: hit.start] + " " + read[hit.end :]
    return read


def _states_an_inference(claim: Mapping[str, object], params: PhraseParams) -> bool:
    return (
        claim.get("claim_type") in params.inference_claim_types
        or claim.get("support_level") in params.inference_support_levels
    )


@register
class HallucinationPhrases(GatekeeperRule):
    id = "claim.hallucination_phrases"
    Params = PhraseParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(PhraseParams)
        phrases = phrase_list(tuple(params.blacklist))
        result = RuleResult(self.id)
        views = {view.target: view for view in context.claim_views()}
        for path in params.target_fields:
            for target, text in _targets(context.normalized, path):
                hits = phrases.hits(text)
                view = views.get(target.rsplit(".", 1)[0])
                if hits and view is not None and _states_an_inference(view.claim, params):
                    result.add(target, "pass", f"hedged as the inference it states itself to be: {', '.join(hits)}")
                    continue
                if hits and view is not None:
                    hits = phrases.hits(_without_stated_usual(text, context.quoted_lines(view)))
                if hits:
                    result.add(target, "fail", f"speculative wording in a confirmed claim: {', '.join(hits)}")
                else:
                    result.add(target, "pass")
        return result
