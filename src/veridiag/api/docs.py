"""``/api/docs``: Swagger UI served from this process, not from a CDN.

FastAPI's built-in page loads its JavaScript from jsDelivr, so on a machine without
internet (where on-call tools often run) it stays blank. The Swagger UI files come from
the ``fastapi-offline`` package; the page itself is FastAPI's own HTML helper.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/api/docs-assets"
OPENAPI_URL = "/api/openapi.json"

docs = APIRouter(include_in_schema=False)


def assets() -> StaticFiles:
    """The Swagger UI bundle, stylesheet and icon, to mount at ``ASSETS_URL``."""
    return StaticFiles(directory=Path(str(files("fastapi_offline") / "static")))


@docs.get("/api/docs", response_class=HTMLResponse)
def swagger_ui() -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=OPENAPI_URL,
        title="veridiag API",
        swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
    )
