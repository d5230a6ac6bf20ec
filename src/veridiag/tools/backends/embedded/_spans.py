"""Spans in the embedded file, and the per-service series derived from them (``data import-traces``).

The spans themselves are kept (table ``span``) so that the series stay exact however files
overlap. Nezha's ``trace/HH_MM_trace.csv`` files each start about 8 s before the minute they
are named after, so most minutes' spans arrive in two files; a p90 of each file's half of a
minute is not the p90 of the minute, and no per-file aggregate can be merged into it. So an
import stores the spans it brings (one already stored with the same values is a duplicate),
recomputes the self time of every span of the traces it touched (a child may come in a later
file than its parent), and recomputes each minute those spans start in from every stored span
of that minute. A file imported again adds nothing.

Per service and per minute (the minute a span starts in), as metric series:

* ``span_rate`` — spans that started in the minute (unit ``spans``), only for minutes the
  imported files cover whole (below);
* ``span_duration_p90`` — the 90th percentile of their durations, in ms;
* ``span_self_time_p90`` — of their self times, in ms: a span's duration less the time its
  direct children cover (the union of their intervals, each clipped to the span's own), i.e.
  its own work rather than the wait on what it called;
* ``span_errors`` — spans with an error status, when a span of the service in that minute
  states a status at all (nezha's CSVs state none: no such series).

The 90th percentile interpolates between the closest ranks (``statistics.quantiles``'
``inclusive`` method, numpy's default). A minute in which a service had no span has no point
(not 0): a file says which spans it holds, not which services it would have held.

Coverage. A file says which spans it holds, not when its recording started and stopped: its
reach is taken from its first to its last span start, broken wherever a whole minute or more
passes without one (a file may hold several captures, and a minute without a single span is no
minute whose traffic was counted). A minute's count is a rate only when the reaches cover all of
it — otherwise the first and last minute of every capture would read as traffic falling. A
stretch without a span start as long as the longest one between consecutive starts inside a
reach is ordinary there, so two reaches closer than that are one, and a reach covers that far
beyond its ends.
"""

from __future__ import annotations

import sqlite3
import statistics
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import groupby, pairwise
from typing import NamedTuple

from veridiag.analysis.traces import TimedSpan, self_times
from veridiag.tools.backends.embedded import _schema
from veridiag.tools.backends.embedded._ingest import EdgeRow, add_metric_points

SPAN_RATE = "span_rate"
SPAN_DURATION = "span_duration_p90"
SPAN_SELF_TIME = "span_self_time_p90"
SPAN_ERRORS = "span_errors"
#: Each derived series and its unit.
SPAN_SERIES = {SPAN_RATE: "spans", SPAN_DURATION: "ms", SPAN_SELF_TIME: "ms", SPAN_ERRORS: "spans"}
MINUTE_NS = 60 * 10**9
_NS_PER_MS = 1e6
#: Spans written per step; bounded memory whatever the file size.
BATCH = 10_000
#: Spans of one file past which its read indexes are dropped while it is written and built
#: again after (``_schema.BULK_DROPPED``): 1 M spans imported in 73 s with the covering index
#: kept up row by row, against ~60 s built once after (measured 12-06, load ~2.5).
BULK_SPANS = 100_000

_TEMP = """
CREATE TEMP TABLE IF NOT EXISTS span_in(
    trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_id TEXT NOT NULL, service TEXT NOT NULL,
    operation TEXT NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, error INTEGER,
    PRIMARY KEY(trace_id, span_id)) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS span_touched(trace_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TEMP TABLE IF NOT EXISTS span_moved(minute INTEGER PRIMARY KEY) WITHOUT ROWID;
DELETE FROM temp.span_in;
DELETE FROM temp.span_touched;
DELETE FROM temp.span_moved;
"""
_COLUMNS = ("parent_id", "service", "operation", "start_ns", "end_ns", "error")


def _differs(old: str, new: str) -> str:
    return "(" + " OR ".join(f"{old}.{c} IS NOT {new}.{c}" for c in _COLUMNS) + ")"


_NEW_OR_CHANGED = f"s.span_id IS NULL OR {_differs('s', 'n')}"
_UPSERT = (
    "INSERT INTO span(trace_id, span_id, parent_id, service, operation, start_ns, end_ns, error, self_ns, source)"
    " SELECT trace_id, span_id, parent_id, service, operation, start_ns, end_ns, error, NULL, ? FROM temp.span_in"
    " WHERE true ON CONFLICT(trace_id, span_id) DO UPDATE SET "
    + ", ".join(f"{c}=excluded.{c}" for c in _COLUMNS)
    + f", self_ns=NULL WHERE {_differs('span', 'excluded')}"
)


