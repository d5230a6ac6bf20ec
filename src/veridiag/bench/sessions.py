"""Sessions-at-scale benchmark (issue 15): listing, paging and reading sessions with 100 k of
them stored, and what one session costs on disk.

One real demo diagnosis (``make demo``'s question, the configured engine) is stored the normal
way; its row — compact audit as written, and compressed as the maintenance step leaves it — is
then bulk-copied into the same store, ``sessions`` times, spread over 100 days so that the
newest day's stay uncompressed as they would. Timed, each repeatedly in the same run: the first
page as ``veridiag sessions`` lists it, the page with its total as the API returns it, a
verdict-filtered page, a page half-way down by keyset cursor and — the baseline — by offset,
the listing query as it was before (whole rows, sorted), and reading the real session back.
Sizes come from SQLite's ``dbstat``: the session table and its indexes per session, against the
same session stored the old way (full audit JSON in ``self_evaluation``).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import RowMapping, insert, select

from veridiag.bench.stats import summary, time_runs
from veridiag.config import Settings
from veridiag.contracts.json import JsonObject, JsonValue
from veridiag.pipeline.factory import assemble
from veridiag.store import SessionStore, session_cursor
from veridiag.store.models import SESSIONS

QUESTION = "订单123支付失败，帮我看看是什么原因"
PAGE = 50
#: The stored sessions cover this many days (the newest day's audits stay uncompressed).
SPAN_DAYS = 100
_VERDICTS = ("PASS", "PASS", "PASS", "LOW_CONFID", "REJECT")
_INSERT_CHUNK = 1000


class AuditBytes(BaseModel):
    """One session's audit: stored whole as before migration 0003, compact, compressed."""

    before: int
    compact: int
    compressed: int


class SessionsBench(BaseModel):
    """Each timed call's p50/p99 (ms) with ``sessions`` stored, and what a session costs on disk."""

    # Built from the timings by name: a name this model does not list is an error, not a loss.
    model_config = ConfigDict(extra="forbid")

    sessions: int
    page: int
    list_p50_ms: float
    list_p99_ms: float
    page_with_total_p50_ms: float
    page_with_total_p99_ms: float
    verdict_page_p50_ms: float
    verdict_page_p99_ms: float
    keyset_page_p50_ms: float
    keyset_page_p99_ms: float
    offset_page_p50_ms: float
    offset_page_p99_ms: float
    get_p50_ms: float
    get_p99_ms: float
    #: The listing query as it was before (whole rows, a sort): the baseline of ``list``.
    old_query_list_p50_ms: float
    old_query_list_p99_ms: float
    get_compressed_p50_ms: float
    get_compressed_p99_ms: float
    bytes_per_session: int
    bytes_per_session_before: int
    audit_bytes: AuditBytes
    invocation_bytes_per_session: int
    uncompressed_sessions: int
    pages_agree: bool
    fill_seconds: float
    repeats: int


