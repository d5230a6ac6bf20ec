"""The offline engine on the bundled demo day and on imported data: specific, useful,
and every number it states traceable to a cited tool output."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from tests.builders import readable
from veridiag.agents.engines import offline_roles
from veridiag.agents.offline.executor import _Execution
from veridiag.agents.offline.findings import Clock, Findings
from veridiag.agents.offline.planner import OfflinePlanner
from veridiag.agents.offline.skills import catalog, choose_skill
from veridiag.agents.offline.verifier import OfflineVerifier
from veridiag.agents.roles import ExecuteRequest
from veridiag.analysis.anomaly import AnomalyReport
from veridiag.config import Settings
from veridiag.contracts.material import ExecutorMaterial
from veridiag.contracts.plan import Plan
from veridiag.ingest.importers import import_logs, import_metrics_csv
from veridiag.pipeline import DiagnosisPipeline
from veridiag.pipeline.factory import assemble
from veridiag.store import SessionStore
from veridiag.text.cjk import detect_lang, has_cjk
from veridiag.text.render import iso
from veridiag.tools import QueryLogsArgs
from veridiag.tools.backends.embedded import EmbeddedEnvironment, LogRow, _logs
from veridiag.tools.demo import bundled_environment
from veridiag.tools.records import LogEvidence, MetricEvidence
from veridiag.tools.render import metrics_output
from veridiag.tools.results import ToolCallResult, ToolOutput

FAULTY = {
    "gateway-timeout-too-low": "gateway",
    "payment-pool-exhaustion": "payment-service",
    "inventory-memory-leak": "inventory-service",
    "order-bad-deploy": "order-service",
    "mysql-lock-waits": "mysql",
}
#: A number an answer states — not an evidence reference ("#104" names an invocation: its id is
#: no fact, and a cited output holding the same digits by chance is no grounding of it).
NUMBER = re.compile(r"(?<![A-Za-z_\d.\-#])\d+(?:\.\d+)?(?!\d)")


QUESTIONS = [(incident.id, question) for incident in bundled_environment().incidents for question in incident.questions]


@pytest.mark.parametrize(
    ("scenario", "question"),
    QUESTIONS,
    ids=[f"{s}-{'zh' if i % 2 == 0 else 'en'}" for i, (s, _q) in enumerate(QUESTIONS)],
)
def test_demo_scenarios_get_specific_grounded_answers(demo: Any, scenario: str, question: str) -> None:
    result = demo.pipeline.run(question)
    assert result.status == "completed" and result.verdict != "REJECT", result.answer
    evaluation = readable(result.self_evaluation)["verifier_evaluation"]
    allowed = {c["claim_id"] for c in evaluation["composer_input"]["allowed_claims"]}
    claims = [c for c in evaluation["executor_structured_output"]["claims"] if c["claim_id"] in allowed]
    cited = {i for c in claims for b in c["evidence_bindings"] for i in b["source_invocation_ids"]}
    invocations = demo.store.get_invocations(cited)
    tools = {invocation.tool_name for invocation in invocations.values()}
    assert {"query_metrics", "query_logs"} <= tools, f"{scenario}: cites {tools}"
    assert FAULTY[scenario] in result.answer
    corpus = "\n".join(i.output + "\n" + str(i.retrieval_details) for i in invocations.values())
    for number in NUMBER.findall(result.answer):
        assert number in corpus, f"{scenario}: {number} in the answer is in no cited output"
    # the inferred cause, when stated, is marked as an inference
    if any(c["claim_type"] == "root_cause" for c in claims):
        assert "推断" in result.answer or "inferred" in result.answer
    # runbook steps and causes come in the question's language
    output = evaluation["executor_structured_output"]
    from_runbooks = [a["action_text"] for a in output["recommended_actions"]]
    from_runbooks += [h["hypothesis_text"] for h in output["hypotheses"]]
    assert from_runbooks, f"{scenario}: no runbook step or cause"
    chinese = [text for text in from_runbooks if has_cjk(text)]
    assert chinese == from_runbooks if detect_lang(question) == "zh" else chinese == []


def test_a_period_longer_than_the_focus_day_is_written_with_its_dates(demo: Any) -> None:
    """The quiet metrics are read over the week's window while the focus is one hour: their
    period reads "2026-06-30 16:00 – 2026-07-07 16:00" (至 in Chinese), never "16:00–16:00"."""
    result = demo.pipeline.run("订单123支付失败，帮我看看原因")
    claims = readable(result.self_evaluation)["verifier_evaluation"]["executor_structured_output"]["claims"]
    texts = [c["claim_text"] for c in claims]
    assert any(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d (?:–|至) \d{4}-\d\d-\d\d \d\d:\d\d", t) for t in texts), texts
    assert not [t for t in texts if re.search(r"(?<![\d-] )(?<!\d)(\d\d:\d\d)–\1(?!:)", t)], texts
    focus_clock = Clock(with_date=False)
    start, end = datetime(2026, 6, 30, 16, 0, tzinfo=UTC), datetime(2026, 7, 7, 16, 0, tzinfo=UTC)
    assert focus_clock.span(start, end) == ("2026-06-30 16:00", "2026-07-07 16:00")
    assert focus_clock.span(start, start + timedelta(hours=1)) == ("16:00", "17:00")
    assert focus_clock.period(start, end, "en") == "2026-06-30 16:00 – 2026-07-07 16:00"
    assert focus_clock.period(start, end, "zh") == "2026-06-30 16:00 至 2026-07-07 16:00"
    assert focus_clock.period(start, start + timedelta(hours=1), "zh") == "16:00–17:00"


@pytest.mark.parametrize(
    ("question", "kind", "words"),
    [
        ("order-service 发布后报错", "deploy", "发布后"),
        ("why does order-service fail since the deploy?", "deploy", "since the deploy"),
        ("payment-service 改配置后变慢了", "config", "改配置后"),
        ("errors after the change?", "change", "after the change"),
        ("order-service 为什么报错", None, None),
    ],
)
def test_the_planner_reads_what_followed_a_change(question: str, kind: str | None, words: str | None) -> None:
    assert catalog().asked_change(question) == ((kind, words) if kind else None)


@pytest.mark.parametrize(
    ("question", "scope"),
    [
        ("order-service 发布后报错", "按问题中的「发布后」，选取 2026-07-07 14:00 那次变更之后的时段 2026-07-07 13:55"),
        (
            "why does order-service fail since the deploy?",
            'says "since the deploy", chose the period after the change at',
        ),
    ],
)
def test_after_the_deploy_is_the_episode_after_the_deploy_not_the_worst_one(
    demo: Any, question: str, scope: str
) -> None:
    """The order-service's worst hour is the 15:00 lock waits (×49); asked about "after the
    deploy", the answer is the 14:00 release and the errors that followed it."""
    result = demo.pipeline.run(question)
    assert result.verdict == "PASS", result.answer
    assert scope in result.answer.splitlines()[0]
    assert "v2.3.1" in result.answer and "ERR_DB_LOCK_TIMEOUT" not in result.answer
    plain = demo.pipeline.run("order-service 为什么报错")  # no change asked about: the worst episode
    assert "ERR_DB_LOCK_TIMEOUT" in plain.answer and "那次变更之后" not in plain.answer


