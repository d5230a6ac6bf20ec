"""The first sentence answers the question asked, in the cases a red team found it did not: a
window without data, a ranking by errors without an error series, a count of services, "what
changed?" without a change feed, "is X to blame?" of a quiet X, a "why" about an HTTP status —
and the scope line says how the period was chosen, in whole sentences (zh + en)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import answer_line, readable
from veridiag.agents.offline.executor import counts_services
from veridiag.agents.offline.findings import _phrases
from veridiag.config import Settings
from veridiag.ingest.importers import import_logs
from veridiag.pipeline.factory import assemble
from veridiag.tools.backends.embedded import EmbeddedEnvironment


def _line(stamp: str, level: str, msg: str, service: str) -> str:
    return json.dumps({"ts": stamp, "level": level, "msg": msg, "service": service})


@pytest.fixture(scope="module")
def logs_only(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Logs of three services, no metric and no change feed: from 11:10 api writes 12 ERROR lines
    and web 10 (neither stands out); nova answers most requests with 200 and, from 11:10, 20 of
    them with 404 (as OpenStack's wsgi logs do)."""
    home = tmp_path_factory.mktemp("logs")
    settings = Settings(home=home / "home", embedded={"load_demo": False})
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    lines = []
    for minute in range(120):
        stamp = f"2026-07-07T{10 + minute // 60:02d}:{minute % 60:02d}:00Z"
        lines.append(_line(stamp, "info", "served request", "api"))
        lines.append(_line(stamp, "info", "rendered page", "web"))
        status = 404 if 70 <= minute < 90 else 200
        lines.append(_line(stamp, "info", f'"GET /v2/servers/detail HTTP/1.1" status: {status} len: 1893', "nova"))
        if 70 <= minute < 82:
            lines.append(_line(stamp, "error", "upstream timeout calling inventory", "api"))
        if 70 <= minute < 80:
            lines.append(_line(stamp, "error", "template missing for page", "web"))
    (home / "app.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(env, home / "app.jsonl", service=None)
    env.close()
    assembly = assemble(settings)
    yield assembly
    assembly.close()


def headline(answer: str) -> str:
    """The line after the scope line, without its label (issue 28)."""
    return answer_line(answer)[1]


def scope(answer: str) -> str:
    return answer.strip().split("\n\n")[0]


# -- 1. a window without data --------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        (
            "what went wrong yesterday at 7am?",
            "No service has data during 06:30–07:30: the data held covers 2026-07-07",
        ),
        ("昨天早上7点出了什么问题？", "06:30–07:30 内没有任何服务有数据：现有数据覆盖 2026-07-07"),
    ],
)
def test_a_window_without_data_says_where_the_data_lies(demo: Any, question: str, opening: str) -> None:
    result = demo.pipeline.run(question)
    assert headline(result.answer).startswith(opening), result.answer
    output = readable(result.self_evaluation)["verifier_evaluation"]["executor_structured_output"]
    assert len(output["missing_info"]) <= 3, output["missing_info"]  # not one gap per series and log
    assert not output.get("hypotheses"), "no runbook is matched to nothing"
    # nothing was judged: no line says no service changed
    assert "no service changed" not in result.answer, result.answer
    assert "()" not in result.answer and "（）" not in result.answer, "a gap names no empty arguments"


# -- 2. ranked by errors without an error series; a measure no service has ---------------------


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("Which service has the most errors?", "Ranked by ERROR log lines during "),
        ("哪个服务报错最多？", "按 "),
    ],
)
def test_errors_without_an_error_series_are_ranked_by_error_lines(logs_only: Any, question: str, opening: str) -> None:
    answer = logs_only.pipeline.run(question).answer
    first = headline(answer)
    assert first.startswith(opening), answer
    assert re.search(r"1\. api 12\b", first) and re.search(r"2\. web 10\b", first), first


