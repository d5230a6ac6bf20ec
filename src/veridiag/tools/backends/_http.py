"""A small JSON-over-HTTP helper for the Prometheus and Loki adapters (httpx2), with retries."""

from __future__ import annotations

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
    client: httpx2.Client, path: str, params: Mapping[str, str | int | float], backoff: Backoff | None = None
) -> JsonObject:
    """The server's JSON object, as it sent it (the adapter reads what it needs); a refusal is a
    ``QueryError``, anything else that is no answer an ``UnavailableError``. Connection failures,
    429 and 5xx are retried with ``backoff``; a timed-out request is not (another would wait as
    long again, past the tool call's own timeout), nor is a refused query."""
    return (backoff or Backoff()).retrying(_retryable)(_get_json, client, path, params)


def _get_json(client: httpx2.Client, path: str, params: Mapping[str, str | int | float]) -> JsonObject:
    try:
        response = client.get(path, params=params)
    except httpx2.TimeoutException as exc:
        raise UnavailableError(f"timed out after {client.timeout.read}s ({exc.__class__.__name__})") from None
    except (httpx2.ConnectError, httpx2.RemoteProtocolError) as exc:
        raise RetryableError(f"{exc.__class__.__name__}: {exc}") from None
    except httpx2.HTTPError as exc:
        raise UnavailableError(f"{exc.__class__.__name__}: {exc}") from None
    try:
        body: JsonValue = response.json()
    except ValueError:
        body = None
    if response.status_code >= 400:
        message = body.get("error") if isinstance(body, dict) else None
        message = message or response.text.strip()[:500] or response.reason_phrase
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
