"""One shape for every error the service sends: ``{"error": {"code", "message", "details",
"request_id"}}``, the id also in the ``X-Request-ID`` header (the middleware sets it)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence

from fastapi.responses import JSONResponse
from starlette.types import Scope

REQUEST_ID_HEADER = "X-Request-ID"
#: An incoming id is kept when it looks like one (UUIDs, trace ids); anything else is replaced,
#: so nothing a client sends reaches the logs unchecked.
_SANE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def accepted_request_id(incoming: str | None) -> str:
    if incoming and _SANE_ID.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


def request_id(scope: Scope) -> str:
    """The id the request-context middleware gave this request."""
    state = scope.setdefault("state", {})
    if "request_id" not in state:  # an app mounted without the middleware
        state["request_id"] = uuid.uuid4().hex
    return str(state["request_id"])


def error_response(
    scope: Scope,
    status: int,
    code: str,
    message: str,
    *,
    details: Sequence[Mapping[str, str]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    rid = request_id(scope)
    body = {"error": {"code": code, "message": message, "details": list(details or []), "request_id": rid}}
    return JSONResponse(body, status_code=status, headers={**(headers or {}), REQUEST_ID_HEADER: rid})
