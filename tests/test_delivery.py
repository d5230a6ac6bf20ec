"""Posting verified answers to chat: each destination's payload as its vendor documents it
(checked by a real HTTP receiver on a free port), signatures, size limits, retries and their
record on the session, redaction, zh + en, and `ask --format markdown` being what bots get."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from typer.testing import CliRunner

from tests.builders import GHP, billing_environment
from tests.fake_chat import Received, Receiver, running_receiver
from veridiag.api import create_app
from veridiag.cli.app import app
from veridiag.config import DeliverySettings, DestinationSettings, Settings
from veridiag.contracts.answer import AnswerDocument, ClaimItem, EvidenceItem
from veridiag.contracts.composer import ActionItem, AllowedHypothesis
from veridiag.contracts.delivery import AnswerReport, DeliveryAttempt, ReportEvidence, ReportFact
from veridiag.delivery import Limit, build_report, deliver_session, render_markdown, session_report
from veridiag.delivery.compact import TARGET_BYTES
from veridiag.delivery.destination import Attempt, Destination
from veridiag.delivery.dingtalk import BODY_BYTES as DINGTALK_BODY_BYTES
from veridiag.delivery.feishu import BODY_BYTES as FEISHU_BODY_BYTES
from veridiag.delivery.markdown import render_compact
from veridiag.delivery.markup import commonmark, mrkdwn
from veridiag.delivery.send import stored_report
from veridiag.delivery.slack import MAX_BLOCKS, MESSAGE_BLOCKS, MESSAGE_BYTES, SECTION_CHARS, Slack
from veridiag.delivery.webhook import escaped_report
from veridiag.delivery.wecom import CONTENT_BYTES
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.pipeline.report import answer_document, stored_document
from veridiag.pipeline.service import DiagnosisResult
from veridiag.redaction import default_redactor
from veridiag.store import SessionStore

SECRET = "Pl4nted-S3cret-9f2"
ZH = "billing-api 从 14点 开始报错，怎么回事？"
EN = "Why does billing-api fail since 14:00?"
WORKBENCH = "https://veridiag.example.com"
runner = CliRunner()


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    with running_receiver() as state:
        yield state


def destinations(url: str) -> list[dict[str, Any]]:
    """One of each kind, signed where the kind signs, all pointed at the receiver."""
    return [
        {"name": "slack-hook", "kind": "slack", "url": f"{url}/slack-hook/T0/B0/XYZ"},
        {"name": "slack-bot", "kind": "slack", "url": f"{url}/slack-api", "token": "xoxb-1-2", "channel": "C123"},
        {"name": "feishu", "kind": "feishu", "url": f"{url}/feishu/hook/abc", "secret": "feishu-secret"},
        {"name": "dingtalk", "kind": "dingtalk", "url": f"{url}/dingtalk?access_token=tok", "secret": "SECding"},
        {"name": "wecom", "kind": "wecom", "url": f"{url}/wecom/send?key=wk"},
        {"name": "hook", "kind": "webhook", "url": f"{url}/hook", "secret": "hook-secret", "token": "hook-token"},
    ]


def settings_for(home: Path, url: str, **delivery: Any) -> Settings:
    return Settings(
        home=home,
        embedded={"load_demo": False},
        delivery={"destinations": destinations(url), "workbench_url": WORKBENCH, "backoff_seconds": 0, **delivery},
    )


@dataclass
class Sessions:
    home: Path
    assembly: Assembly
    zh: DiagnosisResult
    en: DiagnosisResult


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Sessions:
    """The billing incident with a planted secret in its logs, asked in Chinese and in English."""
    root = tmp_path_factory.mktemp("delivery")
    home = root / "home"
    billing_environment(home, root, SECRET)
    assembly = assemble(Settings(home=home, embedded={"load_demo": False}))
    zh, en = assembly.pipeline.run(ZH), assembly.pipeline.run(EN)
    assert zh.verdict == en.verdict == "PASS", (zh.answer, en.answer)
    return Sessions(home, assembly, zh, en)


def by_path(received: list[Received], prefix: str) -> list[Received]:
    return [r for r in received if r.path.startswith(prefix)]


def report_of(sessions: Sessions, result: DiagnosisResult, question: str, url: str = "http://unused") -> AnswerReport:
    settings = settings_for(sessions.home, url)
    lang: Literal["zh", "en"] = "zh" if result is sessions.zh else "en"
    return session_report(settings, answer_document(result, sessions.assembly.engine), question, lang)


def posted_report(sessions: Sessions, result: DiagnosisResult, url: str) -> AnswerReport:
    """The report ``deliver_session`` posts: ranked by the stored composer input, with the trend."""
    store = sessions.assembly.store
    session = store.get_session(result.session_id)
    assert session is not None
    document = answer_document(result, sessions.assembly.engine)
    return stored_report(store, settings_for(sessions.home, url), session, document)


# -- the report ---------------------------------------------------------------------------


def test_only_allowed_claims_are_facts_and_hypotheses_are_labelled() -> None:
    evidence = [EvidenceItem(invocation_id=7, tool_name="query_logs", excerpt="ERROR pool exhausted")]
    document = AnswerDocument(
        session_id="s-1",
        verdict="LOW_CONFID",
        final_answer="Time window: 10:00 – 11:00.\n\nMore text.",
        answer_source="template",
        claims=[
            ClaimItem(
                claim_id="c1",
                claim_text="pool exhausted",
                verification="direct_observation",
                allowed=True,
                evidence=evidence,
            ),
            ClaimItem(
                claim_id="c2",
                claim_text="the DBA broke it",
                verification="unsupported",
                allowed=False,
                evidence=evidence,
            ),
        ],
        hypotheses=[AllowedHypothesis(hypothesis_text="slow SQL holds connections", needed_evidence=["slow log"])],
        missing_info=["no database metrics"],
        recommended_actions=[ActionItem(action_text="check the pool size")],
        gatekeeper=None,
        rounds=1,
        engine={},
        status="completed",
        error=None,
    )
    report = build_report(document, question="why?", lang="en", link="http://x/s-1", redactor=default_redactor())
    assert [f.text for f in report.facts] == ["pool exhausted"] and report.unconfirmed == 1
    assert report.summary == "Time window: 10:00 – 11:00."
    markdown = render_markdown(report)
    assert "the DBA broke it" not in markdown
    assert "1. pool exhausted (observed)" in markdown and "`ERROR pool exhausted`" in markdown
    assert "- pool exhausted (evidence #7)" in markdown  # a key fact, with its evidence reference
    assert "- Hypothesis: slow SQL holds connections — would be confirmed by: slow log" in markdown
    order = ["**Key facts**", "Hypotheses (not confirmed)", "<details>", "1. pool exhausted", "</details>"]
    assert [markdown.index(mark) for mark in order] == sorted(markdown.index(mark) for mark in order)
    assert "- no database metrics" in markdown and "- check the pool size" in markdown
    assert markdown.startswith("**LOW_CONFID · low confidence") and markdown.endswith("(http://x/s-1)")


def test_chinese_and_english_reports_are_worded_in_their_language(sessions: Sessions) -> None:
    zh = render_markdown(report_of(sessions, sessions.zh, ZH))
    en = render_markdown(report_of(sessions, sessions.en, EN))
    assert zh.startswith("**PASS · 已验证**") and "**关键事实**" in zh and "在工作台查看会话" in zh
    assert "<summary>全部已确认的事实及证据（" in zh and "（证据 #" in zh
    assert en.startswith("**PASS · verified**") and "**Key facts**" in en
    assert "<summary>Every confirmed fact with its evidence (" in en and " (evidence #" in en
    for markdown, result in ((zh, sessions.zh), (en, sessions.en)):
        assert f"({WORKBENCH}/sessions/{result.session_id}?lang=" in markdown
        assert "[REDACTED:password]" in markdown and SECRET not in markdown


def test_the_chat_summary_opens_with_the_headline_built_from_allowed_claims(sessions: Sessions) -> None:
    for result, question in ((sessions.zh, ZH), (sessions.en, EN)):
        document = answer_document(result, sessions.assembly.engine)
        assert document.headline and document.headline in document.final_answer
        allowed = [c.claim_text or "" for c in document.claims if c.allowed]
        # the headline quotes allowed claims: each of its clauses lies in one of them
        assert any(text and text[:40] in document.headline for text in allowed)
        summary = report_of(sessions, result, question).summary
        scope, headline = summary.split("\n\n")
        assert document.final_answer.startswith(scope) and headline == document.headline


def test_the_stored_session_reads_back_as_the_document_ask_printed(sessions: Sessions) -> None:
    stored = sessions.assembly.store.get_session(sessions.zh.session_id)
    assert stored is not None
    document = stored_document(stored, sessions.assembly.engine)
    assert document == answer_document(sessions.zh, sessions.assembly.engine)
    failed = stored.model_copy(update={"status": "failed", "verdict": None})
    assert stored_document(failed, {}) is None


def test_a_long_answer_is_cut_with_the_verdict_and_link_kept() -> None:
    fact = ReportFact(
        claim_id="c",
        text="payment-service 的 http_error_percent 异常升高 " * 40,
        verification="direct_observation",
        evidence=[ReportEvidence(invocation_id=1, tool_name="query_logs", excerpt="ERROR x " * 300)] * 12,
    )
    report = AnswerReport(
        session_id="s-long",
        question="为什么" * 2000,
        lang="zh",
        status="completed",
        verdict="REJECT",
        summary="时间窗口" * 500,
        facts=[fact] * 120,
        link="http://wb/sessions/s-long",
        key_facts=["c"],
    )
    wecom = render_markdown(report, Limit(CONTENT_BYTES, "bytes"))
    assert len(wecom.encode()) <= CONTENT_BYTES
    assert wecom.startswith("**REJECT · 证据不支持结论**") and wecom.endswith("(http://wb/sessions/s-long)")
    assert "…" in wecom
    payload = _request(Slack(), report)
    shown: list[Any] = payload["blocks"]
    assert len(shown) <= MESSAGE_BLOCKS <= MAX_BLOCKS and len(json.dumps(payload, ensure_ascii=False)) <= MESSAGE_BYTES
    header = json.dumps(shown[0], ensure_ascii=False)
    assert shown[0]["type"] == "rich_text" and "REJECT" in header and "证据不支持结论" in header
    assert shown[-1]["type"] == "actions"
    assert shown[-1]["elements"][0]["url"] == "http://wb/sessions/s-long"
    texts = [e["text"] for b in shown if b["type"] == "rich_text" for e in b["elements"][0]["elements"]]
    assert all(len(t) <= SECTION_CHARS for t in texts) and any("…" in t for t in texts)
    assert any("见会话" in json.dumps(b, ensure_ascii=False) for b in shown[-3:])
    assert all(len(b["elements"]) <= 10 for b in shown if b.get("type") == "context")


# -- each destination --------------------------------------------------------------------


def test_every_destination_gets_its_documented_payload(sessions: Sessions, receiver: Receiver) -> None:
    settings = settings_for(sessions.home, receiver.url)
    results = deliver_session(sessions.assembly.store, settings, sessions.zh.session_id, sleep=_no_wait)
    assert [(r.destination, r.outcome, r.attempts) for r in results] == [
        (name, "delivered", 1) for name in ("slack-hook", "slack-bot", "feishu", "dingtalk", "wecom", "hook")
    ]
    report = posted_report(sessions, sessions.zh, receiver.url)
    link = f"{WORKBENCH}/sessions/{sessions.zh.session_id}?lang=zh"
    assert report.first_line and 0 < len(report.key_facts) <= 5 and report.trend is not None

    slack_hook, slack_bot = by_path(receiver.received, "/slack-hook")[0], by_path(receiver.received, "/slack-api")[0]
    for sent in (slack_hook, slack_bot):
        _assert_compact_slack(sent, report, link)
    assert "channel" not in slack_hook.json() and "authorization" not in {k.lower() for k in slack_hook.headers}
    assert slack_bot.json()["channel"] == "C123" and slack_bot.headers["Authorization"] == "Bearer xoxb-1-2"

    feishu = by_path(receiver.received, "/feishu")[0].json()
    assert feishu["msg_type"] == "interactive" and feishu["card"]["header"]["template"] == "green"
    expected = base64.b64encode(
        hmac.new(f"{feishu['timestamp']}\nfeishu-secret".encode(), b"", hashlib.sha256).digest()
    )
    assert feishu["sign"] == expected.decode()
    assert abs(int(feishu["timestamp"]) - datetime.now(UTC).timestamp()) < 60
    markdown = feishu["card"]["elements"][0]
    compact = render_compact(report, Limit(TARGET_BYTES, "bytes"), head=False)
    assert markdown["tag"] == "markdown" and markdown["content"] == compact
    assert feishu["card"]["header"]["title"]["content"].startswith("✅ PASS · 已验证 · " + report.first_line[:40])
    assert len(by_path(receiver.received, "/feishu")[0].body) <= FEISHU_BODY_BYTES
    assert feishu["card"]["elements"][1]["actions"][0]["url"] == link

    dingtalk = by_path(receiver.received, "/dingtalk")[0]
    timestamp, sign = dingtalk.query["timestamp"][0], dingtalk.query["sign"][0]
    digest = hmac.new(b"SECding", f"{timestamp}\nSECding".encode(), hashlib.sha256).digest()
    assert dingtalk.query["access_token"] == ["tok"] and sign == base64.b64encode(digest).decode()
    assert dingtalk.json()["msgtype"] == "markdown"
    assert dingtalk.json()["markdown"]["text"] == render_compact(report, Limit(TARGET_BYTES, "bytes"))
    assert (
        dingtalk.json()["markdown"]["title"].startswith("✅ PASS · 已验证")
        and len(dingtalk.body) <= DINGTALK_BODY_BYTES
    )

    wecom = by_path(receiver.received, "/wecom")[0]
    content = wecom.json()["markdown"]["content"]
    assert wecom.query["key"] == ["wk"] and wecom.json()["msgtype"] == "markdown"
    assert (
        len(content.encode()) <= CONTENT_BYTES and content.startswith("**✅ PASS · 已验证** · **") and link in content
    )
    assert commonmark(report.first_line) in content

    hook = by_path(receiver.received, "/hook")[0]
    payload = hook.json()
    assert payload["type"] == "veridiag.answer" and payload["report"] == escaped_report(report)
    assert AnswerReport.model_validate(payload["report"]).session_id == report.session_id
    assert payload["markdown"] == render_markdown(report)
    signed = f"{hook.headers['webhook-id']}.{hook.headers['webhook-timestamp']}.".encode() + hook.body
    mac = base64.b64encode(hmac.new(b"hook-secret", signed, hashlib.sha256).digest()).decode()
    assert hook.headers["webhook-signature"] == f"v1,{mac}" and hook.headers["Authorization"] == "Bearer hook-token"

    stored = sessions.assembly.store.get_session(sessions.zh.session_id)
    assert stored is not None
    recorded = [DeliveryAttempt.model_validate(d) for d in stored.deliveries[-6:]]
    assert [(a.destination, a.outcome, a.status_code) for a in recorded] == [
        (r.destination, "delivered", 200) for r in results
    ]


def test_a_planted_secret_reaches_no_payload(sessions: Sessions, receiver: Receiver) -> None:
    """The logs carried a password and a GitHub token (redacted at the tool boundary); the
    question itself carries one too, which only the delivery's redaction can catch."""
    store = sessions.assembly.store
    asked = sessions.assembly.pipeline.run(f"billing-api 从 14点 开始报错 password={SECRET} 怎么回事？")
    settings = settings_for(sessions.home, receiver.url)
    deliver_session(store, settings, asked.session_id, sleep=_no_wait)
    deliver_session(store, settings, sessions.en.session_id, sleep=_no_wait)
    assert len(receiver.received) == 12
    for sent in receiver.received:
        everything = sent.body.decode() + sent.path + json.dumps(sent.query) + json.dumps(sent.headers)
        assert SECRET not in everything and GHP not in everything, sent.path
    assert all("[REDACTED:password]" in sent.body.decode() for sent in receiver.received)


