"""Writing into the embedded file: log lines (with templates), metric points, change events.

Every write is idempotent: a log line's key is a hash of its service, time, text and how
many identical lines came before it at that instant, so importing the same file twice (or a
log that has grown since) adds only the new lines. Templates are mined per service as lines
arrive and the miner's state is kept in the file, so a later import extends the same templates.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from veridiag.redaction import default_redactor
from veridiag.text.tokens import segment
from veridiag.tools.backends.embedded._schema import count_minutes

if TYPE_CHECKING:
    from veridiag.tools.templates import TemplateMiner


def _for_mining(message: str) -> str:
    """A message as its template is mined from: redacted first. Mining masks digits
    (``%3D`` becomes ``%<*>D``), which would hide an encoded secret from the redaction at the
    tool boundary, and the stored template would keep it."""
    return default_redactor().redact(message)


#: Lines written per transaction step; bounded memory whatever the file size.
BATCH = 10_000
#: Distinct lines whose repeats are counted exactly (about 100 bytes each).
REPEAT_MEMORY = 500_000
_MARK_LOADED = "INSERT OR IGNORE INTO meta VALUES ('loaded', 'data')"


class LogRow(NamedTuple):
    """One log entry to store. ``text`` is what is stored and searched (the entry as written,
    continuation lines included); ``message`` is what its template is mined from.

    A named tuple, not a frozen dataclass: as immutable, and made in a third of the time (one is
    made per imported line: the frozen dataclass's ``__init__`` took ~2 µs more, measured)."""

    ts: datetime
    service: str
    level: str
    text: str
    message: str = ""
    component: str = ""
    parsed: bool = True
    #: False: the line wrote no level; ``level`` is what it is read as.
    leveled: bool = True
    #: The trace and span the line was written in ("" when its record says none).
    trace_id: str = ""
    span_id: str = ""


@dataclass(frozen=True, slots=True)
class ChangeRow:
    ts: datetime
    service: str
    kind: str
    description: str
    version: str | None = None
    source: str = ""


@dataclass(frozen=True, slots=True)
class EdgeRow:
    """One call-graph edge as a source file states it: ``caller`` calls ``callee``."""

    caller: str
    callee: str
    weight: float
    source: str


@dataclass
class Written:
    added: int = 0
    #: Rows not stored again: already stored before the call, or repeating a row of the call.
    duplicates: int = 0
    #: Of ``duplicates``, those repeating a row met earlier in the same call (the same file):
    #: not "already stored" — a first import of a file with repeated rows has some.
    in_file: int = 0


def ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _key(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


class _Miners:
    """The template miner of each service, restored from the file on first use."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.miners: dict[str, TemplateMiner] = {}

    def get(self, service: str) -> TemplateMiner:
        miner = self.miners.get(service)
        if miner is None:
            # Imported here: drain3 (~10 ms) is for writing lines; a query never mines.
            from veridiag.tools.templates import TemplateMiner

            row = self.conn.execute("SELECT state FROM log_miner WHERE service=?", (service,)).fetchone()
            miner = TemplateMiner(bytes(row[0]) if row else None)
            self.miners[service] = miner
        return miner

    def save(self) -> None:
        for service, miner in self.miners.items():
            self.conn.executemany(
                "INSERT OR REPLACE INTO log_template(service, id, template) VALUES (?,?,?)",
                [(service, template_id, text) for template_id, text in miner.templates().items()],
            )
            self.conn.execute("INSERT OR REPLACE INTO log_miner VALUES (?, ?)", (service, miner.state()))


class _LogWriter:
    """One ``add_logs`` call's writes: drops the keys already stored, mines the templates of the
    rest and inserts them with their full-text entries, a batch at a time in arrival order."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.miners = _Miners(conn)
        self.written = Written()
        #: Lines stored by this call have ids from here on: a key found among them repeats the file.
        self.first_id = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM log_line").fetchone()[0]) + 1

    def write(self, batch: list[tuple[int, int, LogRow]]) -> None:
        """Store a batch of (key, ts in ms, row)."""
        conn = self.conn
        known: set[int] = set()
        #: keys of lines this call stored or met: a line repeating one is a repeat within the file
        ours: set[int] = set()
        services = {row.service for _key, _ts, row in batch}
        for service in services:
            stamps = [ts for _key, ts, row in batch if row.service == service]
            for key, row_id in conn.execute(
                "SELECT key, id FROM log_line WHERE service=? AND ts>=? AND ts<=?", (service, min(stamps), max(stamps))
            ):
                known.add(key)
                if row_id >= self.first_id:
                    ours.add(key)
        fresh = []
        for item in batch:
            if item[0] not in known:
                known.add(item[0])  # a key met twice in one batch is stored once
                ours.add(item[0])
                fresh.append(item)
            elif item[0] in ours:
                self.written.in_file += 1
        self.written.duplicates += len(batch) - len(fresh)
        if not fresh:
            return
        first = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM log_line").fetchone()[0]) + 1
        template_of = {service: self.miners.get(service).add for service in services}
        conn.executemany(
            "INSERT INTO log_line(id, ts, service, level, line, component, template_id, parsed, key, trace_id, span_id)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    first + index,
                    ts,
                    row.service,
                    row.level,
                    row.text,
                    row.component,
                    template_of[row.service](_for_mining(row.message or row.text)),
                    int(row.parsed),
                    key,
                    row.trace_id or None,
                    row.span_id or None,
                )
                for index, (key, ts, row) in enumerate(fresh)
            ],
        )
        count_minutes(conn, first, first + len(fresh) - 1)
        _count_levels(conn, fresh)
        conn.executemany(
            "INSERT INTO log_fts(rowid, line) VALUES (?, ?)",
            [(first + index, segment(row.text)) for index, (_key, _ts, row) in enumerate(fresh)],
        )
        self.written.added += len(fresh)


