"""The MCP server (``veridiag mcp``): the pipeline, the audit, the evidence tools and the
Gatekeeper as tools for MCP clients, over stdio or streamable HTTP."""

from veridiag.mcp_server.http import http_app
from veridiag.mcp_server.server import build_server

__all__ = ["build_server", "http_app"]
