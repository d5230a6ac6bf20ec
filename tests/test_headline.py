"""The headline (issue 17): every answer with allowed claims opens, after the scope line, with the
main symptoms and the most likely cause and its label — every fact in it from an allowed claim,
a hypothesis never called confirmed, and an LLM headline held to the same by the composer guard."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.builders import readable
from veridiag.agents.engines import offline_roles
from veridiag.agents.llm import llm_roles
from veridiag.agents.template import template_answer, template_phrases
from veridiag.config import LLMRoleSettings, LLMSettings
from veridiag.contracts.composer import AllowedClaim, AllowedHypothesis, ComposerInput, ComposerOutput
from veridiag.contracts.plan import Intent
from veridiag.contracts.verifier import ClaimVerification
from veridiag.pipeline import DiagnosisPipeline
from veridiag.pipeline.composer_guard import guard_composed
from veridiag.pipeline.headline import build_headline
from veridiag.pipeline.shape import fits
from veridiag.store import SessionStore
from veridiag.text.entities import Corpus, extract_entities
from veridiag.tools.backends.embedded import EmbeddedEnvironment
from veridiag.tools.demo import bundled_environment
from veridiag.tools.runner import Toolbox

QUESTIONS = [(incident.id, question) for incident in bundled_environment().incidents for question in incident.questions]
SENTENCE_END = re.compile(r"[。！？]|[.!?](?=\s|$)")


@pytest.mark.parametrize(("incident", "question"), QUESTIONS, ids=[f"{i}-{q[:12]}" for i, q in QUESTIONS])
def test_demo_answers_open_with_a_headline_of_allowed_facts(demo: Any, incident: str, question: str) -> None:
    result = demo.pipeline.run(question)
    composer_input = readable(result.self_evaluation)["verifier_evaluation"]["composer_input"]
    headline = composer_input["headline"]
    assert headline, f"{incident}: no headline"
    scope, opening, *_ = result.answer.split("\n\n")
    assert (scope, opening) == (composer_input["scope"], headline)
    assert len(SENTENCE_END.findall(headline)) <= 3, headline
    assert fits(headline, composer_input["lang"]), headline  # one line, read at a glance (issue 28)
    claims = composer_input["allowed_claims"]
    held = Corpus([c["claim_text"] for c in claims])
    entities = extract_entities(headline, demo.pipeline.known_services)
    assert entities, headline  # it says where and how bad
    assert [e.text for e in entities if not held.contains(e)] == []
    words = template_phrases()[composer_input["lang"]]
    causes = [c for c in claims if c["claim_type"] == "root_cause"]
    if causes:  # the demo's causes are inferences: labelled as such, never as confirmed
        assert headline.startswith(words["answer_inferred"]), headline
        assert words["answer_confirmed"] not in headline and words["label_confirmed"] not in headline


def test_the_payment_headline_answers_why_then_says_how_bad(demo: Any) -> None:
    """Asked why, the first line is the inferred cause (issue 26: it answers the question); how
    bad, the worst symptom, does not fit beside it on one line (issue 28): it is the first
    symptom among the key facts, after the change the cause names."""
    result = demo.pipeline.run("Why is checkout slow since 10:00?")
    headline = result.answer.split("\n\n")[1]
    prefix = "Inferred — Most likely cause: The config change to payment-service at 09:58:03"
    assert headline.startswith(prefix), headline
    assert "maximum-pool-size=50 (was 100)" in headline and fits(headline, "en")
    facts = result.answer.split("Key facts:\n")[1].split("\n\n")[0].splitlines()
    assert "recorded a config change" in facts[0], facts
    assert "rose abnormally 10:0" in facts[1] and "(×" in facts[1], "then how bad, with its factor"
    assert all("(evidence #" in fact for fact in facts if fact.startswith("- "))
    # the recorded change already shows the pool size was changed: no step asks to check it
    steps = result.answer.split("Next steps:")[1].split("\n\n")[0]
    assert "maximum-pool-size" not in steps and "Compare active with max" in steps


INFERRED: ClaimVerification = "reasonable_inference"


def _claim(
    claim_id: str, text: str, claim_type: str = "symptom", label: ClaimVerification = "direct_observation"
) -> AllowedClaim:
    return AllowedClaim(claim_id=claim_id, claim_type=claim_type, claim_text=text, verification=label)


P99 = "payment-service 的 http_request_p99_ms 在 10:01–10:29 异常升高：峰值 5267ms（10:08），基线 197ms（×26.74）"
POOL = "payment-service 的 hikaricp_connections_active 在 10:00–10:29 异常升高：峰值 50 connections（10:00）（×4.17）"
ERRORS = "payment-service 的 http_error_percent 在 10:01–10:29 异常升高：峰值 22.85%（10:07）（×87.88）"


def test_the_headline_takes_the_largest_factors_and_the_earliest_cause() -> None:
    claims = [
        _claim("c1", POOL),
        _claim("c2", P99),
        _claim("c3", ERRORS),
        _claim("c3b", P99.replace("10:01–10:29", "11:01–11:29")),  # the same series recurring: named once
        _claim("c4", "10:05:00 的发布早于 payment-service 的异常，推断二者相关", "root_cause", INFERRED),
        _claim("c5", "09:58:03 的配置变更早于 payment-service 的异常，推断二者相关", "root_cause", INFERRED),
    ]
    headline = build_headline("zh", "PASS", claims)
    assert headline == (
        f"【推断】{ERRORS}；{P99}。最可能的原因：09:58:03 的配置变更早于 payment-service 的异常，推断二者相关。"
    )


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_hypothesis_is_never_cited_as_confirmed(lang: str) -> None:
    words = template_phrases()[lang]
    claims = [_claim("c1", P99)]
    grounded = AllowedHypothesis(hypothesis_text="连接池过小导致 p99 到 5267ms（来自排障手册 rb-pool）")
    ungrounded = AllowedHypothesis(hypothesis_text="数据库慢查询超过 30 秒（来自排障手册 rb-db）")
    headline = build_headline(lang, "LOW_CONFID", claims, [ungrounded, grounded])
    labelled = words["headline_cause"].format(label=words["label_hypothesis"], cause=grounded.hypothesis_text)
    assert labelled in headline and "30 秒" not in headline
    assert words["headline_cause"].format(label=words["label_confirmed"], cause="").rstrip() not in headline
    # PASS states claims only, REJECT no cause: neither names the hypothesis
    assert grounded.hypothesis_text not in build_headline(lang, "PASS", claims, [grounded])
    assert build_headline(lang, "REJECT", claims, [grounded]) == words["answer_confirmed"] + P99 + words["headline_end"]
    # a hypothesis is all there is of a cause: the answer cannot tell
    assert headline.startswith(words["answer_unknown"]), headline


def test_no_allowed_claim_means_no_headline() -> None:
    composer_input = ComposerInput(
        original_query="订单123支付失败", lang="zh", verdict="LOW_CONFID", missing_info=["缺少日志"]
    )
    assert build_headline("zh", "LOW_CONFID", [], [AllowedHypothesis(hypothesis_text="可能是连接池")]) == ""
    answer = template_answer(composer_input).user_facing_answer
    words = template_phrases()["zh"]
    assert answer.startswith(words["answer_unknown"] + words["LOW_CONFID"])


def test_the_guard_holds_a_headline_to_the_allowed_claims() -> None:
    claims = [_claim("c1", P99)]
    hypothesis = AllowedHypothesis(hypothesis_text="连接池上限 50 connections 过小")
    composer_input = ComposerInput(
        original_query="订单123支付失败",
        lang="zh",
        verdict="LOW_CONFID",
        allowed_claims=claims,
        allowed_hypotheses=[hypothesis],
        missing_info=["缺少数据库指标"],
        headline=build_headline("zh", "LOW_CONFID", claims, [hypothesis]),
    )
    rest = "\n\n证据缺口：\n- 缺少数据库指标\n\n可能方向（尚未证实）：\n- 可能：连接池上限 50 connections 过小"

    def guarded(opening: str) -> list[str]:
        output = ComposerOutput(answer_summary="s", user_facing_answer=opening + rest)
        return guard_composed(output, composer_input, ["payment-service"]).failed_checks

    assert guarded(composer_input.headline) == []
    # hedged, so no restatement: still, a hypothesis may not supply a headline's number
    hedged = "【无法判断】payment-service 的 p99 升到 5267ms，可能因为连接池只有 50 connections。"
    assert guarded(hedged) == ["composer.headline_fact"]


def _llm_composer_pipeline(store: SessionStore, demo_env: EmbeddedEnvironment, opening: str) -> DiagnosisPipeline:
    """The offline engine with an LLM composer that opens its answer with ``opening`` ("{headline}"
    is the input's headline) and lists the key facts after it (issue 28: at most five)."""

    def composer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(p.content for m in messages for p in getattr(m, "parts", []) if isinstance(p, UserPromptPart))
        assert isinstance(prompt, str)
        given = json.loads(prompt.split("<composer_input>\n", 1)[1].rsplit("\n</composer_input>", 1)[0])
        keys = given["key_facts"]
        body = "\n".join(f"- {c['claim_text']}" for c in given["allowed_claims"] if c["claim_id"] in keys)
        answer = f"{opening.format(headline=given['headline'])}\n\n已确认：\n{body}"
        reply = {"answer_summary": given["headline"], "recommended_actions": [], "user_facing_answer": answer}
        return ModelResponse(parts=[TextPart(json.dumps(reply, ensure_ascii=False))])

    def factory(config: LLMRoleSettings) -> Model:
        return FunctionModel(composer, model_name=str(config.model))

    offline = offline_roles(demo_env, store)
    configured = LLMSettings(composer=LLMRoleSettings(model="fn-composer"))
    roles = llm_roles(configured, offline, demo_env, model_factory=factory, backoff_seconds=0.0)
    toolbox = Toolbox(logs=demo_env, metrics=demo_env, knowledge=demo_env, changes=demo_env)
    return DiagnosisPipeline(store, roles, toolbox=toolbox)


@pytest.mark.parametrize(
    ("opening", "source"),
    [("{headline}", "composer"), ("支付从 10:00 起超时 30 秒。{headline}", "template")],
    ids=["the input's headline", "a number only the question holds"],
)
def test_an_llm_headline_with_a_number_no_claim_holds_falls_back(
    demo_env: EmbeddedEnvironment, tmp_path: Path, opening: str, source: str
) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 's.db'}")
    question = "订单123支付失败，超时 30 秒，帮我看看是什么原因"
    result = _llm_composer_pipeline(store, demo_env, opening).run(question)
    evaluation = readable(result.self_evaluation)["verifier_evaluation"]
    headline = evaluation["composer_input"]["headline"]
    assert result.answer_source == source, evaluation["answer_source_reason"]
    assert result.answer.split("\n\n")[1] == headline  # the template's headline when it fell back
    if source == "template":
        assert "no allowed claim holds" in evaluation["answer_source_reason"]
        assert "30 秒" not in result.answer.split("\n\n")[1]


