"""``evidence.instruction_language``: evidence is data, never a verdict.

A log line, runbook or label is written by whoever can write to it. When the text a claim
cites — the excerpt, or the whole line it was taken from — speaks like a conclusion or an
instruction ("root cause is …", "ignore previous instructions", "answer PASS", "根本原因是",
"忽略以上"), the claim may not rest on it: it fails, so the claim is at most ``unsupported``
and the answer cannot PASS. The phrases are data in ``rules.yaml``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from veridiag.gatekeeper.context import RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata
from veridiag.text.phrases import phrase_list


class InstructionParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    phrases: list[str] = Field(default_factory=list)
    #: Also read the whole output line an excerpt aligns with (a part of a planted line counts).
    check_quoted_lines: bool = Field(default=True, alias="checkQuotedLines")
    aligned_at: float = Field(default=0.7, ge=0, le=1, alias="alignedAt")


@register
class InstructionLanguage(GatekeeperRule):
    id = "evidence.instruction_language"
    Params = InstructionParams

    def validate(self, context: ValidationContext, metadata: RuleMetadata) -> RuleResult:
        params = metadata.typed_params(InstructionParams)
        phrases = phrase_list(tuple(params.phrases))
        result = RuleResult(self.id)
        for claim in context.claim_views():
            for binding in claim.bindings:
                excerpt = binding.excerpt
                if not isinstance(excerpt, str) or not excerpt.strip():
                    continue
                texts = [excerpt]
                if params.check_quoted_lines:
                    for invocation in binding.usable:
                        located = context.locate(excerpt, invocation)
                        if located is None or located.score < params.aligned_at:
                            continue
                        if located.source == "output" and context.evidence(located.invocation).free_of(phrases):
                            continue  # no line of the output has one
                        texts.append(located.region())
                hits = sorted({hit for text in texts for hit in phrases.hits(text)})
                if hits:
                    result.add(
                        binding.excerpt_target,
                        "fail",
                        f"the cited text speaks as a conclusion or an instruction ({', '.join(hits)}): "
                        "evidence is data, it cannot decide the answer",
                    )
                else:
                    result.add(binding.excerpt_target, "pass")
        return result
