"""The HTTP service's outer guards: the body size limit (declared and streamed, before auth and
parsing; the server's memory does not grow with a 100 MB body), allowed hosts, the per-token
rate limit, and request ids on every answer."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ports import free_port
from veridiag.api import create_app
from veridiag.api.guards import BodyLimit
from veridiag.api.metrics import ServiceMetrics
from veridiag.bench.api import resident_mb
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble

BASE = "http://localhost"
QUESTION = "订单123支付失败，帮我看看是什么原因"


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("limits")))


def _app(assembly: Assembly, **settings: Any) -> Any:
    return create_app(Settings(home=Path("/nonexistent"), **settings), assembly=assembly)


def _client(assembly: Assembly, **settings: Any) -> TestClient:
    return TestClient(_app(assembly, **settings), base_url=BASE)


def _error(response: httpx2.Response | Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code and error["message"]
    assert error["request_id"] == response.headers["x-request-id"]
    return error


# --- body size ----------------------------------------------------------------------------


def _call(app: Any, scope: dict[str, Any], chunks: Iterator[bytes]) -> tuple[list[dict[str, Any]], int]:
    """Run an ASGI app on one request whose body comes from ``chunks``; the messages it sent and
    how many body chunks it read."""
    sent: list[dict[str, Any]] = []
    read = 0

    async def receive() -> dict[str, Any]:
        nonlocal read
        chunk = next(chunks, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        read += 1
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent, read


def _scope(path: str, headers: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in {"host": "localhost", **headers}.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
    }


def _forever(size: int = 16 * 1024, total: int = 8 * 2**20) -> Iterator[bytes]:
    """A body far over the limit (bounded, so a missing limit fails the test instead of hanging it)."""
    for _ in range(total // size):
        yield b"x" * size


def _response(sent: list[dict[str, Any]]) -> tuple[int, dict[str, str], dict[str, Any]]:
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, json.loads(body)


def test_a_declared_length_over_the_limit_is_refused_before_any_byte_is_read() -> None:
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    guard = BodyLimit(app, max_bytes=64 * 1024, metrics=ServiceMetrics())
    sent, read = _call(guard, _scope("/api/v1/chat", {"content-length": str(100 * 2**20)}), _forever())
    status, headers, body = _response(sent)
    assert (status, read, reached) == (413, 0, [])
    assert body["error"]["code"] == "payload_too_large" and headers["connection"] == "close"


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        st.integers(0, 10**30).map(str),
        st.integers(4301, 20_000).map(lambda n: "9" * n),  # past int()'s digit limit
        # anything a header holds: "²" is a digit to str.isdigit
        st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), min_size=1, max_size=24),
    )
)
def test_any_declared_length_is_answered_never_a_500(declared: str) -> None:
    """A Content-Length is the client's to write: a number is compared with the limit (one of
    any size is over it), anything else is a bad request — before any byte is read."""
    reached: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])

    limit = 64 * 1024
    guard = BodyLimit(app, max_bytes=limit, metrics=ServiceMetrics())
    scope = _scope("/api/v1/chat", {})
    scope["headers"].append((b"content-length", declared.encode("latin-1")))
    sent, _read = _call(guard, scope, _forever())
    if declared.isascii() and declared.isdigit() and (len(declared) > 6 or int(declared) > limit):
        assert _response(sent)[0] == 413 and reached == []
    elif not (declared.isascii() and declared.isdigit()):
        assert _response(sent)[0] == 400 and reached == []


def test_a_streamed_body_is_cut_at_the_limit_before_auth_and_parsing(assembly: Assembly) -> None:
    """No Content-Length (chunked): the app reads at most the limit (plus one chunk), answers 413
    JSON — not 401 although no token was sent — and stores nothing."""
    app = _app(assembly, api_tokens="alpha", api_max_body_bytes=64 * 1024)
    before = assembly.store.count_sessions()
    for path in ("/api/v1/chat", "/api/v1/chat/stream", "/ask", "/login"):
        headers = {
            "content-type": "application/json" if path.startswith("/api") else "application/x-www-form-urlencoded"
        }
        sent, read = _call(app, _scope(path, headers), _forever())
        status, response_headers, body = _response(sent)
        assert status == 413, (path, body)
        assert body["error"]["code"] == "payload_too_large" and body["error"]["request_id"]
        assert response_headers["x-request-id"] == body["error"]["request_id"]
        assert read <= 64 // 16 + 1, f"{path}: read {read} chunks of 16 KiB"
    assert assembly.store.count_sessions() == before


def test_bodies_under_the_limit_pass_and_the_limit_is_a_setting(assembly: Assembly) -> None:
    small = _client(assembly, api_max_body_bytes=2048)
    _error(small.post("/api/v1/chat", json={"query": "x" * 3000}), 413, "payload_too_large")
    assert small.post("/api/v1/chat", json={"query": QUESTION}).status_code == 200
    default = _client(assembly)
    _error(default.post("/api/v1/chat", json={"query": "x" * (64 * 1024)}), 413, "payload_too_large")
    _error(default.post("/api/v1/chat", json={"query": "x" * 5000}), 422, "invalid_request")  # too long a question


def _send_huge(port: int, size: int, chunked: bool) -> str:
    """POST ``size`` bytes the way a client would (Content-Length or chunked), keep sending
    until the server hangs up, then read its status line."""
    head = f"POST /api/v1/chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {size}\r\n\r\n"
    chunk = b"x" * 65536
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        try:
            conn.sendall(head.encode())
            for _ in range(size // len(chunk)):
                conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
        except OSError:
            pass  # the server answered and closed: what we want
        try:
            return conn.recv(200).decode(errors="replace").split("\r\n")[0]
        except OSError as exc:
            return f"<{exc.__class__.__name__}>"


@pytest.mark.slow
def test_a_100_mb_body_does_not_grow_the_server(tmp_path: Path) -> None:
    """``veridiag serve`` in its own process: before the limit a 100 MB POST cost it about
    200 MB of RSS (the body read whole, then decoded); now the 413 comes first."""
    port = free_port()
    env = {**os.environ, "VERIDIAG_HOME": str(tmp_path)}
    env.pop("VERIDIAG_API_TOKENS", None)
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "veridiag"), "serve", "--port", str(port)],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "the server did not start"
            time.sleep(0.2)
        httpx2.post(f"http://127.0.0.1:{port}/api/v1/chat", json={"query": QUESTION}, timeout=60)  # warm
        before = resident_mb(server.pid)
        replies = [_send_huge(port, 100 * 2**20, chunked) for chunked in (False, True)]
        time.sleep(0.5)
        grown = resident_mb(server.pid) - before
        assert all("413" in reply for reply in replies), replies
        assert grown < 20, f"RSS grew by {grown:.1f} MB for two 100 MB bodies"
        assert httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


# --- allowed hosts --------------------------------------------------------------------------


def test_requests_for_other_hosts_get_400_json(assembly: Assembly) -> None:
    client = _client(assembly)
    for host in ("localhost", "localhost:8080", "127.0.0.1:8080", "[::1]:8080"):
        assert client.get("/healthz", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8080", "localhost.evil.example", "127.0.0.2", "[::1"):
        error = _error(client.get("/api/v1/sessions", headers={"Host": host}), 400, "invalid_host")
        assert "api_allowed_hosts" in error["message"]
    # a rebinding page's POST is refused before it runs anything
    _error(client.post("/api/v1/chat", json={"query": QUESTION}, headers={"Host": "evil.example"}), 400, "invalid_host")


def test_allowed_hosts_setting_and_bind_host(assembly: Assembly) -> None:
    configured = _client(assembly, api_allowed_hosts="diag.example.com,*.corp.example")
    for host, status in (("diag.example.com", 200), ("a.corp.example", 200), ("localhost", 400)):
        assert configured.get("/healthz", headers={"Host": host}).status_code == status, host
    bound = TestClient(
        create_app(Settings(home=Path("/nonexistent")), assembly=assembly, bind_host="10.1.2.3"), base_url=BASE
    )
    assert bound.get("/healthz", headers={"Host": "10.1.2.3:8080"}).status_code == 200
    assert bound.get("/healthz", headers={"Host": "localhost"}).status_code == 200


# --- rate limit -----------------------------------------------------------------------------


def test_rate_limit_per_token_with_retry_after(assembly: Assembly) -> None:
    client = _client(assembly, api_tokens="alpha,beta", api_rate_limit="3/minute")
    alpha = {"Authorization": "Bearer alpha"}
    assert [client.get("/api/v1/sessions", headers=alpha).status_code for _ in range(3)] == [200] * 3
    limited = client.get("/api/v1/sessions", headers=alpha)
    error = _error(limited, 429, "rate_limited")
    assert 1 <= int(limited.headers["retry-after"]) <= 60 and "3 per 1 minute" in error["message"]
    assert client.get("/api/v1/sessions", headers={"Authorization": "Bearer beta"}).status_code == 200
    assert client.get("/healthz").status_code == 200  # probes are never limited
    # a browser signed in with alpha shares alpha's budget
    client.post("/login", data={"token": "alpha"})
    _error(client.get("/api/v1/sessions"), 429, "rate_limited")


def test_failed_tokens_count_against_the_address(assembly: Assembly) -> None:
    """Guessing tokens is limited per client address, whatever each guess is."""
    client = _client(assembly, api_tokens="alpha", api_rate_limit="3/minute")
    guesses = [client.get("/api/v1/sessions", headers={"Authorization": f"Bearer guess{i}"}) for i in range(4)]
    assert [r.status_code for r in guesses] == [401, 401, 401, 429]
    assert client.get("/api/v1/sessions", headers={"Authorization": "Bearer alpha"}).status_code == 200


def test_without_tokens_the_limit_is_per_client_address(assembly: Assembly) -> None:
    app = _app(assembly, api_rate_limit="2/minute")
    one = TestClient(app, base_url=BASE, client=("192.0.2.1", 1000))
    other = TestClient(app, base_url=BASE, client=("192.0.2.2", 1000))
    assert [one.get("/api/v1/rules").status_code for _ in range(3)] == [200, 200, 429]
    assert other.get("/api/v1/rules").status_code == 200


def test_forwarded_for_counts_only_from_a_trusted_proxy(assembly: Assembly) -> None:
    spoofer = TestClient(_app(assembly, api_rate_limit="1/minute"), base_url=BASE, client=("127.0.0.1", 1))
    statuses = [spoofer.get("/api/v1/rules", headers={"X-Forwarded-For": f"198.51.100.{i}"}) for i in (1, 2)]
    assert [r.status_code for r in statuses] == [200, 429]  # not believed: one address
    app = _app(assembly, api_rate_limit="1/minute", api_trusted_proxies="127.0.0.1")
    proxy = TestClient(app, base_url=BASE, client=("127.0.0.1", 1))
    statuses = [proxy.get("/api/v1/rules", headers={"X-Forwarded-For": f"198.51.100.{i}"}) for i in (1, 2)]
    assert [r.status_code for r in statuses] == [200, 200]  # two clients behind the proxy


@pytest.mark.parametrize("rate", ["0", ""])
def test_rate_limit_off(assembly: Assembly, rate: str) -> None:
    client = _client(assembly, api_rate_limit=rate)
    assert {client.get("/api/v1/rules").status_code for _ in range(150)} == {200}


@pytest.mark.parametrize(
    ("setting", "problem"),
    [
        ({"api_rate_limit": "lots"}, "bad rate limit"),
        ({"api_allowed_hosts": "ex*ample.com"}, "bad host pattern"),
        ({"api_trusted_proxies": "proxy.local"}, "bad proxy address"),
        ({"api_session_secret": "short"}, "at least 32 characters"),
        ({"api_max_body_bytes": 10}, "api_max_body_bytes"),
    ],
)
def test_bad_settings_are_refused_at_load(setting: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Settings(home=Path("/nonexistent"), **setting)


def test_list_settings_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIDIAG_API_ALLOWED_HOSTS", "Diag.Example.com, ::1")
    monkeypatch.setenv("VERIDIAG_API_TRUSTED_PROXIES", "10.0.0.0/8,127.0.0.1")
    settings = Settings(home=Path("/nonexistent"))
    assert settings.api_allowed_hosts == ["diag.example.com", "[::1]"]
    assert settings.api_trusted_proxies == ["10.0.0.0/8", "127.0.0.1"]


# --- request ids ----------------------------------------------------------------------------


def test_request_id_is_kept_when_sane_and_made_otherwise(assembly: Assembly) -> None:
    client = _client(assembly)
    kept = client.get("/healthz", headers={"X-Request-ID": "trace-4bf92f3577b34da6.a3ce929d0e0e4736"})
    assert kept.headers["x-request-id"] == "trace-4bf92f3577b34da6.a3ce929d0e0e4736"
    for bad in ("<script>", "x" * 300, "id with spaces", ""):
        made = client.get("/api/v1/sessions/nope", headers={"X-Request-ID": bad})
        error = _error(made, 404, "not_found")
        assert error["request_id"] != bad and len(error["request_id"]) == 32
    first, second = client.get("/healthz"), client.get("/healthz")
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


def test_the_guards_pass_the_lifespan_through(assembly: Assembly) -> None:
    """uvicorn sends lifespan events through every middleware; a guard that chokes on them
    turns the app's startup and shutdown off."""
    app = _app(assembly, api_tokens="alpha", api_trusted_proxies="127.0.0.1")
    with TestClient(app, base_url=BASE) as client:  # runs startup and shutdown
        assert client.get("/healthz").status_code == 200