def _count_levels(conn: sqlite3.Connection, fresh: list[tuple[int, int, LogRow]]) -> None:
    """Add the batch's lines, and those of them that wrote no level, to ``log_levels``."""
    counts: dict[str, list[int]] = {}
    for _key, _ts, row in fresh:
        count = counts.setdefault(row.service, [0, 0])
        count[0] += 1
        count[1] += not row.leveled
    conn.executemany(
        "INSERT INTO log_levels VALUES (?, ?, ?) ON CONFLICT DO UPDATE"
        " SET lines = lines + excluded.lines, unleveled = unleveled + excluded.unleveled",
        [(service, lines, unleveled) for service, (lines, unleveled) in counts.items()],
    )


def keyed_batches(rows: Iterable[LogRow]) -> Iterator[list[tuple[int, int, LogRow]]]:
    """The rows in batches of (idempotency key, ts in ms, row)."""
    repeats: dict[int, int] = {}
    batch: list[tuple[int, int, LogRow]] = []
    for row in rows:
        stamp = ms(row.ts)
        # The n-th identical line (same service, time and text) of a file gets the n-th key, so
        # repeats are kept and a second import of the file matches them one by one. Repeats are
        # counted over the whole file (logs are not always in time order); past REPEAT_MEMORY
        # distinct lines the count restarts, and a far-apart repeat is then taken as a duplicate.
        base = _key(f"{row.service}\x1f{stamp}\x1f{row.text}")
        occurrence = repeats.get(base, 0)
        if len(repeats) >= REPEAT_MEMORY:
            repeats.clear()
        repeats[base] = occurrence + 1
        batch.append(((base + occurrence + 2**63) % 2**64 - 2**63, stamp, row))
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def add_logs(conn: sqlite3.Connection, rows: Iterable[LogRow]) -> Written:
    """Append the rows that are not stored yet; mine their templates. Streamed: one batch of
    rows is held at a time, whatever the file size."""
    writer = _LogWriter(conn)
    for batch in keyed_batches(rows):
        writer.write(batch)
    writer.miners.save()
    conn.execute(_MARK_LOADED)
    return writer.written


def template_untemplated(conn: sqlite3.Connection) -> int:
    """Mine templates for lines stored before templates existed (a version 1 file)."""
    miners = _Miners(conn)
    done = 0
    while True:
        rows = conn.execute(
            "SELECT id, service, line FROM log_line WHERE template_id IS NULL ORDER BY id LIMIT ?", (BATCH,)
        ).fetchall()
        if not rows:
            break
        conn.executemany(
            "UPDATE log_line SET template_id=? WHERE id=?",
            [(miners.get(service).add(_for_mining(line)), row_id) for row_id, service, line in rows],
        )
        done += len(rows)
    miners.save()
    return done


_UPSERT_POINT = (
    "INSERT INTO metric_point VALUES (?,?,?,?) ON CONFLICT(service, metric, ts)"
    " DO UPDATE SET value=excluded.value WHERE value != excluded.value"
)


