"""The MCP server over streamable HTTP, behind the API's bearer tokens and allowed hosts.

Auth goes through the SDK's own extension point (a ``TokenVerifier``; the SDK then answers 401
with ``WWW-Authenticate`` and binds each MCP session to the token that opened it), and the
token comparison is the API's (``api.security.valid``), so one ``VERIDIAG_API_TOKENS`` serves
both. The tokens are this service's configuration, not an OAuth server's, so no OAuth metadata is
published: the issuer named in ``AuthSettings`` is the server itself.
"""

from __future__ import annotations

import hashlib

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp

from veridiag.api.guards import AllowedHosts, RateLimit, RateLimiter, allowed_hosts
from veridiag.api.metrics import ServiceMetrics
from veridiag.api.security import valid
from veridiag.config import Settings
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


def http_app(assembly: Assembly, settings: Settings, *, host: str, port: int) -> ASGIApp:
    """The ASGI app for ``host:port``: with tokens configured, none is served without one."""
    verifier = ApiTokens(settings.tokens) if settings.tokens else None
    netloc = f"[{host.strip('[]')}]:{port}" if ":" in host else f"{host}:{port}"
    auth = AuthSettings(issuer_url=f"http://{netloc}", resource_server_url=None) if verifier else None
    server = build_server(assembly, concurrency=settings.api_concurrency, token_verifier=verifier, auth=auth)
    app: ASGIApp = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    hosts = allowed_hosts(settings.api_allowed_hosts, host)
    metrics = ServiceMetrics()
    if settings.api_rate_limit:  # the API's limit, per token (else per address), as for the API
        key = verifier.client_key if verifier else _address
        app = RateLimit(app, metrics, RateLimiter(settings.api_rate_limit), key=key)
    return AllowedHosts(app, allowed_hosts=hosts, metrics=metrics)
