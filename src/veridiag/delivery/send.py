"""Posting a report: one delivery per destination, each HTTP attempt recorded on the session.

A 5xx, a 429 (after its ``Retry-After``, up to the backoff cap), a receiver's rate-limit code
or a network error is retried with exponential backoff and jitter (tenacity) up to
``delivery.max_attempts``; any other 4xx or refusal is final at once. Every attempt lands in
the session's ``deliveries`` as it happens, so ``veridiag audit`` and the API show what was
tried even when the process stops half-way. Errors are recorded without the destination's
URL, secret or token (a webhook URL is itself a credential).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

import httpx2
from pydantic import BaseModel
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

from veridiag.config import DeliverySettings, DestinationSettings, Settings
from veridiag.contracts.delivery import AnswerReport, DeliveryAttempt, DeliveryOutcome
from veridiag.delivery import dingtalk, feishu, slack, webhook, wecom  # noqa: F401  (registers each kind)
from veridiag.delivery.destination import DESTINATIONS, Attempt, Reply
from veridiag.delivery.report import session_report
from veridiag.pipeline.report import stored_document
from veridiag.redaction import default_redactor

if TYPE_CHECKING:
    from veridiag.contracts.answer import AnswerDocument
    from veridiag.contracts.session import SessionRecord
    from veridiag.store import SessionStore


class DeliveryError(ValueError):
    """Nothing can be posted: an unknown destination, or no verified answer to post."""


class DeliveryResult(BaseModel):
    """How one destination's delivery ended."""

    destination: str
    kind: str
    outcome: Literal["delivered", "failed"]
    attempts: int
    error: str | None = None


class _TryAgainError(Exception):
    """An attempt worth repeating; ``retry_after`` is the receiver's own wish, in seconds."""

    def __init__(self, retry_after: float | None) -> None:
        super().__init__()
        self.retry_after = retry_after


def choose(settings: DeliverySettings, names: Sequence[str]) -> list[DestinationSettings]:
    """The configured destinations named (all of them for none named)."""
    configured = {target.name: target for target in settings.destinations}
    if not configured:
        raise DeliveryError("no destinations configured (delivery.destinations in veridiag.yaml)")
    unknown = [name for name in names if name not in configured]
    if unknown:
        raise DeliveryError(f"no destination named {', '.join(unknown)}; configured: {', '.join(configured)}")
    return [configured[name] for name in dict.fromkeys(names)] if names else list(configured.values())


