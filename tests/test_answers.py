"""The first sentence answers the question asked (issue 26): yes or no, the ranking, the onset,
the changes, the culprit or that none stands out, a named service without data — on the demo,
in Chinese and in English; and however it is asked, no answer confirms an origin."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import answer_line, readable
from veridiag.config import Settings
from veridiag.ingest.importers import import_logs
from veridiag.pipeline.factory import assemble
from veridiag.tools.backends.embedded import EmbeddedEnvironment


def first_paragraph(answer: str) -> str:
    """The headline: the line after the scope line, without its label (issue 28; the labels are
    checked in ``tests/test_answer_shape.py``)."""
    return answer_line(answer)[1]


@pytest.mark.parametrize(
    ("question", "opening", "named"),
    [
        ("Is payment-service to blame for checkout failing since 10:00?", "Yes, payment-service.", "payment-service"),
        ("是不是 payment-service 的问题？10点以后支付失败", "是，问题出在 payment-service。", "payment-service"),
        ("10点以后支付失败，是不是 gateway 的问题？", "不是 gateway。", "payment-service"),
        ("Is gateway to blame for the payment failures since 10:00?", "No, not gateway.", "payment-service"),
        # the symptom's words and time choose the period, not the suspect's own incident (mysql's at 15:00)
        ("Is mysql to blame for the payment failures since 10:00?", "No, not mysql.", "payment-service"),
    ],
)
def test_is_x_to_blame_is_answered_yes_or_no_first(demo: Any, question: str, opening: str, named: str) -> None:
    result = demo.pipeline.run(question)
    headline = first_paragraph(result.answer)
    assert headline.startswith(opening), result.answer
    assert named in headline and ("推断" in headline or "inferred" in headline)


def test_a_symptom_with_a_suspect_is_judged_in_the_symptom_s_period(demo: Any) -> None:
    """ "是不是mysql导致的支付超时？": the payments' period (10:00), not the gateway's timeout counter
    (08:11), though "超时" is a part of that counter's name."""
    result = demo.pipeline.run("是不是mysql导致的支付超时？")
    scope, headline = result.answer.split("\n\n")[0], first_paragraph(result.answer)
    assert "09:45" in scope, scope
    assert headline.startswith("不是 mysql。") and "payment-service" in headline, headline


@pytest.mark.parametrize(
    ("question", "verdict"),
    [
        ("is payment-service the culprit?", "No, not payment-service."),
        ("是不是 payment-service 的问题？", "不是 payment-service。"),
        ("is inventory-service to blame?", "Yes, inventory-service."),
    ],
)
def test_is_x_to_blame_without_a_time_is_judged_in_the_latest_incident(demo: Any, question: str, verdict: str) -> None:
    """Not the week's largest (inventory-service's heap at 11:46) nor the suspect's own (payment's
    pool at 10:00): the incident at hand, the lock waits from 15:00 after inventory's batch job."""
    result = demo.pipeline.run(question)
    scope, headline = result.answer.split("\n\n")[0], first_paragraph(result.answer)
    assert "14:4" in scope and "15:50" in scope, scope
    assert headline.startswith(verdict), headline
    assert "14:58:30" in headline and "inventory-service" in headline, headline
    # what the job did, if the line is too short for it, is a key fact
    assert "batch=50000" in headline + result.answer.split("\n\n")[2], result.answer


@pytest.mark.parametrize("question", ["order-service 挂了，为什么", "why is order-service failing?"])
def test_why_leads_with_the_change_made_to_a_service_ranked_close_to_the_top(demo: Any, question: str) -> None:
    """The batch job of inventory-service (ranked second, close to mysql) came before the lock
    waits and order-service's errors: the answer opens with it, not only with "none stands out"."""
    headline = first_paragraph(demo.pipeline.run(question).answer)
    assert headline.startswith(("最可能的原因：14:58:30 inventory-service", "Most likely cause:")), headline
    assert "inventory-service" in headline.split("。")[0].split(";")[0], headline


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        (
            "是不是 gateway 还是 payment-service 的问题？10点以后支付失败",
            "不是 gateway。是，问题出在 payment-service。",
        ),
        ("is it gateway or payment-service? payments fail since 10:00", "No, not gateway. Yes, payment-service."),
    ],
)
def test_two_services_asked_about_each_get_a_yes_or_no(demo: Any, question: str, opening: str) -> None:
    headline = first_paragraph(demo.pipeline.run(question).answer)
    assert headline.startswith(opening), headline


