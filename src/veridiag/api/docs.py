"""``/api/docs``: Swagger UI served from this process, not from a CDN; with its schema
(``/api/openapi.json``) and files behind the same auth as the API.

FastAPI's built-in page loads its JavaScript from jsDelivr, so on a machine without
internet (where on-call tools often run) it stays blank. The Swagger UI files come from
the ``fastapi-offline`` package; the page itself is FastAPI's own HTML helper.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, Depends, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from veridiag.api.bodies import CleanRoute
from veridiag.api.security import require_token
from veridiag.contracts.json import JsonObject

ASSETS_URL = "/api/docs-assets"
OPENAPI_URL = "/api/openapi.json"

docs = APIRouter(route_class=CleanRoute, include_in_schema=False, dependencies=[Depends(require_token)])


class _Authenticated:
    """A mounted app behind ``require_token`` (its 401 is the app's JSON error)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await require_token(Request(scope))
        await self.app(scope, receive, send)


def assets() -> ASGIApp:
    """The Swagger UI bundle, stylesheet and icon, to mount at ``ASSETS_URL``."""
    return _Authenticated(StaticFiles(directory=Path(str(files("fastapi_offline") / "static"))))


@docs.get(OPENAPI_URL, response_model=None)  # the document as the app builds it, not re-validated
def openapi(request: Request) -> JsonObject:
    return request.app.openapi()  # type: ignore[no-any-return]


@docs.get("/api/docs", response_class=HTMLResponse)
def swagger_ui() -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=OPENAPI_URL,
        title="veridiag API",
        swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
    )
