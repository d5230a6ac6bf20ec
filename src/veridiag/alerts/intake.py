"""A delivery's alerts → recorded once, firing ones queued as one diagnosis per service.

The question is worded from the alerts (names, the service, instance / namespace / job, the
summaries and descriptions) in the ``alerts.language`` setting; the window is not worded but
passed as the job's ``given_at`` — the earliest ``startsAt`` — which the planner anchors at.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict

from veridiag.contracts.alerts import AlertSource, IntakeReceipt, JobSpec, ReceivedAlert
from veridiag.redaction import Redactor, default_redactor
from veridiag.store.jobs import JobQueue
from veridiag.text.render import iso
from veridiag.text.yaml_files import load_yaml

#: Labels that say where the alert fires, worded after the service.
CONTEXT_LABELS = ("instance", "namespace", "job")
#: Alert notes are cut to this much each; at most this many alerts are worded in one question.
NOTE_CHARS = 500
MAX_WORDED = 5


class _Wording(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    head: str
    no_service: str
    context: str
    pair: str
    notes: str
    ask: str
    given: str


class _Wordings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    zh: _Wording
    en: _Wording


@lru_cache(maxsize=1)
def _wordings() -> _Wordings:
    text = resources.files("veridiag.alerts").joinpath("question.yaml").read_text(encoding="utf-8")
    return _Wordings.model_validate(load_yaml(text))


def group_by_service(alerts: Sequence[ReceivedAlert]) -> tuple[list[list[ReceivedAlert]], list[ReceivedAlert]]:
    """Firing alerts grouped per service (in the order first seen), and the resolved ones."""
    groups: dict[str, list[ReceivedAlert]] = {}
    for alert in alerts:
        if alert.status == "firing":
            groups.setdefault(alert.service, []).append(alert)
    return list(groups.values()), [alert for alert in alerts if alert.status == "resolved"]


def job_for(alerts: Sequence[ReceivedAlert], source: AlertSource, lang: Literal["zh", "en"]) -> JobSpec:
    """One diagnosis of a service's firing alerts: the question, and its window's anchor."""
    words = getattr(_wordings(), lang)
    first = min(alerts, key=lambda alert: alert.starts_at)
    service = first.service
    names = ", ".join(dict.fromkeys(alert.alertname or alert.fingerprint for alert in alerts))
    pairs = [
        words.pair.format(key=key, value=value)
        for key in CONTEXT_LABELS
        if (value := first.labels.get(key)) and value != service
    ]
    context = words.context.format(pairs=", ".join(pairs)) if pairs else ""
    at = iso(first.starts_at)
    notes = [
        " ".join(text.split())[:NOTE_CHARS]
        for alert in alerts[:MAX_WORDED]
        for key in ("summary", "description")
        if (text := alert.annotations.get(key, "").strip())
    ]
    question = words.head.format(names=names, service=service or words.no_service, context=context, at=at)
    if notes:
        question += words.notes.format(notes="; ".join(dict.fromkeys(notes)))
    return JobSpec(
        source=source,
        service=service,
        question=question + words.ask,
        lang=lang,
        given_at=first.starts_at,
        given_source=words.given.format(at=at),
    )


def redacted(alert: ReceivedAlert, redactor: Redactor) -> ReceivedAlert:
    """The alert with its name, labels and annotations redacted (its key fields kept: a
    repeated delivery must still be recognised)."""
    update = {
        "alertname": redactor.redact(alert.alertname),
        "labels": redactor.redact_data(alert.labels),
        "annotations": redactor.redact_data(alert.annotations),
    }
    if all(update[name] is getattr(alert, name) for name in update):
        return alert
    return alert.model_copy(update=update)


def take(
    alerts: Sequence[ReceivedAlert],
    queue: JobQueue,
    *,
    source: AlertSource,
    lang: Literal["zh", "en"],
    redactor: Redactor | None = None,
) -> IntakeReceipt:
    """Records the delivery and queues what is new; nothing runs here (the workers do).

    Alerts are redacted before anything is stored: the alert-job, session and audit APIs show
    the stored alerts and the question worded from them, so a password in a description must
    be gone before either exists."""
    groups, resolved = group_by_service([redacted(alert, redactor or default_redactor()) for alert in alerts])
    return queue.enqueue(groups, resolved, lambda fresh: job_for(fresh, source, lang))