@pytest.mark.parametrize(
    ("question", "opening"), [("哪个服务最慢？", "按延迟排序"), ("which service is slowest?", "Ranked by latency")]
)
def test_which_is_slowest_is_a_ranking_with_the_levels(demo: Any, question: str, opening: str) -> None:
    result = demo.pipeline.run(question)
    headline = first_paragraph(result.answer)
    assert headline.startswith(opening), result.answer
    assert headline.count("ms") >= 4 and "1. " in headline and "2. " in headline


@pytest.mark.parametrize(
    ("question", "period"),
    [
        ("which service is slowest at 10:05 on 2026-07-07?", "(average over 10:02–10:10)"),
        ("2026-07-07 10:05 哪个服务最慢？", "（10:02–10:10 的平均值）"),
    ],
)
def test_a_ranking_at_a_moment_reads_the_levels_around_it(demo: Any, question: str, period: str) -> None:
    """ "Slowest at 10:05" is the levels then (3 min before to 5 min after), not the window's average."""
    headline = first_paragraph(demo.pipeline.run(question).answer)
    assert period in headline, headline


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("payment-service 的错误是什么时候开始的？", "最早的变化（推断为开始时间）：payment-service"),
        (
            "when did the errors of payment-service start?",
            "The earliest change (inferred as the start): payment-service",
        ),
    ],
)
def test_when_did_it_start_is_the_earliest_change_of_the_kind_asked(demo: Any, question: str, opening: str) -> None:
    headline = first_paragraph(demo.pipeline.run(question).answer)
    assert headline.startswith(opening) and "10:00" in headline and "ERROR" in headline, headline


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("when did the lock waits start?", "The earliest change (inferred as the start): mysql, its mysql_lock_wait"),
        ("慢查询是什么时候开始的", "最早的变化（推断为开始时间）：mysql，mysql_slow_queries_per_minute"),
        ("锁等待持续了多久？", "从 15:01 持续到 15:44，随后恢复：mysql，mysql_lock_wait_p99_seconds"),
    ],
)
def test_a_metric_named_by_a_part_of_its_name_is_what_is_asked_about(demo: Any, question: str, opening: str) -> None:
    """The lock waits of 15:01 — not the week's largest incident (inventory-service's heap at
    11:46), which a question without a time and without these words is about."""
    headline = first_paragraph(demo.pipeline.run(question).answer)
    assert headline.startswith(opening), headline


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("billing-service 今天10点为什么报错？", "billing-service 在 09:30–10:30 没有数据"),
        ("why does billing-service fail around 10:00?", "billing-service has no data during 09:30–10:30"),
        ("why does the billing service fail around 10:00?", "billing service has no data during 09:30–10:30"),
        ("账单服务今天10点为什么报错？", "账单服务 在 09:30–10:30 没有数据"),
    ],
)
def test_a_named_service_without_data_is_said_first(demo: Any, question: str, opening: str) -> None:
    result = demo.pipeline.run(question)
    assert first_paragraph(result.answer).startswith(opening), result.answer
    assert opening.split(" ", maxsplit=1)[0] in result.answer.splitlines()[0]


@pytest.mark.parametrize(
    ("question", "opening", "level"),
    [
        ("payment-service 的 WARNING 有哪些？", "payment-service 在 ", "条 WARN 日志"),
        ("list the warnings", "", "WARN lines"),
        ("list the errors", "", "ERROR lines"),
        ("列出 payment-service 的警告", "payment-service 在 ", "条 WARN 日志"),
    ],
)
def test_asking_for_the_lines_is_answered_by_the_lines(demo: Any, question: str, opening: str, level: str) -> None:
    """Not a culprit, not what is abnormal: the lines asked for, of the level asked for."""
    headline = first_paragraph(demo.pipeline.run(question).answer)
    first = re.split(r"(?<=[。.])\s", headline)[0]
    assert headline.startswith(opening) and level in first, headline
    assert "推断" not in first and "inferred" not in first, headline


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("payment-service还在报错吗", "最新数据（15:00–16:00）中已不再发生：payment-service 没有超出自身历史的变化"),
        ("is payment-service still failing?", "Not in the newest data: during 15:00–16:00 payment-service did not"),
        ("mysql 现在还慢吗？", "仍在发生：最新数据（15:00–16:00）中 mysql 仍有超出自身历史的变化"),
        ("is mysql still slow?", "Still happening: in the newest data (15:00–16:00) mysql still changed"),
    ],
)
def test_still_is_answered_from_the_newest_data_first(demo: Any, question: str, opening: str) -> None:
    """The demo's payment incident was at 10:00, its mysql lock waits run to its last hour: "still?"
    asks about that hour, not about the earlier incident."""
    result = demo.pipeline.run(question)
    assert first_paragraph(result.answer).startswith(opening), result.answer