@pytest.mark.parametrize(
    ("question", "opening"),
    [("which service uses the most memory?", "Cannot rank by memory"), ("哪个服务内存最高？", "无法按内存排序")],
)
def test_a_measure_no_service_has_cannot_rank(logs_only: Any, question: str, opening: str) -> None:
    answer = logs_only.pipeline.run(question).answer
    assert headline(answer).startswith(opening), answer


# -- 3. the scope line says how the period was chosen ------------------------------------------


def test_the_scope_line_says_the_latest_period_when_that_was_chosen(demo: Any) -> None:
    """A ranking without a time looks at the data's last hour (focus.py: most_recent)."""
    answer = demo.pipeline.run("Which service has the most errors?").answer
    assert "chose its latest period, 2026-07-07 15:00 – 2026-07-07 16:00" in scope(answer), answer
    assert "most anomalous" not in scope(answer)
    zh = demo.pipeline.run("哪个服务报错最多？").answer
    assert "最近的时段" in scope(zh) and "最异常" not in scope(zh), zh


@pytest.mark.parametrize(
    ("question", "period"),
    [("Which service is slowest?", "over 15:00–16:00"), ("哪个服务最慢", "15:00–16:00 的平均值")],
)
def test_a_ranking_without_a_time_ranks_the_period_the_scope_line_names(demo: Any, question: str, period: str) -> None:
    """The scope line says the latest hour was chosen; the levels are that hour's, not the
    week's (the demo's order-service averaged 923 ms over the week, 6041 ms in its last hour)."""
    answer = demo.pipeline.run(question).answer
    assert "15:00 – 2026-07-07 16:00" in scope(answer), answer
    first = headline(answer)
    assert period in first and "order-service 6040.98ms" in first, answer


# -- 4. a count of services ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "pattern"),
    [
        ("How many services were affected since 10:00?", r"^\d+ of the 6 services examined changed .*: \S+"),
        ("10点以后有多少个服务受影响？", r"^检查的 6 个服务中有 \d+ 个在 .*：\S+"),
    ],
)
def test_how_many_services_is_answered_with_how_many_changed(demo: Any, question: str, pattern: str) -> None:
    answer = demo.pipeline.run(question).answer
    assert re.search(pattern, headline(answer)), answer


def test_a_count_of_errors_is_no_count_of_services(demo: Any) -> None:
    answer = demo.pipeline.run("10点以后哪些报错？").answer
    assert not headline(answer).startswith("检查的"), answer


SERVICE_NOUNS_EN = ["services", "microservices", "components", "applications", "pods"]
SERVICE_NOUNS_ZH = ["服务", "微服务", "组件", "应用"]


@settings(max_examples=60, deadline=None)
@given(
    en=st.sampled_from(
        [
            "How many {n} were affected?",
            "how many {n} changed since 10:00",
            "How many of the {n} had problems today?",
            "what number of {n} broke?",
            "How many backend {n} are failing?",
        ]
    ),
    zh=st.sampled_from(
        ["有多少个{n}受影响？", "几个{n}出问题了", "受影响的{n}有几个？", "今天多少{n}异常", "异常的{n}一共多少个"]
    ),
    noun_en=st.sampled_from(SERVICE_NOUNS_EN),
    noun_zh=st.sampled_from(SERVICE_NOUNS_ZH),
)
def test_questions_counting_services_are_told_apart_however_worded(
    en: str, zh: str, noun_en: str, noun_zh: str
) -> None:
    assert counts_services(en.format(n=noun_en)), en
    assert counts_services(zh.format(n=noun_zh)), zh


@settings(max_examples=40, deadline=None)
@given(
    question=st.sampled_from(
        [
            "哪些报错？",
            "10点以后哪些报错？",
            "how many errors did payment-service log?",
            "payment-service 报了多少次错？",
            "多少条错误日志？",
            "订单服务有多少个错误",
            "how many times did order-service restart?",
            "which warnings did gateway log?",
            "几条服务日志提到超时",
        ]
    ),
)
def test_other_counts_are_no_count_of_services(question: str) -> None:
    assert not counts_services(question), question


