"""The HTTP service and the Trace Workbench (``veridiag serve``)."""

from veridiag.api.app import create_app

__all__ = ["create_app"]