@pytest.mark.parametrize(
    "question", ["inventory-service 还在报错吗", "is inventory-service still broken?", "库存服务还有问题吗"]
)
def test_a_change_recorded_before_the_newest_hour_is_not_still_happening(demo: Any, question: str) -> None:
    """inventory-service's batch job was recorded at 14:58:30, before the newest hour (15:00–16:00):
    an instant then, not something still going on — no "still" is said of it."""
    headline = first_paragraph(demo.pipeline.run(question).answer)
    assert not headline.startswith(("仍在发生", "Still happening")), headline


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    asked=st.sampled_from(
        [
            ("支付服务现在还在报错吗", "zh"),
            ("支付还失败吗？", "zh"),
            ("付款仍然报错吗", "zh"),
            ("is the payment service still failing?", "en"),
            ("payment still failing?", "en"),
            ("are payments still erroring right now", "en"),
        ]
    )
)
def test_still_about_a_service_a_word_points_to_answers_about_that_service(demo: Any, asked: tuple[str, str]) -> None:
    """ "支付服务还在报错吗" asks about payment-service (支付 → *pay*, ``aliases.yaml``), as
    "payment-service还在报错吗" does: the first sentence says whether *it* still fails — never
    "still happening" about whichever other service changed most in the newest hour (mysql)."""
    question, lang = asked
    headline = first_paragraph(demo.pipeline.run(question).answer)
    first = re.split(r"(?<=[。.:：])\s?", headline)[0]
    opening = "最新数据（15:00–16:00）中已不再发生" if lang == "zh" else "Not in the newest data"
    assert headline.startswith(opening) and "payment-service" in headline.split("。")[0].split(". ")[0], headline
    assert "mysql" not in first, headline


@pytest.mark.parametrize(
    ("question", "opening", "never"),
    [
        ("Is it kafka?", "kafka has no data in the period examined", ["Yes, kafka", "No, not kafka"]),
        ("是不是 Kafka 的问题", "kafka 在所查时段没有数据", ["是，问题出在 kafka", "不是 kafka"]),
        (
            "是不是ｒａｂｂｉｔｍｑ的问题？10点以后支付失败",
            "rabbitmq 在所查时段没有数据",
            ["问题出在 rabbitmq", "不是 rabbitmq"],
        ),
        ("is it frontend or payment-service?", "frontend has no data in the period examined", ["No, not frontend"]),
    ],
)
def test_a_component_without_data_is_said_to_have_none_and_never_blamed_or_cleared(
    demo: Any, question: str, opening: str, never: list[str]
) -> None:
    result = demo.pipeline.run(question)
    headline = first_paragraph(result.answer)
    assert headline.startswith(opening), result.answer
    assert not any(words in result.answer for words in never), result.answer


@pytest.mark.parametrize(
    ("question", "opening", "scope"),
    [
        ("是不是ＰＡＹＭＥＮＴ-ＳＥＲＶＩＣＥ的问题？10点以后支付失败", "是，问题出在 payment-service。", None),
        ("是不是payment-service的问题？10点以后支付失败", "是，问题出在 payment-service。", None),
        (
            "is paymnet-service to blame for the payment failures since 10:00?",
            "Yes, payment-service.",
            'Read "paymnet-service" as payment-service.',
        ),
    ],
)
def test_a_name_in_full_width_against_chinese_or_misspelt_is_asked_about(
    demo: Any, question: str, opening: str, scope: str | None
) -> None:
    answer = demo.pipeline.run(question).answer
    assert first_paragraph(answer).startswith(opening), answer
    if scope is not None:
        assert scope in answer.splitlines()[0], answer


def test_what_changed_is_answered_by_the_change_feed(demo: Any) -> None:
    headline = first_paragraph(demo.pipeline.run("what changed on order-service today?").answer)
    assert headline.startswith("At 14:00:05 order-service recorded a deploy change"), headline
    assert "rolled back to v2.3.0" in headline
    quiet = first_paragraph(demo.pipeline.run("order-service 今天12点到13点有什么变更？").answer)
    assert quiet.startswith("12:00–13:00 期间没有记录到任何变更"), quiet


def test_a_quiet_hour_says_nothing_changed(demo: Any) -> None:
    headline = first_paragraph(demo.pipeline.run("09:05 到 09:45 之间有没有异常？").answer)
    assert "都没有超出自身历史的变化" in headline, headline