class SpanRow(NamedTuple):
    """One span to store. ``parent_id`` is "" for a root; ``error`` None when the format states
    no status. A named tuple: one is made per span read."""

    trace_id: str
    span_id: str
    parent_id: str
    service: str
    operation: str
    start_ns: int
    end_ns: int
    error: bool | None = None


@dataclass(frozen=True)
class Reach:
    """Where a file's spans start, first to last, and the longest gap between consecutive starts."""

    first_ns: int
    last_ns: int
    gap_ns: int


@dataclass
class SpansWritten:
    """What one ``add_spans`` did."""

    #: Spans new or changed, and spans already stored alike (or repeated in the file).
    added: int = 0
    duplicates: int = 0
    #: Traces whose spans were added or changed, and minutes with spans recomputed.
    traces: int = 0
    minutes: int = 0
    #: Metric points new, changed or removed.
    points: int = 0
    #: ``(service, metric)`` of the series the recomputed minutes hold.
    series: set[tuple[str, str]] = field(default_factory=set)
    #: Spans added whose parent span is stored nowhere (yet).
    orphans: int = 0
    #: Minutes with spans that the files do not cover whole: no ``span_rate`` point there.
    partial_minutes: int = 0
    #: Calls between two services, counted from parent to child span, for each source file
    #: whose spans' traces were touched (all of that source's calls, recounted).
    edges: list[EdgeRow] = field(default_factory=list)
    #: The file's reach: its stretches of span starts (none: no span read).
    reach: list[Reach] = field(default_factory=list)


def reach_of(starts: array[int]) -> list[Reach]:
    """A file's reach from its spans' start times (any order): its stretches of starts, broken
    where a minute or more passes without one."""
    ordered = sorted(starts)
    if not ordered:
        return []
    stretches = []
    first, gap = ordered[0], 0
    for before, after in pairwise(ordered):
        if after - before >= MINUTE_NS:
            stretches.append(Reach(first, before, gap))
            first, gap = after, 0
        else:
            gap = max(gap, after - before)
    stretches.append(Reach(first, ordered[-1], gap))
    return stretches


def merged(reaches: Iterable[Reach]) -> list[tuple[int, int]]:
    """The stretches the reaches cover together, each reach widened by its own longest gap."""
    stretches: list[list[int]] = []
    for reach in sorted(reaches, key=lambda r: r.first_ns - r.gap_ns):
        first, last = reach.first_ns - reach.gap_ns, reach.last_ns + reach.gap_ns
        if stretches and first <= stretches[-1][1]:
            stretches[-1][1] = max(stretches[-1][1], last)
        else:
            stretches.append([first, last])
    return [(a, b) for a, b in stretches]


def whole(minute: int, stretches: Sequence[tuple[int, int]]) -> bool:
    """The minute (its number since the epoch) lies inside one stretch."""
    start, end = minute * MINUTE_NS, (minute + 1) * MINUTE_NS
    return any(a <= start and end <= b for a, b in stretches)


def p90(values: Sequence[float]) -> float:
    """The 90th percentile, interpolated between the closest ranks (a single value: itself)."""
    if len(values) == 1:
        return float(values[0])
    return float(statistics.quantiles(values, n=10, method="inclusive")[-1])


def add_spans(conn: sqlite3.Connection, rows: Iterable[SpanRow], *, source: str, reach_key: str) -> SpansWritten:
    """Store ``rows`` (one file's spans: ``source`` names it for the call graph, ``reach_key``
    for its reach) and recompute what they change: self times of their traces, the series of
    the minutes concerned, the call graph of the sources concerned. One transaction (the caller's)."""
    conn.executescript(_TEMP)
    written = SpansWritten()
    starts: array[int] = array("q")
    bulk = False
    for batch in _batches(rows):
        starts.extend(row.start_ns for row in batch)
        if not bulk and len(starts) >= BULK_SPANS:  # a large file: its read indexes built once, after
            _schema.drop_for_bulk(conn)
            bulk = True
        _store(conn, batch, source, written)
    written.reach = reach_of(starts)
    # Minutes where a point may have lost its support: a span stated again with other values
    # moved out of it, or a file's reach that changed no longer covers it.
    stale = {int(m) for (m,) in conn.execute("SELECT minute FROM temp.span_moved")}
    minutes = stale | _recompute_self_times(conn, written)
    if written.reach:
        changed, replaced = _new_reach(conn, reach_key, written.reach)
        minutes |= changed
        stale |= replaced
    _refresh_minutes(conn, sorted(minutes | stale), stale, written)
    if bulk:
        _schema.rebuild_after_bulk(conn)
    written.edges = _edges(conn)
    return written


