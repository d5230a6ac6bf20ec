"""Bearer-token auth. With no tokens configured the API is open (loopback use); ``veridiag serve``
refuses a non-loopback bind without tokens, so an open API is never exposed by accident."""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import HTTPException, Request, status


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


COOKIE = "veridiag_token"


def valid(token: str, tokens: list[str]) -> bool:
    return bool(token) and any(hmac.compare_digest(token.strip().encode(), t.encode()) for t in tokens)


def require_token(request: Request) -> None:
    tokens: list[str] = request.app.state.tokens
    if not tokens:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":  # the workbench in a browser: the cookie set by /login
        token = request.cookies.get(COOKIE, "")
    if not valid(token, tokens):
        request.app.state.metrics.rejected.labels("auth").inc()
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            detail="missing or invalid bearer token (Authorization: Bearer <token>)",
            headers={"WWW-Authenticate": "Bearer"},
        )
