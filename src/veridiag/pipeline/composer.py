"""Composer input assembly (spec §19.2.1) and the composer guard (DESIGN §4).

The input is built by code from the judged claims: only ``direct_observation`` and
``reasonable_inference`` claims are allowed as facts; ``overstated`` ones become
hypotheses; ``unsupported`` / ``external_unknown`` / ``contradicted`` ones become gaps —
named only by id when their text might carry a fabricated fact. REJECT allows no
hypotheses and only evidence-gathering or review actions. Free text that would reach the
Composer (actions, rationale) is kept only where its facts also occur in allowed material.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import ValidationError

from veridiag.contracts.composer import (
    ActionItem,
    AllowedClaim,
    AllowedHypothesis,
    ComposerInput,
    ComposerOutput,
    GuardResult,
)
from veridiag.contracts.gatekeeper import GatekeeperReport
from veridiag.contracts.parsing import parse_executor_output
from veridiag.contracts.verifier import VerifierEvaluation
from veridiag.gatekeeper.entities import Corpus, extract_entities
from veridiag.gatekeeper.keywords import keywords

_GAP = {
    "zh": {
        "unsupported": "以下说法缺少证据支持，未予确认：{text}",
        "unsupported_hidden": "{claim_id} 缺少可核验的证据，未予确认。",
        "external_unknown": "{claim_id} 含有证据之外的信息，已剔除。",
        "contradicted": "{claim_id} 与证据矛盾，已剔除。",
        "overstated": "该说法证据不足以作为确定结论。",
        "root_cause": "另一项独立的观察（例如结构化的变更记录，及其后开始的异常）",
        "review": "人工复核本次诊断的证据与结论",
        "review_reason": "自动校验拒绝了当前结论。",
        "gather": "补充证据：{gap}",
        "gather_reason": "确认或排除尚未证实的方向。",
    },
    "en": {
        "unsupported": "Not confirmed for lack of evidence: {text}",
        "unsupported_hidden": "{claim_id} has no verifiable evidence and is not confirmed.",
        "external_unknown": "{claim_id} brought in facts from outside the evidence and was removed.",
        "contradicted": "{claim_id} contradicts the evidence and was removed.",
        "overstated": "The evidence does not support this as a firm conclusion.",
        "root_cause": "a second, independent observation (e.g. a recorded change and the anomaly that began after it)",
        "review": "Have a person review this diagnosis's evidence and conclusions",
        "review_reason": "Automatic checks rejected the conclusion.",
        "gather": "Gather evidence: {gap}",
        "gather_reason": "To confirm or rule out what is still open.",
    },
}


#: Words any answer may use to talk about evidence without adding facts (zh + en).
_ANSWER_WORDS = frozenset(
    """
    建议 下一步 检查 确认 已确认 目前 尚未 可能 原因 证据 记录 显示 您 您的 我们 需要 进一步 排查 补充 查看 比对
    结论 已经 暂时 无法 不能 方向 缺少 信息 情况 进行 相关 期间 其中 以及 同时 因此 所以 但是 不过 仍 仍然 还 还需
    核实 复核 人工 自动 校验 部分 出现 发现 表明 说明 指标 日志 数据 看到 可以 应该 请 之后 之前 时间 当前 根据 本次
    we you your our confirmed confirm evidence next step steps check review possible possibly cause suggest recommend
    shows show logs log metrics metric data still not yet may might need needs more further look during while also
    however so therefore found seen appears current currently based this that these those session
    """.split()
)


def _grounded_in(text: str, corpus: Corpus, services: Sequence[str] = ()) -> bool:
    return all(corpus.contains(entity) for entity in extract_entities(text, services))


def _novel_sentences(answer: str, allowed_words: frozenset[str]) -> list[str]:
    """Sentences mostly made of content words that occur nowhere in the composer input."""
    flagged = []
    for sentence in re.split(r"(?<=[。.!！?？；;\n])", answer):
        words = [w for w in keywords(sentence) if not any(ch.isdigit() for ch in w)]
        novel = [w for w in words if w not in allowed_words and w not in _ANSWER_WORDS]
        if len(novel) >= 2 and len(novel) * 2 > len(words):
            flagged.append(sentence.strip())
    return flagged


def assemble_composer_input(
    question: str,
    lang: Literal["zh", "en"],
    *,
    evaluation: VerifierEvaluation,
    structured: dict[str, Any] | None,
    report: GatekeeperReport | None,
    known_services: Sequence[str] = (),
    scope: str | None = None,
) -> ComposerInput:
    text = _GAP[lang]
    claims = {c.get("claim_id"): c for c in (structured or {}).get("claims") or [] if isinstance(c, dict)}
    targeted = report.targeted_claim_ids() if report else set()
    allowed: list[AllowedClaim] = []
    hypotheses: list[AllowedHypothesis] = []
    gaps: list[str] = []
    for check in evaluation.claim_checks:
        claim = claims.get(check.claim_id, {})
        claim_text = str(claim.get("claim_text") or "")
        label = check.verification
        if label in ("direct_observation", "reasonable_inference") and claim_text:
            allowed.append(
                AllowedClaim(
                    claim_id=check.claim_id,
                    claim_type=str(claim.get("claim_type") or "symptom"),
                    claim_text=claim_text,
                    verification=label,
                )
            )
        elif label == "overstated" and claim_text and check.claim_id not in targeted:
            needs = text["root_cause"] if claim.get("claim_type") == "root_cause" else text["overstated"]
            hypotheses.append(AllowedHypothesis(hypothesis_text=claim_text, needed_evidence=[needs]))
        elif label == "unsupported" and claim_text and check.claim_id not in targeted:
            gaps.append(text["unsupported"].format(text=claim_text))
        elif label == "unsupported":
            gaps.append(text["unsupported_hidden"].format(claim_id=check.claim_id))
        elif label in ("external_unknown", "contradicted"):
            gaps.append(text[label].format(claim_id=check.claim_id))

    raw_hypotheses = (structured or {}).get("hypotheses") or []
    judged = {h.hypothesis_index: h.verification for h in evaluation.hypothesis_checks}
    for index, item in enumerate(raw_hypotheses if isinstance(raw_hypotheses, list) else []):
        if not isinstance(item, dict) or not isinstance(item.get("hypothesis_text"), str):
            continue
        if judged.get(index, "reasonable_hypothesis") != "reasonable_hypothesis":
            continue
        needed = [str(n) for n in item.get("needed_evidence") or [] if isinstance(n, str)]
        hypotheses.insert(
            len(hypotheses), AllowedHypothesis(hypothesis_text=item["hypothesis_text"], needed_evidence=needed)
        )
    for item in (structured or {}).get("missing_info") or []:
        if isinstance(item, str) and item.strip():
            gaps.append(item.strip())

    # Facts any free text may mention: the allowed material and the question itself.
    allowed_corpus = Corpus(
        [
            question,
            *(c.claim_text for c in allowed),
            *(h.hypothesis_text for h in hypotheses),
            *(n for h in hypotheses for n in h.needed_evidence),
            *gaps,
        ]
    )
    gaps = [
        gap
        for gap in dict.fromkeys(gaps)
        if _grounded_in(gap, allowed_corpus, known_services) or gap.startswith(("claim", "#"))
    ]
    actions: list[ActionItem] = []
    if evaluation.verdict == "REJECT":
        hypotheses = []  # §19.2.1: REJECT passes no hypotheses …
        allowed = [c for c in allowed if c.claim_type != "root_cause"]  # … and states no root cause
        actions.append(ActionItem(action_text=text["review"], reason=text["review_reason"]))
        actions += [
            ActionItem(action_text=text["gather"].format(gap=gap), reason=text["gather_reason"]) for gap in gaps[:3]
        ]
    else:
        for item in (structured or {}).get("recommended_actions") or []:
            if not isinstance(item, dict) or not isinstance(item.get("action_text"), str):
                continue
            action = ActionItem(action_text=item["action_text"], reason=str(item.get("reason") or ""))
            if _grounded_in(f"{action.action_text} {action.reason}", allowed_corpus, known_services):
                actions.append(action)
    sentences = re.split(r"(?<=[。.!！?？；;])\s*", evaluation.rationale)
    rationale = "".join(s for s in sentences if s and _grounded_in(s, allowed_corpus, known_services))
    return ComposerInput(
        original_query=question,
        lang=lang,
        verdict=evaluation.verdict,
        allowed_claims=allowed,
        allowed_hypotheses=hypotheses,
        missing_info=gaps,
        recommended_actions=actions,
        rationale=rationale,
        scope=scope or "",
    )


_HEDGE = re.compile(
    r"可能|未确认|未予确认|尚未|缺少|无法确认|不足以|剔除|推测|疑似|待确认|待核实|还需|"
    r"possibl|\bmay\b|\bmight\b|not\s+(?:yet\s+)?confirmed|unconfirmed|unverified|lack|missing|not\s+established|removed",
    re.IGNORECASE,
)


def _unhedged_restatements(answer: str, composer_input: ComposerInput) -> list[str]:
    """Sentences that restate a hypothesis or a gap as if it were confirmed (no hedge word)."""
    unconfirmed = [h.hypothesis_text for h in composer_input.allowed_hypotheses]
    unconfirmed += [gap.split("：", 1)[-1].split(": ", 1)[-1] for gap in composer_input.missing_info]
    targets = [words for text in unconfirmed if (words := keywords(text))]
    confirmed = [keywords(c.claim_text) for c in composer_input.allowed_claims]
    flagged = []
    for sentence in re.split(r"(?<=[。.!！?？；;\n])", answer):
        if not sentence.strip() or _HEDGE.search(sentence):
            continue
        words = keywords(sentence)
        for target in targets:
            overlap = len(words & target) / len(target)
            if overlap >= 0.6 and not any(len(words & c) / len(c) >= overlap for c in confirmed if c):
                flagged.append(sentence.strip())
                break
    return flagged


def _input_texts(composer_input: ComposerInput) -> list[str]:
    return [
        composer_input.original_query,
        composer_input.rationale,
        *(c.claim_text for c in composer_input.allowed_claims),
        *(h.hypothesis_text for h in composer_input.allowed_hypotheses),
        *(n for h in composer_input.allowed_hypotheses for n in h.needed_evidence),
        *composer_input.missing_info,
        *(f"{a.action_text} {a.reason}" for a in composer_input.recommended_actions),
    ]


def parse_composer_output(text: str | None) -> tuple[ComposerOutput | None, str]:
    """Strict JSON with answer_summary, recommended_actions, user_facing_answer (§19.3)."""
    parsed = parse_executor_output(text)
    if not parsed.ok or parsed.value is None:
        return None, f"composer output {parsed.status.status}: {parsed.status.detail}"
    try:
        return ComposerOutput.model_validate(parsed.value), "ok"
    except ValidationError as exc:
        first = exc.errors()[0]
        return None, f"composer output invalid at {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


_ROOT_CAUSE = re.compile(
    r"根因|根本原因|原因是|原因在于|是由于|导致了|root[\s-]*cause|caused\s+by|because\s+of|is\s+due\s+to", re.IGNORECASE
)
#: A cause written as settled: allowed only beside an allowed root_cause claim (which the guardrails
#: admit only as an inference over two independent invocations).
_CONFIRMED_ROOT = re.compile(
    r"根本?原?因(?:已|已经|被)?确认|确认(?:了)?(?:根本|根)因|已确认.{0,8}根本?原?因|根本原因(?:是|为|在于)|根因(?:是|为|在于)"
    r"|故障原因(?:是|为)|root[\s-]+cause\s+(?:is|was|has\s+been|:)|(?:confirmed|definite|actual)\s+(?:root\s+)?cause"
    r"|the\s+cause\s+(?:is|was)\b|root[\s-]+cause\s+(?:is\s+)?confirmed",
    re.IGNORECASE,
)
_GAP_WORDS = re.compile(
    r"缺少|缺口|尚未确认|无法确认|未能确认|不能确认|需要补充|还需|有待|not\s+(?:yet\s+)?confirmed|cannot\s+confirm|"
    r"missing|gap|need(?:s|ed)?\s+(?:more\s+)?evidence|unclear|unknown",
    re.IGNORECASE,
)
_JSONISH = re.compile(r'^\s*[\[{]|"\w+"\s*:\s*[\[{"]|executor_evidence|"claims"')


def guard_composed(
    output: ComposerOutput, composer_input: ComposerInput, known_services: Sequence[str] = ()
) -> GuardResult:
    """The answer may state nothing the input does not (DESIGN §4), and must fit its verdict."""
    violations: list[str] = []
    source = Corpus(_input_texts(composer_input))
    texts = [
        output.user_facing_answer,
        output.answer_summary,
        *(f"{a.action_text} {a.reason}" for a in output.recommended_actions),
    ]
    for text in texts:
        for entity in extract_entities(text, known_services):
            if not source.contains(entity):
                violations.append(f"{entity.kind} {entity.text!r} is not in the composer input")
    allowed_words = keywords(" ".join(_input_texts(composer_input)))
    for sentence in _novel_sentences(output.user_facing_answer, allowed_words):
        violations.append(f"content not in the composer input: {sentence[:80]!r}")
    for sentence in _unhedged_restatements(output.user_facing_answer, composer_input):
        violations.append(f"an unconfirmed statement is written as fact: {sentence[:80]!r}")
    answer = output.user_facing_answer
    if _JSONISH.search(answer):
        violations.append("the answer looks like JSON")
    verdict = composer_input.verdict
    if verdict == "REJECT" and _ROOT_CAUSE.search(answer):
        violations.append("a REJECT answer states a root cause")
    if (
        verdict == "LOW_CONFID"
        and not _GAP_WORDS.search(answer)
        and not any(g in answer for g in composer_input.missing_info)
    ):
        violations.append("a LOW_CONFID answer names no gap")
    has_root = any(c.claim_type == "root_cause" for c in composer_input.allowed_claims)
    if _CONFIRMED_ROOT.search(answer) and (verdict != "PASS" or not has_root):
        violations.append("the answer calls a root cause confirmed without an allowed root_cause claim")
    return GuardResult(passed=not violations, violations=list(dict.fromkeys(violations)))
