"""``query_traces``' reads of the embedded file's spans (``_spans.py`` stores them).

Every read starts from the index of one service's spans in time order (``ix_span_service_reads``,
which also holds what a window's figures, its slowest traces and its callers read, so they never
look a span up in the table) or from a trace's primary key, and a span's children from
``ix_span_children`` (with what its callees read of them), so a call reads the spans of the
service and window asked, never the whole table. Self times are the ones the import
stored (``self_ns``, computed as ``analysis/traces.py`` says). A call between two services is a
child span whose parent span belongs to another service; it counts in the window its child
(the callee's span) starts in.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta

from veridiag.analysis.traces import CallCount, SpanFilter, SpanStats, TraceSpan, span_stats
from veridiag.tools.backends.embedded._spans import SPAN_DURATION
from veridiag.tools.records import Span

#: How long before the window a calling span may have started and still call into it.
CALLER_LEAD = timedelta(minutes=10)
_COLUMNS = "trace_id, span_id, parent_id, service, operation, start_ns, end_ns, error, self_ns"


def _ns(moment: datetime) -> int:
    return int(moment.timestamp()) * 10**9 + moment.microsecond * 1000


def _moment(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)


def _where(where: SpanFilter, alias: str = "") -> tuple[str, list[object]]:
    prefix = f"{alias}." if alias else ""
    sql = f"{prefix}service = ? AND {prefix}start_ns >= ? AND {prefix}start_ns < ?"
    params: list[object] = [where.service, _ns(where.start), _ns(where.end)]
    if where.operation is not None:
        sql += f" AND {prefix}operation = ?"
        params.append(where.operation)
    return sql, params


def trace_services(conn: sqlite3.Connection) -> list[str]:
    """Services with spans: those with the series the import derives from them (no span scan)."""
    rows = conn.execute("SELECT service FROM metric_series WHERE metric = ? ORDER BY service", (SPAN_DURATION,))
    return [str(service) for (service,) in rows]


def span_extent(conn: sqlite3.Connection, service: str) -> Span | None:
    """When the service's spans start, first to last (None: it has none)."""
    first, last = conn.execute("SELECT MIN(start_ns), MAX(start_ns) FROM span WHERE service = ?", (service,)).fetchone()
    return None if first is None else Span(first=_moment(int(first)), last=_moment(int(last)))


def operations(conn: sqlite3.Connection, service: str) -> list[str]:
    rows = conn.execute("SELECT DISTINCT operation FROM span WHERE service = ? ORDER BY 1", (service,))
    return [str(operation) for (operation,) in rows]


def stats(conn: sqlite3.Connection, where: SpanFilter) -> SpanStats:
    sql, params = _where(where)
    rows = conn.execute(f"SELECT end_ns - start_ns, self_ns, error FROM span WHERE {sql}", params).fetchall()
    return span_stats(
        [int(d) for d, _own, _e in rows],
        [None if own is None else int(own) for _d, own, _e in rows],
        [None if e is None else bool(e) for _d, _own, e in rows],
    )


def slowest_traces(conn: sqlite3.Connection, where: SpanFilter, limit: int) -> list[list[TraceSpan]]:
    """The ``limit`` traces in which the service's (operation's) longest span in the window was
    longest, each with all its stored spans; longest first."""
    sql, params = _where(where)
    chosen = conn.execute(
        f"SELECT trace_id, MAX(end_ns - start_ns) AS longest FROM span WHERE {sql}"
        " GROUP BY trace_id ORDER BY longest DESC, trace_id LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [trace(conn, str(trace_id)) for trace_id, _longest in chosen]


def trace(conn: sqlite3.Connection, trace_id: str) -> list[TraceSpan]:
    """One trace's stored spans by start (its ids as stored: lower-case hex first, else as asked)."""
    for wanted in dict.fromkeys([trace_id.lower(), trace_id]):
        rows = conn.execute(f"SELECT {_COLUMNS} FROM span WHERE trace_id = ? ORDER BY start_ns", (wanted,)).fetchall()
        if rows:
            return [_span(row) for row in rows]
    return []


def _span(row: tuple[object, ...]) -> TraceSpan:
    trace_id, span_id, parent_id, service, operation, start_ns, end_ns, error, own = row
    return TraceSpan(
        trace_id=str(trace_id),
        span_id=str(span_id),
        parent_id=str(parent_id),
        service=str(service),
        operation=str(operation),
        start_ns=int(str(start_ns)),
        end_ns=int(str(end_ns)),
        error=None if error is None else bool(error),
        self_ns=None if own is None else int(str(own)),
    )


def call_counts(conn: sqlite3.Connection, where: SpanFilter) -> list[CallCount]:
    """The service's callers and callees in the window: calls and errors per edge."""
    sql, params = _where(where, "c")
    callers = conn.execute(
        "SELECT p.service, c.service, COUNT(*), SUM(c.error), COUNT(c.error) FROM span c"
        " JOIN span p ON p.trace_id = c.trace_id AND p.span_id = c.parent_id"
        f" WHERE {sql} AND p.service != c.service GROUP BY 1, 2",
        params,
    ).fetchall()
    parent_sql, parent_params = _where(where.model_copy(update={"start": where.start - CALLER_LEAD}), "p")
    callees = conn.execute(
        "SELECT p.service, c.service, COUNT(*), SUM(c.error), COUNT(c.error) FROM span p"
        " JOIN span c ON c.trace_id = p.trace_id AND c.parent_id = p.span_id"
        f" WHERE {parent_sql} AND c.start_ns >= ? AND c.start_ns < ? AND c.service != p.service GROUP BY 1, 2",
        [*parent_params, _ns(where.start), _ns(where.end)],
    ).fetchall()
    return [
        CallCount(
            caller=str(caller),
            callee=str(callee),
            calls=int(calls),
            errors=int(errors or 0) if stated else None,
        )
        for caller, callee, calls, errors, stated in [*callers, *callees]
    ]
