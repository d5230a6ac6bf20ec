"""The workbench's browser session: a signed cookie (not the token) with HttpOnly, SameSite=Strict
and Secure over https, a logout that revokes it, and CSRF tokens on every form post (the login
form by its origin) — all without JavaScript."""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from datetime import UTC, datetime
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.exc import OperationalError

from veridiag.api import create_app
from veridiag.api.security import COOKIE, Sessions
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.store import SessionStore
from veridiag.store.revocations import RevokedSessions

BASE = "http://localhost"
KEY = "k" * 40
QUESTION = "Why is checkout slow since 10:00?"


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> Assembly:
    return assemble(Settings(home=tmp_path_factory.mktemp("session")))


def _app(assembly: Assembly, **settings: Any) -> Any:
    return create_app(Settings(home=Path("/nonexistent"), **{"api_tokens": "alpha", **settings}), assembly=assembly)


def _signed_in(app: Any, base: str = BASE) -> tuple[TestClient, str]:
    client = TestClient(app, base_url=base)
    login = client.post("/login", data={"token": "alpha"}, follow_redirects=False)
    assert login.status_code == 303 and login.headers["location"] == "/"
    return client, login.headers["set-cookie"]


def _csrf(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found, "a form without the CSRF token"
    return found.group(1)


def _attributes(set_cookie: str) -> dict[str, str]:
    morsel = SimpleCookie(set_cookie)[COOKIE]
    return {k: str(v) for k, v in morsel.items() if v}


def test_login_cookie_is_a_signed_session_not_the_token(assembly: Assembly) -> None:
    client, set_cookie = _signed_in(_app(assembly))
    value = SimpleCookie(set_cookie)[COOKIE].value
    assert "alpha" not in value and "alpha" not in set_cookie
    flags = _attributes(set_cookie)
    assert flags["httponly"] and flags["samesite"].lower() == "strict" and flags["path"] == "/"
    assert "secure" not in flags  # plain http: a Secure cookie would never come back
    assert client.get("/").status_code == 200
    # the token itself in the cookie does not sign anyone in
    stranger = TestClient(client.app, base_url=BASE, cookies={COOKIE: "alpha"})
    assert stranger.get("/api/v1/sessions").status_code == 401


def test_cookie_is_secure_over_https_and_behind_a_trusted_proxy_only(assembly: Assembly) -> None:
    _client, over_https = _signed_in(_app(assembly), base="https://localhost")
    assert _attributes(over_https)["secure"]
    forwarded = {"X-Forwarded-Proto": "https"}
    untrusted = TestClient(_app(assembly), base_url=BASE, client=("127.0.0.1", 1))
    cookie = untrusted.post("/login", data={"token": "alpha"}, headers=forwarded, follow_redirects=False)
    assert "secure" not in _attributes(cookie.headers["set-cookie"])  # anyone can send that header
    trusted = TestClient(_app(assembly, api_trusted_proxies="127.0.0.1"), base_url=BASE, client=("127.0.0.1", 1))
    cookie = trusted.post("/login", data={"token": "alpha"}, headers=forwarded, follow_redirects=False)
    assert _attributes(cookie.headers["set-cookie"])["secure"]


def test_forged_stale_and_foreign_sessions_are_refused(assembly: Assembly) -> None:
    app = _app(assembly)
    _client, set_cookie = _signed_in(app)
    value = SimpleCookie(set_cookie)[COOKIE].value
    payload, mac = value.split(".")
    for forged in (f"{payload}.{mac[:-2]}AA", f"{payload[:-2]}AA.{mac}", payload, "", "." * 3, value + "x"):
        assert TestClient(app, base_url=BASE, cookies={COOKIE: forged}).get("/api/v1/rules").status_code == 401
    # another server (another key) does not accept it, the same key does
    assert TestClient(_app(assembly), base_url=BASE, cookies={COOKIE: value}).get("/api/v1/rules").status_code == 401
    same_key = _app(assembly, api_session_secret=KEY)
    _c, keyed = _signed_in(same_key)
    keyed_value = SimpleCookie(keyed)[COOKIE].value
    again = _app(assembly, api_session_secret=KEY)
    assert TestClient(again, base_url=BASE, cookies={COOKIE: keyed_value}).get("/api/v1/rules").status_code == 200
    # ... unless the token that signed in is gone
    rotated = _app(assembly, api_session_secret=KEY, api_tokens="gamma")
    assert TestClient(rotated, base_url=BASE, cookies={COOKIE: keyed_value}).get("/api/v1/rules").status_code == 401


class _Revocations:
    """A revocation list in a dict, for tests of the cookie alone (the app's is in the store)."""

    def __init__(self) -> None:
        self.ids: dict[str, datetime] = {}

    def add(self, session_id: str, expires_at: datetime) -> None:
        self.ids[session_id] = expires_at

    def is_revoked(self, session_id: str) -> bool:
        return session_id in self.ids


def test_sessions_expire() -> None:
    sessions = Sessions(b"k" * 32, ["alpha"], revoked=_Revocations(), max_age=60)
    session, value = sessions.issue(sessions.token_fingerprint("alpha"))
    assert sessions.read(value) == session
    expired = Sessions(b"k" * 32, ["alpha"], revoked=_Revocations(), max_age=-120)
    assert expired.read(value) is None


def test_a_revoked_session_is_kept_until_its_cookie_would_expire() -> None:
    revocations = _Revocations()
    sessions = Sessions(b"k" * 32, ["alpha"], revoked=revocations, max_age=60)
    session, value = sessions.issue(sessions.token_fingerprint("alpha"))
    sessions.revoke(session)
    assert revocations.ids == {session.sid: datetime.fromtimestamp(session.issued + 60, UTC)}
    assert sessions.read(value) is None


@given(st.text(max_size=300))
def test_any_cookie_value_reads_as_no_session(value: str) -> None:
    assert Sessions(b"k" * 32, ["alpha"], revoked=_Revocations()).read(value) is None


def test_logout_revokes_the_session_and_clears_the_cookie(assembly: Assembly) -> None:
    app = _app(assembly)
    client, set_cookie = _signed_in(app)
    value = SimpleCookie(set_cookie)[COOKIE].value
    page = client.get("/?lang=en").text
    assert 'action="/logout"' in page and "Sign out" in page  # a plain form: works without JavaScript
    _forbidden(client.post("/logout", follow_redirects=False))  # no token: a cross-site logout fails
    out = client.post("/logout", data={"csrf_token": _csrf(page)}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert "Max-Age=0" in out.headers["set-cookie"] or "expires=" in out.headers["set-cookie"].lower()
    assert client.get("/", headers={"Accept": "text/html"}, follow_redirects=False).headers["location"] == "/login"
    replay = TestClient(app, base_url=BASE, cookies={COOKIE: value})  # a copy of the old cookie
    assert replay.get("/api/v1/sessions").status_code == 401
    # logging out without a session just clears the cookie
    assert TestClient(app, base_url=BASE).post("/logout", follow_redirects=False).status_code == 303


def test_login_gives_a_fresh_session(assembly: Assembly) -> None:
    app = _app(assembly)
    client, first = _signed_in(app)
    again = client.post("/login", data={"token": "alpha"}, follow_redirects=False).headers["set-cookie"]
    assert SimpleCookie(first)[COOKIE].value != SimpleCookie(again)[COOKIE].value
    assert (
        TestClient(app, base_url=BASE, cookies={COOKIE: SimpleCookie(first)[COOKIE].value})
        .get("/api/v1/rules")
        .status_code
        == 401
    )  # the replaced session is revoked


def _forbidden(response: Any) -> None:
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "forbidden" and error["request_id"]


def test_ask_needs_the_sessions_csrf_token(assembly: Assembly) -> None:
    app = _app(assembly)
    client, _cookie = _signed_in(app)
    token = _csrf(client.get("/").text)
    before = assembly.store.count_sessions()
    _forbidden(client.post("/ask", data={"query": QUESTION}))
    _forbidden(
        client.post("/ask", data={"query": QUESTION, "csrf_token": ("y" if token[0] == "x" else "x") + token[1:]})
    )
    other, _ = _signed_in(app)  # another browser's token is not this one's
    _forbidden(client.post("/ask", data={"query": QUESTION, "csrf_token": _csrf(other.get("/").text)}))
    assert assembly.store.count_sessions() == before
    ok = client.post("/ask", data={"query": QUESTION, "csrf_token": token}, follow_redirects=False)
    assert ok.status_code == 303 and ok.headers["location"].startswith("/sessions/")
    # a scripted client with the bearer header holds no ambient credential: no token needed
    scripted = TestClient(app, base_url=BASE, headers={"Authorization": "Bearer alpha"})
    assert scripted.post("/ask", data={"query": QUESTION}, follow_redirects=False).status_code == 303


def test_an_open_service_protects_its_form_too(assembly: Assembly) -> None:
    """Without tokens anyone local may ask, but another site's page may not make a browser ask."""
    client = TestClient(_app(assembly, api_tokens=""), base_url=BASE)
    _forbidden(client.post("/ask", data={"query": QUESTION}))
    page = client.get("/")
    assert COOKIE in page.headers["set-cookie"] and 'action="/logout"' not in page.text  # nobody to sign out
    ok = client.post("/ask", data={"query": QUESTION, "csrf_token": _csrf(page.text)}, follow_redirects=False)
    assert ok.status_code == 303


def test_cross_site_posts_are_refused_by_origin(assembly: Assembly) -> None:
    app = _app(assembly)
    client = TestClient(app, base_url=BASE)
    for headers in ({"Origin": "https://evil.example"}, {"Origin": "null"}, {"Referer": "http://evil.example/x"}):
        _forbidden(client.post("/login", data={"token": "alpha"}, headers=headers, follow_redirects=False))
    assert COOKIE not in client.cookies
    same = client.post("/login", data={"token": "alpha"}, headers={"Origin": BASE}, follow_redirects=False)
    assert same.status_code == 303
    token = _csrf(client.get("/").text)
    evil = {"Origin": "http://localhost.evil.example"}
    _forbidden(client.post("/ask", data={"query": QUESTION, "csrf_token": token}, headers=evil))


def _server(assembly: Assembly, store: SessionStore) -> Any:
    """Another ``veridiag serve`` on the same database: its own engine and connections, the same
    tokens and session secret (as README "Deploy several processes" asks)."""
    return _app(replace(assembly, store=store), api_session_secret=KEY)


def _status(app: Any, value: str, path: str = "/api/v1/rules") -> int:
    return TestClient(app, base_url=BASE, cookies={COOKIE: value}).get(path, follow_redirects=False).status_code


def test_a_sign_out_holds_on_every_server_and_after_a_restart(assembly: Assembly) -> None:
    """Sign out on A: a copy of the cookie is refused by A, by B (another app on its own
    connection to the store) and by a server started afterwards. Before, B took it for 12 h."""
    url = assembly.store.engine.url.render_as_string(hide_password=False)
    a, b = _server(assembly, SessionStore(url)), _server(assembly, SessionStore(url))
    client, set_cookie = _signed_in(a)
    value = SimpleCookie(set_cookie)[COOKIE].value
    assert _status(a, value) == _status(b, value) == 200  # one secret: valid everywhere
    out = client.post("/logout", data={"csrf_token": _csrf(client.get("/").text)}, follow_redirects=False)
    assert out.status_code == 303
    assert _status(a, value) == _status(b, value) == 401
    page = TestClient(b, base_url=BASE, cookies={COOKIE: value}).get(
        "/", headers={"Accept": "text/html"}, follow_redirects=False
    )
    assert page.status_code == 303 and page.headers["location"] == "/login"
    for app in (a, b):
        app.state.assembly.store.close()
    restarted = _server(assembly, SessionStore(url))
    assert _status(restarted, value) == 401
    # the store is not refusing everyone: a new sign-in works there, and bearer tokens as before
    _client, fresh = _signed_in(restarted)
    assert _status(restarted, SimpleCookie(fresh)[COOKIE].value) == 200
    bearer = TestClient(restarted, base_url=BASE, headers={"Authorization": "Bearer alpha"})
    assert bearer.get("/api/v1/rules").status_code == 200
    restarted.state.assembly.store.close()


def test_an_unreadable_revocation_list_refuses_the_cookie(
    assembly: Assembly, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Fail closed: when the store cannot say whether a cookie was signed out, it is refused
    (401, or the login page), logged and counted; a bearer token needs no such look-up. A
    sign-out is never reported done unless it was recorded."""
    app = _app(assembly)
    client, set_cookie = _signed_in(app)
    value = SimpleCookie(set_cookie)[COOKIE].value
    csrf = _csrf(client.get("/").text)

    def unreachable(self: RevokedSessions, *args: object) -> bool:
        raise OperationalError("SELECT …", {}, ConnectionRefusedError("store down"))

    monkeypatch.setattr(RevokedSessions, "is_revoked", unreachable)
    with caplog.at_level(logging.WARNING, logger="veridiag.api"):
        assert _status(app, value) == 401
    assert "revocation list could not be read (OperationalError" in caplog.text
    page = TestClient(app, base_url=BASE, cookies={COOKIE: value}).get(
        "/", headers={"Accept": "text/html"}, follow_redirects=False
    )
    assert page.headers["location"] == "/login"
    bearer = TestClient(app, base_url=BASE, headers={"Authorization": "Bearer alpha"})
    assert bearer.get("/api/v1/rules").status_code == 200
    metrics = bearer.get("/metrics").text
    assert "veridiag_unverified_session_cookies_total 2.0" in metrics
    monkeypatch.undo()
    assert _status(app, value) == 200  # refused for the failure alone

    # A sign-out the store cannot record is not reported as done: 503, the cookie kept.
    monkeypatch.setattr(RevokedSessions, "add", unreachable)
    out = client.post("/logout", data={"csrf_token": csrf}, follow_redirects=False)
    assert out.status_code == 503 and "set-cookie" not in out.headers
    assert "sign-out could not be recorded" in out.json()["error"]["message"]
    monkeypatch.undo()
    assert _status(app, value) == 200

    # Signing out while the store cannot be read but can be written: the signed cookie is
    # revoked all the same, so it stays refused once the store reads again.
    monkeypatch.setattr(RevokedSessions, "is_revoked", unreachable)
    assert client.post("/logout", data={"csrf_token": "forged"}, follow_redirects=False).status_code == 403
    assert client.post("/logout", data={"csrf_token": csrf}, follow_redirects=False).status_code == 303
    monkeypatch.undo()
    assert _status(app, value) == 401