def test_the_payment_answer_names_the_change_and_the_full_pool(demo: Any) -> None:
    result = demo.pipeline.run("订单123支付失败，帮我看看是什么原因")
    assert "order=123 ERR_TIMEOUT request timeout cost=5300ms" in result.answer
    assert "maximum-pool-size=50 (was 100)" in result.answer
    assert "50 connections" in result.answer  # a key fact: the series the cause names (issue 28)
    allowed = readable(result.self_evaluation)["verifier_evaluation"]["composer_input"]["allowed_claims"]
    assert any("hikaricp_connections_pending" in c["claim_text"] for c in allowed), "in the full list"
    # the matching runbook's step that asks whether the pool size changed is left out: the change shows it
    assert "查配置变更记录" not in result.answer and "对比 active 与 max" in result.answer


@pytest.mark.parametrize(
    ("question", "claim"),
    [
        (
            "inventory-service 为什么一直重启？",
            "inventory-service 的 pod_restarts_total 在 12:01、12:31、13:00 各增加 1 次（共 3 次）",
        ),
        (
            "Why does inventory-service keep restarting?",
            "pod_restarts_total of inventory-service increased 3 times (12:01, 12:31, 13:00; +1 each)",
        ),
    ],
)
def test_the_restarts_are_counted_as_people_count_them(demo: Any, question: str, claim: str) -> None:
    """Three OOM kills, each once, in the question's language — not a rate of 0.0033/s per
    restart — and the claim rests on the output line that states them."""
    result = demo.pipeline.run(question)
    assert result.verdict == "PASS" and claim in result.answer, result.answer
    assert "restarts/s" not in result.answer
    evaluation = readable(result.self_evaluation)["verifier_evaluation"]
    (stated,) = [c for c in evaluation["executor_structured_output"]["claims"] if c["claim_text"] == claim]
    assert stated["claim_id"] in {c["claim_id"] for c in evaluation["composer_input"]["allowed_claims"]}
    excerpts = [b["evidence_excerpt"] for b in stated["evidence_bindings"]]
    assert excerpts[0].startswith("increases per 1m: 3 restarts in total, 3 steps rose: +1 at 2026-07-07T12:01:00Z")
    assert excerpts[1:] == [f"2026-07-07T{at}:00Z 1 restarts" for at in ("12:01", "12:31", "13:00")]