def add_metric_points(conn: sqlite3.Connection, rows: Iterable[tuple[str, str, str, datetime, float]]) -> int:
    """Upsert ``(service, metric, unit, ts, value)`` points; returns how many are new or changed
    (a point already stored with the same value is not counted: a re-import reports 0)."""
    return _add_points(conn, rows, count_repeats=False).added


def add_metric_points_counted(
    conn: sqlite3.Connection, rows: Iterable[tuple[str, str, str, datetime, float]]
) -> Written:
    """``add_metric_points`` for an import: also the points not stored anew and, of them, those
    whose series and time an earlier point of the same call had (repeats within the file)."""
    return _add_points(conn, rows, count_repeats=True)


def _add_points(
    conn: sqlite3.Connection, rows: Iterable[tuple[str, str, str, datetime, float]], *, count_repeats: bool
) -> Written:
    """``count_repeats``: the keys met are kept in a temporary table (a file's may not fit in
    memory) to tell a repeat within the call from a point stored before it."""
    if count_repeats:
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS point_seen(service TEXT, metric TEXT, ts INTEGER,"
            " PRIMARY KEY(service, metric, ts)) WITHOUT ROWID"
        )
        conn.execute("DELETE FROM temp.point_seen")
    series: set[tuple[str, str, str]] = set()
    batch: list[tuple[str, str, int, float]] = []
    rows_read, first_seen = 0, 0

    def write() -> None:
        nonlocal first_seen
        if count_repeats:
            seen = conn.total_changes
            conn.executemany("INSERT OR IGNORE INTO temp.point_seen VALUES (?,?,?)", [b[:3] for b in batch])
            first_seen += conn.total_changes - seen
        conn.executemany(_UPSERT_POINT, batch)
        batch.clear()

    before = conn.total_changes
    for service, metric, unit, ts, value in rows:
        series.add((service, metric, unit))
        batch.append((service, metric, ms(ts), float(value)))
        rows_read += 1
        if len(batch) >= 10_000:
            write()
    write()
    added = conn.total_changes - before - first_seen  # the temporary table's changes are not the store's
    if count_repeats:
        conn.execute("DELETE FROM temp.point_seen")
    conn.executemany("INSERT OR REPLACE INTO metric_series VALUES (?,?,?)", sorted(series))
    conn.execute(_MARK_LOADED)
    duplicates = rows_read - added
    # a repeat with another value replaces the point: changed, so no duplicate
    in_file = min(rows_read - first_seen, duplicates) if count_repeats else 0
    return Written(added=added, duplicates=duplicates, in_file=in_file)


def add_changes(conn: sqlite3.Connection, rows: Iterable[ChangeRow]) -> Written:
    """Store change events; one already stored (same service, time, kind, text) is skipped."""
    written = Written()
    met: set[int] = set()
    for row in rows:
        key = _key(f"{row.service}\x1f{ms(row.ts)}\x1f{row.kind}\x1f{row.description}")
        cursor = conn.execute(
            "INSERT OR IGNORE INTO change_event(ts, service, kind, description, version, source, key)"
            " VALUES (?,?,?,?,?,?,?)",
            (
                ms(row.ts),
                row.service,
                row.kind,
                row.description,
                row.version,
                row.source,
                key,
            ),
        )
        if cursor.rowcount:
            written.added += 1
        else:
            written.duplicates += 1
            written.in_file += key in met
        met.add(key)
    conn.execute(_MARK_LOADED)
    return written


def add_edges(conn: sqlite3.Connection, rows: Iterable[EdgeRow]) -> Written:
    """Store call-graph edges; an edge a source already states with the same weight is a
    duplicate, another weight replaces it (a source imported again)."""
    written = Written()
    met: set[tuple[str, str, str]] = set()
    for row in rows:
        before = conn.total_changes
        edge = (row.caller, row.callee, row.source)
        repeated = edge in met
        met.add(edge)
        conn.execute(
            "INSERT INTO call_edge VALUES (?,?,?,?) ON CONFLICT(caller, callee, source)"
            " DO UPDATE SET weight=excluded.weight WHERE weight != excluded.weight",
            (row.caller, row.callee, row.source, float(row.weight)),
        )
        if conn.total_changes > before:
            written.added += 1
        else:
            written.duplicates += 1
            written.in_file += repeated
    conn.execute(_MARK_LOADED)
    return written
