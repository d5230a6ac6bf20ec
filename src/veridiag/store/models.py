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
