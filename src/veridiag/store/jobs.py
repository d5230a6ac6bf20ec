"""The alert intake's queue: alerts recorded once, diagnoses queued as jobs in the store's own
database, claimed under a lease by any number of workers.

Why not procrastinate (or another Postgres task queue): it runs on PostgreSQL only, so the
default SQLite store would need a second queue anyway, and it keeps its jobs in its own schema
beside ours — the dedupe of alerts and the job → session link would then span two stores. Two
tables in the store's database, migrated with the rest (0005), do both on SQLite and
PostgreSQL; a claim is one short write transaction:

- SQLite: ``BEGIN IMMEDIATE`` takes the write lock before the job is picked, so two workers
  (threads or processes) never pick the same one; the busy timeout queues the other.
- PostgreSQL: ``SELECT … FOR UPDATE SKIP LOCKED``: a worker skips rows another is claiming.

A claimed job carries a lease (``lease_expires_at``) its worker renews as the diagnosis
progresses. A worker that dies stops renewing; once the lease runs out the job is due again and
the next claim takes it (a restart mid-queue loses nothing). Attempts are counted; a failed
attempt comes back after an exponential backoff (``next_run_at``), and after ``max_attempts``
the job is ``failed`` with its last error.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, Protocol, TypedDict

from sqlalchemy import Connection, Engine, and_, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from veridiag._retry import Backoff
from veridiag.contracts.alerts import AlertJob, IntakeReceipt, JobSpec, ReceivedAlert
from veridiag.store.models import ALERT_JOBS, ALERTS

#: Builds the job that diagnoses a group of alerts not seen before (the intake's question).
MakeJob = Callable[[Sequence[ReceivedAlert]], JobSpec]


class JobQueue(Protocol):
    """What the intake and the workers need of a queue (``SqlJobQueue`` is the one we ship)."""

    def enqueue(
        self, groups: Sequence[Sequence[ReceivedAlert]], resolved: Sequence[ReceivedAlert], make_job: MakeJob
    ) -> IntakeReceipt: ...
    def claim(self, worker: str) -> AlertJob | None: ...
    def heartbeat(
        self, job_id: str, worker: str, *, progress: str | None = None, session_id: str | None = None
    ) -> bool: ...
    def finish(self, job_id: str, worker: str, *, session_id: str | None) -> bool: ...
    def fail(self, job_id: str, worker: str, error: str) -> AlertJob | None: ...
    def get(self, job_id: str) -> AlertJob | None: ...
    def alerts(self, job_id: str) -> list[ReceivedAlert]: ...


class _JobUpdate(TypedDict, total=False):
    """The ``alert_job`` columns a lease holder writes (one UPDATE each)."""

    status: Literal["queued", "running", "done", "failed"]
    progress: str
    session_id: str
    error: str | None
    updated_at: datetime
    lease_owner: None
    lease_expires_at: datetime | None
    next_run_at: datetime


def _now() -> datetime:
    return datetime.now(UTC)


def _utc(value: datetime) -> datetime:
    """Stored and compared in UTC (SQLite keeps no offset: its text compares in order only so)."""
    return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)


@contextlib.contextmanager
def writing(engine: Engine) -> Iterator[Connection]:
    """One write transaction holding the write lock from its first statement (see the module
    docstring). pysqlite would begin a deferred transaction itself, so the connection is put in
    autocommit — the driver then leaves transactions alone — and this one begins it."""
    if engine.dialect.name != "sqlite":
        with engine.begin() as connection:
            yield connection
        return
    with engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT")
        connection.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.exec_driver_sql("ROLLBACK")
            raise
        connection.exec_driver_sql("COMMIT")


class SqlJobQueue:
    """``JobQueue`` on the store's engine (SQLite or PostgreSQL)."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_attempts: int = 3,
        lease_seconds: float = 600.0,
        backoff: Backoff | None = None,
    ) -> None:
        self.engine = engine
        self.max_attempts = max_attempts
        self.lease = timedelta(seconds=lease_seconds)
        self.backoff = backoff or Backoff(attempts=max_attempts, first_wait=30.0, max_wait=600.0)

    # --- intake ------------------------------------------------------------------------

    def enqueue(
        self, groups: Sequence[Sequence[ReceivedAlert]], resolved: Sequence[ReceivedAlert], make_job: MakeJob
    ) -> IntakeReceipt:
        """Records every alert once and queues one job per group for the alerts not seen before,
        all in one transaction: a delivery repeated at the same moment still queues nothing twice
        (the unique key decides which insert wins)."""
        receipt = IntakeReceipt()
        now = _now()
        with writing(self.engine) as connection:
            for alert in resolved:
                receipt.resolved += 1
                if self._insert(connection, alert, now) or self._resolve(connection, alert, now):
                    receipt.recorded += 1
                else:
                    receipt.duplicates += 1
            for group in groups:
                fresh = [alert for alert in group if self._insert(connection, alert, now)]
                receipt.duplicates += len(group) - len(fresh)
                if not fresh:
                    continue
                job_id = self._add_job(connection, make_job(fresh), now)
                for alert in fresh:
                    connection.execute(update(ALERTS).where(*_key(alert)).values(job_id=job_id))
                receipt.jobs.append(job_id)
                receipt.recorded += len(fresh)
        return receipt

    def _insert(self, connection: Connection, alert: ReceivedAlert, now: datetime) -> bool:
        """Adds the alert unless it is recorded already; True when it was added."""
        values = {
            "source": alert.source,
            "fingerprint": alert.fingerprint,
            "starts_at": _utc(alert.starts_at),
            "ends_at": _utc(alert.ends_at) if alert.ends_at else None,
            "status": alert.status,
            "alertname": alert.alertname,
            "service": alert.service,
            "labels": alert.labels,
            "annotations": alert.annotations,
            "received_at": now,
            "resolved_at": now if alert.status == "resolved" else None,
        }
        dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
        statement = dialect.insert(ALERTS).values(**values).on_conflict_do_nothing()
        return bool(connection.execute(statement).rowcount)

    def _resolve(self, connection: Connection, alert: ReceivedAlert, now: datetime) -> bool:
        """Marks a recorded firing alert resolved; True when it was still firing."""
        ends_at = _utc(alert.ends_at) if alert.ends_at else now
        statement = (
            update(ALERTS)
            .where(*_key(alert), ALERTS.c.status == "firing")
            .values(status="resolved", ends_at=ends_at, resolved_at=now)
        )
        return bool(connection.execute(statement).rowcount)

    def _add_job(self, connection: Connection, spec: JobSpec, now: datetime) -> str:
        job_id = "j-" + uuid.uuid4().hex[:16]
        values = spec.model_dump()
        values["given_at"] = _utc(spec.given_at)
        connection.execute(
            insert(ALERT_JOBS).values(
                id=job_id,
                created_at=now,
                updated_at=now,
                status="queued",
                attempts=0,
                max_attempts=self.max_attempts,
                next_run_at=now,
                **values,
            )
        )
        return job_id

    # --- workers -----------------------------------------------------------------------

    def claim(self, worker: str) -> AlertJob | None:
        """The next due job, now ``running`` under ``worker``'s lease; None when none is due. A
        job whose lease ran out after its last attempt is ``failed`` instead (its worker died
        every time)."""
        while True:
            now = _now()
            with writing(self.engine) as connection:
                due = or_(
                    and_(ALERT_JOBS.c.status == "queued", ALERT_JOBS.c.next_run_at <= now),
                    and_(ALERT_JOBS.c.status == "running", ALERT_JOBS.c.lease_expires_at <= now),
                )
                query = (
                    select(ALERT_JOBS.c.id, ALERT_JOBS.c.attempts, ALERT_JOBS.c.max_attempts, ALERT_JOBS.c.status)
                    .where(due)
                    .order_by(ALERT_JOBS.c.next_run_at, ALERT_JOBS.c.id)
                    .limit(1)
                    .with_for_update(skip_locked=True)
                )
                row = connection.execute(query).first()
                if row is None:
                    return None
                if row.attempts >= row.max_attempts:
                    connection.execute(
                        update(ALERT_JOBS)
                        .where(ALERT_JOBS.c.id == row.id)
                        .values(
                            status="failed",
                            updated_at=now,
                            lease_owner=None,
                            lease_expires_at=None,
                            error=f"its worker stopped during each of {row.attempts} attempts (lease expired)",
                        )
                    )
                    continue
                connection.execute(
                    update(ALERT_JOBS)
                    .where(ALERT_JOBS.c.id == row.id)
                    .values(
                        status="running",
                        attempts=row.attempts + 1,
                        lease_owner=worker,
                        lease_expires_at=now + self.lease,
                        updated_at=now,
                        progress=None,
                    )
                )
                job_id: str = row.id
            return self.get(job_id)

    def _owned(self, job_id: str, worker: str) -> Any:
        """Only the worker holding the lease may write: one whose lease ran out and whose job was
        taken by another finds its writes ignored."""
        return and_(ALERT_JOBS.c.id == job_id, ALERT_JOBS.c.lease_owner == worker, ALERT_JOBS.c.status == "running")

    def heartbeat(
        self, job_id: str, worker: str, *, progress: str | None = None, session_id: str | None = None
    ) -> bool:
        """Renews the lease (and records the stage reached / the session opened); False when the
        lease is no longer this worker's."""
        now = _now()
        values: _JobUpdate = {"lease_expires_at": now + self.lease, "updated_at": now}
        if progress is not None:
            values["progress"] = progress
        if session_id is not None:
            values["session_id"] = session_id
        with self.engine.begin() as connection:
            return bool(
                connection.execute(update(ALERT_JOBS).where(self._owned(job_id, worker)).values(**values)).rowcount
            )

    def finish(self, job_id: str, worker: str, *, session_id: str | None) -> bool:
        """The diagnosis is stored (its session says how it ended): the job is done."""
        values: _JobUpdate = {"status": "done", "updated_at": _now(), "lease_expires_at": None, "error": None}
        if session_id is not None:
            values["session_id"] = session_id
        with self.engine.begin() as connection:
            return bool(
                connection.execute(update(ALERT_JOBS).where(self._owned(job_id, worker)).values(**values)).rowcount
            )

    def fail(self, job_id: str, worker: str, error: str) -> AlertJob | None:
        """An attempt raised: queued again after the backoff, or ``failed`` after the last attempt."""
        now = _now()
        with self.engine.begin() as connection:
            attempts = connection.execute(
                select(ALERT_JOBS.c.attempts, ALERT_JOBS.c.max_attempts).where(self._owned(job_id, worker))
            ).first()
            if attempts is None:
                return None
            last = attempts.attempts >= attempts.max_attempts
            values: _JobUpdate = {
                "status": "failed" if last else "queued",
                "error": error[:4000],
                "updated_at": now,
                "lease_owner": None,
                "lease_expires_at": None,
            }
            if not last:
                values["next_run_at"] = now + timedelta(seconds=self.backoff.wait(attempts.attempts))
            connection.execute(update(ALERT_JOBS).where(ALERT_JOBS.c.id == job_id).values(**values))
        return self.get(job_id)

    # --- reading -----------------------------------------------------------------------

    def get(self, job_id: str) -> AlertJob | None:
        with self.engine.connect() as connection:
            row = connection.execute(select(ALERT_JOBS).where(ALERT_JOBS.c.id == job_id)).mappings().first()
            if row is None:
                return None
            fingerprints = connection.execute(
                select(ALERTS.c.fingerprint).where(ALERTS.c.job_id == job_id).order_by(ALERTS.c.id)
            ).scalars()
            values = dict(row)
            for key in ("given_at", "next_run_at", "created_at", "updated_at", "lease_expires_at"):
                if values[key] is not None:
                    values[key] = _utc(values[key])
            return AlertJob.model_validate({**values, "fingerprints": list(fingerprints)})

    def for_session(self, session_id: str) -> AlertJob | None:
        """The job whose latest attempt opened ``session_id`` (a session an alert started), or
        None for a session someone asked for."""
        with self.engine.connect() as connection:
            job_id = connection.execute(
                select(ALERT_JOBS.c.id)
                .where(ALERT_JOBS.c.session_id == session_id)
                .order_by(ALERT_JOBS.c.updated_at.desc())
                .limit(1)
            ).scalar()
        return self.get(job_id) if job_id is not None else None

    def alerts(self, job_id: str) -> list[ReceivedAlert]:
        """The alerts a job diagnoses, as received."""
        with self.engine.connect() as connection:
            query = select(ALERTS).where(ALERTS.c.job_id == job_id).order_by(ALERTS.c.id)
            rows = connection.execute(query).mappings().all()
        return [
            ReceivedAlert(
                source=row["source"],
                fingerprint=row["fingerprint"],
                status=row["status"],
                starts_at=_utc(row["starts_at"]),
                ends_at=_utc(row["ends_at"]) if row["ends_at"] else None,
                alertname=row["alertname"],
                labels=row["labels"],
                annotations=row["annotations"],
            )
            for row in rows
        ]


def _key(alert: ReceivedAlert) -> tuple[Any, ...]:
    return (
        ALERTS.c.source == alert.source,
        ALERTS.c.fingerprint == alert.fingerprint,
        ALERTS.c.starts_at == _utc(alert.starts_at),
    )