def _batches(rows: Iterable[SpanRow]) -> Iterator[list[SpanRow]]:
    batch: list[SpanRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _store(conn: sqlite3.Connection, batch: list[SpanRow], source: str, written: SpansWritten) -> None:
    conn.execute("DELETE FROM temp.span_in")
    conn.executemany(
        "INSERT OR REPLACE INTO temp.span_in VALUES (?,?,?,?,?,?,?,?)",
        [(*row[:7], None if row.error is None else int(row.error)) for row in batch],
    )
    join = "FROM temp.span_in n LEFT JOIN span s ON s.trace_id = n.trace_id AND s.span_id = n.span_id"
    fresh = int(conn.execute(f"SELECT COUNT(*) {join} WHERE {_NEW_OR_CHANGED}").fetchone()[0])
    written.added += fresh
    written.duplicates += len(batch) - fresh
    if not fresh:
        return
    # A span stated again with other values may have moved out of a minute: that minute is recomputed too.
    conn.execute(
        f"INSERT OR IGNORE INTO temp.span_moved SELECT s.start_ns / {MINUTE_NS} {join}"
        f" WHERE s.span_id IS NOT NULL AND {_differs('s', 'n')}"
    )
    conn.execute(f"INSERT OR IGNORE INTO temp.span_touched SELECT n.trace_id {join} WHERE {_NEW_OR_CHANGED}")
    conn.execute(_UPSERT, (source,))


def _recompute_self_times(conn: sqlite3.Connection, written: SpansWritten) -> set[int]:
    """Self times of every span of the touched traces; the minutes of the spans that are new or
    changed or whose self time changed (new and changed spans have none stored)."""
    minutes: set[int] = set()
    rows = conn.execute(
        "SELECT s.trace_id, s.span_id, s.parent_id, s.start_ns, s.end_ns, s.self_ns"
        " FROM temp.span_touched t JOIN span s ON s.trace_id = t.trace_id ORDER BY s.trace_id"
    )
    updates: list[tuple[int, str, str]] = []
    for trace_id, group in groupby(rows, key=lambda r: str(r[0])):
        spans = list(group)
        written.traces += 1
        ids = {span_id for _t, span_id, *_rest in spans}
        computed = self_times(TimedSpan(s, p, a, b) for _t, s, p, a, b, _self in spans)
        for _t, span_id, parent_id, start_ns, _end, stored in spans:
            if stored is None and parent_id and parent_id not in ids:
                written.orphans += 1
            if stored != computed[span_id]:
                updates.append((computed[span_id], trace_id, span_id))
                minutes.add(start_ns // MINUTE_NS)
    conn.executemany("UPDATE span SET self_ns=? WHERE trace_id=? AND span_id=?", updates)
    return minutes


def _reaches(conn: sqlite3.Connection) -> list[Reach]:
    return [Reach(a, b, g) for a, b, g in conn.execute("SELECT first_ns, last_ns, gap_ns FROM span_reach")]


def _new_reach(conn: sqlite3.Connection, key: str, reach: list[Reach]) -> tuple[set[int], set[int]]:
    """Store the file's reach: the minutes whose coverage it may change (none when it is known
    already), and of those the ones an earlier reach of the same file covered."""
    query = "SELECT first_ns, last_ns, gap_ns FROM span_reach WHERE key=? ORDER BY first_ns"
    old = [Reach(*row) for row in conn.execute(query, (key,))]
    if old == reach:
        return set(), set()
    conn.execute("DELETE FROM span_reach WHERE key=?", (key,))
    conn.executemany("INSERT INTO span_reach VALUES (?,?,?,?)", [(key, r.first_ns, r.last_ns, r.gap_ns) for r in reach])
    # A minute whose coverage changes lies within the widest gap of a stretch, old or new.
    margin = max(r.gap_ns for r in _reaches(conn))

    def near(stretches: list[Reach]) -> set[int]:
        return {
            minute
            for r in stretches
            for minute in range((r.first_ns - margin) // MINUTE_NS, (r.last_ns + margin) // MINUTE_NS + 1)
        }

    replaced = near(old)
    return near(reach) | replaced, replaced


def _refresh_minutes(conn: sqlite3.Connection, minutes: list[int], stale: set[int], written: SpansWritten) -> None:
    """Each minute's points from every stored span starting in it; in the ``stale`` minutes,
    the span series' points no span supports any more are removed."""
    stretches = merged(_reaches(conn))
    services = [str(s) for (s,) in conn.execute("SELECT service FROM metric_series WHERE metric=?", (SPAN_DURATION,))]
    points: list[tuple[str, str, str, datetime, float]] = []
    removed = 0
    for minute in minutes:
        rows = conn.execute(
            "SELECT service, end_ns - start_ns, self_ns, error FROM span WHERE start_ns >= ? AND start_ns < ?",
            (minute * MINUTE_NS, (minute + 1) * MINUTE_NS),
        ).fetchall()
        covered = whole(minute, stretches)
        found = _minute_points(rows, minute, covered)
        written.partial_minutes += bool(rows) and not covered
        points += found
        if minute in stale:
            removed += _remove_unsupported(conn, minute, {(s, m) for s, m, *_rest in found}, services)
    written.minutes = len({moment for _s, _m, _u, moment, _v in points})
    written.series = {(service, metric) for service, metric, *_rest in points}
    written.points = add_metric_points(conn, points) + removed


def _minute_points(
    rows: list[tuple[str, int, int | None, int | None]], minute: int, covered: bool
) -> list[tuple[str, str, str, datetime, float]]:
    moment = datetime.fromtimestamp(minute * 60, tz=UTC)
    by_service: dict[str, list[tuple[int, int | None, int | None]]] = defaultdict(list)
    for service, duration, own, error in rows:
        by_service[service].append((duration, own, error))
    found = []
    for service, spans in sorted(by_service.items()):
        durations = [d / _NS_PER_MS for d, _own, _e in spans]
        owns = [own / _NS_PER_MS for _d, own, _e in spans if own is not None]
        stated = [e for _d, _own, e in spans if e is not None]
        found.append((service, SPAN_DURATION, SPAN_SERIES[SPAN_DURATION], moment, p90(durations)))
        if owns:
            found.append((service, SPAN_SELF_TIME, SPAN_SERIES[SPAN_SELF_TIME], moment, p90(owns)))
        if covered:
            found.append((service, SPAN_RATE, SPAN_SERIES[SPAN_RATE], moment, float(len(spans))))
        if stated:
            found.append((service, SPAN_ERRORS, SPAN_SERIES[SPAN_ERRORS], moment, float(sum(stated))))
    return found


def _remove_unsupported(conn: sqlite3.Connection, minute: int, kept: set[tuple[str, str]], services: list[str]) -> int:
    ts = minute * 60_000
    removed = 0
    for service in services:
        for metric in SPAN_SERIES:
            if (service, metric) not in kept:
                removed += conn.execute(
                    "DELETE FROM metric_point WHERE service=? AND metric=? AND ts=?", (service, metric, ts)
                ).rowcount
    return removed


def _edges(conn: sqlite3.Connection) -> list[EdgeRow]:
    """Calls between two services, parent span's to child span's, for each source file of a
    touched trace's spans: all of that source's calls, recounted."""
    sources = [
        str(s)
        for (s,) in conn.execute(
            "SELECT DISTINCT s.source FROM temp.span_touched t JOIN span s ON s.trace_id = t.trace_id"
        )
    ]
    found = []
    for source in sorted(sources):
        rows = conn.execute(
            "SELECT p.service, c.service, COUNT(*) FROM span c"
            " JOIN span p ON p.trace_id = c.trace_id AND p.span_id = c.parent_id"
            " WHERE c.source = ? AND p.service != c.service GROUP BY 1, 2 ORDER BY 1, 2",
            (source,),
        )
        found += [EdgeRow(str(caller), str(callee), float(calls), source) for caller, callee, calls in rows]
    return found


def span_summary(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """How many spans and traces are stored (None: no span)."""
    spans, traces = conn.execute("SELECT COUNT(*), COUNT(DISTINCT trace_id) FROM span").fetchone()
    return (int(spans), int(traces)) if spans else None
