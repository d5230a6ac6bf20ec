"""The fixed template answer (docs/spec §19.4): the offline Composer and every fallback.

The Composer only ever receives a ``ComposerInput``: it cannot import tools (enforced by
import-linter) and is never handed tool output. The template answer is the offline
composer and the fallback whenever a composed answer is malformed or breaks the guard;
it is built from the input alone, so it cannot say anything the input does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources

from veridiag.agents.reply import TEMPLATE, RoleReply
from veridiag.contracts.audit import EngineUse
from veridiag.contracts.composer import ActionItem, AllowedClaim, ComposerInput, ComposerOutput
from veridiag.text.yaml_files import load_yaml


@cache
def template_phrases() -> dict[str, dict[str, str]]:
    """The template's fixed wording per language (``template.yaml``)."""
    text = resources.files("veridiag.agents").joinpath("template.yaml").read_text(encoding="utf-8")
    loaded: dict[str, dict[str, str]] = load_yaml(text)
    return loaded


def template_answer(composer_input: ComposerInput) -> ComposerOutput:
    """A readable answer for the verdict, in the question's language, from the input alone, in the
    answer's shape (issue 28): the first line answers with its label (the headline; the pipeline
    puts the one-line scope above it), then the key facts with their evidence, hypotheses with
    what would confirm them (each need once), next steps, and the gaps one line per kind."""
    text = template_phrases()[composer_input.lang]
    verdict = composer_input.verdict
    if composer_input.headline:
        lines = [composer_input.headline, ""]
        if verdict != "PASS":  # how far the answer can be trusted, right below it
            lines += [text[verdict], ""]
    else:  # nothing allowed: what can be said is that it cannot be told
        lines = [text["answer_unknown"] + text[verdict], ""]
    claims = composer_input.allowed_claims
    keys = key_claims(composer_input)
    if keys:
        lines.append(text["key_facts"])
        lines += [f"- {fact_line(claim, text)}" for claim in keys]
        stated = _plain(composer_input.headline)
        if any(c not in keys and _plain(c.claim_text) not in stated for c in claims):
            lines.append(text["more_facts"])
    elif not claims:
        lines.append(text["none_confirmed"])
    if composer_input.allowed_hypotheses and verdict == "LOW_CONFID":  # PASS uses claims and actions only
        lines += ["", text["hypotheses"]]
        said: set[str] = set()
        for hypothesis in composer_input.allowed_hypotheses:
            fresh = [n for n in hypothesis.needed_evidence if n not in said]
            said |= set(hypothesis.needed_evidence)
            needed = text["sep"].join(fresh) if fresh else text["needs_same"]
            needs = ""
            if hypothesis.needed_evidence:
                needs = f" ({text['needs']}{needed})" if composer_input.lang == "en" else f"（{text['needs']}{needed}）"
            lines.append(f"- {text['maybe']}{hypothesis.hypothesis_text}{needs}")
    actions = list(composer_input.recommended_actions)
    if verdict == "REJECT" and not actions:
        actions = [ActionItem(action_text=text["review"], reason=text["review_reason"])]
    if actions:
        lines += ["", text["actions"]] + [f"- {action.action_text}" for action in actions]
    # What could not be checked is said on every verdict, PASS included: one line per kind.
    gaps = gap_lines(composer_input) or ([text["default_gap"]] if verdict != "PASS" else [])
    if gaps:
        lines += ["", text["gaps"]] + [f"- {gap}" for gap in gaps]
    summary = claims[0].claim_text if claims and verdict == "PASS" else text[verdict]
    answer = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return ComposerOutput(answer_summary=summary, recommended_actions=actions, user_facing_answer=answer)


#: Without a ranking in the input (one built by hand), the first claims in the Executor's order.
MAX_KEY_FACTS = 5


def key_claims(composer_input: ComposerInput) -> list[AllowedClaim]:
    """The key facts the input ranks (``pipeline/shape.py``); an input without a ranking lists
    its first claims."""
    claims = composer_input.allowed_claims
    if composer_input.key_facts is None:
        return claims[:MAX_KEY_FACTS]
    by_id = {c.claim_id: c for c in claims}
    return [by_id[i] for i in composer_input.key_facts if i in by_id][:MAX_KEY_FACTS]


def fact_line(claim: AllowedClaim, text: dict[str, str]) -> str:
    """A key fact: the claim verbatim, its label when inferred, the invocations it cites."""
    return worded_fact(claim.claim_text, claim.verification, claim.evidence_refs, text)


def worded_fact(claim_text: str, verification: str | None, refs: Sequence[str], text: dict[str, str]) -> str:
    """A key fact as every rendering of the answer lists it (the template, ``ask --format
    markdown``): ``claim_text``, "（推断）" / " (inferred)" when it is an inference, then the
    invocations it cites (``refs``, "#8") as "（证据 #8）" / " (evidence #8)"."""
    suffix = text["inference"] if verification == "reasonable_inference" else ""
    cited = text["evidence_ref"].format(refs=text["ref_sep"].join(refs)) if refs else ""
    return f"{claim_text}{suffix}{cited}"


def gap_lines(composer_input: ComposerInput) -> list[str]:
    """The gaps one line per kind, as the input merged them (or as listed, when it did not)."""
    return composer_input.gap_lines or list(dict.fromkeys(composer_input.missing_info))


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip("。.;；").strip()


def with_gaps(output: ComposerOutput, composer_input: ComposerInput) -> ComposerOutput:
    """A composed answer that leaves out what could not be checked gets it appended, as the
    template words it (one line per kind): every answer, PASS included, says its gaps (failed
    calls, windows without data, unparsed lines)."""
    answer = output.user_facing_answer
    left_out = [gap for gap in gap_lines(composer_input) if gap not in answer]
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
