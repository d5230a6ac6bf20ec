"""The embedded file's tables and their migrations (``PRAGMA user_version``).

Version 1 held raw lines only. Version 2 adds what real imports need: the component and
template of each line, whether the importer understood it, an idempotency key (re-importing a
file adds nothing), mined templates with the miner's state per service, and structured change
events. Version 3 counts the lines that wrote no level, version 4 keeps a line's trace and span
ids, version 5 the call graph, version 6 spans (``data import-traces``). Opening an older file
migrates it in place; nothing already imported is lost.

Lines are searched, never ranked, so the full-text index keeps no column sizes (a fifth faster
to fill, measured). The key sits in the (service, ts) index rather than an index of its own: lines arrive in time
order, so that index grows at its end, while a unique index on a random hash is written all
over and cost a fifth of a million-line import (measured).
"""

from __future__ import annotations

import sqlite3

VERSION = 6

_V1 = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS log_line(
    id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, service TEXT NOT NULL, level TEXT NOT NULL, line TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ix_log_service_ts ON log_line(service, ts);
CREATE INDEX IF NOT EXISTS ix_log_ts ON log_line(ts);
CREATE VIRTUAL TABLE IF NOT EXISTS log_fts USING fts5(line, content='', columnsize=0);
CREATE TABLE IF NOT EXISTS metric_series(service TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL,
    PRIMARY KEY(service, metric));
CREATE TABLE IF NOT EXISTS metric_point(service TEXT NOT NULL, metric TEXT NOT NULL, ts INTEGER NOT NULL,
    value REAL NOT NULL, PRIMARY KEY(service, metric, ts)) WITHOUT ROWID;
"""

_V2_COLUMNS = (
    "ALTER TABLE log_line ADD COLUMN component TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE log_line ADD COLUMN template_id INTEGER",
    "ALTER TABLE log_line ADD COLUMN parsed INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE log_line ADD COLUMN key INTEGER",
)

_V2_TABLES = """
DROP INDEX IF EXISTS ix_log_service_ts;
CREATE UNIQUE INDEX IF NOT EXISTS ix_log_identity ON log_line(service, ts, key);
CREATE INDEX IF NOT EXISTS ix_log_unparsed ON log_line(ts, service) WHERE parsed = 0;
CREATE TABLE IF NOT EXISTS log_template(service TEXT NOT NULL, id INTEGER NOT NULL, template TEXT NOT NULL,
    PRIMARY KEY(service, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS log_miner(service TEXT PRIMARY KEY, state BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS change_event(
    id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, service TEXT NOT NULL, kind TEXT NOT NULL,
    description TEXT NOT NULL, version TEXT, source TEXT NOT NULL DEFAULT '', key INTEGER UNIQUE);
CREATE INDEX IF NOT EXISTS ix_change_service_ts ON change_event(service, ts);
"""

# Version 3: per service, how many imported lines wrote no level of their own (stored as INFO).
# Lines imported before version 3 are not counted: a file imported earlier says nothing of it.
_V3_TABLES = """
CREATE TABLE IF NOT EXISTS log_levels(
    service TEXT PRIMARY KEY, lines INTEGER NOT NULL, unleveled INTEGER NOT NULL) WITHOUT ROWID;
"""

# Version 4: the trace and span a line was written in, when its record says (container log
# records, ``data import-logs``); NULL for every other line, which costs a byte each.
_V4_COLUMNS = (
    "ALTER TABLE log_line ADD COLUMN trace_id TEXT",
    "ALTER TABLE log_line ADD COLUMN span_id TEXT",
)

# Version 5: the call graph (``data import-dependencies``): who calls whom, as each source file
# says (its name), with a weight (calls counted in spans, or the file's own). A source imported
# again replaces its weights; the graph is the edges of every source.
_V5_TABLES = """
CREATE TABLE IF NOT EXISTS call_edge(
    caller TEXT NOT NULL, callee TEXT NOT NULL, source TEXT NOT NULL, weight REAL NOT NULL,
    PRIMARY KEY(caller, callee, source)) WITHOUT ROWID;
"""

# Version 6: spans (``data import-traces``), kept so the per-minute series derived from them
# (``_spans.py``) are recomputed exactly when a later file brings more of a minute's spans; each
# file's reach (its stretches of span starts, each with its longest gap between starts) says
# which minutes the files cover whole.
_V6_TABLES = """
CREATE TABLE IF NOT EXISTS span(
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_id TEXT NOT NULL, service TEXT NOT NULL,
    operation TEXT NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, error INTEGER, self_ns INTEGER,
    source TEXT NOT NULL, PRIMARY KEY(trace_id, span_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ix_span_start ON span(start_ns);
CREATE INDEX IF NOT EXISTS ix_span_source ON span(source);
CREATE TABLE IF NOT EXISTS span_reach(
    key TEXT NOT NULL, first_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL, gap_ns INTEGER NOT NULL,
    PRIMARY KEY(key, first_ns)) WITHOUT ROWID;
"""


#: A ``log_minute`` row spans this long: shorter than a burst gap, so bursts come out of it exactly.
MINUTE_MS = 60_000

# Lines counted per (minute, service, level, template): a window's counts, templates and bursts
# are summed from here and only its partial first and last minutes are read line by line; the
# id range narrows full-text search to the window. The writer counts each batch it inserts in
# one statement (a per-row trigger doubled the cost of an insert, measured). Not tied to
# ``VERSION``: ``ensure_read_side`` adds it to any file on open.
_LOG_MINUTE = """CREATE TABLE IF NOT EXISTS log_minute(
    minute INTEGER NOT NULL, service TEXT NOT NULL, level TEXT NOT NULL, template_id INTEGER NOT NULL,
    lines INTEGER NOT NULL, first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL,
    first_id INTEGER NOT NULL, last_id INTEGER NOT NULL,
    PRIMARY KEY(minute, service, level, template_id)) WITHOUT ROWID"""
_COUNT_MINUTES = f"""INSERT INTO log_minute SELECT ts / {MINUTE_MS}, service, level, COALESCE(template_id, -1),
    COUNT(*), MIN(ts), MAX(ts), MIN(id), MAX(id) FROM log_line WHERE id BETWEEN ? AND ? GROUP BY 1, 2, 3, 4
ON CONFLICT DO UPDATE SET lines = lines + excluded.lines, first_ts = MIN(first_ts, excluded.first_ts),
    last_ts = MAX(last_ts, excluded.last_ts), first_id = MIN(first_id, excluded.first_id),
    last_id = MAX(last_id, excluded.last_id)"""


def count_minutes(conn: sqlite3.Connection, first_id: int, last_id: int) -> None:
    """Add the lines with ids ``first_id``..``last_id``, just inserted, to ``log_minute``."""
    conn.execute(_COUNT_MINUTES, (first_id, last_id))


_READ_INDEXES = {
    # The lines of one service and level in time order: "ERROR lines of X" stops at the first
    # lines it lists instead of reading every line of the service in the window.
    "ix_log_service_level_ts": "log_line(service, level, ts)",
    # What a full-text hit needs of its line, by id: half the cost of looking each hit up in the
    # table, whose rows carry the text (measured).
    "ix_log_hit": "log_line(id, ts, service, level, template_id)",
    # ``query_traces``: one service's spans in a window (its figures, its slowest traces, its
    # callers) without reading every service's, and a span's children (its callees) by their parent.
    # Each covers what its reads take of a span (the primary key, trace and span id, is in every
    # entry), so none looks a span up in the table, a random read a row: the gateway's hour over
    # 1 M spans took ~430 ms that way; its callees 30 → 18 ms and its callers 17 → 8 ms once the
    # children's and the parent id were in them too (measured, 12-06).
    "ix_span_service_reads": "span(service, start_ns, end_ns, self_ns, error, parent_id)",
    "ix_span_children": "span(trace_id, parent_id, start_ns, service, error)",
}
#: Read indexes of earlier versions, dropped once their successors are built.
_RETIRED_INDEXES = ("ix_span_service_figures", "ix_span_parent")


#: Segments of one size the full-text index gathers before merging them into one (FTS5's
#: ``automerge``; its default is 4). Every merge rewrites the entries it merges, so a larger
#: fan-in rewrites each entry fewer times while a big file is imported: 3 M lines imported
#: with 16 took 65 s of CPU against 85 s with 4 (measured); a search reads at most 15 segments
#: a level instead of 3, a few pages more per word.
AUTOMERGE = 16


def ensure_merge_policy(conn: sqlite3.Connection) -> None:
    """Set ``AUTOMERGE`` on the full-text index (kept in the file) unless it is set already."""
    found = conn.execute("SELECT v FROM log_fts_config WHERE k = 'automerge'").fetchone()
    if found is None or int(found[0]) != AUTOMERGE:
        conn.execute("INSERT INTO log_fts(log_fts, rank) VALUES ('automerge', ?)", (AUTOMERGE,))
        conn.commit()


def _has_read_side(conn: sqlite3.Connection) -> bool:
    names = ["log_minute", *_READ_INDEXES]
    marks = ",".join("?" * len(names))
    found = conn.execute(f"SELECT COUNT(*) FROM sqlite_master WHERE name IN ({marks})", names).fetchone()[0]
    return int(found) == len(names)


def ensure_read_side(conn: sqlite3.Connection) -> None:
    """Add the per-minute counts and the read indexes to a file that lacks them: idempotent,
    one pass over the lines, done once even when processes open the file together."""
    if _has_read_side(conn):
        return
    conn.commit()
    conn.execute("BEGIN IMMEDIATE")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name='log_minute'").fetchone() is None:
        conn.execute(_LOG_MINUTE)
        refill_log_minute(conn)
    for name, columns in _READ_INDEXES.items():
        conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {columns}")
    for name in _RETIRED_INDEXES:
        conn.execute(f"DROP INDEX IF EXISTS {name}")
    conn.commit()


#: Read indexes a large import drops while it writes and builds again once after: every row
#: written, and every self time set after, would otherwise update them one entry at a time.
BULK_DROPPED = ("ix_span_service_reads", "ix_span_children")


def drop_for_bulk(conn: sqlite3.Connection) -> None:
    """Drop ``BULK_DROPPED`` inside the caller's transaction (readers keep the committed file)."""
    for name in BULK_DROPPED:
        conn.execute(f"DROP INDEX IF EXISTS {name}")


def rebuild_after_bulk(conn: sqlite3.Connection) -> None:
    """Build ``BULK_DROPPED`` again, in the same transaction as the import that dropped them."""
    for name in BULK_DROPPED:
        conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {_READ_INDEXES[name]}")


def refill_log_minute(conn: sqlite3.Connection) -> None:
    """Count again after lines' templates changed (mined for a version 1 file)."""
    conn.execute("DELETE FROM log_minute")
    conn.execute(_COUNT_MINUTES, (-(2**63), 2**63 - 1))


def migrate(conn: sqlite3.Connection) -> bool:
    """Bring the file to ``VERSION``; True when lines imported before version 2 need templates."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version >= VERSION:
        return False
    conn.executescript(_V1)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(log_line)")}
    if "template_id" not in columns:
        for statement in _V2_COLUMNS:
            conn.execute(statement)
    conn.executescript(_V2_TABLES)
    conn.executescript(_V3_TABLES)
    if "trace_id" not in {row[1] for row in conn.execute("PRAGMA table_info(log_line)")}:
        for statement in _V4_COLUMNS:
            conn.execute(statement)
    conn.executescript(_V5_TABLES)
    conn.executescript(_V6_TABLES)
    conn.execute(f"PRAGMA user_version={VERSION}")
    conn.commit()
    untemplated = conn.execute("SELECT 1 FROM log_line WHERE template_id IS NULL LIMIT 1").fetchone()
    return untemplated is not None