def deliver_session(
    store: SessionStore,
    settings: Settings,
    session_id: str,
    names: Sequence[str] = (),
    *,
    document: AnswerDocument | None = None,
    client: httpx2.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[DeliveryResult]:
    """Post a completed session (its ``ask --json`` document, or the stored one) to the named
    destinations. A session that did not complete has no verified answer and is not posted."""
    targets = choose(settings.delivery, names)
    session = store.get_session(session_id)
    if session is None:
        raise DeliveryError(f"no session {session_id!r}")
    document = document or stored_document(session, {})
    if document is None or document.status != "completed":
        raise DeliveryError(f"session {session_id} is {session.status}: it has no verified answer to post")
    report = stored_report(store, settings, session, document)

    def record(attempt: DeliveryAttempt) -> None:
        store.record_delivery(session_id, attempt)

    return deliver(report, targets, settings.delivery, record=record, client=client, sleep=sleep)


def stored_report(
    store: SessionStore, settings: Settings, session: SessionRecord, document: AnswerDocument
) -> AnswerReport:
    """The report of a stored session as every destination gets it: its key facts in the
    answer's order, the culprit's series read from the invocations they cite."""
    return session_report(
        settings,
        document,
        session.query,
        "zh" if session.lang == "zh" else "en",
        invocations=store.get_invocations(cited_metrics(document)),
    )


def cited_metrics(document: AnswerDocument) -> list[int]:
    """The metrics invocations the allowed claims cite: where the culprit's series is read."""
    return list(
        dict.fromkeys(
            e.invocation_id
            for claim in document.claims
            if claim.allowed
            for e in claim.evidence
            if e.tool_name == "query_metrics" and e.invocation_id is not None
        )
    )


def deliver(
    report: AnswerReport,
    targets: Sequence[DestinationSettings],
    settings: DeliverySettings,
    *,
    record: Callable[[DeliveryAttempt], None],
    client: httpx2.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[DeliveryResult]:
    """Each target in turn; ``record`` hears every attempt."""
    own = client is None
    http = client or httpx2.Client(timeout=settings.timeout_seconds, follow_redirects=False)
    try:
        return [
            _deliver_one(report, target=target, settings=settings, record=record, http=http, sleep=sleep)
            for target in targets
        ]
    finally:
        if own:
            http.close()


def _deliver_one(
    report: AnswerReport,
    *,
    target: DestinationSettings,
    settings: DeliverySettings,
    record: Callable[[DeliveryAttempt], None],
    http: httpx2.Client,
    sleep: Callable[[float], None],
) -> DeliveryResult:
    destination = DESTINATIONS.as_dict()[target.kind]
    scrub = _scrubber(target)
    delivery_id = f"{report.session_id}-{secrets.token_hex(4)}"
    jitter = wait_exponential_jitter(
        initial=settings.backoff_seconds, max=settings.max_backoff_seconds, jitter=settings.backoff_seconds
    )

    def wait(state: RetryCallState) -> float:
        asked = state.outcome.exception() if state.outcome else None
        backoff = jitter(state)
        if isinstance(asked, _TryAgainError) and asked.retry_after is not None:
            return min(settings.max_backoff_seconds, max(backoff, asked.retry_after))
        return backoff

    last: DeliveryAttempt | None = None
    retrying = Retrying(
        stop=stop_after_attempt(settings.max_attempts),
        wait=wait,
        retry=retry_if_exception_type(_TryAgainError),
        sleep=sleep,
        reraise=True,
    )
    for try_ in retrying:
        with try_:
            number = try_.retry_state.attempt_number
            at, started = datetime.now(UTC), time.perf_counter()
            status: int | None = None
            retry_after: float | None = None
            try:
                outgoing = destination.request(report, target, Attempt(delivery_id, number, time.time()))
                response = http.post(outgoing.url, content=outgoing.body, headers=outgoing.headers)
                status = response.status_code
                reply = destination.reply(status, response.content)
                retry_after = _seconds(response.headers.get("retry-after"))
            except (httpx2.UnsupportedProtocol, httpx2.InvalidURL) as exc:
                reply = Reply("failed", f"{exc.__class__.__name__}: {exc}")
            except httpx2.TransportError as exc:  # connection, timeout, protocol: worth another try
                reply = Reply("retry", f"{exc.__class__.__name__}: {exc}")
            again = reply.outcome == "retry" and number < settings.max_attempts
            outcome: DeliveryOutcome = (
                "retrying" if again else "failed" if reply.outcome != "delivered" else "delivered"
            )
            last = DeliveryAttempt(
                destination=target.name,
                kind=target.kind,
                attempt=number,
                at=at,
                outcome=outcome,
                status_code=status,
                error=scrub(reply.error) if reply.error else None,
                latency_ms=round((time.perf_counter() - started) * 1000, 1),
            )
            record(last)
            if again:
                raise _TryAgainError(retry_after)
    assert last is not None  # the loop runs at least once and ends on a recorded attempt
    return DeliveryResult(
        destination=target.name,
        kind=target.kind,
        outcome="delivered" if last.outcome == "delivered" else "failed",
        attempts=last.attempt,
        error=last.error,
    )


def _scrubber(target: DestinationSettings) -> Callable[[str], str]:
    """Error text without the target's credentials, then through the default redactor."""
    known = [value.get_secret_value() for value in (target.url, target.secret, target.token) if value is not None]
    redactor = default_redactor()

    def scrub(text: str) -> str:
        for value in known:
            if value:
                text = text.replace(value, f"[REDACTED:{target.kind}]")
        return redactor.redact(text)[:500]

    return scrub


def _seconds(value: str | None) -> float | None:
    """``Retry-After`` in seconds (the HTTP-date form is rare from chat APIs and is ignored)."""
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
