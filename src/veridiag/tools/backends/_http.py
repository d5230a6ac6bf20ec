"""A small JSON-over-HTTP helper for the Prometheus and Loki adapters (httpx2), with retries."""

from __future__ import annotations

import json
from collections.abc import Mapping

import httpx2

from veridiag._retry import Backoff
from veridiag.contracts.json import JsonObject, JsonValue

#: Answers worth another attempt: throttled, or the server (or a proxy before it) is briefly down.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class QueryError(ValueError):
    """The server refused the query (bad PromQL/LogQL, bad range): its message, verbatim."""


class UnavailableError(RuntimeError):
    """The server is down, slow or answered nonsense."""


class RetryableError(UnavailableError):
    """Unavailable for now (refused connection, 429, 5xx): another attempt may succeed."""


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, RetryableError)


def get_json(
    client: httpx2.Client,
    path: str,
    params: Mapping[str, str | int | float],
    backoff: Backoff | None = None,
    *,
    max_bytes: int | None = None,
) -> JsonObject:
    """The server's JSON object, as it sent it (the adapter reads what it needs); a refusal is a
    ``QueryError``, anything else that is no answer an ``UnavailableError``. Connection failures,
    429 and 5xx are retried with ``backoff``; a timed-out request is not (another would wait as
    long again, past the tool call's own timeout), nor is a refused query. ``max_bytes``: a body
    longer than that is not read on (``TooLargeError``, not retried)."""
    return (backoff or Backoff()).retrying(_retryable)(_get_json, client, path, params, max_bytes)


class TooLargeError(UnavailableError):
    """The answer is longer than the adapter reads (``max_bytes``)."""


def _get_json(
    client: httpx2.Client, path: str, params: Mapping[str, str | int | float], max_bytes: int | None = None
) -> JsonObject:
    try:
        with client.stream("GET", path, params=params) as response:
            content = _bounded(response, max_bytes)
    except httpx2.TimeoutException as exc:
        raise UnavailableError(f"timed out after {client.timeout.read}s ({exc.__class__.__name__})") from None
    except (httpx2.ConnectError, httpx2.RemoteProtocolError) as exc:
        raise RetryableError(f"{exc.__class__.__name__}: {exc}") from None
    except httpx2.HTTPError as exc:
        raise UnavailableError(f"{exc.__class__.__name__}: {exc}") from None
    try:
        body: JsonValue = json.loads(content)
    except (ValueError, RecursionError):
        body = None
    if response.status_code >= 400:
        text = content.decode("utf-8", "replace")
        message = _message(body) or text.strip()[:500] or response.reason_phrase
        if response.status_code in RETRY_STATUSES:
            raise RetryableError(f"HTTP {response.status_code}: {message}")
        if 400 <= response.status_code < 500:
            raise QueryError(f"HTTP {response.status_code}: {message}")
        raise UnavailableError(f"HTTP {response.status_code}: {message}")
    if not isinstance(body, dict):
        raise UnavailableError(f"HTTP {response.status_code}: response is not a JSON object")
    if body.get("status") == "error":
        raise QueryError(str(body.get("error") or "query failed"))
    return body


def _bounded(response: httpx2.Response, max_bytes: int | None) -> bytes:
    """The body, read only as far as ``max_bytes`` (its length header is believed when it says
    more: nothing is read then)."""
    if max_bytes is None:
        return response.read()
    said = response.headers.get("content-length", "")
    if said.isdigit() and int(said) > max_bytes:
        raise TooLargeError(f"the answer is {int(said)} bytes, more than the {max_bytes} bytes read")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise TooLargeError(f"the answer is more than the {max_bytes} bytes read")
        chunks.append(chunk)
    return b"".join(chunks)


def _message(body: JsonValue) -> str | None:
    """An error body's message: Prometheus' and Loki's ``error``, jaeger-query's ``errors[].msg``,
    a ``message``."""
    if not isinstance(body, dict):
        return None
    for key in ("error", "message"):
        if isinstance(found := body.get(key), str) and found:
            return found
    errors = body.get("errors")
    if isinstance(errors, list):
        said = [str(e.get("msg")) for e in errors if isinstance(e, dict) and e.get("msg")]
        return "; ".join(said) or None
    return None