# -- 5. "what changed?" without a change feed ------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("what changed?", "Changes cannot be checked: no change feed"),
        ("有什么变更？", "无法检查变更：没有导入变更记录"),
    ],
)
def test_what_changed_without_a_change_feed_says_it_cannot_be_checked(
    logs_only: Any, question: str, opening: str
) -> None:
    answer = logs_only.pipeline.run(question).answer
    first = headline(answer)
    assert first.startswith(opening), answer
    assert "api" in first or "api" in answer.split("\n\n")[2].splitlines()[1], "then what moved most"


# -- 6. "is X to blame?" of a quiet X ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Is redis to blame for checkout failing since 10:00?", "redis itself did not change beyond its own history"),
        ("10点以后支付失败，是不是 redis 的问题？", "redis 本身在"),
    ],
)
def test_a_quiet_named_service_is_said_unchanged_not_cleared(demo: Any, question: str, said: str) -> None:
    answer = demo.pipeline.run(question).answer
    first = headline(answer)
    # on the first line, or — when the yes or no and its cause fill it (issue 28) — the first key fact
    key = answer.split("\n\n")[2].splitlines()[1]
    assert said in first or (key.startswith("- ") and said in key), answer
    assert "points at" not in first and "指向" not in first


def test_the_evidence_cannot_tell_then_the_quiet_service_is_said_unchanged(logs_only: Any) -> None:
    first = headline(logs_only.pipeline.run("Is nova to blame for the api timeouts around 11:15?").answer)
    assert first.startswith("The evidence cannot tell whether nova is to blame. nova itself did not change"), first


# -- 7. the lines holding the failure asked about lead a "why" -----------------------------------------


@pytest.mark.parametrize(
    ("question", "opening"),
    [
        ("Why did nova return 404?", r'^nova logged 20 lines containing "404" during'),
        ("nova 为什么返回 404？", r"^nova 在 \S+ \S+ 至 \S+ \S+ 含「404」的日志共 20 条"),
    ],
)
def test_the_lines_holding_an_http_status_lead_a_why(logs_only: Any, question: str, opening: str) -> None:
    answer = logs_only.pipeline.run(question).answer
    assert re.search(opening, headline(answer)), answer


def test_a_business_word_does_not_lead(logs_only: Any) -> None:
    """下单's lines are mostly the feature working: the survey's answer leads, not their count."""
    answer = logs_only.pipeline.run("为什么 api 下单失败？").answer
    assert "下单" not in headline(answer).split("。")[0], answer


# -- 8. grammar ---------------------------------------------------------------------------------------


def test_the_onset_sentence_reads_as_english(demo: Any) -> None:
    """A suspect's change is worded "its p99 rose …": no phrase puts a possessive before it."""
    templates = _phrases()["en"].templates
    assert not [key for key, text in templates.items() if "'s {what}" in text]
    answer = demo.pipeline.run("when did the errors of payment-service start?").answer
    assert "'s its" not in answer, answer


def test_one_service_is_one_service(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home", embedded={"load_demo": False})
    env = EmbeddedEnvironment(settings.embedded_path, load_demo=False)
    lines = [_line(f"2026-07-07T10:{m:02d}:00Z", "info", "served request", "nova") for m in range(60)]
    (tmp_path / "nova.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(env, tmp_path / "nova.jsonl", service=None)
    env.close()
    assembly = assemble(settings)
    try:
        answers = [assembly.pipeline.run(q).answer for q in ("how many services were affected?", "what is wrong?")]
    finally:
        assembly.close()
    for answer in answers:
        assert not re.search(r"\b1 services\b", answer), answer
        assert "the 1 service with data in the window" in scope(answer), answer


def test_a_named_service_without_data_is_a_sentence_of_its_own_in_the_scope_line(demo: Any) -> None:
    en = scope(demo.pipeline.run("why does billing-service fail around 10:00?").answer)
    assert en.endswith(". billing-service has no data in the window."), en
    zh = scope(demo.pipeline.run("billing-service 今天10点为什么报错？").answer)
    assert zh.endswith("。billing-service 在窗口内没有数据。"), zh
