"""The fixed template answer (docs/spec §19.4): the offline Composer and every fallback.

The Composer only ever receives a ``ComposerInput``: it cannot import tools (enforced by
import-linter) and is never handed tool output. The template answer is the offline
composer and the fallback whenever a composed answer is malformed or breaks the guard;
it is built from the input alone, so it cannot say anything the input does not.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from veridiag.agents.reply import TEMPLATE, RoleReply
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.composer import ActionItem, ComposerInput, ComposerOutput
from veridiag.text.yaml_files import load_yaml


@cache
def template_phrases() -> dict[str, dict[str, str]]:
    """The template's fixed wording per language (``template.yaml``)."""
    text = resources.files("veridiag.agents").joinpath("template.yaml").read_text(encoding="utf-8")
    loaded: dict[str, dict[str, str]] = load_yaml(text)
    return loaded


def template_answer(composer_input: ComposerInput) -> ComposerOutput:
    """A readable answer for the verdict, in the question's language, from the input alone."""
    text = template_phrases()[composer_input.lang]
    verdict = composer_input.verdict
    # The headline opens the answer (the pipeline puts the scope line above it).
    lines = [composer_input.headline, ""] if composer_input.headline else []
    lines += [text[verdict], ""]
    claims = composer_input.allowed_claims
    if claims:
        lines.append(text["confirmed"])
        for claim in claims:
            suffix = text["inference"] if claim.verification == "reasonable_inference" else ""
            lines.append(f"- {claim.claim_text}{suffix}")
    else:
        lines.append(text["none_confirmed"])
    if composer_input.allowed_hypotheses and verdict == "LOW_CONFID":  # PASS uses claims and actions only
        lines += ["", text["hypotheses"]]
        for hypothesis in composer_input.allowed_hypotheses:
            needs = (
                f"（{text['needs']}{text['sep'].join(hypothesis.needed_evidence)}）"
                if hypothesis.needed_evidence
                else ""
            )
            if composer_input.lang == "en" and needs:
                needs = f" ({text['needs']}{text['sep'].join(hypothesis.needed_evidence)})"
            lines.append(f"- {text['maybe']}{hypothesis.hypothesis_text}{needs}")
    # What could not be checked is said on every verdict, PASS included.
    gaps = composer_input.missing_info or ([text["default_gap"]] if verdict != "PASS" else [])
    if gaps:
        lines += ["", text["gaps"]] + [f"- {gap}" for gap in gaps]
    actions = list(composer_input.recommended_actions)
    if verdict == "REJECT" and not actions:
        actions = [ActionItem(action_text=text["review"], reason=text["review_reason"])]
    if actions:
        lines += ["", text["actions"]] + [f"- {action.action_text}" for action in actions]
    summary = claims[0].claim_text if claims and verdict == "PASS" else text[verdict]
    return ComposerOutput(answer_summary=summary, recommended_actions=actions, user_facing_answer="\n".join(lines))


def with_gaps(output: ComposerOutput, composer_input: ComposerInput) -> ComposerOutput:
    """A composed answer that leaves out what could not be checked gets it appended, as the
    template words it: every answer, PASS included, says its gaps (failed calls, windows
    without data, unparsed lines)."""
    answer = output.user_facing_answer
    left_out = [gap for gap in composer_input.missing_info if gap not in answer]
    if not left_out:
        return output
    text = template_phrases()[composer_input.lang]
    appended = "\n".join([answer.rstrip(), "", text["gaps"], *(f"- {gap}" for gap in left_out)])
    return output.model_copy(update={"user_facing_answer": appended})


class TemplateComposer:
    """The offline composer: the template, as strict JSON like any composer returns."""

    name = TEMPLATE

    def compose(self, composer_input: ComposerInput) -> RoleReply:
        return RoleReply(
            text=template_answer(composer_input).model_dump_json(), answered_by=EngineUse(engine=self.name)
        )
