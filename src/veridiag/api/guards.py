"""ASGI middleware that runs before any route: request ids and the last-resort 500, the
allowed-hosts check, the body size limit and the rate limit. Pure ASGI (no ``BaseHTTPMiddleware``)
so a body is counted as it streams in and never buffered here.

Order, outermost first (``create_app``): request context → trusted proxy headers (when
configured) → allowed hosts → body size → rate limit → the app (auth, parsing, routes).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence

from fastapi import HTTPException
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter
from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from veridiag.api.errors import REQUEST_ID_HEADER, accepted_request_id, error_response
from veridiag.api.metrics import ServiceMetrics
from veridiag.api.security import identified

log = logging.getLogger("veridiag.api")

#: Never rate limited: liveness probes and static files (the sign-in page needs its stylesheet).
UNLIMITED_PREFIXES = ("/healthz", "/static/")
WILDCARD_BINDS = ("0.0.0.0", "::", "[::]")


class RequestContext:
    """Gives each request an id (a sane incoming ``X-Request-ID``, else a new one), puts it on
    every response, and turns an unhandled exception into a generic 500 JSON error: the
    exception, its text and traceback go to the server log under that id, never to the client."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = accepted_request_id(Headers(scope=scope).get(REQUEST_ID_HEADER))
        scope.setdefault("state", {})["request_id"] = rid
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                message["headers"] = [*headers, (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            log.exception("unhandled error in %s %s [request_id=%s]", scope.get("method"), scope.get("path"), rid)
            if not started:
                response = error_response(
                    scope, 500, "internal_error", "internal error; the server log has the details under this request id"
                )
                await response(scope, receive, send_with_id)


class AllowedHosts:
    """Starlette's ``TrustedHostMiddleware`` decides; its plain-text 400 becomes our JSON error."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str], metrics: ServiceMetrics) -> None:
        self.app = app
        self.metrics = metrics
        self.check = TrustedHostMiddleware(self._passed, allowed_hosts=list(allowed_hosts), www_redirect=False)

    async def _passed(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["veridiag.host_ok"] = True
        await self.app(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.check(scope, receive, send)
            return

        async def send_or_replace(message: Message) -> None:
            if scope.get("veridiag.host_ok"):
                await send(message)
            elif message["type"] == "http.response.start":  # the check refused the request
                self.metrics.rejected.labels("host").inc()
                response = error_response(
                    scope, 400, "invalid_host", "this server does not answer to that Host (see api_allowed_hosts)"
                )
                await response(scope, receive, send)

        await self.check(scope, receive, send_or_replace)


def allowed_hosts(configured: Sequence[str], bind_host: str | None) -> list[str]:
    """The configured host patterns, else the loopback names and the host the server binds."""
    if configured:
        return list(configured)
    hosts = ["localhost", "127.0.0.1", "[::1]"]
    if bind_host and not wildcard_bind(bind_host):
        name = f"[{bind_host.strip('[]')}]" if ":" in bind_host else bind_host.lower()
        if name not in hosts:
            hosts.append(name)
    return hosts


def wildcard_bind(host: str) -> bool:
    """A bind on every interface: nobody writes its address in a URL, so Host names must be listed."""
    return host in WILDCARD_BINDS


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` as the count passes the limit: FastAPI re-raises HTTP exceptions
    from body parsing, so the app's handler answers 413 (or this middleware does)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, detail=f"request body larger than {limit} bytes", headers={"Connection": "close"})


class BodyLimit:
    """Counts the bytes of ``http.request`` messages and stops at ``max_bytes``: a larger declared
    ``Content-Length`` is refused before the app reads anything; a chunked body as soon as the
    running count passes the limit. ``Connection: close`` on the 413 so the server drops the
    rest of the body instead of reading it."""

    def __init__(self, app: ASGIApp, max_bytes: int, metrics: ServiceMetrics) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.metrics = metrics

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, *, count: bool = True) -> None:
        if count:
            self.metrics.rejected.labels("too_large").inc()
        message = f"request body larger than {self.max_bytes} bytes"
        response = error_response(scope, 413, "payload_too_large", message, headers={"Connection": "close"})
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and not (declared.isascii() and declared.isdigit()):  # "²" is a digit to isdigit
            await error_response(scope, 400, "bad_request", "invalid Content-Length")(scope, receive, send)
            return
        # a number of more digits than the limit's is over it (and int refuses one of over 4300)
        if declared is not None and (
            len(declared.lstrip("0")) > len(str(self.max_bytes)) or int(declared) > self.max_bytes
        ):
            await self._refuse(scope, receive, send)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    self.metrics.rejected.labels("too_large").inc()
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge:
            if not started:  # a part of the app that let it through: answer here
                await self._refuse(scope, receive, send, count=False)


class RateLimiter:
    """Requests per identity over a moving window (``limits``, in memory: one process)."""

    def __init__(self, rate: str) -> None:
        self.items: list[RateLimitItem] = parse_many(rate)
        self.limiter = MovingWindowRateLimiter(MemoryStorage())

    def hit(self, key: str) -> tuple[int, RateLimitItem] | None:
        """None when the request may go on, else the seconds to wait and the limit it passed."""
        for item in self.items:
            if not self.limiter.hit(item, key):
                reset, _remaining = self.limiter.get_window_stats(item, key)
                return max(1, math.ceil(reset - time.time())), item
        return None


class RateLimit:
    """429 with ``Retry-After`` once an identity (token, else client address) is over the limit.
    The limiter lives on ``app.state.rate_limiter`` (None: no limit), asked before auth so
    failed sign-ins count against their address. An app this wraps from outside (the MCP
    endpoint) gives its own limiter and its own way to tell identities apart."""

    def __init__(
        self,
        app: ASGIApp,
        metrics: ServiceMetrics,
        limiter: RateLimiter | None = None,
        key: Callable[[HTTPConnection], str] | None = None,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.limiter = limiter
        self.key = key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(UNLIMITED_PREFIXES):
            await self.app(scope, receive, send)
            return
        connection = HTTPConnection(scope)
        limiter: RateLimiter | None = self.limiter or connection.app.state.rate_limiter
        if limiter is None:
            await self.app(scope, receive, send)
            return
        refused = limiter.hit(self.key(connection) if self.key else (await identified(connection)).key)
        if refused is None:
            await self.app(scope, receive, send)
            return
        wait, item = refused
        self.metrics.rejected.labels("rate_limited").inc()
        message = f"too many requests: the limit is {item}; retry after {wait} s"
        await error_response(scope, 429, "rate_limited", message, headers={"Retry-After": str(wait)})(
            scope, receive, send
        )
