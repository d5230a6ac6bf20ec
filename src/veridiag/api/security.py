"""Who is asking: a bearer token, a signed workbench session, or anyone (no tokens configured).

With no tokens the API is open (loopback use); ``veridiag serve`` refuses a non-loopback bind
without tokens, so an open API is never exposed by accident.

The workbench cookie is a session, not the token: ``payload.mac`` where the payload names a
random session id, a fingerprint of the token that signed in and the time, and the MAC is
HMAC-SHA256 under the app's session key (the standard library's ``hmac``: itsdangerous is not
among the installed dependencies). A session dies when it is older than ``SESSION_SECONDS``,
when its token is no longer configured, or when it logs out. Logging out records the session id
in the store (``store/revocations.py``), which every server sharing the key reads for each
cookie: a copied cookie is refused everywhere, after restarts too, and refused as well when the
store cannot say (fail closed). Form posts carry a per-session CSRF token derived from the
session id, and must not come from another site's page.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Protocol, TypedDict
from urllib.parse import urlsplit

import anyio.to_thread
from fastapi import HTTPException, Request, status
from prometheus_client import Counter
from pydantic import BaseModel
from starlette.requests import HTTPConnection
from starlette.responses import Response


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


log = logging.getLogger("veridiag.api")

COOKIE = "veridiag_session"
#: How long a workbench session lasts (also the cookie's Max-Age).
SESSION_SECONDS = 12 * 3600
_COOKIE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")


def valid(token: str, tokens: list[str]) -> bool:
    return bool(token) and any(hmac.compare_digest(token.strip().encode(), t.encode()) for t in tokens)


@dataclass(frozen=True)
class Session:
    sid: str
    #: Fingerprint of the token that signed in; None on an open service.
    token: str | None
    issued: int


class _CookiePayload(BaseModel):
    """A session cookie's signed payload, as ``Sessions.issue`` writes it."""

    sid: str
    tok: str | None
    iat: int


@dataclass(frozen=True)
class Identity:
    """How a request authenticated, and the key the rate limit counts it under."""

    via: Literal["bearer", "session", "open", "none"]
    key: str
    session: Session | None = None


class RevocationList(Protocol):
    """Where signed-out session ids are kept: the store every server shares
    (``store/revocations.py`` ``RevokedSessions``), so a sign-out holds on all of them."""

    def add(self, session_id: str, expires_at: datetime) -> None: ...
    def is_revoked(self, session_id: str) -> bool: ...


