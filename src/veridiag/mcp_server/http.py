"""The MCP server over streamable HTTP, behind the API's bearer tokens and allowed hosts.

Auth goes through the SDK's own extension point (a ``TokenVerifier``; the SDK then answers 401
with ``WWW-Authenticate`` and binds each MCP session to the token that opened it), and the
token comparison is the API's (``api.security.valid``), so one ``VERIDIAG_API_TOKENS`` serves
both. The tokens are this service's configuration, not an OAuth server's, so no OAuth metadata is
published: the issuer named in ``AuthSettings`` is the server itself.
"""

from __future__ import annotations

import contextlib
import hashlib

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from veridiag.api.guards import AllowedHosts, RateLimit, RateLimiter, allowed_hosts
from veridiag.api.metrics import ServiceMetrics
from veridiag.api.security import valid
from veridiag.config import Settings
from veridiag.contracts.sanitize import repair_json_surrogates
from veridiag.mcp_server.server import build_server
from veridiag.pipeline.factory import Assembly

#: Where the MCP endpoint is served (the SDK's default path, which clients expect).
MCP_PATH = "/mcp"


class ApiTokens:
    """Accepts the API's bearer tokens; the client id is a digest of the token, never the token."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        if not valid(token, self.tokens):
            return None
        return AccessToken(token=token, client_id=_digest(token), scopes=[])

    def client_key(self, connection: HTTPConnection) -> str:
        """Whom a request counts against for the rate limit: its valid token, else its address."""
        scheme, _, presented = connection.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and valid(presented, self.tokens):
            return _digest(presented)
        return _address(connection)


def _address(connection: HTTPConnection) -> str:
    return f"addr:{connection.client.host if connection.client else 'unknown'}"


def _digest(token: str) -> str:
    return f"token:{hashlib.sha256(token.strip().encode()).hexdigest()[:16]}"


class RepairedBodies:
    """A POST body's lone surrogate escapes read as U+FFFD before the SDK parses it, which would
    refuse the message as a parse error (as over stdio, ``mcp_server/stdio.py``). The repair keeps
    the body's length (six characters for six), so its ``Content-Length`` still holds."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: nothing to repair
                await self.app(scope, _replay(message, receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        with contextlib.suppress(UnicodeDecodeError):  # not UTF-8: the SDK says so itself
            body = repair_json_surrogates(body.decode("utf-8")).encode("utf-8")
        await self.app(scope, _replay({"type": "http.request", "body": body, "more_body": False}, receive), send)


def _replay(first: Message, receive: Receive) -> Receive:
    """``first``, then what ``receive`` brings (a disconnect)."""
    pending = [first]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed


def http_app(assembly: Assembly, settings: Settings, *, host: str, port: int) -> ASGIApp:
    """The ASGI app for ``host:port``: with tokens configured, none is served without one."""
    verifier = ApiTokens(settings.tokens) if settings.tokens else None
    netloc = f"[{host.strip('[]')}]:{port}" if ":" in host else f"{host}:{port}"
    auth = AuthSettings(issuer_url=f"http://{netloc}", resource_server_url=None) if verifier else None
    server = build_server(assembly, concurrency=settings.api_concurrency, token_verifier=verifier, auth=auth)
    app: ASGIApp = RepairedBodies(server.streamable_http_app(streamable_http_path=MCP_PATH, host=host))
    hosts = allowed_hosts(settings.api_allowed_hosts, host)
    metrics = ServiceMetrics()
    if settings.api_rate_limit:  # the API's limit, per token (else per address), as for the API
        key = verifier.client_key if verifier else _address
        app = RateLimit(app, metrics, RateLimiter(settings.api_rate_limit), key=key)
    return AllowedHosts(app, allowed_hosts=hosts, metrics=metrics)
