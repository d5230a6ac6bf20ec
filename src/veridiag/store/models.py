"""The two tables the spec names (§23: no others for sessions): ``diagnosis_session`` and
``tool_invocation``. Integer invocation ids, as the Executor cites them.

A session's audit (``SessionRecord.self_evaluation``) is stored in one of three columns
(``store/audit_storage.py``): ``audit`` — compact JSON, references instead of copies of
invocation text (written since migration 0003); ``audit_zlib`` — the same, compressed, once
the session is older than a day; ``self_evaluation`` — the full JSON sessions written before
0003 keep until they are compressed. The two new columns come last in the row, so a listing
reads its columns without passing a large audit on the way (SQLite).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from veridiag.contracts.json import JsonObject

#: The JSON columns hold JSON as written (plan, usage, audit, tool arguments and details): open
#: objects at the storage edge, read into models by whoever uses them (``JsonObject``).
JsonType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    pass


#: The rules a session row obeys whoever writes it (migration 0002 adds them).
STATUS_CHECK = "status IN ('running', 'completed', 'failed', 'interrupted')"
#: No PASS (nor any verdict) without the answer it judges: the two are written together.
VERDICT_CHECK = "verdict IS NULL OR (final_answer IS NOT NULL AND final_answer <> '')"
#: Sessions whose audit is not compressed yet: the maintenance step finds them through a
#: partial index on this (migration 0003), never by scanning the compressed ones.
UNCOMPRESSED_AUDIT = "audit IS NOT NULL OR self_evaluation IS NOT NULL"


class DiagnosisSession(Base):
    __tablename__ = "diagnosis_session"
    __table_args__ = (
        CheckConstraint(STATUS_CHECK, name="ck_diagnosis_session_status"),
        CheckConstraint(VERDICT_CHECK, name="ck_diagnosis_session_verdict_needs_answer"),
        # Newest first, keyset pages: ORDER BY created_at DESC, id DESC reads this backwards.
        Index("ix_diagnosis_session_created_at_id", "created_at", "id"),
        Index("ix_diagnosis_session_verdict_created_at_id", "verdict", "created_at", "id"),
        Index(
            "ix_diagnosis_session_uncompressed_audit",
            "created_at",
            "id",
            sqlite_where=text(UNCOMPRESSED_AUDIT),
            postgresql_where=text(UNCOMPRESSED_AUDIT),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    query: Mapped[str] = mapped_column(Text)
    lang: Mapped[str | None] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(16), index=True)
    plan: Mapped[JsonObject | None] = mapped_column(JsonType)
    verdict: Mapped[str | None] = mapped_column(String(16), index=True)
    final_answer: Mapped[str | None] = mapped_column(Text)
    #: Sessions stored before migration 0003 only; see the module docstring.
    self_evaluation: Mapped[JsonObject | None] = mapped_column(JsonType)
    rounds: Mapped[int] = mapped_column(Integer, default=0)
    llm_usage: Mapped[JsonObject | None] = mapped_column(JsonType)
    error: Mapped[str | None] = mapped_column(Text)
    #: The process running the session: a ``running`` session whose process is gone was
    #: interrupted (start time guards against a reused pid).
    owner_pid: Mapped[int | None] = mapped_column(Integer)
    owner_host: Mapped[str | None] = mapped_column(String(255))
    owner_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    audit: Mapped[JsonObject | None] = mapped_column(JsonType)
    audit_zlib: Mapped[bytes | None] = mapped_column(LargeBinary)
    #: Every attempt to post the session to chat (``contracts/delivery.py``'s ``DeliveryAttempt``),
    #: appended in one UPDATE each (migration 0004).
    deliveries: Mapped[list[JsonObject] | None] = mapped_column(JsonType)


class ToolInvocation(Base):
    __tablename__ = "tool_invocation"
    __table_args__ = (Index("ix_tool_invocation_session_round", "session_id", "round"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String(40), ForeignKey("diagnosis_session.id", ondelete="CASCADE"))
    round: Mapped[int] = mapped_column(Integer, default=1)
    tool_name: Mapped[str] = mapped_column(String(64))
    arguments: Mapped[JsonObject] = mapped_column(JsonType)
    status: Mapped[str] = mapped_column(String(16))
    output: Mapped[str] = mapped_column(Text)
    output_truncated: Mapped[bool] = mapped_column(Boolean, default=False)
    output_preview: Mapped[str] = mapped_column(Text)
    retrieval_details: Mapped[JsonObject | None] = mapped_column(JsonType)
    error: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    latency_ms: Mapped[float] = mapped_column(Float)


#: The alert intake's queue (migration 0005): a job row per diagnosis to run, an alert row per
#: alert received. Not session tables: a job links to the session its attempt opened.
JOB_STATUS_CHECK = "status IN ('queued', 'running', 'done', 'failed')"
ALERT_STATUS_CHECK = "status IN ('firing', 'resolved')"


class AlertJobRow(Base):
    __tablename__ = "alert_job"
    __table_args__ = (
        CheckConstraint(JOB_STATUS_CHECK, name="ck_alert_job_status"),
        # What a claim looks for: due queued jobs, and running ones whose lease ran out.
        Index("ix_alert_job_status_next_run_at", "status", "next_run_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    source: Mapped[str] = mapped_column(String(16))
    service: Mapped[str] = mapped_column(String(255))
    question: Mapped[str] = mapped_column(Text)
    lang: Mapped[str] = mapped_column(String(8))
    given_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    given_source: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer)
    next_run_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    lease_owner: Mapped[str | None] = mapped_column(String(255))
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    session_id: Mapped[str | None] = mapped_column(String(40))
    progress: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)


class AlertRow(Base):
    __tablename__ = "alert"
    __table_args__ = (
        CheckConstraint(ALERT_STATUS_CHECK, name="ck_alert_status"),
        # A repeated delivery names the same alert: it is recorded once and diagnosed once.
        UniqueConstraint("source", "fingerprint", "starts_at", name="uq_alert_source_fingerprint_starts_at"),
        Index("ix_alert_job_id", "job_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(String(16))
    fingerprint: Mapped[str] = mapped_column(String(200))
    starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ends_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(16))
    alertname: Mapped[str] = mapped_column(String(500))
    service: Mapped[str] = mapped_column(String(255))
    labels: Mapped[JsonObject] = mapped_column(JsonType)
    annotations: Mapped[JsonObject] = mapped_column(JsonType)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    job_id: Mapped[str | None] = mapped_column(String(40), ForeignKey("alert_job.id", ondelete="SET NULL"))