class Sessions:
    """Issues, reads and revokes signed session cookies for one app; ``revoked`` is shared with
    every other server on the store, ``unverified`` counts cookies refused because it could not
    be read."""

    def __init__(
        self,
        secret: bytes,
        tokens: list[str],
        *,
        revoked: RevocationList,
        max_age: int = SESSION_SECONDS,
        unverified: Counter | None = None,
    ) -> None:
        self._secret = secret
        self.tokens = tokens
        self.max_age = max_age
        self._fingerprints = {self.fingerprint(t) for t in tokens}
        self._revoked = revoked
        self._unverified = unverified

    def _mac(self, purpose: str, data: bytes) -> bytes:
        return hmac.new(self._secret, purpose.encode() + b"\0" + data, hashlib.sha256).digest()

    def fingerprint(self, token: str) -> str:
        """Names a token in a cookie or a rate-limit key without containing it."""
        return self._mac("token", token.strip().encode()).hex()[:32]

    def token_fingerprint(self, presented: str) -> str | None:
        """The fingerprint of ``presented`` if it is a configured token."""
        return self.fingerprint(presented) if valid(presented, self.tokens) else None

    def issue(self, token: str | None) -> tuple[Session, str]:
        """A new session (fresh id: signing in never reuses one) and its cookie value."""
        session = Session(secrets.token_urlsafe(18), token, int(time.time()))
        payload = _b64(json.dumps({"sid": session.sid, "tok": session.token, "iat": session.issued}).encode())
        return session, f"{payload}.{_b64(self._mac('session', payload.encode()))}"

    def read(self, value: str | None) -> Session | None:
        """The session in a cookie value, or None if it is forged, expired, revoked or stale."""
        session = self.signed(value)
        return None if session is None or self._signed_out(session.sid) else session

    def signed(self, value: str | None) -> Session | None:
        """The session a cookie value was signed for, unexpired and of a configured token,
        whether or not it was signed out since — what a sign-out revokes (again, if need be)."""
        if not value or len(value) > 512 or not set(value) <= _COOKIE_CHARS or value.count(".") != 1:
            return None
        payload, mac = value.split(".")
        if not hmac.compare_digest(_b64(self._mac("session", payload.encode())), mac):
            return None
        try:
            data = _CookiePayload.model_validate_json(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            session = Session(data.sid, data.tok, data.iat)
        except (ValueError, TypeError):
            return None
        age = time.time() - session.issued
        if not -60 <= age <= self.max_age:
            return None
        if self.tokens and session.token not in self._fingerprints:
            return None  # its token was removed, or it was issued while the service was open
        return session

    def _signed_out(self, sid: str) -> bool:
        """Asked last, after the checks that need no store. Fail closed: a revocation list that
        cannot be read refuses the cookie (the browser signs in again), never lets it pass."""
        try:
            return self._revoked.is_revoked(sid)
        except Exception as exc:  # any failure to confirm is a refusal, whatever raised it
            reason = f"{type(exc).__name__}: {next(iter(str(exc).splitlines()), '')}"[:300]
            log.warning("session cookie refused: the revocation list could not be read (%s)", reason)
            if self._unverified is not None:
                self._unverified.inc()
            return True

    def revoke(self, session: Session) -> None:
        """Logout: the cookie stops working on every server on the store, even if a copy of it
        survives in a browser. Raises when the store cannot record it: the caller must not
        report a sign-out that did not happen."""
        self._revoked.add(session.sid, datetime.fromtimestamp(session.issued + self.max_age, UTC))

    def csrf(self, session: Session) -> str:
        """The session's form token: pages embed it, form posts must return it."""
        return _b64(self._mac("csrf", session.sid.encode()))

    def set_cookie(self, response: Response, request: HTTPConnection, value: str) -> None:
        response.set_cookie(COOKIE, value, max_age=self.max_age, **_cookie_flags(request))

    def clear_cookie(self, response: Response, request: HTTPConnection) -> None:
        response.delete_cookie(COOKIE, **_cookie_flags(request))


class _CookieFlags(TypedDict):
    httponly: bool
    samesite: Literal["strict"]
    secure: bool
    path: str


def _cookie_flags(request: HTTPConnection) -> _CookieFlags:
    """HttpOnly, SameSite=Strict; Secure when the request came over https (as the connection
    says, or a trusted proxy's ``X-Forwarded-Proto`` — see ``api_trusted_proxies``)."""
    return {"httponly": True, "samesite": "strict", "secure": request.url.scheme == "https", "path": "/"}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def identify(connection: HTTPConnection) -> Identity:
    """Bearer header first (browsers cannot send one), then the session cookie; worked out once
    per request (the rate limit asks before the route does). For code already off the event
    loop (plain ``def`` routes); async code awaits ``identified``."""
    state = connection.scope.setdefault("state", {})
    if isinstance(found := state.get("identity"), Identity):
        return found
    identity = _without_store(connection) or _from_cookie(connection)
    state["identity"] = identity
    return identity


async def identified(connection: HTTPConnection) -> Identity:
    """``identify`` for the event loop. A cookie is checked against the store's revocation list
    (a query: ~0.04 ms on SQLite, ~0.25–0.5 ms to a local PostgreSQL, unbounded when the server does
    not answer), so that check runs in a worker thread: no request waits on another's look-up.
    Bearer tokens and requests without a cookie are answered inline, as before."""
    state = connection.scope.setdefault("state", {})
    if isinstance(found := state.get("identity"), Identity):
        return found
    identity = _without_store(connection)
    if identity is None:
        identity = await anyio.to_thread.run_sync(_from_cookie, connection)
    state["identity"] = identity
    return identity


def _address(connection: HTTPConnection) -> str:
    return f"addr:{connection.client.host if connection.client else 'unknown'}"


def _without_store(connection: HTTPConnection) -> Identity | None:
    """The identity when no cookie needs reading (a bearer header where tokens are configured,
    or no cookie at all); None when it does."""
    sessions: Sessions = connection.app.state.sessions
    scheme, _, presented = connection.headers.get("authorization", "").partition(" ")
    if sessions.tokens and scheme.lower() == "bearer":
        if (fingerprint := sessions.token_fingerprint(presented)) is None:
            return Identity("none", _address(connection))
        return Identity("bearer", f"token:{fingerprint}")
    if not connection.cookies.get(COOKIE):
        return Identity("none" if sessions.tokens else "open", _address(connection))
    return None


def _from_cookie(connection: HTTPConnection) -> Identity:
    sessions: Sessions = connection.app.state.sessions
    session = sessions.read(connection.cookies.get(COOKIE))
    if not sessions.tokens:
        return Identity("open", _address(connection), session)
    if session is None:
        return Identity("none", _address(connection))
    return Identity("session", f"token:{session.token}", session)


async def require_token(request: Request) -> None:
    """The auth dependency. ``async`` on purpose: FastAPI sends a plain ``def`` dependency through
    a worker thread, a hop per request (and, under load, a wait for the GIL beside the
    diagnoses) for microseconds of work."""
    if (await identified(request)).via == "none":
        request.app.state.metrics.rejected.labels("auth").inc()
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            detail="missing or invalid bearer token (Authorization: Bearer <token>)",
            headers={"WWW-Authenticate": "Bearer"},
        )


def require_same_origin(request: Request) -> None:
    """A browser names the page a form was posted from (``Origin``, else ``Referer``); it must be
    this site. Clients that send neither are not browsers and hold no ambient cookie."""
    origin = request.headers.get("origin")
    if origin is None and (referer := request.headers.get("referer")):
        parts = urlsplit(referer)
        origin = f"{parts.scheme}://{parts.netloc}"
    if origin is None:
        return
    if origin == "null" or urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower():
        request.app.state.metrics.rejected.labels("csrf").inc()
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="cross-site form post refused")


def require_csrf(request: Request, token: str, session: Session | None = None) -> None:
    """The synchronizer-token check for form posts from a browser session (the request's own,
    unless ``session`` names the one the post acts on); a bearer-header request is not a
    browser's ambient credential and needs none."""
    require_same_origin(request)
    identity = identify(request)
    if identity.via == "bearer":
        return
    sessions: Sessions = request.app.state.sessions
    session = session or identity.session
    if session is None or not hmac.compare_digest(token.encode(), sessions.csrf(session).encode()):
        request.app.state.metrics.rejected.labels("csrf").inc()
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, detail="missing or invalid CSRF token: reload the page and submit again"
        )
