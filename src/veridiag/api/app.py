"""The HTTP service: JSON API, Prometheus metrics and the Trace Workbench, on one app."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from veridiag import __version__
from veridiag.api.docs import ASSETS_URL, OPENAPI_URL, assets, docs
from veridiag.api.metrics import ServiceMetrics
from veridiag.api.routes import api, ops
from veridiag.api.workbench import signin, workbench
from veridiag.config import Settings
from veridiag.pipeline.factory import Assembly, assemble

STATIC = Path(__file__).parent / "static"


def create_app(settings: Settings | None = None, *, assembly: Assembly | None = None) -> FastAPI:
    """The app for ``settings`` (or an already assembled pipeline, as tests and benchmarks use)."""
    settings = settings or Settings()
    app = application()
    app.state.assembly = assembly or assemble(settings)
    app.state.tokens = settings.tokens
    app.state.metrics = ServiceMetrics()
    app.state.background = set[asyncio.Task[Any]]()
    app.state.diagnosis_limiter = anyio.CapacityLimiter(settings.api_concurrency)
    return app


def application() -> FastAPI:
    """Routes, static files and error handlers, without state (the OpenAPI document comes from here)."""
    app = FastAPI(
        title="veridiag",
        version=__version__,
        summary="Diagnosis answers that contain only what the evidence supports.",
        docs_url=None,  # served by ``api.docs`` without a CDN
        openapi_url=OPENAPI_URL,
        redoc_url=None,
    )
    app.include_router(api)
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


def _error(status: int, code: str, message: str, details: list[dict[str, Any]] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, "details": details or []}}, status_code=status)


async def _invalid(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    request.app.state.metrics.rejected.labels("invalid").inc()
    details = [
        {"field": ".".join(str(p) for p in error["loc"] if p != "body") or "body", "problem": error["msg"]}
        for error in exc.errors()
    ]
    message = "; ".join(f"{d['field']}: {d['problem']}" for d in details[:5])
    return _error(422, "invalid_request", message or "invalid request", details)


async def _http_error(request: Request, exc: Exception) -> JSONResponse | RedirectResponse:
    assert isinstance(exc, HTTPException)
    if (
        exc.status_code == 401
        and not request.url.path.startswith("/api")
        and "text/html" in request.headers.get("accept", "")
    ):
        return RedirectResponse("/login", status_code=303)
    codes = {401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed", 503: "unavailable"}
    response = _error(exc.status_code, codes.get(exc.status_code, "error"), str(exc.detail))
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    return response
