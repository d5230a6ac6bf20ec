"""Workbench pages rendered server-side: languages, search fragment, the no-JavaScript ask,
escaping of anything a user or a tool wrote, and the matched-span highlight."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.builders import am_alert, am_payload, audit_chain_of
from veridiag.api import create_app
from veridiag.api.workbench import _highlight, _timeline
from veridiag.config import Settings
from veridiag.contracts.delivery import DeliveryAttempt, read_attempts
from veridiag.contracts.json import JsonValue
from veridiag.pipeline.factory import Assembly, assemble


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    assembly: Assembly = assemble(Settings(home=tmp_path_factory.mktemp("wb")))
    return TestClient(create_app(Settings(home=Path("/nonexistent")), assembly=assembly), base_url="http://localhost")


def test_language_from_query_or_browser(client: TestClient) -> None:
    assert "证据审计台" in client.get("/", headers={"Accept-Language": "zh-CN,zh;q=0.9"}).text
    assert "Trace Workbench" in client.get("/", headers={"Accept-Language": "en-US"}).text
    assert "证据审计台" in client.get("/?lang=zh", headers={"Accept-Language": "en-US"}).text


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, "the ask form must carry the session's CSRF token"
    return found.group(1)


def test_no_javascript_ask_redirects_to_the_session(client: TestClient) -> None:
    token = _csrf(client.get("/?lang=en").text)  # the page starts a session and embeds its token
    response = client.post(
        "/ask",
        data={"query": "Why is checkout slow since 10:00?", "lang": "en", "csrf_token": token},
        follow_redirects=False,
    )
    assert response.status_code == 303 and response.headers["location"].startswith("/sessions/s-")
    page = client.get(response.headers["location"]).text
    assert "payment-service" in page and 'id="claims"' in page
    before = client.get("/api/v1/sessions").json()["total"]
    assert client.post("/ask", data={"query": "  ", "csrf_token": token}).status_code == 422
    assert client.get("/api/v1/sessions").json()["total"] == before


def test_search_fragment_for_htmx(client: TestClient) -> None:
    client.post("/api/v1/chat", json={"query": "为什么 8 点以后购物车接口大量 504？"})
    fragment = client.get("/", params={"q": "购物车"}, headers={"HX-Request": "true", "HX-Target": "rows"}).text
    assert fragment.lstrip().startswith("<tr>") and "<html" not in fragment and "购物车" in fragment
    empty = client.get("/", params={"q": "no-such-question-xyz"}, headers={"HX-Request": "true", "HX-Target": "rows"})
    assert "No sessions yet" in empty.text or "暂无会话" in empty.text


def test_user_text_is_escaped(client: TestClient) -> None:
    hostile = "<script>alert('x')</script> why is payment-service slow?"
    session_id = client.post("/api/v1/chat", json={"query": hostile}).json()["session_id"]
    for page in (client.get("/").text, client.get(f"/sessions/{session_id}").text):
        assert "<script>alert" not in page and "&lt;script&gt;alert" in page


def test_session_text_carries_its_own_language(client: TestClient) -> None:
    """A Chinese question on the English page (and the reverse) is marked with its own lang, so
    a screen reader reads it in the right voice; the page's lang stays the interface's."""
    for question, ui, own in (
        ("inventory-service 为什么一直重启？", "en", "zh-CN"),
        ("Why does inventory-service keep restarting?", "zh", "en"),
    ):
        session_id = client.post("/api/v1/chat", json={"query": question}).json()["session_id"]
        page = client.get(f"/sessions/{session_id}?lang={ui}").text
        assert f'<html lang="{"zh-CN" if ui == "zh" else "en"}">' in page
        assert f'class="question" lang="{own}">' in page and f'<div class="answer" lang="{own}">' in page
        assert f'<p class="answer-line" lang="{own}">' in page  # the line that answers, large
        claim_link = re.search(r'class="claim-link" href="([^"]+)"', page)
        assert claim_link, "a diagnosed session lists its claims"
        claim_page = client.get(claim_link.group(1).replace("&amp;", "&")).text
        assert f'<h1 lang="{own}">' in claim_page and f'<h3 lang="{own}">' in claim_page


def test_highlight_marks_exactly_the_span_and_escapes_the_rest() -> None:
    output = "a <b> line\nERROR x=1 & y<2\ntail"
    start = output.index("ERROR")
    end = output.index("\ntail")
    marked = str(_highlight(output, {"start": start, "end": end}))
    assert '<mark class="matched-span">ERROR x=1 &amp; y&lt;2</mark>' in marked
    assert marked.startswith("a &lt;b&gt; line")
    assert "<mark" not in str(_highlight(output, {"start": 5, "end": 999}))  # a span outside the text: none


def test_two_excerpts_of_one_invocation_each_highlight_their_own_span(client: TestClient) -> None:
    """An anomaly claim quotes its anomaly line and its peak point from one query_metrics output:
    the claim page marks each excerpt where the Gatekeeper matched it."""
    session_id = client.post("/api/v1/chat", json={"query": "why is payment-service slow since 10:00?"}).json()[
        "session_id"
    ]
    audit = client.get(f"/api/v1/sessions/{session_id}/audit").json()
    pages = []
    for trace in audit["gatekeeper"]["trace"]:
        spans = [c["matched_span"] for c in trace["checks"] if c.get("matched_span")]
        if len({s["invocation_id"] for s in spans}) == 1 and len({s["start"] for s in spans}) > 1:
            claim_id = trace["claim_id"]
            page = client.get(f"/sessions/{session_id}/claims/{claim_id}").text
            marks = re.findall(r'<mark class="matched-span">(.*?)</mark>', page, flags=re.S)
            assert sorted(marks) == sorted(html.escape(s["text"], quote=False) for s in spans), (claim_id, marks)
            pages.append(claim_id)
    assert pages, "the demo has a claim with two excerpts of one invocation"


def test_timeline_says_which_model_failed_and_why() -> None:
    fell_back: JsonValue = {"engine": "offline", "fallback_from": "llm:m", "reason": "timeout"}
    calls: list[JsonValue] = [
        {"role": "planner", "engine": "offline (fallback)", "engine_use": fell_back, "usage": {}},
        # a session stored before ``engine_use`` existed
        {"role": "composer", "engine": "template (fallback)", "usage": {"fallback": "llm:m failed: 503"}},
    ]
    rows = _timeline(audit_chain_of(timings_ms={"planner_ms": 1.0, "composer_ms": 2.0}, role_calls=calls))
    assert [(r.stage, r.engine, r.fallback) for r in rows] == [
        ("planner", "offline (fallback)", "llm:m failed: timeout"),
        ("composer", "template (fallback)", "llm:m failed: 503"),
    ]


def test_unknown_session_and_claim_are_404(client: TestClient) -> None:
    assert client.get("/sessions/nope").status_code == 404
    session_id = client.get("/api/v1/sessions").json()["items"][0]["id"]
    assert client.get(f"/sessions/{session_id}/claims/nope").status_code == 404


class _SectionTable(HTMLParser):
    """The cell texts of each body row of the tables inside the element ``id=...`` (a section, or
    a fold of the audit trail)."""

    def __init__(self, section: str) -> None:
        super().__init__()
        self.section, self.depth, self.rows = section, 0, list[list[str]]()
        self.tag: str | None = None
        self.cell: list[str] | None = None
        self.in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.tag is None and ("id", self.section) in attrs:
            self.tag, self.depth = tag, 1
        elif tag == self.tag and self.depth:
            self.depth += 1
        elif self.depth and tag == "tbody":
            self.in_body = True
        elif self.depth and self.in_body and tag == "tr":
            self.rows.append([])
        elif self.depth and self.in_body and tag == "td":
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == self.tag and self.depth:
            self.depth -= 1
        elif tag == "tbody":
            self.in_body = False
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def section_rows(page: str, section: str) -> list[list[str]] | None:
    """None when the page has no such section."""
    if f' id="{section}"' not in page:
        return None
    parser = _SectionTable(section)
    parser.feed(page)
    return parser.rows


def test_an_alert_session_shows_where_it_came_from_and_its_deliveries(client: TestClient) -> None:
    queue = client.app.state.alert_queue  # type: ignore[attr-defined]
    payload = am_payload(am_alert("wb-fp-1"), am_alert("wb-fp-2", startsAt="2026-07-07T10:07:00Z"))
    assert len(client.post("/api/v1/alerts/alertmanager", json=payload).json()["jobs"]) == 1  # one service
    job = queue.claim("wb-worker")
    session_id = client.post("/api/v1/chat", json={"query": job.question}).json()["session_id"]
    assert queue.finish(job.id, "wb-worker", session_id=session_id)
    store = client.app.state.assembly.store  # type: ignore[attr-defined]
    at = datetime(2026, 7, 7, 10, 9, 30, tzinfo=UTC)
    common = {"destination": "oncall", "kind": "slack", "at": at}
    store.record_delivery(
        session_id, DeliveryAttempt(**common, attempt=1, outcome="retrying", status_code=503, error="<b>busy</b>")
    )
    store.record_delivery(session_id, DeliveryAttempt(**common, attempt=2, outcome="delivered", status_code=200))

    page = client.get(f"/sessions/{session_id}?lang=en").text
    assert job.id in page
    assert section_rows(page, "alert-origin") == [
        ["alertmanager", "PaymentLatencyHigh", "payment-service", "2026-07-07 10:05:00 UTC", "wb-fp-1"],
        ["alertmanager", "PaymentLatencyHigh", "payment-service", "2026-07-07 10:07:00 UTC", "wb-fp-2"],
    ]
    assert section_rows(page, "deliveries") == [
        ["oncall", "slack", "1", "retrying", "503", "<b>busy</b>", "2026-07-07 10:09:30"],
        ["oncall", "slack", "2", "delivered", "200", "", "2026-07-07 10:09:30"],
    ]
    assert "&lt;b&gt;busy" in page  # an error a receiver wrote is text, not markup
    zh = client.get(f"/sessions/{session_id}?lang=zh").text
    assert "告警来源" in zh and "消息推送" in zh
    assert [row[3] for row in section_rows(zh, "deliveries") or []] == ["重试中", "已送达"]


def test_an_asked_session_without_deliveries_shows_neither(client: TestClient) -> None:
    session_id = client.post("/api/v1/chat", json={"query": "why is payment-service slow?"}).json()["session_id"]
    for lang in ("en", "zh"):
        page = client.get(f"/sessions/{session_id}?lang={lang}").text
        assert section_rows(page, "alert-origin") is None and section_rows(page, "deliveries") is None
        assert 'id="final-answer"' in page


def test_an_unreadable_delivery_record_is_counted_not_a_500() -> None:
    good = DeliveryAttempt(destination="d", kind="webhook", attempt=1, at=datetime.now(UTC), outcome="failed")
    chain = audit_chain_of()
    chain.session.deliveries = [good.model_dump(mode="json"), {"destination": "d"}]
    attempts, unreadable = read_attempts(chain.session.deliveries)
    assert attempts == [good] and unreadable == 1