def run(sessions: int = 100_000, repeats: int = 200, baseline_sessions: int = 2000) -> SessionsBench:
    with tempfile.TemporaryDirectory(prefix="veridiag-bench-sessions-") as tmp:
        home = Path(tmp)
        assembly = assemble(Settings(home=home, engine="offline"))
        store = assembly.store
        real = assembly.pipeline.run(QUESTION, source="bench")
        fresh, compressed = _stored_forms(store, real.session_id)
        invocation_bytes = _table_bytes(home / "veridiag.db", "tool_invocation")

        started = time.perf_counter()
        _fill(store, fresh, compressed, sessions, newest=datetime.now(UTC) - timedelta(seconds=1))
        fill_seconds = time.perf_counter() - started
        session_bytes = _table_bytes(home / "veridiag.db", "diagnosis_session")

        middle = store.list_sessions(limit=1, offset=sessions // 2)[0]
        cursor = session_cursor(middle)
        by_cursor = [s.id for s in store.list_sessions(limit=PAGE, cursor=cursor)]
        pages_agree = by_cursor == [s.id for s in store.list_sessions(limit=PAGE, offset=sessions // 2 + 1)]
        timed: dict[str, Callable[[], object]] = {
            "list": lambda: store.list_sessions(limit=PAGE),
            "page_with_total": lambda: (store.list_sessions(limit=PAGE + 1), store.count_sessions()),
            "verdict_page": lambda: store.list_sessions(limit=PAGE, verdict="REJECT"),
            "keyset_page": lambda: store.list_sessions(limit=PAGE, cursor=cursor),
            "offset_page": lambda: store.list_sessions(limit=PAGE, offset=sessions // 2),
            "get": lambda: store.get_session(real.session_id),
        }
        results = {name: summary(time_runs(call, repeats)) for name, call in timed.items()}
        # The query as it was sorts the whole table each time: fewer repeats.
        results["old_query_list"] = summary(time_runs(lambda: _old_listing(store), max(3, repeats // 20)))
        uncompressed = _count_uncompressed(home / "veridiag.db")  # the last day's
        store.compress_older_audits(older_than=0)
        results["get_compressed"] = summary(time_runs(lambda: store.get_session(real.session_id), repeats))
        store.close()

        baseline = min(baseline_sessions, sessions)
        before = SessionStore(f"sqlite:///{home / 'before.db'}")
        _fill_as_before(before, fresh, real.self_evaluation, baseline)
        bytes_before = _table_bytes(home / "before.db", "diagnosis_session") / baseline
        before.close()
    timings = {f"{name}_{key}": value for name, got in results.items() for key, value in got.items()}
    return SessionsBench.model_validate(
        {
            "sessions": sessions,
            "page": PAGE,
            **timings,
            "bytes_per_session": round(session_bytes / (sessions + 1)),
            "bytes_per_session_before": round(bytes_before),
            "audit_bytes": AuditBytes(
                before=len(_old_json(real.self_evaluation)),
                compact=len(_json_text(fresh["audit"])),
                compressed=len(compressed),
            ),
            "invocation_bytes_per_session": invocation_bytes,
            "uncompressed_sessions": uncompressed,
            "pages_agree": pages_agree,
            "fill_seconds": round(fill_seconds, 1),
            "repeats": repeats,
        }
    )


def _stored_forms(store: SessionStore, session_id: str) -> tuple[RowMapping, bytes]:
    """The session's row as written (compact audit), and its audit compressed by the store."""
    with store.engine.connect() as connection:
        fresh = connection.execute(select(SESSIONS).where(SESSIONS.c.id == session_id)).one()._mapping
    with store.engine.begin() as connection:  # compress a copy, leave the real one as written
        copy = {**fresh, "id": "s-compressed", "created_at": fresh["created_at"] - timedelta(days=2)}
        connection.execute(insert(SESSIONS), copy)
    store.compress_older_audits(older_than=86_400)
    with store.engine.begin() as connection:
        blob = connection.execute(select(SESSIONS.c.audit_zlib).where(SESSIONS.c.id == "s-compressed")).scalar_one()
        connection.execute(SESSIONS.delete().where(SESSIONS.c.id == "s-compressed"))
    return fresh, blob


def _fill(store: SessionStore, fresh: RowMapping, compressed: bytes, count: int, newest: datetime) -> None:
    """``count`` copies of the real row, newest first, one every ``SPAN_DAYS / count``: the last
    day's with the compact audit, older ones compressed — as the maintenance step leaves them."""
    step = timedelta(days=SPAN_DAYS) / count
    day_ago = newest - timedelta(days=1)
    base = _without_audit(fresh)
    recent: list[dict[str, object]] = []
    older: list[dict[str, object]] = []
    with store.engine.begin() as connection:
        for index in range(count):
            created = newest - step * (index + 1)
            row = {
                **base,
                "id": f"s-{index:012x}",
                "created_at": created,
                "updated_at": created,
                "query": f"{fresh['query']} #{index}",
                "verdict": _VERDICTS[index % len(_VERDICTS)],
            }
            if created > day_ago:
                recent.append({**row, "audit": fresh["audit"]})
            else:  # compressed, its stage events gone (left out: SQL NULL)
                older.append({**{k: v for k, v in row.items() if k != "progress"}, "audit_zlib": compressed})
            for rows in (recent, older):
                if len(rows) == _INSERT_CHUNK:
                    connection.execute(insert(SESSIONS), rows)
                    rows.clear()
        for rows in (recent, older):
            if rows:
                connection.execute(insert(SESSIONS), rows)


def _fill_as_before(store: SessionStore, fresh: RowMapping, audit: JsonObject, count: int) -> None:
    """The same session stored as before migration 0003: the whole audit in ``self_evaluation``,
    JSON with ASCII escapes (the serializer's default then)."""
    newest = datetime.now(UTC)
    base = _without_audit(fresh)
    rows = [
        {**base, "id": f"s-{index:012x}", "created_at": newest - timedelta(minutes=index)} for index in range(count)
    ]
    with store.engine.begin() as connection:
        connection.execute(insert(SESSIONS), rows)
        connection.exec_driver_sql("UPDATE diagnosis_session SET self_evaluation = ?", (_old_json(audit),))


def _without_audit(row: RowMapping) -> dict[str, object]:
    """The row without its audit columns: left out of an INSERT they are SQL NULL (a ``None``
    would be stored as JSON ``null``, which the store never writes)."""
    return {key: value for key, value in row.items() if key not in {"self_evaluation", "audit", "audit_zlib"}}


def _old_listing(store: SessionStore) -> list[Any]:
    """The listing query as it was: whole rows, newest first with the id ascending (a sort)."""
    query = select(SESSIONS).order_by(SESSIONS.c.created_at.desc(), SESSIONS.c.id).limit(PAGE)
    with store.engine.connect() as connection:
        return list(connection.execute(query).all())


def _table_bytes(path: Path, table: str) -> int:
    """Bytes of ``table`` and its indexes in the file (SQLite ``dbstat``: pages in use)."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        names = [table] + [row[0] for row in connection.execute(f"PRAGMA index_list({table})")]
        marks = ",".join("?" * len(names))
        used = connection.execute(f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks})", names).fetchone()
    return int(used[0] or 0)


def _count_uncompressed(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute("SELECT count(*) FROM diagnosis_session WHERE audit IS NOT NULL").fetchone()[0])


def _old_json(audit: JsonObject) -> str:
    return json.dumps(audit)


def _json_text(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False)
