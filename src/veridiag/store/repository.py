"""``SessionStore``: sessions and their tool invocations, durable before anyone cites them.

Implements the Gatekeeper's ``InvocationSource``. Every write commits at once: an
invocation id handed to the Executor always refers to a row that exists.

Session lifecycle: ``running`` (created with its owner process) → ``completed`` (verdict and
answer in one UPDATE; the schema refuses a verdict without an answer) or ``failed``; a
``running`` session whose owner is gone, or older than ``stale_after``, becomes ``interrupted``
with the reason in ``error`` — when a store is opened and whenever sessions are read.

Sessions at scale: listings read only the list columns (never an audit), newest first along
the ``(created_at, id)`` index, a page after another by keyset (``cursor``) as well as by
offset. The audit is stored compact — references to the session's invocation text instead of
copies — and compressed once the session is older than ``COMPRESS_AUDITS_AFTER``
(``compress_older_audits``: run a batch at a time when a store is opened, or all at once by
``veridiag db compact``); both are undone on read (``store/audit_storage.py``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any, TypedDict, Unpack

from sqlalchemy import Select, func, insert, null, select, text, tuple_, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from veridiag.contracts.delivery import DeliveryAttempt
from veridiag.contracts.invocation import InvocationRecord, InvocationStatus
from veridiag.contracts.json import JsonObject
from veridiag.contracts.session import ProgressEvent, SessionProgress, SessionRecord, SessionSource, SessionStatus
from veridiag.store.audit_storage import InvocationTexts, compact, compress, decompress, hydrate
from veridiag.store.database import StoreError, database_hint, make_engine, upgrade
from veridiag.store.models import INVOCATIONS, SESSIONS, UNCOMPRESSED_AUDIT
from veridiag.store.owner import Owner, gone_reason, this_process

log = logging.getLogger(__name__)

#: Larger outputs are stored cut, with ``output_truncated`` set (the Gatekeeper and the
#: workbench need the text, not megabytes of it).
MAX_STORED_OUTPUT = 512 * 1024
PREVIEW_CHARS = 2000


class SessionOutcome(TypedDict, total=False):
    """What a stage writes to its session besides the status (``finish_session``): the JSON
    columns as their models dumped them, the audit (``self_evaluation``) before it is stored
    compact."""

    plan: JsonObject | None
    verdict: str | None
    final_answer: str | None
    self_evaluation: JsonObject | None
    rounds: int
    llm_usage: JsonObject | None
    error: str | None
    lang: str | None
    answer_line: str | None
    service: str | None


class SessionUpdate(SessionOutcome, total=False):
    """The session fields ``update_session`` writes, in one UPDATE."""

    status: SessionStatus


#: Checked at run time too: a caller without a type checker gets a ``ValueError``, not SQL.
_SESSION_FIELDS = frozenset(SessionUpdate.__annotations__)


class _InvocationRow(TypedDict):
    """A ``tool_invocation`` row as ``record_invocation`` inserts it (the id comes back)."""

    session_id: str
    round: int
    tool_name: str
    arguments: JsonObject
    status: InvocationStatus
    output: str
    output_truncated: bool
    output_preview: str
    retrieval_details: JsonObject | None
    error: str | None
    started_at: datetime
    latency_ms: float
    drawn: JsonObject | None


#: A running session older than this is interrupted when read (its owner may be on another
#: host, where its pid says nothing). ``Settings.session_timeout_seconds`` overrides it.
DEFAULT_STALE_AFTER = 3600.0

_INSERT_INVOCATION = insert(INVOCATIONS).returning(INVOCATIONS.c.id)
#: PostgreSQL's id sequence does not notice an explicit id; after one, the sequence moves
#: past it. The lock keeps other inserts from drawing a number in between (explicit ids
#: come from fixtures and imports, so the brief table lock costs nothing in practice).
_PG_LOCK_INVOCATIONS = text("LOCK TABLE tool_invocation IN SHARE ROW EXCLUSIVE MODE")
_PG_ADVANCE_SEQUENCE = text(
    "SELECT setval(pg_get_serial_sequence('tool_invocation', 'id'),"
    " GREATEST(:id, nextval(pg_get_serial_sequence('tool_invocation', 'id'))))"
)

#: One JSON object appended to a JSON list column by the database itself, per dialect (the
#: column name is one of ``_APPENDABLE``, never input).
_APPEND = {
    "sqlite": "UPDATE diagnosis_session SET {column} = json_insert(coalesce({column}, '[]'), '$[#]', json(:value))"
    " WHERE id = :id",
    "postgresql": "UPDATE diagnosis_session SET {column} = coalesce({column}, '[]'::jsonb)"
    " || jsonb_build_array(CAST(:value AS jsonb)) WHERE id = :id",
}
_APPENDABLE = ("deliveries", "progress")
#: This transaction's commit does not wait for the WAL flush (``_append(durable=False)``).
_PG_NO_FLUSH = text("SET LOCAL synchronous_commit = off")
_APPEND_STATEMENTS = {
    (dialect, column): text(statement.format(column=column))
    for dialect, statement in _APPEND.items()
    for column in _APPENDABLE
}

#: A stage event as ``record_progress`` takes it: the stage's name and its details.
ProgressItem = tuple[str, JsonObject]


def _progress_json(stage: str, details: JsonObject) -> str:
    """One stored progress item (``record_progress``, ``_append_progress``)."""
    return json.dumps({"stage": stage, "details": details}, ensure_ascii=False)


#: What a listing reads: the session's own columns and its owner (to tell an abandoned session),
#: no JSON column.
_LIST_COLUMNS = tuple(
    column
    for column in SESSIONS.c
    if column.name not in {"plan", "llm_usage", "self_evaluation", "audit", "audit_zlib", "deliveries", "progress"}
)
#: ``list_sessions(details=True)`` adds these (``veridiag sessions --json`` prints them): JSON to
#: decode per row, the bulk of a listing's cost, so the API's and the workbench's pages skip them.
_DETAIL_COLUMNS = (SESSIONS.c.plan, SESSIONS.c.llm_usage)
_NO_AUDIT = {"audit": null(), "audit_zlib": null(), "self_evaluation": null()}
#: What compressing a session's audit clears besides (``audit_zlib`` is then set).
_COMPRESSED = {**_NO_AUDIT, "progress": null()}
_AUDIT_COLUMNS = (SESSIONS.c.self_evaluation, SESSIONS.c.audit, SESSIONS.c.audit_zlib)
#: Newest first; the tie-break runs the same way, so the index serves the order and the keyset.
_NEWEST_FIRST = (SESSIONS.c.created_at.desc(), SESSIONS.c.id.desc())

#: A finished session's audit is compressed once it is older than this (seconds): until then it
#: is read often (the workbench, ``veridiag audit``) and stays plain JSON, queryable in SQL.
COMPRESS_AUDITS_AFTER = 86_400.0
#: Sessions compressed per ``open_store``: start-up stays short; ``veridiag db compact`` does all.
COMPRESS_ON_OPEN = 200
_COMPRESS_BATCH = 100


def new_session_id() -> str:
    return "s-" + secrets.token_hex(6)


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def session_cursor(record: SessionRecord) -> str:
    """Where the page after ``record`` starts (``list_sessions(cursor=…)``): its creation time in
    microseconds since the epoch and its id — URL-safe, and exact on SQLite and PostgreSQL."""
    since_epoch = _aware(record.created_at) - _EPOCH
    micros = (since_epoch.days * 86_400 + since_epoch.seconds) * 1_000_000 + since_epoch.microseconds
    return f"{micros}_{record.id}"


def _cursor_position(cursor: str) -> tuple[datetime, str]:
    micros, separator, session_id = cursor.partition("_")
    if not separator or not session_id or not micros.isdigit():
        raise ValueError(f"not a session cursor: {cursor!r}")
    return _EPOCH + timedelta(microseconds=int(micros)), session_id


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _session_record(values: Mapping[str, Any]) -> SessionRecord:
    """From a row's columns (detail columns a listing did not read stay None); the audit is
    read separately (``_audit``)."""
    return SessionRecord(
        id=values["id"],
        created_at=_aware(values["created_at"]),
        updated_at=_aware(values["updated_at"]),
        query=values["query"],
        lang=values["lang"],
        status=values["status"],
        plan=values.get("plan"),
        verdict=values.get("verdict"),
        final_answer=values.get("final_answer"),
        rounds=values["rounds"],
        llm_usage=values.get("llm_usage"),
        error=values.get("error"),
        deliveries=values.get("deliveries") or [],
        source=values.get("source"),
        answer_line=values.get("answer_line"),
        service=values.get("service"),
    )


def _invocation_record(row: Any) -> InvocationRecord:
    """From a Core row or the values inserted (same attribute names)."""
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
        drawn=row.drawn if isinstance(row.drawn, dict) else None,
    )


class SessionStore:
    """Sessions and invocations in SQLite or PostgreSQL; migrates itself on first use."""

    def __init__(self, url: str, *, migrate: bool = True, stale_after: float | None = DEFAULT_STALE_AFTER) -> None:
        self.engine = make_engine(url)
        self.stale_after = stale_after
        if migrate:
            try:
                upgrade(self.engine)
            except SQLAlchemyError as exc:
                raise StoreError(f"cannot open store {self.engine.url!r}: {_one_line(exc)}") from exc

    def close(self) -> None:
        self.engine.dispose()

    # -- sessions -------------------------------------------------------------------------

    def create_session(
        self,
        query: str,
        lang: str | None = None,
        session_id: str | None = None,
        source: SessionSource | None = None,
        *,
        progress: Sequence[ProgressItem] = (),
    ) -> SessionRecord:
        """A ``running`` session; ``progress``: its first stage events (``record_progress``),
        appended in the same transaction."""
        now = _now()
        owner = this_process()
        record = SessionRecord(
            id=session_id or new_session_id(),
            created_at=now,
            updated_at=now,
            query=query,
            lang=lang,
            status="running",
            source=source,
        )
        statement = insert(SESSIONS).values(
            **record.model_dump(
                include={"id", "created_at", "updated_at", "query", "lang", "status", "rounds", "source"}
            ),
            owner_pid=owner.pid,
            owner_host=owner.host,
            owner_started_at=owner.started_at,
            owner_space=owner.space,
        )
        with self.engine.begin() as connection:
            connection.execute(statement)
            self._append_progress(connection, record.id, progress)
        return record

    def get_session(self, session_id: str) -> SessionRecord | None:
        """One session with its audit as it was written (references resolved, decompressed)."""
        with self.engine.connect() as connection:
            row = connection.execute(select(SESSIONS).where(SESSIONS.c.id == session_id)).first()
            if row is None:
                return None
            audit = self._audit(connection, row)
        return self._reconciled([row])[0].model_copy(update={"self_evaluation": audit})

    def _audit(self, connection: Any, row: Any) -> JsonObject | None:
        """The audit as written; None when the row holds none (or JSON that is no object)."""
        if row.audit_zlib is not None or row.audit is not None:
            compacted = decompress(row.audit_zlib) if row.audit_zlib is not None else row.audit
            stored = hydrate(compacted, self._invocation_texts(connection, row.id))
        else:  # written before migration 0003: stored whole
            stored = row.self_evaluation
        audit: JsonObject | None = stored if isinstance(stored, dict) else None
        return audit

    def _invocation_texts(self, connection: Any, session_id: str) -> dict[int, InvocationTexts]:
        """The text fields of the session's own invocations: what its audit may reference (never
        another session's — those could go with their session)."""
        columns = (INVOCATIONS.c.id, INVOCATIONS.c.output, INVOCATIONS.c.output_preview, INVOCATIONS.c.error)
        query = select(*columns).where(INVOCATIONS.c.session_id == session_id)
        return {row.id: InvocationTexts(row.output, row.output_preview, row.error) for row in connection.execute(query)}

    def _stored_audit(self, connection: Any, session_id: str, audit: JsonObject | None) -> dict[str, object]:
        """The columns that store ``audit``: compact JSON in ``audit``, the others cleared (SQL
        NULL, not JSON ``null``: the index of audits to compress holds only non-NULL ones). The
        texts it references are read on ``connection``: the write's own, in its transaction
        (a connection of its own cost ~0.1 ms a session, measured)."""
        if audit is None:
            return dict(_NO_AUDIT)
        return {**_NO_AUDIT, "audit": compact(audit, self._invocation_texts(connection, session_id))}

    def update_session(
        self, session_id: str, *, progress: Sequence[ProgressItem] = (), **fields: Unpack[SessionUpdate]
    ) -> None:
        """Write stage results at once (one UPDATE, committed). A verdict comes only with its
        answer (``complete_session``); the schema enforces it too. ``progress``: stage events
        appended in the same transaction (``record_progress``)."""
        unknown = set(fields) - _SESSION_FIELDS
        if unknown:
            raise ValueError(f"not session fields: {', '.join(sorted(unknown))}")
        if fields.get("verdict") is not None and not fields.get("final_answer"):
            raise ValueError("a verdict is written only together with its final answer")
        self._update(session_id, fields, progress=progress)

    def _update(
        self,
        session_id: str,
        fields: SessionUpdate,
        *,
        only_if: Sequence[str] = (),
        progress: Sequence[ProgressItem] = (),
    ) -> int:
        """One UPDATE of ``fields``, then — in the same transaction, only if it changed the row —
        the ``progress`` events appended (``_append_progress``); the number of rows changed."""
        #: column → value for the UPDATE (the audit becomes its storage columns)
        values: dict[str, object] = {key: value for key, value in fields.items() if key != "self_evaluation"}
        try:
            with self.engine.begin() as connection:
                if "self_evaluation" in fields:
                    values.update(self._stored_audit(connection, session_id, fields["self_evaluation"]))
                statement = update(SESSIONS).where(SESSIONS.c.id == session_id).values(**values, updated_at=_now())
                if only_if:
                    statement = statement.where(SESSIONS.c.status.in_(only_if))
                changed = connection.execute(statement).rowcount
                if changed:
                    self._append_progress(connection, session_id, progress)
        except IntegrityError as exc:
            raise StoreError(f"session {session_id!r} refused: {_one_line(exc)}") from exc
        if not changed and self._status(session_id) is None:
            raise KeyError(f"no session {session_id!r}")
        return int(changed)

    def _status(self, session_id: str) -> str | None:
        with self.engine.connect() as connection:
            return connection.execute(select(SESSIONS.c.status).where(SESSIONS.c.id == session_id)).scalar()

    def complete_session(
        self,
        session_id: str,
        *,
        verdict: str | None,
        final_answer: str,
        self_evaluation: JsonObject | None = None,
        rounds: int | None = None,
        llm_usage: JsonObject | None = None,
        answer_line: str | None = None,
        service: str | None = None,
        progress: Sequence[ProgressItem] = (),
    ) -> None:
        """The end of a diagnosis: status, verdict and answer in one UPDATE, so no reader ever
        sees a verdict without the answer it judges. The owner's own result also replaces an
        ``interrupted`` set by the timeout (that was a guess from outside; this is what ran).
        ``progress``: stage events appended in the same transaction, if the session completes."""
        if not final_answer:
            raise ValueError("a session completes with a final answer")
        fields: SessionUpdate = {
            "status": "completed",
            "verdict": verdict,
            "final_answer": final_answer,
            "self_evaluation": self_evaluation,
            "llm_usage": llm_usage,
            "error": None,
            "answer_line": answer_line,
            "service": service,
        }
        if rounds is not None:
            fields["rounds"] = rounds
        if not self._update(session_id, fields, only_if=("running", "interrupted"), progress=progress):
            raise StoreError(f"session {session_id!r} is already {self._status(session_id)}")

    def fail_session(self, session_id: str, *, error: str, self_evaluation: JsonObject | None = None) -> None:
        """A diagnosis that stopped on an error: no verdict, no answer, what was known kept."""
        fields: SessionUpdate = {"status": "failed", "verdict": None, "final_answer": None, "error": error}
        self._update(session_id, {**fields, "self_evaluation": self_evaluation}, only_if=("running", "interrupted"))

    def finish_session(self, session_id: str, status: SessionStatus, **fields: Unpack[SessionOutcome]) -> SessionRecord:
        answer = fields.get("final_answer")
        if status == "completed" and answer:
            extra = fields.keys() - {
                "verdict",
                "final_answer",
                "self_evaluation",
                "rounds",
                "llm_usage",
                "answer_line",
                "service",
            }
            if extra:
                raise TypeError(f"a completed session does not take {', '.join(sorted(extra))}")
            self.complete_session(
                session_id,
                verdict=fields.get("verdict"),
                final_answer=answer,
                self_evaluation=fields.get("self_evaluation"),
                rounds=fields.get("rounds"),
                llm_usage=fields.get("llm_usage"),
                answer_line=fields.get("answer_line"),
                service=fields.get("service"),
            )
        else:
            self.update_session(session_id, status=status, **fields)
        record = self.get_session(session_id)
        assert record is not None
        return record

    def record_delivery(self, session_id: str, attempt: DeliveryAttempt) -> None:
        """Append one delivery attempt to the session's ``deliveries`` in a single UPDATE (the
        database appends, so concurrent deliveries of one session never lose each other's
        record). ``updated_at`` stays: it dates the diagnosis, each attempt carries its own time."""
        self._append(session_id, "deliveries", attempt.model_dump_json())

    def record_progress(self, session_id: str, stage: str, details: JsonObject) -> None:
        """Append one stage event (``pipeline/progress.py``) to the session's ``progress``, in a
        single UPDATE: ``session_progress`` — in any process on this store — reads it back."""
        self._append(session_id, "progress", _progress_json(stage, details), durable=False)

    def _append_progress(self, connection: Any, session_id: str, progress: Sequence[ProgressItem]) -> None:
        """Append stage events to the session's ``progress`` inside the caller's transaction, one
        statement each, as ``record_progress`` appends them: what a reader gets is the same, and a
        write that carries them costs no transaction of its own (~65 µs each on SQLite, measured)."""
        if not progress:
            return
        statement = _APPEND_STATEMENTS.get((connection.dialect.name, "progress"))
        if statement is None:  # as ``record_progress``'s refusal: a progress report, not evidence
            log.warning("session %s: progress events not stored on %s", session_id, connection.dialect.name)
            return
        for stage, details in progress:
            connection.execute(statement, {"id": session_id, "value": _progress_json(stage, details)})

    def _append(self, session_id: str, column: str, value: str, *, durable: bool = True) -> None:
        """Append the JSON ``value`` to the list in ``column``; the database appends, so
        concurrent writers never lose each other's item. Not ``durable``: PostgreSQL commits
        without waiting for its WAL to reach the disk — a crash may lose the last such items
        (progress reports, ~30 a diagnosis; the outcome is written durably) but each costs no
        disk flush."""
        dialect = self.engine.dialect.name
        statement = _APPEND_STATEMENTS.get((dialect, column))
        if statement is None:
            raise StoreError(f"{column} records are not supported on {dialect}")
        with self.engine.begin() as connection:
            if not durable and dialect == "postgresql":
                connection.execute(_PG_NO_FLUSH)
            changed = connection.execute(statement, {"id": session_id, "value": value}).rowcount
        if not changed:
            raise KeyError(f"no session {session_id!r}")

    def session_progress(self, session_id: str, after: int = 0) -> SessionProgress | None:
        """The session's status and the stage events stored after the first ``after``, read in
        one query (None: no such session). An abandoned ``running`` session reads as
        ``interrupted``, as everywhere, so a reader following it stops."""
        query = select(*_LIST_COLUMNS, SESSIONS.c.progress).where(SESSIONS.c.id == session_id)
        with self.engine.connect() as connection:
            row = connection.execute(query).first()
        if row is None:
            return None
        record = self._reconciled([row])[0]
        stored = row.progress if isinstance(row.progress, list) else []
        events = [ProgressEvent.model_validate(item) for item in stored[after:]]
        return SessionProgress(session=record, events=events, read=after + len(events))

    # -- interrupted sessions -------------------------------------------------------------

    def reconcile(self) -> list[str]:
        """Interrupt every ``running`` session whose owner is gone or that outlived
        ``stale_after``; returns their ids. Run when a store is opened."""
        with self.engine.connect() as connection:
            rows = connection.execute(select(*_LIST_COLUMNS).where(SESSIONS.c.status == "running")).all()
        return [r.id for r in self._reconciled(rows) if r.status == "interrupted"]

    def _abandoned(self, row: Any, now: datetime) -> str | None:
        """Why a ``running`` row is no longer being worked on, or None."""
        if row.owner_pid is not None and row.owner_host is not None:
            started = _aware(row.owner_started_at) if row.owner_started_at else None
            reason = gone_reason(Owner(row.owner_pid, row.owner_host, started, row.owner_space))
            if reason is not None:
                return f"interrupted: {reason} before the session finished"
        if self.stale_after is not None and now - _aware(row.created_at) > timedelta(seconds=self.stale_after):
            return f"interrupted: still running after the session timeout ({self.stale_after:g} s)"
        return None

    def _reconciled(self, rows: Sequence[Any]) -> list[SessionRecord]:
        """Records of ``rows``, abandoned ``running`` ones turned ``interrupted``. The change is
        stored when the store is writable; a read-only store still shows the truth."""
        now = _now()
        records = []
        for row in rows:
            record = _session_record(row._asdict())
            reason = self._abandoned(row, now) if row.status == "running" else None
            if reason is not None:
                with contextlib.suppress(SQLAlchemyError, KeyError):  # read-only or locked: show it, store it later
                    self._update(row.id, {"status": "interrupted", "error": reason}, only_if=("running",))
                record = record.model_copy(update={"status": "interrupted", "error": reason})
            records.append(record)
        return records

    def list_sessions(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        verdict: str | None = None,
        search: str | None = None,
        cursor: str | None = None,
        details: bool = False,
    ) -> list[SessionRecord]:
        """Sessions newest first, with the list columns only: never the audit (``get_session``
        reads it), and the plan and usage only with ``details``. ``cursor``
        (``session_cursor`` of the last record of a page) starts after that record along the
        index — a deep page costs what the first does; ``offset`` still works. An unreadable
        cursor is a ``ValueError``."""
        columns = _LIST_COLUMNS + _DETAIL_COLUMNS if details else _LIST_COLUMNS
        query = _filtered(select(*columns).order_by(*_NEWEST_FIRST), verdict, search)
        if cursor is not None:
            created_at, session_id = _cursor_position(cursor)
            query = query.where(tuple_(SESSIONS.c.created_at, SESSIONS.c.id) < tuple_(created_at, session_id))
        with self.engine.connect() as connection:
            rows = connection.execute(query.limit(limit).offset(offset)).all()
        return self._reconciled(rows)

    def reachable(self) -> None:
        """Raise unless the database answers and holds the sessions table: one indexed row at
        most, whatever the table's size (a health check runs every few seconds)."""
        with self.engine.connect() as connection:
            connection.execute(select(SESSIONS.c.id).limit(1)).all()

    def count_sessions(self, verdict: str | None = None, search: str | None = None) -> int:
        query = _filtered(select(func.count()).select_from(SESSIONS), verdict, search)
        with self.engine.connect() as connection:
            return int(connection.execute(query).scalar() or 0)

    # -- audit maintenance ----------------------------------------------------------------

    def compress_older_audits(self, *, older_than: float = COMPRESS_AUDITS_AFTER, limit: int | None = None) -> int:
        """Compress the audits of sessions created more than ``older_than`` seconds ago (oldest
        first, at most ``limit``); returns how many. Sessions written before migration 0003 are
        made compact on the way. Reading them gives the same audit as before. Their stage
        events go (the audit holds what they said): following a session is for the day it
        ran; later its event stream is only its end."""
        cutoff = _now() - timedelta(seconds=older_than)
        done = 0
        position = tuple_(SESSIONS.c.created_at, SESSIONS.c.id)
        after: tuple[datetime, str] | None = None  # moves on even past a row it could not change
        while limit is None or done < limit:
            batch = _COMPRESS_BATCH if limit is None else min(_COMPRESS_BATCH, limit - done)
            query = (
                select(SESSIONS.c.id, SESSIONS.c.created_at, SESSIONS.c.updated_at, *_AUDIT_COLUMNS)
                .where(text(f"({UNCOMPRESSED_AUDIT})"), SESSIONS.c.created_at < cutoff)
                .order_by(SESSIONS.c.created_at, SESSIONS.c.id)
                .limit(batch)
            )
            if after is not None:
                query = query.where(position > tuple_(*after))
            with self.engine.begin() as connection:
                rows = connection.execute(query).all()
                for row in rows:
                    form = self._compact_form(connection, row)
                    connection.execute(
                        update(SESSIONS)
                        # unchanged since read: a late final write wins over compressing the old audit
                        .where(SESSIONS.c.id == row.id, SESSIONS.c.updated_at == row.updated_at)
                        .values({**_COMPRESSED, **({} if form is None else {"audit_zlib": compress(form)})})
                    )
            done += len(rows)
            if len(rows) < batch:
                break
            after = (rows[-1].created_at, rows[-1].id)
        return done

    def _compact_form(self, connection: Any, row: Any) -> Any:
        """The row's audit in compact form; None for a JSON ``null`` (older rows hold some)."""
        if row.audit is not None:
            return row.audit
        legacy = row.self_evaluation
        if not isinstance(legacy, dict):
            return legacy
        return compact(legacy, self._invocation_texts(connection, row.id))

    # -- invocations ----------------------------------------------------------------------

    def record_invocation(
        self,
        *,
        session_id: str,
        tool_name: str,
        arguments: JsonObject,
        status: InvocationStatus,
        output: str,
        retrieval_details: JsonObject | None = None,
        error: str | None = None,
        round: int = 1,
        started_at: datetime | None = None,
        latency_ms: float = 0.0,
        preview: str | None = None,
        invocation_id: int | None = None,
        drawn: JsonObject | None = None,
    ) -> InvocationRecord:
        """Persist one tool call and return it with its id (committed before returning).

        ``invocation_id`` forces an id (eval fixtures cite literal ids); normally the
        database assigns it. ``drawn``: the typed records to draw the output by
        (``tools/drawn.py``); not kept for an output stored cut, whose lines they would outrun."""
        truncated = len(output) > MAX_STORED_OUTPUT
        stored = output[:MAX_STORED_OUTPUT] if truncated else output
        values: _InvocationRow = {
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
            "drawn": dict(drawn) if drawn is not None and not truncated else None,
        }
        # No records: SQL NULL, as an invocation stored before migration 0009 (not JSON ``null``).
        parameters: dict[str, object] = {**values, "drawn": values["drawn"] if values["drawn"] is not None else null()}
        if invocation_id is not None:
            parameters["id"] = invocation_id
        try:
            with self.engine.begin() as connection:  # the foreign key refuses an unknown session
                explicit_on_pg = invocation_id is not None and connection.dialect.name == "postgresql"
                if explicit_on_pg:
                    connection.execute(_PG_LOCK_INVOCATIONS)
                new_id = connection.execute(_INSERT_INVOCATION, parameters).scalar_one()
                if explicit_on_pg:
                    connection.execute(_PG_ADVANCE_SEQUENCE, {"id": new_id})
        except IntegrityError as exc:
            if self.get_session(session_id) is None:
                raise KeyError(f"no session {session_id!r}") from None
            raise StoreError(f"cannot record invocation: {exc.orig}") from exc
        return _invocation_record(SimpleNamespace(id=new_id, **values))

    def get_invocations(self, ids: Iterable[int]) -> Mapping[int, InvocationRecord]:
        wanted = sorted({i for i in ids if isinstance(i, int) and not isinstance(i, bool) and 0 < i < 2**62})
        if not wanted:
            return {}
        with self.engine.connect() as connection:
            rows = connection.execute(select(INVOCATIONS).where(INVOCATIONS.c.id.in_(wanted))).all()
        return {row.id: _invocation_record(row) for row in rows}

    def list_invocations(self, session_id: str) -> list[InvocationRecord]:
        query = select(INVOCATIONS).where(INVOCATIONS.c.session_id == session_id).order_by(INVOCATIONS.c.id)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [_invocation_record(row) for row in rows]