# -- retries and their record -------------------------------------------------------------


def test_a_503_is_retried_and_both_attempts_are_on_the_session(
    sessions: Sessions, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver.script["/hook"] = [(503, b"busy")]
    receiver.script["/wecom/send"] = [(200, b'{"errcode": 45009, "errmsg": "api freq out of limit"}')]
    receiver.script["/slack-hook/T0/B0/XYZ"] = [(429, b"rate_limited")]
    session_id = sessions.en.session_id
    waits: list[float] = []
    settings = settings_for(sessions.home, receiver.url, backoff_seconds=0.5, max_backoff_seconds=2)
    results = deliver_session(
        sessions.assembly.store, settings, session_id, ["hook", "wecom", "slack-hook"], sleep=waits.append
    )
    assert [(r.outcome, r.attempts) for r in results] == [("delivered", 2)] * 3
    assert len(waits) == 3 and all(0 <= w <= 2 for w in waits)
    attempts = [DeliveryAttempt.model_validate(d) for d in _session(sessions, session_id).deliveries[-6:]]
    assert [(a.destination, a.attempt, a.outcome, a.status_code) for a in attempts] == [
        ("hook", 1, "retrying", 503),
        ("hook", 2, "delivered", 200),
        ("wecom", 1, "retrying", 200),
        ("wecom", 2, "delivered", 200),
        ("slack-hook", 1, "retrying", 429),
        ("slack-hook", 2, "delivered", 200),
    ]
    assert attempts[2].error == "errcode 45009: api freq out of limit"

    # `veridiag audit` and the API show them
    monkeypatch.setenv("VERIDIAG_HOME", str(sessions.home))
    monkeypatch.setenv("VERIDIAG_EMBEDDED__LOAD_DEMO", "false")
    shown = runner.invoke(app, ["audit", session_id])
    assert shown.exit_code == 0, shown.output
    assert "delivery hook (webhook) attempt 1: retrying HTTP 503" in shown.stdout
    assert "delivery hook (webhook) attempt 2: delivered HTTP 200" in shown.stdout
    client = TestClient(
        create_app(Settings(home=Path("/nonexistent")), assembly=sessions.assembly), base_url="http://localhost"
    )
    audit = client.get(f"/api/v1/sessions/{session_id}/audit").json()
    assert [d["outcome"] for d in audit["session"]["deliveries"][-6:]] == [a.outcome for a in attempts]


def test_a_400_is_not_retried_and_is_recorded_failed(sessions: Sessions, receiver: Receiver) -> None:
    receiver.script["/slack-api"] = [(200, b'{"ok": false, "error": "channel_not_found"}')]
    receiver.script["/feishu/hook/abc"] = [(200, b'{"code": 19021, "msg": "sign match fail"}')]
    receiver.script["/hook"] = [(400, b"bad")]
    settings = settings_for(sessions.home, receiver.url, max_attempts=5)
    results = deliver_session(
        sessions.assembly.store, settings, sessions.zh.session_id, ["slack-bot", "feishu", "hook"], sleep=_no_wait
    )
    assert [(r.outcome, r.attempts, r.error) for r in results] == [
        ("failed", 1, "slack: channel_not_found"),
        ("failed", 1, "code 19021: sign match fail"),
        ("failed", 1, "HTTP 400"),
    ]
    assert len(receiver.received) == 3
    last = [DeliveryAttempt.model_validate(d) for d in _session(sessions, sessions.zh.session_id).deliveries[-3:]]
    assert [(a.outcome, a.status_code) for a in last] == [("failed", 200), ("failed", 200), ("failed", 400)]


def test_an_unreachable_receiver_is_retried_to_the_limit_without_leaking_its_url(sessions: Sessions) -> None:
    settings = Settings(
        home=sessions.home,
        embedded={"load_demo": False},
        delivery={
            "destinations": [{"kind": "wecom", "url": "http://127.0.0.1:9/cgi-bin/webhook/send?key=K3y-s3cr3t"}],
            "max_attempts": 3,
            "timeout_seconds": 2,
        },
    )
    waits: list[float] = []
    [result] = deliver_session(sessions.assembly.store, settings, sessions.en.session_id, sleep=waits.append)
    assert (result.outcome, result.attempts, len(waits)) == ("failed", 3, 2)
    attempts = [DeliveryAttempt.model_validate(d) for d in _session(sessions, sessions.en.session_id).deliveries[-3:]]
    assert [a.outcome for a in attempts] == ["retrying", "retrying", "failed"]
    assert all(a.status_code is None and a.error and "K3y-s3cr3t" not in a.error for a in attempts)


# -- the command line --------------------------------------------------------------------


def test_ask_format_markdown_is_what_the_bots_are_sent(
    sessions: Sessions, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VERIDIAG_HOME", str(sessions.home))
    monkeypatch.setenv("VERIDIAG_EMBEDDED__LOAD_DEMO", "false")
    monkeypatch.setenv("VERIDIAG_DELIVERY__DESTINATIONS", json.dumps(destinations(receiver.url)))
    monkeypatch.setenv("VERIDIAG_DELIVERY__WORKBENCH_URL", WORKBENCH)
    for name in ("VERIDIAG_ENGINE", "VERIDIAG_LLM__DEFAULT__MODEL"):
        monkeypatch.delenv(name, raising=False)
    asked = runner.invoke(app, ["ask", EN, "--format", "markdown", "--post-to", "hook", "--post-to", "wecom"])
    assert asked.exit_code == 0, asked.output
    markdown = asked.stdout.removesuffix("\n")
    [hook] = by_path(receiver.received, "/hook")
    assert hook.json()["markdown"] == markdown and markdown.startswith("**PASS · verified**")
    session_id = hook.json()["report"]["session_id"]

    # re-posting the stored session sends the same report
    again = runner.invoke(app, ["deliver", session_id, "--to", "hook"])
    assert again.exit_code == 0, again.output
    assert "posted to hook (webhook, 1 attempt)" in again.stderr
    assert by_path(receiver.received, "/hook")[1].json()["report"] == hook.json()["report"]

    unknown = runner.invoke(app, ["ask", EN, "--post-to", "nowhere"])
    assert unknown.exit_code == 2 and "no destination named nowhere" in unknown.stderr
    missing = runner.invoke(app, ["deliver", "s-000000000000"])
    assert missing.exit_code == 2 and "no session" in missing.stderr
    receiver.script["/hook"] = [(404, b"gone")]
    refused = runner.invoke(app, ["deliver", session_id, "--to", "hook"])
    assert refused.exit_code == 1 and "not posted to hook (webhook, 1 attempt): HTTP 404" in refused.stderr


# -- settings and the store ---------------------------------------------------------------


def test_destination_settings_read_secrets_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAM_HOOK", "https://hooks.slack.com/services/T/B/x")
    target = DestinationSettings.model_validate({"kind": "slack", "url": "${TEAM_HOOK}"})
    assert target.name == "slack" and target.url is not None
    assert target.url.get_secret_value() == "https://hooks.slack.com/services/T/B/x" and "hooks" not in repr(target)
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(ValidationError, match="NOT_SET_ANYWHERE is not set"):
        DestinationSettings.model_validate({"kind": "wecom", "url": "${NOT_SET_ANYWHERE}"})
    with pytest.raises(ValidationError, match="bot token and a channel"):
        DestinationSettings.model_validate({"kind": "slack", "token": "xoxb-1"})
    with pytest.raises(ValidationError, match="needs a url"):
        DestinationSettings.model_validate({"kind": "dingtalk", "secret": "SEC"})
    with pytest.raises(ValidationError, match="unique"):
        DeliverySettings.model_validate(
            {"destinations": [{"kind": "wecom", "url": "a"}, {"kind": "wecom", "url": "b"}]}
        )


def test_delivery_attempts_append_in_order_and_stay_out_of_listings(store_url: str) -> None:
    store = SessionStore(store_url)
    session = store.create_session("q")
    for number in (1, 2, 3):
        attempt = DeliveryAttempt(
            destination="team", kind="slack", attempt=number, at=datetime.now(UTC), outcome="retrying"
        )
        store.record_delivery(session.id, attempt)
    stored = store.get_session(session.id)
    assert stored is not None and [d["attempt"] for d in stored.deliveries] == [1, 2, 3]
    assert stored.updated_at == session.updated_at
    listed = next(s for s in store.list_sessions(limit=1000) if s.id == session.id)
    assert listed.deliveries == []
    with pytest.raises(KeyError):
        store.record_delivery("s-nothere", attempt)


def _session(sessions: Sessions, session_id: str) -> Any:
    stored = sessions.assembly.store.get_session(session_id)
    assert stored is not None
    return stored


def _no_wait(_seconds: float) -> None:
    pass


def _assert_compact_slack(sent: Received, report: AnswerReport, link: str) -> None:
    """One compact Slack message: badge and first line first, at most five facts, the
    sparkline, the button last, within the message's blocks and bytes."""
    payload = sent.json()
    assert payload["text"].startswith("✅ PASS · 已验证") and len(payload["blocks"]) <= MESSAGE_BLOCKS
    assert len(sent.body) <= MESSAGE_BYTES
    header, *_, button = payload["blocks"]
    spans = header["elements"][0]["elements"]
    assert header["type"] == "rich_text" and spans[0]["text"] == "✅ PASS · 已验证"
    assert spans[-1]["text"] == mrkdwn(report.first_line) and spans[-1]["style"] == {"bold": True}
    assert button["type"] == "actions" and button["elements"][0]["url"] == link
    items = [e["text"] for b in payload["blocks"] if b["type"] == "rich_text" for e in b["elements"][0]["elements"]]
    facts = [line for text in items for line in text.split("\n") if line.split(". ", 1)[0].isdigit()]
    assert 0 < len(facts) <= len(report.key_facts) and all(len(text) <= SECTION_CHARS for text in items)
    assert any(any(bar in json.dumps(b, ensure_ascii=False) for bar in "▁█") for b in payload["blocks"])


def _request(destination: Destination, report: AnswerReport) -> Any:
    target = DestinationSettings(kind=destination.id, url="https://hooks.example/x")
    return json.loads(destination.request(report, target, Attempt("d-1", 1, 1_800_000_000.0)).body)


def test_audit_counts_an_unreadable_delivery_record_instead_of_crashing(
    sessions: Sessions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored attempt a later version or a hand edit broke is counted by ``veridiag audit``."""
    session_id = sessions.en.session_id
    good = DeliveryAttempt(destination="d", kind="webhook", attempt=1, at=datetime.now(UTC), outcome="failed")
    sessions.assembly.store.record_delivery(session_id, good)
    with sessions.assembly.store.engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE diagnosis_session SET deliveries = json_insert(deliveries, '$[#]', json('{\"destination\": 1}'))"
            " WHERE id = ?",
            (session_id,),
        )
    monkeypatch.setenv("VERIDIAG_HOME", str(sessions.home))
    try:
        shown = runner.invoke(app, ["audit", session_id])
    finally:  # the module's other tests read this session's attempts: take the broken one out
        with sessions.assembly.store.engine.begin() as connection:
            connection.exec_driver_sql(
                "UPDATE diagnosis_session SET deliveries = json_remove(deliveries, '$[#-1]') WHERE id = ?",
                (session_id,),
            )
    assert shown.exit_code == 0, shown.output
    assert "1 stored attempt(s) could not be read" in shown.output and "delivery d (webhook)" in shown.output
