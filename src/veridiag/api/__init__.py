"""The HTTP service and the Trace Workbench (``veridiag serve``)."""

from typing import TYPE_CHECKING

from veridiag._lazy import lazy_exports

if TYPE_CHECKING:
    from veridiag.api.app import create_app

# Lazy (``veridiag._lazy``): the MCP server reads the request model and the token check without
# loading the app, its routes and the workbench (~1 s of imports under load, measured).
__getattr__ = lazy_exports(__name__, {".app": ("create_app",)})

__all__ = ["create_app"]
