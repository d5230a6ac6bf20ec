"""The senders' webhook bodies, read once at the edge into ``ReceivedAlert``s.

Field names are the senders' own (aliases), so a 422 names the field as the sender wrote it
(``alerts.0.startsAt``). Senders add fields over time: unknown ones are ignored, the ones a
diagnosis needs are required.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from veridiag.contracts.alerts import AlertSource, AlertStatus, ReceivedAlert, RefusedAlert
from veridiag.contracts.json import JsonObject
from veridiag.contracts.plan import within_reach


def _in_utc(moment: datetime) -> datetime:
    """A sender's time that UTC holds: one at the calendar's edge whose offset takes it past year
    1 or 9999 (``9999-12-31T23:59:59-14:00``) is no time the queue can store or a window hold."""
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("the time lies outside the years UTC can hold (1–9999)") from None
    return moment


#: A time with its offset that UTC can hold.
_Time = Annotated[AwareDatetime, AfterValidator(_in_utc)]
#: An alert's start, which its diagnosis is anchored at: also far enough from the calendar's edge.
_Start = Annotated[_Time, AfterValidator(within_reach)]

#: Alerts one delivery may carry (Alertmanager's ``max_alerts`` truncates larger groups itself).
MAX_ALERTS = 1000
_Labels = dict[str, str]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class WebhookAlert(_Body):
    """One alert as Alertmanager (and Grafana, which speaks its format) sends it."""

    status: AlertStatus
    labels: _Labels
    annotations: _Labels = Field(default_factory=dict)
    starts_at: _Start = Field(alias="startsAt")
    ends_at: _Time | None = Field(default=None, alias="endsAt")
    generator_url: str = Field(default="", alias="generatorURL")
    fingerprint: str = Field(min_length=1, max_length=200)

    def received(self, source: AlertSource) -> ReceivedAlert:
        return ReceivedAlert(
            source=source,
            fingerprint=self.fingerprint,
            status=self.status,
            starts_at=self.starts_at,
            ends_at=_set(self.ends_at),
            alertname=self.labels.get("alertname", "")[:500],
            labels=self.labels,
            annotations=self.annotations,
        )


class AlertmanagerWebhook(_Body):
    """Alertmanager's webhook body, version 4 (``webhook_configs``)."""

    version: Literal["4"]
    group_key: str = Field(default="", alias="groupKey")
    truncated_alerts: int = Field(default=0, alias="truncatedAlerts")
    status: AlertStatus
    receiver: str = ""
    group_labels: _Labels = Field(default_factory=dict, alias="groupLabels")
    common_labels: _Labels = Field(default_factory=dict, alias="commonLabels")
    common_annotations: _Labels = Field(default_factory=dict, alias="commonAnnotations")
    external_url: str = Field(default="", alias="externalURL")
    alerts: list[WebhookAlert] = Field(max_length=MAX_ALERTS)

    #: Whose format this is: Grafana's webhook reuses it under its own name (not a field: a
    #: body cannot claim another sender).
    source: ClassVar[AlertSource] = "alertmanager"
    _refused: list[RefusedAlert] = PrivateAttr(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _bad_alerts_alone(cls, data: Any, handler: ModelWrapValidatorHandler[AlertmanagerWebhook]) -> Any:
        """A group's bad alert is refused alone, with its reason, and the others are taken: one
        malformed alert must not lose the group's good ones. A delivery with no good alert is
        still a 422 naming the field."""
        alerts = data.get("alerts") if isinstance(data, dict) else None
        if not isinstance(alerts, list) or len(alerts) > MAX_ALERTS:
            return handler(data)
        good: list[Any] = []
        refused: list[RefusedAlert] = []
        for index, alert in enumerate(alerts):
            try:
                WebhookAlert.model_validate(alert)
                good.append(alert)
            except ValidationError as error:
                refused.append(_refusal(index, alert, error))
        if not refused or not good:
            return handler(data)
        body = handler({**data, "alerts": good})
        body._refused = refused
        return body

    @property
    def refused(self) -> list[RefusedAlert]:
        """The alerts of the delivery refused alone (the rest were read)."""
        return list(self._refused)

    def received(self) -> list[ReceivedAlert]:
        return [alert.received(self.source) for alert in self.alerts]


def _refusal(index: int, alert: Any, error: ValidationError) -> RefusedAlert:
    first = error.errors()[0]
    place = ".".join(str(part) for part in ("alerts", index, *first["loc"]))
    fingerprint = alert.get("fingerprint") if isinstance(alert, dict) else None
    return RefusedAlert(
        index=index,
        fingerprint=fingerprint[:200] if isinstance(fingerprint, str) else None,
        reason=f"{place}: {first['msg']}",
    )


class GrafanaWebhook(AlertmanagerWebhook):
    """Grafana alerting's webhook contact point: Alertmanager's body, ``version`` "1", plus
    fields of its own (``orgId``, ``title``, ``state``, ``message``, per-alert ``values``)."""

    version: Literal["1"] = "1"  # type: ignore[assignment]
    source: ClassVar[AlertSource] = "grafana"


class PagerDutyIncident(_Body):
    """The incident of an ``incident.*`` event (PagerDuty v3 webhooks)."""

    id: str = Field(min_length=1, max_length=200)
    title: str = Field(default="", max_length=2000)
    status: str = ""
    created_at: _Start
    service: PagerDutyReference | None = None
    urgency: str = ""
    html_url: str = ""


class PagerDutyReference(_Body):
    id: str = ""
    summary: str = ""


#: The incident events that become alerts; the rest (acknowledged, annotated, pings) are accepted
#: and change nothing.
_PAGERDUTY_STATUS: dict[str, AlertStatus] = {"incident.triggered": "firing", "incident.resolved": "resolved"}


class PagerDutyEvent(_Body):
    id: str = ""
    event_type: str = Field(min_length=1, max_length=200)
    resource_type: str = ""
    occurred_at: _Time
    #: Shaped by ``event_type`` (a ping's data is not an incident): read as one only for the
    #: incident events above.
    data: JsonObject
    _incident: PagerDutyIncident | None = PrivateAttr(default=None)

    @property
    def incident(self) -> PagerDutyIncident | None:
        """The incident of an incident event (read while validating, so a bad one is a 422)."""
        return self._incident

    @model_validator(mode="after")
    def _read_incident(self) -> PagerDutyEvent:
        if self.event_type in _PAGERDUTY_STATUS:
            try:
                self._incident = PagerDutyIncident.model_validate(self.data)
            except ValidationError as error:
                first = error.errors()[0]
                place = ".".join(str(part) for part in ("data", *first["loc"]))
                raise ValueError(f"{place}: {first['msg']}") from None
        return self


class PagerDutyWebhook(_Body):
    """A PagerDuty v3 webhook delivery (``{"event": {...}}``)."""

    event: PagerDutyEvent

    def received(self) -> list[ReceivedAlert]:
        incident, status = self.event.incident, _PAGERDUTY_STATUS.get(self.event.event_type)
        if incident is None or status is None:
            return []
        service = incident.service.summary if incident.service else ""
        labels = {"alertname": incident.title[:500], "urgency": incident.urgency}
        if service:
            labels["service"] = service
        return [
            ReceivedAlert(
                source="pagerduty",
                fingerprint=incident.id,
                status=status,
                starts_at=incident.created_at,
                ends_at=self.event.occurred_at if status == "resolved" else None,
                alertname=incident.title[:500],
                labels={key: value for key, value in labels.items() if value},
                annotations={"summary": incident.title} if incident.title else {},
            )
        ]


def _set(moment: datetime | None) -> datetime | None:
    """Alertmanager writes "not ended" as the zero time, year 1."""
    return moment if moment is not None and moment.year > 1 else None


PagerDutyIncident.model_rebuild()