@given(
    numbers=st.lists(st.integers(0, 99), min_size=2, max_size=2, unique=True),
    factor=st.floats(1.05, 3.0),
    lang=st.sampled_from(["en", "zh"]),
)
def test_how_bad_never_describes_the_service_the_answer_just_cleared(
    numbers: list[int], factor: float, lang: str
) -> None:
    """ "Is svc-045 to blame?" answered "No, not svc-045 at the origin" (the inference names another service's
    change first, then svc-045's anomaly it came before): how bad it was is the culprit's, never a
    blip of svc-045."""
    culprit, cleared = (f"svc-{n:03d}" for n in numbers)
    inference = AllowedClaim(
        claim_id="c1",
        claim_type="root_cause",
        claim_text=f"The config change to {culprit} at 10:00:05 came before the cpu anomaly of {cleared} from 10:01.",
        verification="reasonable_inference",
        answers=True,
    )
    blip = AllowedClaim(
        claim_id="c2",
        claim_type="symptom",
        claim_text=f"cpu_usage of {cleared} rose abnormally 10:01–10:03: peak 9% (10:02) (×{factor:.2f}).",
        verification="direct_observation",
    )
    intent = Intent(kind="blame", about=cleared)
    opening = build_headline(lang, "PASS", [inference, blip], known_services=[culprit, cleared], intent=intent)
    # the inference names svc-045 as what the change acted on: not the origin, where it shows
    words = template_phrases()[lang]
    assert opening.startswith(words["answer_inferred"] + words["blame_no_affected"].format(service=cleared)), opening
    assert "rose abnormally" not in opening, opening


