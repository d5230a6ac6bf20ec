"""The answer's shape (issue 28): after a one-line scope, the first line answers the question
with its label (confirmed / inferred / cannot tell) in at most ~160 Chinese characters or ~30
English words; then at most five key facts, each with its evidence; hypotheses each with what
would confirm it, no need said twice; gaps one line per kind; the full claim list in the JSON.
The template is in that shape, and the composer guard sends a composed answer out of it back to
the template."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.builders import answer_line, readable
from veridiag.agents.engines import offline_roles
from veridiag.agents.llm import llm_roles
from veridiag.agents.offline.findings import _phrases
from veridiag.agents.template import template_answer, template_phrases
from veridiag.config import LLMRoleSettings, LLMSettings
from veridiag.contracts.composer import ActionItem, AllowedClaim, AllowedHypothesis, ComposerInput, ComposerOutput
from veridiag.contracts.plan import Intent
from veridiag.contracts.verifier import ClaimVerification
from veridiag.pipeline import DiagnosisPipeline
from veridiag.pipeline.composer_guard import guard_composed
from veridiag.pipeline.composer_input import composer_wording
from veridiag.pipeline.headline import build_headline
from veridiag.pipeline.shape import (
    MAX_KEY_FACTS,
    Ranking,
    agree,
    fit_sentences,
    fits,
    gap_groups,
    line_size,
    merge_gaps,
    with_shape,
)
from veridiag.store import SessionStore
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.runner import Toolbox

# -- the first line answers each kind of question, on the demo ------------------------------------

FIRST_LINES = [
    # why
    ("订单123支付失败，帮我看看是什么原因", "inferred", "最可能的原因：09:58:03 payment-service 的配置变更"),
    ("Why is checkout slow since 10:00?", "inferred", "Most likely cause: The config change to payment-service"),
    # which
    ("10点以后哪个服务是罪魁祸首？", "inferred", "最可能的原因：09:58:03 payment-service"),
    ("which service is slowest?", "confirmed", "Ranked by latency"),
    # yes / no
    ("是不是 gateway 的问题？10点以后支付失败", "inferred", "不是 gateway。最可能的原因：09:58:03 payment-service"),
    ("Is payment-service to blame for checkout failing since 10:00?", "inferred", "Yes, payment-service."),
    ("Is it kafka?", "unknown", "kafka has no data in the period examined"),
    # when
    ("payment-service 的错误是什么时候开始的？", "inferred", "最早的变化（推断为开始时间）：payment-service"),
    ("when did the errors of payment-service start?", "inferred", "The earliest change (inferred as the start)"),
    # how many
    ("10点以后有多少个服务受影响？", "confirmed", "检查的 6 个服务中有 5 个在 10:00–16:00 出现超出自身历史的变化"),
    ("How many services were affected since 10:00?", "confirmed", "5 of the 6 services examined changed"),
    # what changed
    ("order-service 今天有什么变更？", "confirmed", "14:00:05 order-service 有一次发布变更"),
    ("what changed on order-service today?", "confirmed", "At 14:00:05 order-service recorded a deploy change"),
    # anything abnormal
    ("09:05 到 09:45 之间有没有异常？", "confirmed", "09:05–09:45 内检查的 6 个服务都没有超出自身历史的变化"),
    ("anything abnormal around 15:05?", "inferred", "Most likely cause: The job change to inventory-service"),
]


@pytest.mark.parametrize(("question", "label", "opening"), FIRST_LINES, ids=[q[:24] for q, _, _ in FIRST_LINES])
def test_the_first_line_answers_the_question_with_its_label(demo: Any, question: str, label: str, opening: str) -> None:
    result = demo.pipeline.run(question)
    evaluation = readable(result.self_evaluation)["verifier_evaluation"]
    lang = evaluation["composer_input"]["lang"]
    scope, first, *_ = result.answer.split("\n\n")
    assert "\n" not in scope and "\n" not in first, result.answer  # one line each
    assert fits(first, lang), (line_size(first, lang), first)
    assert answer_line(result.answer) == (label, answer_line(result.answer)[1]), first
    assert answer_line(result.answer)[1].startswith(opening), first
    # then at most five key facts, each with the invocations it cites
    words = template_phrases()[lang]
    facts = _section(result.answer, words["key_facts"])
    assert len(facts) <= MAX_KEY_FACTS, result.answer
    ref = words["evidence_ref"].split("{", 1)[0].strip()
    assert all(ref in fact and "#" in fact for fact in facts), facts


def _section(answer: str, heading: str) -> list[str]:
    """The items listed under ``heading`` (empty when it is not there)."""
    if heading not in answer:
        return []
    block = answer.split(heading, 1)[1].split("\n\n", 1)[0]
    return [line for line in block.splitlines() if line.startswith("- ")]


def test_the_demo_answer_is_a_short_read_and_every_claim_stays_in_the_json(demo: Any) -> None:
    """The demo's wall (16 claims listed) is a first line and five key facts — the order the
    question names first, no quiet service (gateway logged no ERROR) — and the document still
    holds every claim."""
    question = "订单123支付失败，帮我看看是什么原因"
    result = demo.pipeline.run(question)
    facts = _section(result.answer, "关键事实：")
    assert len(facts) == MAX_KEY_FACTS and "订单 123" in facts[0], result.answer
    assert not any("没有 ERROR 日志" in fact for fact in facts), facts
    composer_input = readable(result.self_evaluation)["verifier_evaluation"]["composer_input"]
    allowed = composer_input["allowed_claims"]
    assert len(allowed) > MAX_KEY_FACTS and composer_input["key_facts"]
    assert {c["claim_id"] for c in allowed} >= set(composer_input["key_facts"])


def test_gaps_of_a_period_without_data_are_one_line_per_kind(demo: Any) -> None:
    """A day without data: not one gap line per metric queried, one for all of them."""
    result = demo.pipeline.run("payment-service 昨天凌晨3点为什么报错？")
    composer_input = readable(result.self_evaluation)["verifier_evaluation"]["composer_input"]
    gaps = _section(result.answer, "证据缺口：")
    assert len(gaps) <= 4 and len(gaps) <= len(composer_input["missing_info"]), result.answer
    metrics = [g for g in gaps if g.startswith("- query_metrics")]
    queried = [m for m in composer_input["missing_info"] if "query_metrics" in m]
    assert len(metrics) == (1 if queried else 0), gaps
    if len(queried) > 1:
        assert "cpu_percent、hikaricp_connections_active" in metrics[0], gaps
    assert any("没有读到 payment-service 的数据" in g for g in gaps), "a known gap is still said"


# -- the template's shape over any composer input ----------------------------------------------------

INFERRED: ClaimVerification = "reasonable_inference"
SERVICES = [f"svc-{n:02d}" for n in range(12)]
NEEDS = ["对比 active 与 max", "查数据库慢查询与锁等待指标", "查看发布记录", "确认连接池配置 `maximum-pool-size`"]

_claim_text = st.one_of(
    st.builds(
        "{0} 的 http_error_percent 在 10:{1:02d}–10:29 异常升高：峰值 {2}%（10:07）（×{3}.5）".format,
        st.sampled_from(SERVICES),
        st.integers(0, 20),
        st.integers(2, 99),
        st.integers(2, 90),
    ),
    st.builds("{0} 在 09:30–10:35 没有 ERROR 日志".format, st.sampled_from(SERVICES)),
    st.builds(
        "{0} 的 cpu_percent 在 09:35–12:05 介于 {1}% 与 45% 之间，未偏离自身历史基线".format,
        st.sampled_from(SERVICES),
        st.integers(1, 20),
    ),
    st.builds("09:58:03 {0} 有一次配置变更：maximum-pool-size=50 (was 100)".format, st.sampled_from(SERVICES)),
)

#: Gap wordings of several kinds, the marker words that tell the kind, and what varies in them.
GAP_KINDS = {
    "no_data": "query_metrics（service={s}, metric=m_{n}）没有返回数据：no points of {s}/m_{n} between 02:30 and 03:30",
    "no_logs": "{s} 在 02:30–03:30 没有日志（它的日志覆盖 2026-07-07T08:00:04Z – 2026-07-07T15:59:51Z）",
    "failed": "query_logs（service={s}）调用失败：connection refused",
    "without": "没有读到 {s} 的数据，无法对其下结论。",
}
MARKERS = {"no_data": "没有返回数据", "no_logs": "没有日志", "failed": "调用失败", "without": "没有读到"}

_gap = st.builds(
    lambda kind, s, n: (kind, GAP_KINDS[kind].format(s=s, n=n)),
    st.sampled_from(sorted(GAP_KINDS)),
    st.sampled_from(SERVICES),
    st.integers(0, 30),
)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(_claim_text, max_size=30),
    answering=st.booleans(),
    gaps=st.lists(_gap, max_size=40),
    needs=st.lists(st.lists(st.sampled_from(NEEDS), min_size=1, max_size=3, unique=True), max_size=4),
    verdict=st.sampled_from(["PASS", "LOW_CONFID", "REJECT"]),
)
def test_any_input_makes_a_short_answer_that_keeps_every_claim(
    texts: list[str],
    answering: bool,
    gaps: list[tuple[str, str]],
    needs: list[list[str]],
    verdict: str,
) -> None:
    claims = [
        AllowedClaim(
            claim_id=f"claim-{i}",
            claim_type="change" if "变更" in text else "symptom",
            claim_text=text,
            verification="direct_observation",
            answers=answering and i == 0,
            evidence_refs=[f"#{i + 1}"],
        )
        for i, text in enumerate(texts)
    ]
    hypotheses = [
        AllowedHypothesis(hypothesis_text=f"可能是 {SERVICES[i]} 的连接池过小", needed_evidence=n)
        for i, n in enumerate(needs)
    ]
    raw = ComposerInput(
        original_query="10点以后为什么支付失败？",
        lang="zh",
        verdict=verdict,
        allowed_claims=claims,
        allowed_hypotheses=hypotheses,
        missing_info=[text for _, text in gaps],
        recommended_actions=[ActionItem(action_text="对比 active 与 max")],
        headline=build_headline("zh", verdict, claims, hypotheses, SERVICES),  # type: ignore[arg-type]
    )
    composer_input = with_shape(raw, Ranking(Intent(kind="cause"), SERVICES, composer_wording().patterns.quiet))
    answer = template_answer(composer_input).user_facing_answer
    words = template_phrases()["zh"]
    lines = answer.splitlines()
    # the first line: labelled, within the bound
    assert fits(lines[0], "zh") and lines[0].startswith(
        tuple(words[f"answer_{k}"] for k in ("confirmed", "inferred", "unknown"))
    )
    # at most five key facts: no more lines state a claim, whatever they are listed under
    stating = [line for line in lines[1:] if any(text in line for text in texts)]
    assert len(stating) <= MAX_KEY_FACTS, answer
    assert stating == _section(answer, words["key_facts"])
    # one line per kind of gap
    listed = _section(answer, words["gaps"])
    for kind in {kind for kind, _ in gaps}:
        assert len([line for line in listed if MARKERS[kind] in line]) == 1, (kind, listed)
    # no need said twice (a next step is a step, not a need)
    said = [line for line in lines if not line.startswith("- 对比 active 与 max") or "可能" in line]
    for need in NEEDS:
        assert sum(line.count(need) for line in said) <= 1, answer
    # every claim still in what the JSON holds, and the template passes its own guard
    held = json.loads(composer_input.model_dump_json())["allowed_claims"]
    assert [c["claim_text"] for c in held] == texts
    assert guard_composed(template_answer(composer_input), composer_input, SERVICES).passed


# -- the composer guard holds a composed answer to the shape ----------------------------------------

CLAIMS = [
    AllowedClaim(
        claim_id=f"claim-{i}",
        claim_type="symptom",
        claim_text=f"svc-{i:02d} 的 http_error_percent 在 10:01–10:29 异常升高：峰值 2{i}%（10:07）",
        verification="direct_observation",
        evidence_refs=[f"#{i}"],
    )
    for i in range(8)
]
GAPS = [
    f"query_metrics（service=svc-01, metric=m_{n}）没有返回数据：no points between 02:30 and 03:30" for n in range(3)
]
NEED = "对比 active 与 max"
SHAPED = ComposerInput(
    original_query="10点以后为什么支付失败？",
    lang="zh",
    verdict="LOW_CONFID",
    allowed_claims=CLAIMS,
    allowed_hypotheses=[
        AllowedHypothesis(hypothesis_text="svc-01 的连接池过小", needed_evidence=[NEED]),
        AllowedHypothesis(hypothesis_text="svc-02 的连接池过小", needed_evidence=[NEED]),
    ],
    missing_info=GAPS,
    headline=build_headline("zh", "LOW_CONFID", CLAIMS, [], SERVICES),
)


def _answer(first: str, facts: int = 3, gaps: str = "merged", needs: str = "once") -> str:
    shaped = with_shape(SHAPED, Ranking(None, SERVICES, composer_wording().patterns.quiet))
    listed = "\n".join(f"- {c.claim_text}" for c in CLAIMS[:facts])
    gap_lines = shaped.gap_lines if gaps == "merged" else GAPS
    need_b = NEED if needs == "twice" else "同上"
    return "\n".join(
        [
            first,
            "",
            "目前只能部分确认，证据仍有缺口。",
            "",
            "关键事实：",
            listed,
            "",
            "可能方向（尚未证实）：",
            f"- 可能：svc-01 的连接池过小（还需：{NEED}）",
            f"- 可能：svc-02 的连接池过小（还需：{need_b}）",
            "",
            "证据缺口：",
            *(f"- {gap}" for gap in gap_lines),
        ]
    )


HEADLINE = SHAPED.headline


@pytest.mark.parametrize(
    ("answer", "broken"),
    [
        (_answer(HEADLINE), None),
        (_answer(HEADLINE.split("】", 1)[1]), "carries no label"),
        (_answer(HEADLINE + "；" + "；".join(c.claim_text for c in CLAIMS[1:])), "too long"),
        (_answer(HEADLINE, facts=8), "8 facts are listed"),
        (_answer(HEADLINE, gaps="each"), "gaps of one kind on 3 lines"),
        (_answer(HEADLINE, needs="twice"), "what a hypothesis needs is repeated"),
    ],
    ids=["in shape", "no label", "first line too long", "eight facts", "a line per gap", "a need twice"],
)
def test_the_guard_rejects_an_answer_out_of_shape(answer: str, broken: str | None) -> None:
    shaped = with_shape(SHAPED, Ranking(None, SERVICES, composer_wording().patterns.quiet))
    result = guard_composed(ComposerOutput(answer_summary="s", user_facing_answer=answer), shaped, SERVICES)
    if broken is None:
        assert result.passed, result.violations
    else:
        assert result.failed_checks == ["composer.answer_shape"], result.violations
        assert any(broken in v for v in result.violations), result.violations


def test_a_next_step_that_re_asks_a_confirmed_fact_is_out_of_shape() -> None:
    confirmed = AllowedClaim(
        claim_id="c1",
        claim_type="change",
        claim_text="09:58:03 svc-01 有一次配置变更：maximum-pool-size=50 (was 100)",
        verification="direct_observation",
    )
    composer_input = ComposerInput(
        original_query="为什么支付失败？",
        lang="zh",
        verdict="PASS",
        allowed_claims=[confirmed],
        headline=build_headline("zh", "PASS", [confirmed], [], SERVICES),
    )
    output = ComposerOutput(
        answer_summary="s",
        user_facing_answer=composer_input.headline,
        recommended_actions=[ActionItem(action_text="检查 `maximum-pool-size` 是否被改过")],
    )
    result = guard_composed(output, composer_input, SERVICES)
    assert result.failed_checks == ["composer.answer_shape"], result.violations


def test_an_llm_answer_listing_every_claim_falls_back_to_the_template(
    demo_env: EmbeddedEnvironment, tmp_path: Path
) -> None:
    """A model that opens with the headline but lists all sixteen claims below it: the wall, sent
    back to the template, which lists five."""

    def composer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(p.content for m in messages for p in getattr(m, "parts", []) if isinstance(p, UserPromptPart))
        assert isinstance(prompt, str)
        given = json.loads(prompt.split("<composer_input>\n", 1)[1].rsplit("\n</composer_input>", 1)[0])
        body = "\n".join(f"- {c['claim_text']}" for c in given["allowed_claims"])
        answer = f"{given['headline']}\n\n已确认：\n{body}"
        reply = {"answer_summary": given["headline"], "recommended_actions": [], "user_facing_answer": answer}
        return ModelResponse(parts=[TextPart(json.dumps(reply, ensure_ascii=False))])

    def factory(config: LLMRoleSettings) -> Model:
        return FunctionModel(composer, model_name=str(config.model))

    store = SessionStore(f"sqlite:///{tmp_path / 's.db'}")
    offline = offline_roles(demo_env, store)
    configured = LLMSettings(composer=LLMRoleSettings(model="fn-composer"))
    roles = llm_roles(configured, offline, demo_env, model_factory=factory, backoff_seconds=0.0)
    toolbox = Toolbox(logs=demo_env, metrics=demo_env, knowledge=demo_env, changes=demo_env)
    result = DiagnosisPipeline(store, roles, toolbox=toolbox).run("订单123支付失败，帮我看看是什么原因")
    evaluation = readable(result.self_evaluation)["verifier_evaluation"]
    assert result.answer_source == "template", evaluation["answer_source_reason"]
    assert "composer.answer_shape" in evaluation["composer_guard"]["failed_checks"]
    assert len(_section(result.answer, "关键事实：")) == MAX_KEY_FACTS


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lang=st.sampled_from(["zh", "en"]))
def test_a_first_line_too_long_is_cut_to_the_bound_and_keeps_a_hypothesis_label(lang: str) -> None:
    """However long the claims, the first line fits, and a hypothesis keeps its label."""
    words = template_phrases()[lang]
    long_claim = AllowedClaim(
        claim_id="c1",
        claim_type="symptom",
        claim_text=" ".join(["svc-01 的 p99 在 10:01–10:29 异常升高：峰值 5267ms（10:08）（×26.74）"] * 4),
        verification="direct_observation",
    )
    hypothesis = AllowedHypothesis(hypothesis_text="svc-01 的连接池过小")
    line = build_headline(lang, "LOW_CONFID", [long_claim], [hypothesis], SERVICES)
    assert fits(line, lang), line
    assert re.search(re.escape(words["answer_unknown"]), line) or words["label_hypothesis"] in line, line


def test_a_merged_gap_line_names_every_service_and_metric_its_lines_differ_in() -> None:
    """Failed calls for two services and three metrics: one line naming all five, the reason once
    (the pairs stay in ``missing_info``)."""
    gaps = [
        f"query_metrics (service={s}, metric={m}) failed: reading {s}/{m}: connection refused"
        for s in ("payment-service", "order-service")
        for m in ("cpu_percent", "http_error_percent", "jvm_heap_used_mb")
    ]
    groups = gap_groups(gaps, ["payment-service", "order-service"], "en")
    assert len(groups) == 1 and groups[0].members == tuple(gaps)
    line = groups[0].line
    assert line.count("connection refused") == 1, line
    for name in ("payment-service", "order-service", "cpu_percent", "http_error_percent", "jvm_heap_used_mb"):
        assert name in line, line
    # what the listed names already tell is not listed again
    assert "payment-service/cpu_percent" not in line and "…" in line, line
    # a gap unlike the others keeps its own line
    other = "no runbook matches what was seen"
    assert [g.line for g in gap_groups([*gaps, other], [], "en")][-1] == other


# -- a merged gap line agrees with the names it lists ----------------------------------------------

#: Gap wordings whose subject a merged line lists: the offline engine's (``phrases.yaml``) and the
#: pipeline's known gap of a service without data (``composer.yaml``).
SUBJECT_GAPS = ["logs_elsewhere", "without_data", "no_metrics", "no_anomaly", "known_without_data"]
_service_name = st.from_regex(r"[a-z]{2,8}(?:-[a-z]{2,8})?", fullmatch=True)


def _subject_gap(lang: str, key: str, service: str, index: int) -> str:
    template = (
        composer_wording().gaps[lang].without_data if key == "known_without_data" else _phrases()[lang].templates[key]
    )
    return template.format(
        service=service,
        period="2026-07-06 02:30–03:30",
        first=f"2026-07-07T08:00:{index:02d}Z",
        last=f"2026-07-07T15:59:{index:02d}Z",
    )


#: What may not follow a list of several names: (verbs, when the list opens the line; pronouns).
SINGULAR = {"en": (["has", "is", "was", "does"], ["its", "itself", "it"]), "zh": ([], ["它的", "它自己"])}


def _singular(lang: str, *, subject: bool) -> re.Pattern[str]:
    verbs, pronouns = SINGULAR[lang]
    right = r"(?![\w'])" if lang == "en" else ""
    return re.compile("|".join(rf"(?<!\w){f}{right}" for f in [*pronouns, *(verbs if subject else [])]), re.I)


@settings(max_examples=80, deadline=None)
@given(
    lang=st.sampled_from(["zh", "en"]),
    key=st.sampled_from(SUBJECT_GAPS),
    names=st.lists(_service_name, min_size=1, max_size=8, unique=True),
)
def test_a_merged_gap_line_agrees_with_however_many_names_it_lists(lang: str, key: str, names: list[str]) -> None:
    """One name: the gap as written. Several: one line listing them all, the verb after a list
    that opens the line and every pronoun after it in the plural ("have no logs", "their logs",
    它们的日志) — the same words whether it lists two names or eight."""
    gaps = [_subject_gap(lang, key, name, index) for index, name in enumerate(names)]
    [line] = merge_gaps(gaps, names, lang)
    if len(names) == 1:
        assert line == gaps[0]
        return
    sep = template_phrases()[lang]["list_sep"]
    listed = sep.join(names)
    assert listed in line, line
    before, after = line.split(listed, 1)
    assert not _singular(lang, subject=not before.strip()).search(after), line
    [two] = merge_gaps(gaps[:2], names[:2], lang)
    assert two.split(sep.join(names[:2]), 1) == [before, after], (two, line)


@pytest.mark.parametrize(
    ("lang", "key", "merged"),
    [
        ("en", "logs_elsewhere", "gateway, redis have no logs during 2026-07-06 02:30–03:30 (their logs cover … – …)"),
        ("zh", "logs_elsewhere", "gateway、redis 在 2026-07-06 02:30–03:30 没有日志（它们的日志覆盖 … – …）"),
        ("en", "no_metrics", "gateway, redis have no metrics, so none were checked"),
        ("en", "known_without_data", "No data was read for gateway, redis, so nothing can be concluded about them."),
        ("zh", "known_without_data", "没有读到 gateway、redis 的数据，无法对其下结论。"),
    ],
)
def test_merged_gap_lines_read_as_written_for_several(lang: str, key: str, merged: str) -> None:
    gaps = [_subject_gap(lang, key, name, index) for index, name in enumerate(["gateway", "redis"])]
    assert merge_gaps(gaps, ["gateway", "redis"], lang) == [merged]
    # 其它 is no 它: a Chinese pronoun inside a word stays
    assert (
        agree("其它的日志", "zh", subject=True) == "其它的日志"
        and agree("（它的日志", "zh", subject=True) == "（它们的日志"
    )
    # a verb agrees only with a list that opens the line, and only the first
    assert agree(" is down and is slow", "en", subject=True) == " are down and is slow"
    assert (
        agree(" returned no data: the series is empty", "en", subject=False) == " returned no data: the series is empty"
    )
    assert agree(" has no logs. Its logs", "en", subject=True) == " have no logs. Their logs"


@given(
    head=st.text(alphabet="abcdefghij ", min_size=20, max_size=60),
    clock=st.tuples(st.integers(0, 23), st.integers(0, 59)),
    tail=st.lists(st.text(alphabet="klmnopqrst ", min_size=5, max_size=30), min_size=3, max_size=8),
)
def test_a_first_line_cut_to_fit_keeps_what_it_keeps_as_written(
    head: str, clock: tuple[int, int], tail: list[str]
) -> None:
    """A sentence too long for the first line is cut at a clause's end, never inside a clock
    (10:03) or a number (1,234): what is left is the sentence's own beginning, as written."""
    sentence = f"{head.strip() or 'x'} at {clock[0]:02d}:{clock[1]:02d}, 1,234 lines: " + ", ".join(tail) * 6
    line, _ = fit_sentences("", [sentence], "en")
    assert fits(line, "en")
    kept = line.removesuffix("…")
    assert sentence.startswith(kept), (kept, sentence)