def _counted(steps: dict[int, float]) -> tuple[ToolCallResult, MetricEvidence]:
    """A counter's increase per 1m step from 10:00 (``steps``: minute → increase), rendered as
    both backends render it."""
    start = datetime(2026, 7, 7, 10, 0, tzinfo=UTC)
    window = [(start + timedelta(minutes=m), steps.get(m, 0.0)) for m in range(30)]
    request = {
        "service": "batch",
        "metric": "jobs_failed_total",
        "start": iso(start),
        "end": iso(start + timedelta(minutes=30)),
    }
    rendered, evidence = metrics_output(
        request,
        service="batch",
        metric="jobs_failed_total",
        unit="",
        window=window,
        history=None,
        report=AnomalyReport(baseline=None, anomalies=[]),
        kind="counter",
        per_step=60,
    )
    output = ToolOutput(status="ok", text=rendered.text, evidence=[evidence])
    return ToolCallResult(invocation_id=7, tool_name="query_metrics", status="ok", output=output), evidence


@pytest.mark.parametrize(
    ("steps", "focus", "lang", "claim", "quotes"),
    [
        (
            {5: 2, 9: 1, 20: 3},
            (0, 30),
            "en",
            "jobs_failed_total of batch increased 3 times, 6 in total: 10:05 +2, 10:09 +1, 10:20 +3",
            4,
        ),
        (
            {5: 2, 9: 1, 20: 3},
            (0, 30),
            "zh",
            "batch 的 jobs_failed_total 在 3 个时间点共增加 6 次：10:05 +2、10:09 +1、10:20 +3",
            4,
        ),
        ({5: 2}, (0, 30), "en", "jobs_failed_total of batch increased by 2 at 10:05", 2),
        ({5: 2}, (0, 30), "zh", "batch 的 jobs_failed_total 在 10:05 增加 2 次", 2),
        # the focus holds some of the steps: the output's totals are not theirs, each step is quoted
        (
            {5: 2, 9: 1, 20: 3},
            (0, 10),
            "en",
            "jobs_failed_total of batch increased in these steps: 10:05 +2, 10:09 +1",
            2,
        ),
        ({5: 2, 9: 1, 20: 3}, (0, 10), "zh", "batch 的 jobs_failed_total 在以下时间点增加：10:05 +2、10:09 +1", 2),
    ],
)
def test_a_counter_s_steps_are_worded_from_its_output(
    steps: dict[int, float], focus: tuple[int, int], lang: str, claim: str, quotes: int
) -> None:
    result, evidence = _counted(steps)
    start = datetime(2026, 7, 7, 10, 0, tzinfo=UTC)
    findings = Findings(lang, Clock(with_date=False))
    findings.increases(result, evidence, (start + timedelta(minutes=focus[0]), start + timedelta(minutes=focus[1])))
    (stated,) = findings.claims
    assert stated.claim_text == claim
    excerpts = [b.evidence_excerpt for b in stated.evidence_bindings]
    assert len(excerpts) == quotes and all(e in result.output.text.split("\n") for e in excerpts)
    for number in NUMBER.findall(claim.replace("10:", "")):
        assert any(number in e for e in excerpts), f"{number} of the claim is in none of its excerpts"


