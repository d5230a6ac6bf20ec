"""The MCP server (``veridiag mcp``): the pipeline, the audit, the evidence tools and the
Gatekeeper as tools for MCP clients, over stdio or streamable HTTP."""

from typing import TYPE_CHECKING

from veridiag._lazy import lazy_exports

if TYPE_CHECKING:
    from veridiag.mcp_server.http import http_app
    from veridiag.mcp_server.server import build_server

# Lazy (``veridiag._lazy``): over stdio the HTTP side (the API's guards, uvicorn) is not loaded.
__getattr__ = lazy_exports(__name__, {".http": ("http_app",), ".server": ("build_server",)})

__all__ = ["build_server", "http_app"]
