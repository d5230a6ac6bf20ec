"""The HTTP service: JSON API, Prometheus metrics and the Trace Workbench, on one app."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from veridiag import __version__
from veridiag.alerts.worker import job_queue
from veridiag.api.alerts import alerts
from veridiag.api.docs import ASSETS_URL, assets, docs
from veridiag.api.errors import error_response
from veridiag.api.guards import AllowedHosts, BodyLimit, RateLimit, RateLimiter, RequestContext, allowed_hosts
from veridiag.api.metrics import ServiceMetrics
from veridiag.api.routes import api, ops
from veridiag.api.security import Sessions
from veridiag.api.workbench import signin, workbench
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble
from veridiag.store.revocations import RevokedSessions

STATIC = Path(__file__).parent / "static"


def create_app(
    settings: Settings | None = None, *, assembly: Assembly | None = None, bind_host: str | None = None
) -> FastAPI:
    """The app for ``settings`` (or an already assembled pipeline, as tests and benchmarks use);
    ``bind_host`` joins the default allowed hosts."""
    settings = settings or Settings()
    app = application()
    app.state.assembly = assembly or assemble(settings)
    app.state.settings = settings
    app.state.tokens = settings.tokens
    app.state.metrics = ServiceMetrics()
    app.state.background = set[asyncio.Task[Any]]()
    app.state.diagnosis_limiter = anyio.CapacityLimiter(settings.api_concurrency)
    secret = settings.api_session_secret.get_secret_value().encode() or secrets.token_bytes(32)
    revoked = RevokedSessions(app.state.assembly.store.engine)
    app.state.sessions = Sessions(
        secret, settings.tokens, revoked=revoked, unverified=app.state.metrics.unverified_sessions
    )
    app.state.open_metrics = settings.api_open_metrics
    app.state.rate_limiter = RateLimiter(settings.api_rate_limit) if settings.api_rate_limit else None
    app.state.alert_settings = settings.alerts
    app.state.alert_queue = job_queue(app.state.assembly.store, settings.alerts)
    # add_middleware wraps what is there: the last added runs first (see api/guards.py).
    metrics = app.state.metrics
    app.add_middleware(RateLimit, metrics=metrics)
    app.add_middleware(BodyLimit, max_bytes=settings.api_max_body_bytes, metrics=metrics)
    hosts = allowed_hosts(settings.api_allowed_hosts, bind_host)
    app.add_middleware(AllowedHosts, allowed_hosts=hosts, metrics=metrics)
    if settings.api_trusted_proxies:
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.api_trusted_proxies)
    app.add_middleware(RequestContext)
    return app


def application() -> FastAPI:
    """Routes, static files and error handlers, without state (the OpenAPI document comes from here)."""
    app = FastAPI(
        title="veridiag",
        version=__version__,
        summary="Diagnosis answers that contain only what the evidence supports.",
        docs_url=None,  # ``api.docs`` serves the page (without a CDN) and the schema, behind auth
        openapi_url=None,
        redoc_url=None,
    )
    app.include_router(api)
    app.include_router(alerts)
    app.include_router(ops)
    app.include_router(signin)
    app.include_router(workbench)
    app.include_router(docs)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.mount(ASSETS_URL, assets(), name="docs-assets")
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http_error)
    return app


def openapi_text() -> str:
    """The committed ``schemas/openapi.json`` (``make schemas``; a test keeps it in step)."""
    return json.dumps(application().openapi(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    422: "invalid_request",
    429: "rate_limited",
    503: "unavailable",
}


async def _invalid(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    request.app.state.metrics.rejected.labels("invalid").inc()
    details = [
        {
            "field": ".".join(str(p) for p in error["loc"] if p != "body") or "body",
            "problem": error["msg"].removeprefix("Value error, "),  # pydantic's prefix for our own checks
        }
        for error in exc.errors()
    ]
    message = "; ".join(f"{d['field']}: {d['problem']}" for d in details[:5])
    return error_response(request.scope, 422, "invalid_request", message or "invalid request", details=details)


async def _http_error(request: Request, exc: Exception) -> JSONResponse | RedirectResponse:
    assert isinstance(exc, HTTPException)
    if (
        exc.status_code == 401
        and not request.url.path.startswith("/api")
        and "text/html" in request.headers.get("accept", "")
    ):
        return RedirectResponse("/login", status_code=303)
    code = _CODES.get(exc.status_code, "error")
    return error_response(request.scope, exc.status_code, code, str(exc.detail), headers=exc.headers)
