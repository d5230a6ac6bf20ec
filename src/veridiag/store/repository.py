"""``SessionStore``: sessions and their tool invocations, durable before anyone cites them.

Implements the Gatekeeper's ``InvocationSource``. Every write commits at once: an
invocation id handed to the Executor always refers to a row that exists.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any, cast

from sqlalchemy import Select, Table, func, insert, select, text, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import sessionmaker

from veridiag.contracts.invocation import InvocationRecord, InvocationStatus
from veridiag.contracts.session import SessionRecord, SessionStatus
from veridiag.store.database import StoreError, make_engine, upgrade
from veridiag.store.models import DiagnosisSession, ToolInvocation

#: Larger outputs are stored cut, with ``output_truncated`` set (the Gatekeeper and the
#: workbench need the text, not megabytes of it).
MAX_STORED_OUTPUT = 512 * 1024
PREVIEW_CHARS = 2000

_SESSION_FIELDS = {
    "status",
    "plan",
    "verdict",
    "final_answer",
    "self_evaluation",
    "rounds",
    "llm_usage",
    "error",
    "lang",
}


_INVOCATIONS = cast(Table, ToolInvocation.__table__)
_INSERT_INVOCATION = insert(_INVOCATIONS).returning(_INVOCATIONS.c.id)
#: PostgreSQL's id sequence does not notice an explicit id; after one, the sequence moves
#: past it. The lock keeps other inserts from drawing a number in between (explicit ids
#: come from fixtures and imports, so the brief table lock costs nothing in practice).
_PG_LOCK_INVOCATIONS = text("LOCK TABLE tool_invocation IN SHARE ROW EXCLUSIVE MODE")
_PG_ADVANCE_SEQUENCE = text(
    "SELECT setval(pg_get_serial_sequence('tool_invocation', 'id'),"
    " GREATEST(:id, nextval(pg_get_serial_sequence('tool_invocation', 'id'))))"
)


def new_session_id() -> str:
    return "s-" + secrets.token_hex(6)


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _session_record(row: Any) -> SessionRecord:
    """From an ORM object or a Core row (same attribute names)."""
    return SessionRecord(
        id=row.id,
        created_at=_aware(row.created_at),
        updated_at=_aware(row.updated_at),
        query=row.query,
        lang=row.lang,
        status=row.status,
        plan=row.plan,
        verdict=row.verdict,
        final_answer=row.final_answer,
        self_evaluation=row.self_evaluation,
        rounds=row.rounds,
        llm_usage=row.llm_usage,
        error=row.error,
    )


def _invocation_record(row: Any) -> InvocationRecord:
    """From an ORM object or a Core row (same attribute names)."""
    return InvocationRecord(
        id=row.id,
        session_id=row.session_id,
        tool_name=row.tool_name,
        status=row.status,
        output=row.output,
        output_preview=row.output_preview,
        retrieval_details=row.retrieval_details,
        arguments=row.arguments or {},
        error=row.error,
        round=row.round,
        output_truncated=row.output_truncated,
        started_at=_aware(row.started_at),
        latency_ms=row.latency_ms,
    )


class SessionStore:
    """Sessions and invocations in SQLite or PostgreSQL; migrates itself on first use."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.engine = make_engine(url)
        if migrate:
            try:
                upgrade(self.engine)
            except SQLAlchemyError as exc:
                raise StoreError(f"cannot open store {self.engine.url!r}: {exc.__class__.__name__}: {exc}") from exc
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    # -- sessions -------------------------------------------------------------------------

    def create_session(self, query: str, lang: str | None = None, session_id: str | None = None) -> SessionRecord:
        now = _now()
        row = DiagnosisSession(
            id=session_id or new_session_id(),
            created_at=now,
            updated_at=now,
            query=query,
            lang=lang,
            status="running",
            rounds=0,
        )
        with self._sessions.begin() as db:
            db.add(row)
        return _session_record(row)

    def get_session(self, session_id: str) -> SessionRecord | None:
        with self._sessions() as db:
            row = db.get(DiagnosisSession, session_id)
            return _session_record(row) if row else None

    def update_session(self, session_id: str, **fields: Any) -> None:
        """Write stage results at once (one UPDATE, committed)."""
        unknown = set(fields) - _SESSION_FIELDS
        if unknown:
            raise ValueError(f"not session fields: {', '.join(sorted(unknown))}")
        table = cast(Table, DiagnosisSession.__table__)
        with self.engine.begin() as connection:
            statement = update(table).where(table.c.id == session_id).values(**fields, updated_at=_now())
            if not connection.execute(statement).rowcount:
                raise KeyError(f"no session {session_id!r}")

    def finish_session(self, session_id: str, status: SessionStatus, **fields: Any) -> SessionRecord:
        self.update_session(session_id, status=status, **fields)
        record = self.get_session(session_id)
        assert record is not None
        return record

    def list_sessions(
        self, *, limit: int = 50, offset: int = 0, verdict: str | None = None, search: str | None = None
    ) -> list[SessionRecord]:
        query = _filtered(
            select(DiagnosisSession).order_by(DiagnosisSession.created_at.desc(), DiagnosisSession.id), verdict, search
        )
        with self._sessions() as db:
            rows = db.scalars(query.limit(limit).offset(offset)).all()
            return [_session_record(row) for row in rows]

    def count_sessions(self, verdict: str | None = None, search: str | None = None) -> int:
        query = _filtered(select(func.count()).select_from(DiagnosisSession), verdict, search)
        with self._sessions() as db:
            return int(db.scalar(query) or 0)

    # -- invocations ----------------------------------------------------------------------

    def record_invocation(
        self,
        *,
        session_id: str,
        tool_name: str,
        arguments: Mapping[str, Any],
        status: InvocationStatus,
        output: str,
        retrieval_details: Mapping[str, Any] | None = None,
        error: str | None = None,
        round: int = 1,
        started_at: datetime | None = None,
        latency_ms: float = 0.0,
        preview: str | None = None,
        invocation_id: int | None = None,
    ) -> InvocationRecord:
        """Persist one tool call and return it with its id (committed before returning).

        ``invocation_id`` forces an id (eval fixtures cite literal ids); normally the
        database assigns it."""
        truncated = len(output) > MAX_STORED_OUTPUT
        stored = output[:MAX_STORED_OUTPUT] if truncated else output
        values: dict[str, Any] = {
            "session_id": session_id,
            "round": round,
            "tool_name": tool_name,
            "arguments": dict(arguments),
            "status": status,
            "output": stored,
            "output_truncated": truncated,
            "output_preview": preview if preview is not None else stored[:PREVIEW_CHARS],
            "retrieval_details": dict(retrieval_details) if retrieval_details is not None else None,
            "error": error,
            "started_at": started_at or _now(),
            "latency_ms": latency_ms,
        }
        if invocation_id is not None:
            values["id"] = invocation_id
        try:
            with self.engine.begin() as connection:  # the foreign key refuses an unknown session
                explicit_on_pg = invocation_id is not None and connection.dialect.name == "postgresql"
                if explicit_on_pg:
                    connection.execute(_PG_LOCK_INVOCATIONS)
                new_id = connection.execute(_INSERT_INVOCATION, values).scalar_one()
                if explicit_on_pg:
                    connection.execute(_PG_ADVANCE_SEQUENCE, {"id": new_id})
        except IntegrityError as exc:
            if self.get_session(session_id) is None:
                raise KeyError(f"no session {session_id!r}") from None
            raise StoreError(f"cannot record invocation: {exc.orig}") from exc
        return _invocation_record(SimpleNamespace(id=new_id, **{k: v for k, v in values.items() if k != "id"}))

    def get_invocations(self, ids: Iterable[int]) -> Mapping[int, InvocationRecord]:
        wanted = sorted({i for i in ids if isinstance(i, int) and not isinstance(i, bool) and 0 < i < 2**62})
        if not wanted:
            return {}
        table = cast(Table, ToolInvocation.__table__)
        with self.engine.connect() as connection:
            rows = connection.execute(select(table).where(table.c.id.in_(wanted))).all()
        return {row.id: _invocation_record(row) for row in rows}

    def list_invocations(self, session_id: str) -> list[InvocationRecord]:
        table = cast(Table, ToolInvocation.__table__)
        with self.engine.connect() as connection:
            rows = connection.execute(select(table).where(table.c.session_id == session_id).order_by(table.c.id)).all()
        return [_invocation_record(row) for row in rows]


def open_store(url: str) -> SessionStore:
    try:
        return SessionStore(url)
    except StoreError:
        raise
    except Exception as exc:  # driver missing, unreachable server, unreadable file
        raise StoreError(f"cannot open store: {exc.__class__.__name__}: {exc}") from exc


def _filtered(query: Select[Any], verdict: str | None, search: str | None) -> Select[Any]:
    """Sessions with this verdict and/or whose question or answer contains ``search`` (any case)."""
    if verdict is not None:
        query = query.where(DiagnosisSession.verdict == verdict)
    if search:
        pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(
            DiagnosisSession.query.ilike(pattern, escape="\\")
            | DiagnosisSession.final_answer.ilike(pattern, escape="\\")
        )
    return query
