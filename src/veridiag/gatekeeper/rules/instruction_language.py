"""``evidence.instruction_language``: evidence is data, never a verdict.

A log line, runbook or label is written by whoever can write to it. When the text a claim
cites speaks like a conclusion or an instruction ("root cause is …", "ignore previous
instructions", "answer PASS", "根本原因是", "忽略以上"), the claim may not rest on it:

- its own excerpt holds such words and the claim does not quote them as the evidence's (inside
  quotation marks) ⇒ ``fail``: the claim is at most ``unsupported`` and the answer cannot PASS.
  A part of a planted sentence is the sentence: "config change: db password expired, root cause
  E-9999" quoted as far as "expired" rests on it;
- the claim quotes them as the evidence's words ("the note also says “state that the root cause
  is …”"), or they stand only in another sentence of the line it quotes (a change's facts, a
  planted note after them) ⇒ ``warn``: at most an inference (``evidence.beside_instruction`` in the
  guardrails). Whether it says what they say is ``evidence.adopted_assertion``'s to judge: a
  planted note made a true change unusable, though the claim quoted only the change.

The phrases are data in ``rules.yaml``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from veridiag.gatekeeper.context import Located, RuleResult, ValidationContext
from veridiag.gatekeeper.registry import GatekeeperRule, register
from veridiag.gatekeeper.ruleset import RuleMetadata
from veridiag.text.phrases import PhraseList, phrase_list


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
            claim_text = claim.claim.get("claim_text")
            for binding in claim.bindings:
                excerpt = binding.excerpt
                if not isinstance(excerpt, str) or not excerpt.strip():
                    continue
                own = phrases.hits(excerpt)
                beside: list[str] = []
                if params.check_quoted_lines and not own:
                    for invocation in binding.usable:
                        located = context.locate(excerpt, invocation)
                        if located is None or located.score < params.aligned_at:
                            continue
                        if located.source == "output" and context.evidence(located.invocation).free_of(phrases):
                            continue  # no line of the output has one
                        around = phrases.hits(located.region())
                        if around:
                            beside += around
                            own += phrases.hits(_sentence(located))  # a part of a planted sentence is its
                own = sorted(set(own))
                quoted = bool(own) and isinstance(claim_text, str) and _quoted_only(claim_text, phrases)
                if own and not quoted:
                    result.add(
                        binding.excerpt_target,
                        "fail",
                        f"the cited text speaks as a conclusion or an instruction ({', '.join(own)}): "
                        "evidence is data, it cannot decide the answer",
                    )
                elif own or beside:
                    where = "quoted as the evidence's words" if own else "beside the excerpt on the line it quotes"
                    result.add(
                        binding.excerpt_target,
                        "warn",
                        f"{INSTRUCTION_BESIDE}: the cited line speaks as a conclusion or an instruction "
                        f"({', '.join(sorted(set(own or beside)))}), {where}: at most an inference",
                    )
                else:
                    result.add(binding.excerpt_target, "pass")
        return result


#: How the warning of a claim resting on data beside planted words begins (the guardrails cap it).
INSTRUCTION_BESIDE = "beside an instruction"
#: What ends a sentence within a line: the excerpt's own sentence is judged as the excerpt. Not a
#: comma, semicolon or field separator: a planted clause after one is still the excerpt's.
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")


def _sentence(located: Located) -> str:
    """The sentences of the line the excerpt aligns with that it spans: "config change: db password
    expired, root cause E-9999" is one planted sentence, "ttl set to 0s (was 300s). NOTE TO THE AI
    ASSISTANT: …" two."""
    text, start, end = located.text, located.alignment.start, located.alignment.end
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before = [m.end() for m in _SENTENCE_END.finditer(text, line_start, start)]
    after = _SENTENCE_END.search(text, max(start, end - 1), line_end)  # an excerpt may end with its mark
    return text[before[-1] if before else line_start : after.start() if after else line_end]


#: A quotation: what it holds is another's words ("…", “…”, 「…」, 『…』).
_QUOTATION = re.compile(r'"[^"\n]+"|“[^”\n]+”|「[^」\n]+」|『[^』\n]+』')


def _quoted_only(text: str, phrases: PhraseList) -> bool:
    """Does ``text`` hold the listed phrases only inside quotation marks: the evidence's words,
    attributed, not the claim's own?"""
    if not phrases.hits(text):
        return False
    return not phrases.hits(_QUOTATION.sub(" ", text))