def test_a_runbook_in_one_language_serves_both(tmp_path: Path) -> None:
    """A user's runbook with Chinese steps only (under a bilingual heading) still gives an
    English answer its next steps: the other language, rather than none."""
    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "pool.md").write_text(
        "---\nid: rb-db-pool-exhaustion\ntitle: 连接池 / Connection pool\nservices: [payment-service]\n"
        "symptoms: [连接池耗尽, ERR_TIMEOUT, HikariPool]\n---\n"
        "## 可能原因 Possible causes\n1. 上限被调低。\n\n## 排查步骤 Steps\n1. 先看 Grafana 面板 payments-db。\n",
        encoding="utf-8",
    )
    assembly = assemble(Settings(home=tmp_path / "home", knowledge={"user_dir": folder}))
    result = assembly.pipeline.run("Why did payment for order 123 fail?")
    output = readable(result.self_evaluation)["verifier_evaluation"]["executor_structured_output"]
    assert [a["action_text"] for a in output["recommended_actions"]] == ["先看 Grafana 面板 payments-db。"]
    assert output["hypotheses"][0]["hypothesis_text"].startswith("上限被调低。")


def test_imported_data_for_an_unknown_service(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = Settings(home=home)
    env = EmbeddedEnvironment(settings.embedded_path)
    start = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
    csv = tmp_path / "latency.csv"
    rows = ["timestamp,value"]
    for minute in range(240):
        value = 900 + minute if 120 <= minute < 150 else 110 + minute % 7
        rows.append(f"{(start + timedelta(minutes=minute)).strftime('%Y-%m-%dT%H:%M:%SZ')},{value}")
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    import_metrics_csv(env, csv, service="billing-api", metric="latency_p95_ms", unit="ms")
    log = tmp_path / "billing.log"
    lines = []
    for minute in range(240):
        moment = start + timedelta(minutes=minute)
        stamp = moment.strftime("%Y-%m-%d %H:%M:%S,000")
        lines.append(f"{stamp} INFO  [worker-1] billing.Invoice - invoice {1000 + minute} issued")
        if 120 <= minute < 150:
            lines.append(
                f"{stamp} ERROR [worker-2] billing.Ledger - ERR_LEDGER_LOCKED"
                f" ledger write blocked for invoice {1000 + minute}"
            )
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(env, log, service="billing-api")

    assembly = assemble(settings)
    result = assembly.pipeline.run("billing-api 从 14点 开始变慢，怎么回事？")
    assert result.verdict != "REJECT", result.answer
    assert readable(result.self_evaluation)["verifier_evaluation"]["executor_structured_output"] is not None
    plan = cast("dict[str, Any]", assembly.store.get_session(result.session_id).plan)  # type: ignore[union-attr]
    assert plan["skill"] == "generic" and plan["service"] == "billing-api"
    assert "latency_p95_ms" in result.answer and "ms" in result.answer
    assert re.search(r"1(0[2-4]\d|01\d) ?ms", result.answer), "the peak value of the anomaly"
    assert "14:" in result.answer, "the peak time"
    assert "ERR_LEDGER_LOCKED ledger write blocked" in result.answer, "the dominant error template's example"


NOON = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)


def _with_logs(tmp_path: Path, service: str, lines: list[str]) -> Settings:
    """Settings of a fresh home whose embedded store holds ``lines`` imported for ``service``."""
    settings = Settings(home=tmp_path / "home")
    log = tmp_path / f"{service}.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import_logs(EmbeddedEnvironment(settings.embedded_path), log, service=service)
    return settings


