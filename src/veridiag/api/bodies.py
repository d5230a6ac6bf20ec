"""JSON request bodies sanitised where FastAPI reads them, for every route.

``json.loads`` turns ``"\\ud800"`` into a lone surrogate that no UTF-8 encoder accepts: the
store, the response and the log would each fail on it later, as a 500. Every router uses
``CleanRoute``, whose request reads its JSON through ``contracts/sanitize.py`` (lone
surrogates and control characters as U+FFFD, bidi controls removed) and counts the strings
it repaired in ``request.state.repaired`` (an alert receipt reports them). The raw bytes stay
as sent: a signature is checked over what the sender signed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from veridiag.contracts.sanitize import clean_json, count_unclean


class CleanRequest(Request):
    """A request whose ``json()`` is sanitised."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            value = json.loads(await self.body())
            self.state.repaired = count_unclean(value)
            self._json = clean_json(value)
        return self._json


class CleanRoute(APIRoute):
    """A route whose handler and dependencies see a ``CleanRequest``."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def clean_handler(request: Request) -> Response:
            return await handler(CleanRequest(request.scope, request.receive))

        return clean_handler


def repaired(request: Request) -> int:
    """How many strings of the request's JSON body were repaired (0 before it is read)."""
    return int(getattr(request.state, "repaired", 0))
