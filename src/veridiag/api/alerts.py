"""``/api/v1/alerts/{alertmanager,grafana,pagerduty}``: alert intake. Each delivery is recorded
and its new firing alerts queued as diagnoses (one per service); the answer is ``202`` with the
job ids — the workers run them (``veridiag worker``, or ``serve``'s own). A bad body is a 422
naming the field, as the sender wrote it.

Auth: the API's bearer tokens (Alertmanager's ``http_config.authorization``, Grafana's
authorization header). A sender that signs (PagerDuty, Grafana with an HMAC secret) may sign
instead once ``alerts.pagerduty_secret`` / ``alerts.grafana_secret`` is set; a wrong signature,
or a signed timestamp more than 5 minutes old (a replay), is refused, and an unsigned delivery
then needs a valid token even on an open API. A signed Grafana delivery without the configured
timestamp header is refused too: its signature alone could be replayed at any time.

A group's bad alert is refused alone (``refused`` in the receipt, with the reason) and the good
ones are taken; strings with lone surrogates or control characters are repaired on reading
(``api/bodies.py``; counted in ``repaired``), never a 500.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import anyio.to_thread
from fastapi import APIRouter, Depends, HTTPException, Request, status

from veridiag.alerts.intake import take
from veridiag.alerts.payloads import AlertmanagerWebhook, GrafanaWebhook, PagerDutyWebhook
from veridiag.alerts.signatures import grafana_signed, pagerduty_signed, stale
from veridiag.api.bodies import CleanRoute, repaired
from veridiag.api.schemas import ErrorBody
from veridiag.api.security import identified, require_token
from veridiag.config import AlertSettings
from veridiag.contracts.alerts import AlertJob, AlertSource, IntakeReceipt, ReceivedAlert, RefusedAlert

alerts = APIRouter(
    route_class=CleanRoute,
    prefix="/api/v1/alerts",
    tags=["alerts"],
    responses={code: {"model": ErrorBody} for code in (400, 401, 404, 413, 422, 429, 500)},
)

#: A sender's signature check: None when the delivery is authentic, else why it is refused.
Check = Callable[[bytes, Request, AlertSettings], str | None]


def _refuse(detail: str, request: Request) -> HTTPException:
    request.app.state.metrics.rejected.labels("auth").inc()
    return HTTPException(status.HTTP_401_UNAUTHORIZED, detail=detail, headers={"WWW-Authenticate": "Bearer"})


def signed_or_token(
    secret_of: Callable[[AlertSettings], str], header_of: Callable[[AlertSettings], str], check: Check
) -> Callable[..., object]:
    """The auth dependency of a sender that signs: its signature when a secret is set, else
    (or without the header) the API's bearer token."""

    async def dependency(request: Request) -> None:
        settings: AlertSettings = request.app.state.alert_settings
        if not secret_of(settings):
            await require_token(request)
            return
        header = header_of(settings)
        if request.headers.get(header) is not None:
            if (refusal := check(await request.body(), request, settings)) is not None:
                raise _refuse(refusal, request)
            return
        if (await identified(request)).via != "bearer":
            raise _refuse(f"unsigned delivery: send {header} or a bearer token", request)

    return dependency


_PAGERDUTY_HEADER = "X-PagerDuty-Signature"


def _pagerduty(body: bytes, request: Request, settings: AlertSettings) -> str | None:
    header = request.headers.get(_PAGERDUTY_HEADER, "")
    if pagerduty_signed(body, header, settings.pagerduty_secret.get_secret_value()):
        return None
    return f"{_PAGERDUTY_HEADER} does not match the body"


def _grafana(body: bytes, request: Request, settings: AlertSettings) -> str | None:
    name, stamp_name = settings.grafana_signature_header, settings.grafana_timestamp_header
    timestamp = request.headers.get(stamp_name) if stamp_name else None
    if stamp_name and timestamp is None:  # a signature without its time could be replayed forever
        return f"{stamp_name} is missing: a signed delivery must carry its timestamp"
    secret = settings.grafana_secret.get_secret_value()
    if not grafana_signed(body, request.headers.get(name, ""), secret, timestamp):
        return f"{name} does not match the body" + (f" and {stamp_name}" if timestamp is not None else "")
    if timestamp is not None and (why := stale(timestamp, time.time())) is not None:
        return f"{stamp_name} {why}"
    return None


pagerduty_auth = signed_or_token(
    lambda s: s.pagerduty_secret.get_secret_value(), lambda _: _PAGERDUTY_HEADER, _pagerduty
)
grafana_auth = signed_or_token(
    lambda s: s.grafana_secret.get_secret_value(), lambda s: s.grafana_signature_header, _grafana
)


async def _take(
    request: Request,
    received: Sequence[ReceivedAlert],
    source: AlertSource,
    refused: Sequence[RefusedAlert] = (),
) -> IntakeReceipt:
    queue, lang = request.app.state.alert_queue, request.app.state.alert_settings.language
    toolbox = request.app.state.assembly.pipeline.toolbox  # its redactor is the configured one
    redactor = toolbox.redactor if toolbox is not None else None
    receipt: IntakeReceipt = await anyio.to_thread.run_sync(
        lambda: take(received, queue, source=source, lang=lang, redactor=redactor)
    )
    return receipt.model_copy(update={"refused": list(refused), "repaired": repaired(request)})


@alerts.post(
    "/alertmanager",
    status_code=202,
    summary="Alertmanager webhook (version 4): queue a diagnosis per service of the new firing alerts",
    dependencies=[Depends(require_token)],
)
async def alertmanager(body: AlertmanagerWebhook, request: Request) -> IntakeReceipt:
    return await _take(request, body.received(), "alertmanager", body.refused)


@alerts.post(
    "/grafana",
    status_code=202,
    summary="Grafana alerting webhook: queue a diagnosis per service of the new firing alerts",
    dependencies=[Depends(grafana_auth)],
)
async def grafana(body: GrafanaWebhook, request: Request) -> IntakeReceipt:
    return await _take(request, body.received(), "grafana", body.refused)


@alerts.post(
    "/pagerduty",
    status_code=202,
    summary="PagerDuty v3 webhook: a triggered incident queues a diagnosis, a resolved one is recorded",
    dependencies=[Depends(pagerduty_auth)],
)
async def pagerduty(body: PagerDutyWebhook, request: Request) -> IntakeReceipt:
    return await _take(request, body.received(), "pagerduty")


@alerts.get(
    "/jobs/{job_id}", summary="A queued diagnosis: status, attempts, its session", dependencies=[Depends(require_token)]
)
def job(job_id: str, request: Request) -> AlertJob:
    found: AlertJob | None = request.app.state.alert_queue.get(job_id)
    if found is None:
        raise HTTPException(404, detail=f"no alert job {job_id!r}")
    return found