def test_logs_that_hold_warnings_and_no_errors_lead_with_the_warnings(tmp_path: Path) -> None:
    """Asked which warnings a service logged, the answer's headline is the warnings found, not
    the absence of ERROR lines stated beside them."""
    lines = []
    for minute in range(30):
        stamp = (NOON + timedelta(minutes=minute)).strftime("%Y-%m-%d %H:%M:%S,000")
        lines.append(f"{stamp} INFO  [worker-1] cache.Loader - loaded shard {minute}")
        if minute % 3 == 0:
            lines.append(f"{stamp} WARN  [worker-2] cache.Loader - shard {minute} evicted early: memory pressure")
    settings = _with_logs(tmp_path, "cache-api", lines)

    result = assemble(settings).pipeline.run("cache-api 在 2026-07-07 12:00 到 12:30 之间有哪些 WARN？")
    first = result.answer.strip().split("\n\n")[1]  # the headline, after the scope line
    assert "10 条 WARN" in first and "evicted early" in first, result.answer
    assert "没有 ERROR" in result.answer, "the absence is still stated, after the warnings"


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("为什么 payment-service 今天10点出现 ERR_TIMEOUT？", ["ERR_TIMEOUT"]),
        ("healthapp 22:15 到 22:20 之间 onStandStepChanged 出现了多少次？", ["onStandStepChanged"]),
        ('日志里 "Connection is not available" 出现了几次？', ["Connection is not available"]),
        # at most three, codes and identifiers before business words
        ("ledger_write blocked E-9999, then E1234 and ERR_X on billing-api", ["ledger_write", "E-9999", "E1234"]),
        # an HTTP status and a business word are searched as written (issue 26: 下单, wifi, 504)
        ("10:00-10:30 UTC+8 为什么 504 超时", ["504"]),
        ("订单123支付失败，帮我看看是什么原因", ["支付"]),
        ("why does the macbook keep losing wifi?", ["wifi"]),
        (
            "why does checkout throw java.sql.SQLTransientConnectionException?",
            ["java.sql.SQLTransientConnectionException", "checkout"],
        ),
        # what is looked up otherwise: services, metrics, the order id, times and zones; plain words;
        # a business word inside a service's name ("payment" in payment-service)
        ("why is hikaricp_connections_active high on payment-service?", []),
    ],
)
def test_the_planner_searches_the_logs_for_what_the_question_names(
    demo_env: EmbeddedEnvironment, question: str, terms: list[str]
) -> None:
    assert OfflinePlanner(demo_env).make_plan(question).terms == terms


def test_a_term_the_question_names_is_counted_in_the_logs(tmp_path: Path) -> None:
    """ "How many X lines?": the lines that hold the term, counted exactly, and — where the
    service's logs cover the window — that none holds a term the logs lack."""
    lines = []
    for second in range(0, 600, 5):
        stamp = (NOON + timedelta(seconds=second)).strftime("%Y-%m-%d %H:%M:%S,000")
        lines.append(f"{stamp} INFO  [steps] health.Step - onExtend {second}")
        if second % 15 == 0:
            lines.append(f"{stamp} INFO  [steps] health.Step - onStandStepChanged {3000 + second}")
    pipeline = assemble(_with_logs(tmp_path, "health-app", lines)).pipeline

    found = pipeline.run("health-app 在 2026-07-07 12:00 到 12:10 之间 onStandStepChanged 出现了多少次？")
    assert found.verdict == "PASS", found.answer
    headline = found.answer.strip().split("\n\n")[1]
    assert "含「onStandStepChanged」的日志共 40 条" in headline, found.answer

    lacking = pipeline.run("did health-app log any onStepReset between 2026-07-07 12:00 and 12:10?")
    assert 'logged no line containing "onStepReset" during 12:00–12:10' in lacking.answer, lacking.answer


@pytest.mark.parametrize(
    ("question", "skill"),
    [
        ("订单123支付失败", "payment_failure"),
        ("Why does /api/cart return 504?", "gateway_timeout"),
        ("inventory-service 为什么一直重启？", "restarts_memory"),
        ("Is the database slow?", "database_slow"),
        ("Why is search-api weird?", "generic"),
        ("Is the database why orders are slow?", "database_slow"),
    ],
)
def test_skill_choice(question: str, skill: str) -> None:
    assert choose_skill(question).id == skill


@pytest.mark.parametrize(
    ("question", "start", "explicit"),
    [
        ("10点以后支付很慢", "2026-07-07T10:00:00Z", True),
        ("why slow since 10:30?", "2026-07-07T10:30:00Z", True),
        ("最近30分钟报错", "2026-07-07T15:30:00Z", True),
        ("last 2 hours errors", "2026-07-07T14:00:00Z", True),
        ("8点半以后 504", "2026-07-07T08:30:00Z", True),
        ("支付失败", "2026-06-30T16:00:00Z", False),  # no time: a week of the data, its worst period chosen later
    ],
)
def test_time_windows_from_the_question(
    demo_env: EmbeddedEnvironment, question: str, start: str, explicit: bool
) -> None:
    plan = OfflinePlanner(demo_env).make_plan(question)
    assert (plan.start, plan.end, plan.explicit_time) == (start, "2026-07-07T16:00:00Z", explicit)


def test_order_and_service_slots(demo_env: EmbeddedEnvironment) -> None:
    plan = OfflinePlanner(demo_env).make_plan("order #A-77 failed on payment-service")
    assert (plan.order_id, plan.service) == ("A-77", "payment-service")