def open_store(url: str, *, stale_after: float | None = DEFAULT_STALE_AFTER) -> SessionStore:
    """A migrated store, its abandoned sessions interrupted (start-up reconciliation)."""
    try:
        store = SessionStore(url, stale_after=stale_after)
    except StoreError:
        raise
    except Exception as exc:  # driver missing, unreachable server, unreadable file
        raise StoreError(f"cannot open store: {_one_line(exc)}") from exc
    with contextlib.suppress(SQLAlchemyError):  # a read-only store is still readable
        store.reconcile()
        store.compress_older_audits(limit=COMPRESS_ON_OPEN)
    return store


def _one_line(exc: BaseException) -> str:
    """A database error as one line: the driver's message, without SQLAlchemy's SQL echo and
    background link."""
    original = getattr(exc, "orig", None) or exc
    text = " ".join(str(original).split())
    return f"{original.__class__.__name__}: {text}{database_hint(text)}"


def _filtered(query: Select[Any], verdict: str | None, search: str | None) -> Select[Any]:
    """Sessions with this verdict and/or whose question, answer or service contains ``search`` (any case)."""
    if verdict is not None:
        query = query.where(SESSIONS.c.verdict == verdict)
    if search:
        pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(
            SESSIONS.c.query.ilike(pattern, escape="\\")
            | SESSIONS.c.final_answer.ilike(pattern, escape="\\")
            | SESSIONS.c.service.ilike(pattern, escape="\\")
        )
    return query
