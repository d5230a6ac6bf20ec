"""The store's tables as SQLAlchemy Core ``Table``s: the two the spec names (§23: no others for
sessions), ``diagnosis_session`` and ``tool_invocation`` (integer invocation ids, as the Executor
cites them), the alert queue's ``alert_job`` and ``alert``, and ``revoked_browser_session`` (the
workbench's signed-out cookies, not diagnosis sessions).

Core, not ORM classes: every query is a Core statement, and ``veridiag ask`` would otherwise pay
for importing ``sqlalchemy.orm`` (~120 ms) to insert one row. Nor does anything here name the
PostgreSQL dialect (another ~50 ms, even on SQLite): ``JsonDocument`` picks JSONB when the
engine is PostgreSQL, and the one partial index is declared by ``schema_metadata`` (alembic's).

A session's audit (``SessionRecord.self_evaluation``) is stored in one of three columns
(``store/audit_storage.py``): ``audit`` — compact JSON, references instead of copies of
invocation text (written since migration 0003); ``audit_zlib`` — the same, compressed, once
the session is older than a day; ``self_evaluation`` — the full JSON sessions written before
0003 keep until they are compressed. The two new columns come last in the row, so a listing
reads its columns without passing a large audit on the way (SQLite).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.types import TypeEngine


class JsonDocument(TypeDecorator[Any]):
    """JSON as written (plan, usage, audit, tool arguments and details: open objects at the
    storage edge, read into models by whoever uses them), stored as JSONB on PostgreSQL — the
    column type the migrations create — and as JSON elsewhere.

    ``JSON().with_variant(JSONB(), "postgresql")`` would say the same but needs the JSONB class,
    that is the whole PostgreSQL dialect, when this module is imported; here the dialect picks
    its type when it compiles a statement, and only a PostgreSQL engine has loaded it by then."""

    impl = JSON
    cache_ok = True
    #: As ``JSON``'s own: a Python None is the JSON ``null`` (SQL NULL is written as ``null()``),
    #: and a JSON value is not hashable.
    should_evaluate_none = True
    hashable = False

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())


metadata = MetaData()

#: The rules a session row obeys whoever writes it (migration 0002 adds them).
STATUS_CHECK = "status IN ('running', 'completed', 'failed', 'interrupted')"
#: No PASS (nor any verdict) without the answer it judges: the two are written together.
VERDICT_CHECK = "verdict IS NULL OR (final_answer IS NOT NULL AND final_answer <> '')"
#: Sessions whose audit is not compressed yet: the maintenance step finds them through a
#: partial index on this (migration 0003), never by scanning the compressed ones.
UNCOMPRESSED_AUDIT = "audit IS NOT NULL OR self_evaluation IS NOT NULL"

SESSIONS = Table(
    "diagnosis_session",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("query", Text, nullable=False),
    Column("lang", String(8)),
    Column("status", String(16), nullable=False, index=True),
    Column("plan", JsonDocument),
    Column("verdict", String(16), index=True),
    Column("final_answer", Text),
    #: Sessions stored before migration 0003 only; see the module docstring.
    Column("self_evaluation", JsonDocument),
    Column("rounds", Integer, nullable=False, default=0),
    Column("llm_usage", JsonDocument),
    Column("error", Text),
    # The process running the session: a ``running`` session whose process is gone was
    # interrupted (start time guards against a reused pid).
    Column("owner_pid", Integer),
    Column("owner_host", String(255)),
    Column("owner_started_at", DateTime(timezone=True)),
    Column("audit", JsonDocument),
    Column("audit_zlib", LargeBinary),
    # Every attempt to post the session to chat (``contracts/delivery.py``'s ``DeliveryAttempt``),
    # appended in one UPDATE each (migration 0004): a JSON list.
    Column("deliveries", JsonDocument),
    # Each stage event of the diagnosis as emitted (``pipeline/progress.py``), appended one UPDATE
    # each (migration 0007): any process on the store can stream a session another runs.
    Column("progress", JsonDocument),
    # The owner's pid space (``store/owner.py`` ``pid_space``): where its pid means anything.
    Column("owner_space", String(100)),
    # What the session list shows (migration 0010): where the session came from, the answer's
    # line that answers, and the service it is about — written with the answer.
    Column("source", String(16)),
    Column("answer_line", Text),
    Column("service", String(255)),
    CheckConstraint(STATUS_CHECK, name="ck_diagnosis_session_status"),
    CheckConstraint(VERDICT_CHECK, name="ck_diagnosis_session_verdict_needs_answer"),
    # Newest first, keyset pages: ORDER BY created_at DESC, id DESC reads this backwards.
    Index("ix_diagnosis_session_created_at_id", "created_at", "id"),
    Index("ix_diagnosis_session_verdict_created_at_id", "verdict", "created_at", "id"),
)

INVOCATIONS = Table(
    "tool_invocation",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", String(40), ForeignKey("diagnosis_session.id", ondelete="CASCADE"), nullable=False),
    Column("round", Integer, nullable=False, default=1),
    Column("tool_name", String(64), nullable=False),
    Column("arguments", JsonDocument, nullable=False),
    Column("status", String(16), nullable=False),
    Column("output", Text, nullable=False),
    Column("output_truncated", Boolean, nullable=False, default=False),
    Column("output_preview", Text, nullable=False),
    Column("retrieval_details", JsonDocument),
    Column("error", Text),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("latency_ms", Float, nullable=False),
    # The typed records the tool produced, to be drawn only (``tools/drawn.py``, migration 0009):
    # SQL NULL for invocations stored before it, whose pages read the output text.
    Column("drawn", JsonDocument),
    Index("ix_tool_invocation_session_round", "session_id", "round"),
)

#: The alert intake's queue (migration 0005): a job row per diagnosis to run, an alert row per
#: alert received. Not session tables: a job links to the session its attempt opened.
JOB_STATUS_CHECK = "status IN ('queued', 'running', 'done', 'failed')"
ALERT_STATUS_CHECK = "status IN ('firing', 'resolved')"

ALERT_JOBS = Table(
    "alert_job",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Column("source", String(16), nullable=False),
    Column("service", String(255), nullable=False),
    Column("question", Text, nullable=False),
    Column("lang", String(8), nullable=False),
    Column("given_at", DateTime(timezone=True), nullable=False),
    Column("given_source", String(255), nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("max_attempts", Integer, nullable=False),
    Column("next_run_at", DateTime(timezone=True), nullable=False),
    Column("lease_owner", String(255)),
    Column("lease_expires_at", DateTime(timezone=True)),
    Column("session_id", String(40)),
    Column("progress", String(32)),
    Column("error", Text),
    CheckConstraint(JOB_STATUS_CHECK, name="ck_alert_job_status"),
    # What a claim looks for: due queued jobs, and running ones whose lease ran out.
    Index("ix_alert_job_status_next_run_at", "status", "next_run_at"),
    # The job behind a session (the workbench's alert origin).
    Index("ix_alert_job_session_id", "session_id"),
)

ALERTS = Table(
    "alert",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("source", String(16), nullable=False),
    Column("fingerprint", String(200), nullable=False),
    Column("starts_at", DateTime(timezone=True), nullable=False),
    Column("ends_at", DateTime(timezone=True)),
    Column("status", String(16), nullable=False),
    Column("alertname", String(500), nullable=False),
    Column("service", String(255), nullable=False),
    Column("labels", JsonDocument, nullable=False),
    Column("annotations", JsonDocument, nullable=False),
    Column("received_at", DateTime(timezone=True), nullable=False),
    Column("resolved_at", DateTime(timezone=True)),
    Column("job_id", String(40), ForeignKey("alert_job.id", ondelete="SET NULL")),
    CheckConstraint(ALERT_STATUS_CHECK, name="ck_alert_status"),
    # A repeated delivery names the same alert: it is recorded once and diagnosed once.
    UniqueConstraint("source", "fingerprint", "starts_at", name="uq_alert_source_fingerprint_starts_at"),
    Index("ix_alert_job_id", "job_id"),
)

#: Workbench sign-outs (migration 0008, ``store/revocations.py``): a browser session's id and
#: when its cookie would have expired anyway. Every server refuses a cookie whose id is here.
REVOKED_BROWSER_SESSIONS = Table(
    "revoked_browser_session",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    # The purge at each sign-out deletes the rows past it without scanning the others.
    Index("ix_revoked_browser_session_expires_at", "expires_at"),
)


@cache
def schema_metadata() -> MetaData:
    """The whole schema, for alembic (``migrations/env.py``): the tables and the partial index
    of uncompressed audits. That index names its predicate per dialect, and SQLAlchemy checks a
    ``postgresql_where`` by importing the PostgreSQL dialect — so it is declared here, on first
    call, not when a query on SQLite imports the tables (no query needs the index declared)."""
    Index(
        "ix_diagnosis_session_uncompressed_audit",
        SESSIONS.c.created_at,
        SESSIONS.c.id,
        sqlite_where=text(UNCOMPRESSED_AUDIT),
        postgresql_where=text(UNCOMPRESSED_AUDIT),
    )
    return metadata
