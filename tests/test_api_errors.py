"""Errors a client can see: always JSON with a request id (header and body), a generic 500 and
SSE error event that never carry exception text, SQL or a traceback (those go to the server log
under the id); what needs a token when tokens are configured; arbitrary requests never get a
non-JSON error or a 500."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.exc import OperationalError

from veridiag.api import create_app
from veridiag.api.schemas import is_blank
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble

BASE = "http://localhost"
QUESTION = "订单123支付失败，帮我看看是什么原因"
SECRET_SQL = "SELECT final_answer FROM sessions WHERE token = 'hunter2'"
LEAKS = ("SELECT", "hunter2", "OperationalError", "Traceback", "disk I/O", "sqlalchemy")


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("errors")))


def _client(assembly: Assembly, **settings: Any) -> TestClient:
    app = create_app(Settings(home=Path("/nonexistent"), **settings), assembly=assembly)
    return TestClient(app, base_url=BASE, raise_server_exceptions=False)


@pytest.fixture(scope="module")
def clients(assembly: Assembly) -> dict[str, TestClient]:
    """One open and one token-protected app (no rate limit) for the property tests."""
    return {tokens: _client(assembly, api_tokens=tokens, api_rate_limit="0") for tokens in ("", "alpha")}


def _store_gone(*_args: Any, **_kwargs: Any) -> Any:
    raise OperationalError(SECRET_SQL, {}, Exception("disk I/O error"))


def test_unhandled_errors_are_a_generic_500_json_logged_with_the_id(
    assembly: Assembly, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    client = _client(assembly)
    monkeypatch.setattr(assembly.store, "list_sessions", _store_gone)
    monkeypatch.setattr(assembly.pipeline, "run", _store_gone)
    requests = [
        ("GET", "/api/v1/sessions", None),
        ("POST", "/api/v1/chat", {"query": QUESTION}),
        ("GET", "/", None),  # a workbench page as well
    ]
    for method, path, body in requests:
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="veridiag.api"):
            response = client.request(method, path, json=body, headers={"X-Request-ID": f"req-{len(path)}"})
        assert response.status_code == 500 and response.headers["content-type"] == "application/json"
        error = response.json()["error"]
        assert error["code"] == "internal_error" and error["request_id"] == f"req-{len(path)}"
        assert response.headers["x-request-id"] == error["request_id"]
        assert not any(leak in response.text for leak in LEAKS), response.text
        logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
        assert f"request_id=req-{len(path)}" in logged and "hunter2" in logged and "OperationalError" in logged


def test_stream_error_event_is_generic_with_ids(
    assembly: Assembly, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def run(query: str, lang: str | None, progress: Any = None, source: str | None = None) -> Any:
        progress("session", {"session_id": "s-started", "lang": "zh"})
        _store_gone()

    monkeypatch.setattr(assembly.pipeline, "run", run)
    client = _client(assembly)
    with (
        caplog.at_level(logging.ERROR, logger="veridiag.api"),
        client.stream("POST", "/api/v1/chat/stream", json={"query": QUESTION}) as stream,
    ):
        rid = stream.headers["x-request-id"]
        text = stream.read().decode()
    frames = [f.split("\n") for f in text.split("\n\n") if f.strip()]
    events = {f[0].removeprefix("event: "): json.loads(f[1].removeprefix("data: ")) for f in frames}
    assert list(events) == ["session", "error"]
    assert events["error"]["request_id"] == rid and events["error"]["session_id"] == "s-started"
    assert "server" in events["error"]["message"] and not any(leak in text for leak in LEAKS), text
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert f"request_id={rid}" in logged and "s-started" in logged and "hunter2" in logged


def test_metrics_and_docs_need_a_token_when_tokens_are_configured(assembly: Assembly) -> None:
    client = _client(assembly, api_tokens="alpha")
    token = {"Authorization": "Bearer alpha"}
    for path in ("/metrics", "/api/docs", "/api/openapi.json", "/api/docs-assets/swagger-ui.css"):
        response = client.get(path)
        assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized", path
        assert client.get(path, headers=token).status_code == 200, path
    assert client.get("/healthz").status_code == 200
    assert client.get("/static/workbench.css").status_code == 200  # the sign-in page needs it
    scrapers = _client(assembly, api_tokens="alpha", api_open_metrics=True)
    assert "veridiag_rejected_requests" in scrapers.get("/metrics").text
    assert scrapers.get("/api/docs").status_code == 401


def test_rejections_are_counted(assembly: Assembly) -> None:
    client = _client(assembly, api_tokens="alpha", api_rate_limit="2/minute", api_max_body_bytes=1024)
    client.get("/healthz", headers={"Host": "evil.example"})
    client.post("/api/v1/chat", content=b"x" * 2000, headers={"Authorization": "Bearer alpha"})
    for _ in range(3):
        client.get("/api/v1/rules")
    metrics = client.get("/metrics", headers={"Authorization": "Bearer alpha"}).text
    for reason in ("host", "too_large", "auth", "rate_limited"):
        assert f'veridiag_rejected_requests_total{{reason="{reason}"}}' in metrics, reason


_PATHS = st.sampled_from(
    [
        "/",
        "/api/v1/chat",
        "/api/v1/chat/stream",
        "/api/v1/sessions",
        "/api/v1/sessions/x",
        "/api/v1/rules",
        "/api/openapi.json",
        "/api/docs",
        "/ask",
        "/login",
        "/logout",
        "/metrics",
        "/healthz",
        "/sessions/s-1/claims/c1",
        "/static/../../etc/passwd",
        "/nothing",
    ]
) | st.text(alphabet="abcxyz/.%-_~", max_size=30).map(lambda p: "/" + p)
_VALUES = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=60)
_HEADERS = st.dictionaries(
    st.sampled_from(
        [
            "host",
            "content-type",
            "authorization",
            "cookie",
            "x-request-id",
            "origin",
            "referer",
            "accept",
            "x-forwarded-for",
        ]
    ),
    _VALUES
    | st.sampled_from(
        [
            "localhost",
            "application/json",
            "text/html",
            "Bearer alpha",
            "veridiag_session=a.b",
            "application/x-www-form-urlencoded",
        ]
    ),
    max_size=5,
)
_BODIES = st.binary(max_size=300) | st.sampled_from(
    [b'{"query": "   "}', b'{"query": "\\u200b"}', b"query=%20&csrf_token=x", b"token=alpha", b"{" * 200]
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    request=st.tuples(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]), _PATHS),
    headers=_HEADERS,
    body=_BODIES,
    tokens=st.sampled_from(["", "alpha"]),
)
def test_any_request_gets_json_errors_and_never_a_500(
    clients: dict[str, TestClient], request: tuple[str, str], headers: dict[str, str], body: bytes, tokens: str
) -> None:
    method, path = request
    client = clients[tokens]
    client.cookies.clear()
    response = client.request(method, path, content=body if method != "GET" else None, headers=headers)
    assert response.status_code < 500, (response.status_code, response.text)
    assert response.headers.get("x-request-id")
    if response.status_code >= 400:
        assert response.headers["content-type"] == "application/json", response.text
        error = response.json()["error"]
        assert error["code"] and error["message"] and error["request_id"] == response.headers["x-request-id"]


_INVISIBLE = st.text(
    alphabet=st.sampled_from(
        " \t\n\r\x0b\x0c\x85\u00a0\u1680\u2000\u200a\u200b\u200c\u200d\u200e\u2028\u2029\u202f\u205f"
        "\u2060\u3000\ufeff\u180e\u2800\u3164\u115f\u0301"
    ),
    min_size=1,
    max_size=40,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blank=_INVISIBLE, visible=st.characters(categories=["L", "N", "P", "S"]), at=st.integers(0, 40))
def test_blank_questions_are_422_and_any_visible_character_is_a_question(
    assembly: Assembly, clients: dict[str, TestClient], blank: str, visible: str, at: int
) -> None:
    client = clients[""]
    before = assembly.store.count_sessions()
    response = client.post("/api/v1/chat", json={"query": blank})
    assert response.status_code == 422 and "blank" in response.json()["error"]["message"]
    assert assembly.store.count_sessions() == before
    assert not is_blank(blank[:at] + visible + blank[at:]) or visible in "\u2800\u3164\u115f\u1160\uffa0"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(["/api/v1/sessions", "/"]),
    offset=st.integers(min_value=0, max_value=10**40) | st.sampled_from([2**63 - 1, 2**63, 2**64]),
)
def test_a_listing_offset_of_any_size_is_answered_never_a_500(
    clients: dict[str, TestClient], path: str, offset: int
) -> None:
    """The stores' OFFSET is a 64-bit integer: past it a listing is refused (422), never a
    database error (500) — the JSON API and the workbench's list alike."""
    response = clients[""].get(path, params={"offset": offset})
    assert response.status_code == (200 if offset < 2**63 else 422), (offset, response.text[:200])