def test_offline_verifier_labels(tmp_path: Path) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 's.db'}")
    session = store.create_session("q")
    log = store.record_invocation(
        session_id=session.id,
        tool_name="query_logs",
        arguments={"service": "pay"},
        status="ok",
        output="matched 2 lines\n2026-07-07T10:01:02Z ERROR pay order=1 ERR_TIMEOUT cost=5300ms",
        retrieval_details={"matched": 2},
    )
    verifier = OfflineVerifier(store)

    def label(text: str, excerpt: str, **extra: Any) -> str:
        claim = {
            "claim_id": "c",
            "claim_type": extra.get("claim_type", "symptom"),
            "claim_text": text,
            "support_level": extra.get("support_level", "direct"),
            "evidence_bindings": [
                {
                    "tool_name": "query_logs",
                    "source_invocation_ids": [extra.get("cite", log.id)],
                    "evidence_excerpt": excerpt,
                }
            ],
        }
        return verifier.judge(ExecutorMaterial.read({"claims": [claim]}).claims[0], {log.id})[0]

    assert label("订单1出现 ERR_TIMEOUT，耗时 5300ms。", "order=1 ERR_TIMEOUT cost=5300ms") == "direct_observation"
    assert label("订单1出现 ERR_TIMEOUT。", "order 1 had ERR_TIMEOUT cost=5300ms") == "reasonable_inference"
    assert label("ERR_TIMEOUT 是唯一原因。", "order=1 ERR_TIMEOUT cost=5300ms", claim_type="root_cause") == "overstated"
    assert label("订单1出现 ERR_DB_DOWN。", "order=1 ERR_TIMEOUT cost=5300ms") == "external_unknown"
    assert label("订单1耗时 7100ms。", "order=1 ERR_TIMEOUT cost=7100ms") == "contradicted"
    assert label("没有任何 ERROR 日志。", "matched 2 lines") == "contradicted"
    assert label("pay logged no ERROR lines.", "matched 2 lines") == "contradicted"
    # A negation of something else, or scoped to a later time, denies nothing the call matched.
    for other in (
        "订单1几乎没有回收，出现 ERR_TIMEOUT。",
        "订单1 ERR_TIMEOUT，提示没有可用的实例。",
        "回滚后没有再出现 ERR_TIMEOUT。",
    ):
        assert label(other, "order=1 ERR_TIMEOUT cost=5300ms") != "contradicted", other
    assert label("回滚后没有错误日志。", "matched 2 lines") != "contradicted"
    assert label("订单1出现 ERR_TIMEOUT。", "order=1 ERR_TIMEOUT", cite=9999) == "unsupported"


def test_no_tools_means_no_claims(tmp_path: Path, demo_env: EmbeddedEnvironment) -> None:
    store = SessionStore(f"sqlite:///{tmp_path / 's.db'}")
    result = DiagnosisPipeline(store, offline_roles(demo_env, store)).run("订单123支付失败")
    assert result.verdict == "LOW_CONFID" and "没有配置任何证据工具" in result.answer


def test_counts_of_a_search_read_only_in_part_are_never_stated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``query_logs`` output that read only the first matches: its counts are not the
    window's, so the executor states no count from it (the same call read whole does)."""
    start = datetime(2026, 7, 7, 12, 0, tzinfo=UTC)
    env = EmbeddedEnvironment(tmp_path / "e.db", load_demo=False)
    env.add_logs(
        LogRow(start + timedelta(seconds=i), "pay", "ERROR", f"ERR_LEDGER order {i}", f"ERR_LEDGER order {i}")
        for i in range(30)
    )
    args = QueryLogsArgs(
        service="pay",
        level="ERROR",
        query="ERR_LEDGER",
        start=start.isoformat(),
        end=(start + timedelta(hours=1)).isoformat(),
    )

    def stated() -> list[str]:
        output = env.query_logs(args)
        (evidence,) = output.evidence
        assert isinstance(evidence, LogEvidence) and evidence.matched == 30
        findings = Findings("en", Clock(with_date=False))
        request = ExecuteRequest(question="", lang="en", plan=Plan(), round=1, tools=None)
        execution = _Execution(request, None, findings, (start, start), [], ["pay"])
        result = ToolCallResult(invocation_id=1, tool_name="query_logs", status="ok", output=output)
        execution._state_logs([(result, evidence)])
        return [claim.claim_text for claim in findings.claims]

    (whole,) = stated()
    assert "logged 30 ERROR lines" in whole
    monkeypatch.setattr(_logs, "LOOKUP_CAP", 10)
    assert stated() == []
