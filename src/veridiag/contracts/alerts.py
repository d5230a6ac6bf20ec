"""Alerts as veridiag reads them, whoever sent them (Alertmanager, Grafana, PagerDuty), and the
queued diagnosis jobs they become (``veridiag serve`` intake → ``veridiag worker``).

A sender's payload is read once at the edge (``alerts/payloads.py``) into ``ReceivedAlert``s;
from there on only these models travel: the store records them, the intake groups them per
service, the worker runs one diagnosis per ``AlertJob``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

AlertSource = Literal["alertmanager", "grafana", "pagerduty"]
AlertStatus = Literal["firing", "resolved"]
#: ``queued`` → ``running`` (claimed under a lease) → ``done`` (a session was written: any
#: verdict, or a failed diagnosis) | ``failed`` (no attempt got that far: the error is kept).
#: A ``running`` job whose lease ran out — its worker died — is claimed again.
JobStatus = Literal["queued", "running", "done", "failed"]

#: Labels that name what is alerting, in the order a service is taken from them.
SERVICE_LABELS = ("service", "job", "app", "container")


class ReceivedAlert(BaseModel):
    """One alert of a delivery. ``(source, fingerprint, starts_at)`` names it: a repeated
    delivery of the same alert carries the same three, so it is recorded once."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: AlertSource
    fingerprint: str = Field(min_length=1, max_length=200)
    status: AlertStatus
    starts_at: AwareDatetime
    ends_at: AwareDatetime | None = None
    alertname: str = Field(default="", max_length=500)
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @property
    def service(self) -> str:
        """What the alert is about: its first service-naming label ('' when none is set)."""
        return next((self.labels[key] for key in SERVICE_LABELS if self.labels.get(key)), "")


class JobSpec(BaseModel):
    """What a queued diagnosis runs: the question built from its alerts and the moment its window
    is anchored at (the earliest ``startsAt``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: AlertSource
    service: str
    question: str = Field(min_length=1)
    lang: Literal["zh", "en"]
    given_at: AwareDatetime
    given_source: str


class AlertJob(JobSpec):
    """A queued diagnosis as stored (``alert_job``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    status: JobStatus
    attempts: int
    max_attempts: int
    next_run_at: datetime
    created_at: datetime
    updated_at: datetime
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    #: The session the latest attempt opened (its diagnosis, in the workbench).
    session_id: str | None = None
    #: The last stage the diagnosis reported (``plan``, ``tool``, …, ``done``).
    progress: str | None = None
    error: str | None = None
    #: The fingerprints of the alerts it diagnoses.
    fingerprints: list[str] = Field(default_factory=list)


class RefusedAlert(BaseModel):
    """An alert of a delivery refused alone: the group's other alerts were taken."""

    index: int = Field(description="Its place in the delivery's alerts, from 0.")
    fingerprint: str | None = Field(default=None, description="Its fingerprint, when it had a readable one.")
    reason: str = Field(description="The field, as the sender names it, and what is wrong with it.")


class IntakeReceipt(BaseModel):
    """What a delivery did: jobs queued, alerts seen before, resolved alerts recorded, bad
    alerts refused alone, unreadable characters repaired."""

    jobs: list[str] = Field(default_factory=list, description="Ids of the diagnoses queued.")
    recorded: int = Field(default=0, description="Alerts not seen before, firing or resolved.")
    duplicates: int = Field(default=0, description="Alerts already recorded: no new diagnosis.")
    resolved: int = Field(default=0, description="Resolved alerts: recorded, not diagnosed.")
    refused: list[RefusedAlert] = Field(
        default_factory=list, description="Alerts refused alone, each with why; the others were taken."
    )
    repaired: int = Field(
        default=0,
        description="Strings of the delivery whose lone surrogates or control characters were replaced (U+FFFD) "
        "or whose bidi controls were removed.",
    )
