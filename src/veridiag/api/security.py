"""Who is asking: a bearer token, a signed workbench session, or anyone (no tokens configured).

With no tokens the API is open (loopback use); ``veridiag serve`` refuses a non-loopback bind
without tokens, so an open API is never exposed by accident.

The workbench cookie is a session, not the token: ``payload.mac`` where the payload names a
random session id, a fingerprint of the token that signed in and the time, and the MAC is
HMAC-SHA256 under the app's session key (the standard library's ``hmac``: itsdangerous is not
among the installed dependencies). A session dies when it is older than ``SESSION_SECONDS``,
when its token is no longer configured, or when it logs out. Form posts carry a per-session
CSRF token derived from the session id, and must not come from another site's page.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import secrets
import time
from dataclasses import dataclass
from typing import Literal, TypedDict
from urllib.parse import urlsplit

from fastapi import HTTPException, Request, status
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


class Sessions:
    """Issues, reads and revokes signed session cookies for one app."""

    def __init__(self, secret: bytes, tokens: list[str], max_age: int = SESSION_SECONDS) -> None:
        self._secret = secret
        self.tokens = tokens
        self.max_age = max_age
        self._fingerprints = {self.fingerprint(t) for t in tokens}
        self._revoked: dict[str, float] = {}  # session id → when it would have expired

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
        if not -60 <= age <= self.max_age or session.sid in self._revoked:
            return None
        if self.tokens and session.token not in self._fingerprints:
            return None  # its token was removed, or it was issued while the service was open
        return session

    def revoke(self, session: Session) -> None:
        """Logout: the cookie stops working here even if a copy of it survives in a browser."""
        now = time.time()
        self._revoked = {sid: until for sid, until in self._revoked.items() if until > now}
        self._revoked[session.sid] = session.issued + self.max_age

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
    per request (the rate limit asks before the route does)."""
    state = connection.scope.setdefault("state", {})
    if isinstance(found := state.get("identity"), Identity):
        return found
    sessions: Sessions = connection.app.state.sessions
    client = connection.client.host if connection.client else "unknown"
    scheme, _, presented = connection.headers.get("authorization", "").partition(" ")
    identity = Identity("none", f"addr:{client}")
    if not sessions.tokens:
        identity = Identity("open", f"addr:{client}", sessions.read(connection.cookies.get(COOKIE)))
    elif scheme.lower() == "bearer":
        if (fingerprint := sessions.token_fingerprint(presented)) is not None:
            identity = Identity("bearer", f"token:{fingerprint}")
    elif (session := sessions.read(connection.cookies.get(COOKIE))) is not None:
        identity = Identity("session", f"token:{session.token}", session)
    state["identity"] = identity
    return identity


async def require_token(request: Request) -> None:
    """The auth dependency. ``async`` on purpose: FastAPI sends a plain ``def`` dependency through
    a worker thread, a hop per request (and, under load, a wait for the GIL beside the
    diagnoses) for microseconds of work."""
    if identify(request).via == "none":
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


def require_csrf(request: Request, token: str) -> None:
    """The synchronizer-token check for form posts from a browser session; a bearer-header
    request is not a browser's ambient credential and needs none."""
    require_same_origin(request)
    identity = identify(request)
    if identity.via == "bearer":
        return
    sessions: Sessions = request.app.state.sessions
    if identity.session is None or not hmac.compare_digest(token.encode(), sessions.csrf(identity.session).encode()):
        request.app.state.metrics.rejected.labels("csrf").inc()
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, detail="missing or invalid CSRF token: reload the page and submit again"
        )