TEMPLATES = [
    "{t}为什么{s}报错？",
    "why is {s} slow {t}?",
    "是不是 {s} 的问题？{t}",
    "{t} which service is the culprit?",
    "{s} {t}有没有异常？",
    "{t}哪个服务最慢？",
    "when did {s} start failing {t}?",
]
SERVICES = ["payment-service", "order-service", "gateway", "inventory-service", "mysql"]
TIMES = ["", "10点以后", "around 15:05", "today ", "8 点以后", "14:00 左右", "since 11:30 "]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(template=st.sampled_from(TEMPLATES), service=st.sampled_from(SERVICES), time=st.sampled_from(TIMES))
def test_however_it_is_asked_no_answer_confirms_an_origin(demo: Any, template: str, service: str, time: str) -> None:
    """Every claim that a service is where it started is labelled inferred, never confirmed; the
    answer opens with a headline; every answering claim was allowed."""
    question = template.format(s=service, t=time)
    result = demo.pipeline.run(question)
    assert result.status == "completed", question
    evaluation = readable(result.self_evaluation)["verifier_evaluation"]
    labels = {c["claim_id"]: c["verification"] for c in evaluation["claim_checks"]}
    claims = evaluation["executor_structured_output"]["claims"]
    for claim in claims:
        if claim["claim_type"] == "root_cause":
            assert labels[claim["claim_id"]] != "direct_observation", (question, claim["claim_text"])
    allowed = {c["claim_id"] for c in evaluation["composer_input"]["allowed_claims"]}
    if any(c.get("answers") and c["claim_id"] in allowed for c in claims):
        assert evaluation["composer_input"]["headline"], question


def test_a_log_template_in_causal_words_is_quoted_not_claimed(tmp_path: Path) -> None:
    """Spring writes "… threw exception […] with root cause": the survey's claim restating that
    template quotes it, so the claim itself names no cause and is not held as one."""
    settings = Settings(home=tmp_path / "home", embedded={"load_demo": False})
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    lines = []
    for minute in range(120):
        stamp = f"2026-07-07T{10 + minute // 60:02d}:{minute % 60:02d}:00Z"
        for service in ("travel-api", "order-api"):
            lines.append(json.dumps({"ts": stamp, "level": "info", "msg": "served", "service": service}))
        if minute >= 70:
            message = "No instances available for order-api with root cause"
            lines.append(json.dumps({"ts": stamp, "level": "error", "msg": message, "service": "travel-api"}))
    (tmp_path / "app.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(env, tmp_path / "app.jsonl", service=None)
    env.close()
    assembly = assemble(settings)
    try:
        result = assembly.pipeline.run("which service is the culprit around 11:10 on 2026-07-07?")
    finally:
        assembly.close()
    evaluation = readable(result.self_evaluation)["verifier_evaluation"]
    answering = [c for c in evaluation["executor_structured_output"]["claims"] if c.get("answers")]
    assert answering, result.answer
    allowed = {c["claim_id"] for c in evaluation["composer_input"]["allowed_claims"]}
    assert all(c["claim_id"] in allowed for c in answering), result.answer
    assert "travel-api" in first_paragraph(result.answer), result.answer


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("哪个服务重启最多", "15:00–16:00 内检查的服务都没有重启"),
        ("which service restarted the most?", "Nothing to rank by restarts during 15:00–16:00"),
    ],
)
def test_a_ranking_where_no_service_has_any_of_the_measure_says_so(demo: Any, question: str, opening: str) -> None:
    """The demo's restarts were at 12:01–13:00; the newest hour has none: "which restarted the
    most?" is answered that none did — never "1. inventory-service 0 restarts (peak 0)"."""
    headline = first_paragraph(demo.pipeline.run(question).answer)
    assert headline.startswith(opening), headline
    assert "1. " not in headline.split("。")[0].split(". ")[0], headline


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("how long did the payment failures around 10:05 last?", "It lasted from 10:00 to 10:29, then returned"),
        ("payment-service 什么时候恢复的", "从 10:00 持续到 10:29，随后恢复"),
        # the period read from "10点" ends at 10:30 with the errors still going: read on to their end
        ("10点那次支付故障持续了多久", "从 10:00 持续到 10:29，随后恢复"),
    ],
)
def test_how_long_it_lasted_opens_with_its_start_and_end(demo: Any, question: str, opening: str) -> None:
    result = demo.pipeline.run(question)
    assert first_paragraph(result.answer).startswith(opening), result.answer
    assert "payment-service" in first_paragraph(result.answer)