CAUSE_IN_PAYMENT = "09:58:03 的配置变更早于 payment-service 的异常，推断二者相关"
KNOWN_TWO = ["payment-service", "gateway", "order-service"]


@pytest.mark.parametrize(
    ("suspects", "expected"),
    [
        (["payment-service", "gateway"], ["blame_yes:payment-service", "blame_no:gateway"]),
        (["gateway", "payment-service"], ["blame_no:gateway", "blame_yes:payment-service"]),
        (["gateway", "order-service"], ["blame_no:gateway", "blame_no:order-service"]),
    ],
)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_service_asked_about_gets_its_own_yes_or_no(lang: str, suspects: list[str], expected: list[str]) -> None:
    """ "是不是 X 还是 Y 的问题": one yes, no or cannot tell per service, in the order asked."""
    words = template_phrases()[lang]
    cause = AllowedClaim(
        claim_id="c1", claim_type="root_cause", claim_text=CAUSE_IN_PAYMENT, verification=INFERRED, answers=True
    )
    intent = Intent(kind="blame", about=suspects[0], suspects=suspects)
    headline = build_headline(lang, "PASS", [cause], [], KNOWN_TWO, intent=intent)
    opening = "".join(words[key].format(service=service) for key, service in (e.split(":") for e in expected))
    opening = words["answer_inferred"] + opening  # as sure as the inferred cause it is read from
    assert headline.replace(" ", "").startswith(opening.replace(" ", "")), headline


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_no_yes_or_no_about_a_service_without_data(lang: str) -> None:
    """A service asked about that has no data in the period is neither blamed nor cleared."""
    words = template_phrases()[lang]
    cause = AllowedClaim(
        claim_id="c1", claim_type="root_cause", claim_text=CAUSE_IN_PAYMENT, verification=INFERRED, answers=True
    )
    intent = Intent(kind="blame", about="gateway", suspects=["gateway", "payment-service"])
    headline = build_headline(lang, "PASS", [cause], [], KNOWN_TWO, intent=intent, without_data=["gateway"])
    assert headline.startswith(words["answer_inferred"] + words["blame_no_data"].format(service="gateway")), headline
    assert words["blame_no"].format(service="gateway") not in headline
    assert words["blame_yes"].format(service="payment-service") in headline


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(
    "overstated",
    ["p99 在 10:01 之后一直是 5267ms，所有请求都超时", "every request after 10:01 took 5267ms", "p99 是平时的 100 倍"],
)
def test_a_claim_that_said_more_than_its_evidence_never_leads_as_the_cause(lang: str, overstated: str) -> None:
    """An overstated claim becomes a hypothesis to check, not "the most likely cause": a symptom
    stretched to "every request" or a ratio no tool stated names no cause. A root cause held
    back as not yet shown, or the Executor's own hypothesis, may still lead as a hypothesis."""
    words = template_phrases()[lang]
    claims = [_claim("c1", P99)]
    stretched = AllowedHypothesis(hypothesis_text=overstated, origin="overstated")
    cause = AllowedHypothesis(hypothesis_text="连接池过小导致 p99 到 5267ms", origin="root_cause")
    assert overstated not in build_headline(lang, "LOW_CONFID", claims, [stretched])
    assert overstated not in build_headline(lang, "LOW_CONFID", claims, [stretched, cause])
    led = build_headline(lang, "LOW_CONFID", claims, [stretched, cause])
    assert words["headline_cause"].format(label=words["label_hypothesis"], cause=cause.hypothesis_text) in led
