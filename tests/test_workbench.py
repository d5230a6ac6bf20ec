"""Workbench pages rendered server-side: languages, search fragment, the no-JavaScript ask,
escaping of anything a user or a tool wrote, and the matched-span highlight."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.builders import audit_chain_of
from veridiag.api import create_app
from veridiag.api.workbench import _highlight, _timeline
from veridiag.config import Settings
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


def test_highlight_marks_exactly_the_span_and_escapes_the_rest() -> None:
    output = "a <b> line\nERROR x=1 & y<2\ntail"
    start = output.index("ERROR")
    end = output.index("\ntail")
    marked = str(_highlight(output, {"start": start, "end": end}))
    assert '<mark id="matched-span">ERROR x=1 &amp; y&lt;2</mark>' in marked
    assert marked.startswith("a &lt;b&gt; line")
    assert "<mark" not in str(_highlight(output, {"start": 5, "end": 999}))  # a span outside the text: none


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
