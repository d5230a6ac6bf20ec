"""``query_logs`` over the embedded file: exact counts, templates mined at import, bursts."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel

from veridiag.redaction import default_redactor
from veridiag.text.cjk import has_cjk
from veridiag.text.render import iso
from veridiag.text.search import english_fallback, fts_query
from veridiag.text.units import NUMBER
from veridiag.tools.args import QueryLogsArgs
from veridiag.tools.backends.embedded._ingest import ms
from veridiag.tools.backends.embedded._schema import MINUTE_MS
from veridiag.tools.records import Burst, LogSample, Span, Unleveled
from veridiag.tools.render import TemplateRow, group_spans, imported_unleveled, logs_output
from veridiag.tools.results import ToolOutput

#: Lines kept in the stored output (what excerpts are checked against).
STORED_LINES = 500
#: Templates listed per call.
TOP_TEMPLATES = 12
#: Matching lines whose timestamps are grouped into bursts.
BURST_SAMPLE = 200_000
#: Full-text matches looked up line by line per call at most, where the matches can be counted
#: without (see ``_full_text_hits``). Each lookup costs ~2 µs: 301 k matches over 10 M lines
#: took 550 ms of CPU, 20 k of them 55 ms, while the index alone counts all 301 k in ~30 ms
#: (measured, ``veridiag bench --only tools``).
LOOKUP_CAP = 20_000
#: A line's timestamp, ids and numbers, masked: lines of one kind then read alike.
_MASKS = (
    (re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?\s*"), ""),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b[0-9a-f]{12,}\b"), "<hex>"),
    (re.compile(NUMBER), "<n>"),
)


class LogPattern(BaseModel):
    template: str
    count: int
    example: str
    #: Whose lines, in a search over every service (``TemplateCount.service``).
    service: str | None = None


#: Buckets a query's count-over-time is drawn in, at most (whole minutes each).
COUNT_BUCKETS = 60


class CountsOverTime(BaseModel):
    """Matched lines per bucket of ``step_seconds`` from ``start``, to draw the query's volume.
    No output line states these figures, so the Gatekeeper grounds nothing in them
    (``text/render.py``'s ``DRAWN_ONLY``)."""

    start: str
    step_seconds: int
    counts: list[int]


class LogDetails(BaseModel):
    """What the store keeps beside a ``query_logs`` output with lines, as its JSON; the Gatekeeper
    also grounds facts in it (``text/render.py``'s ``invocation_context``): names and order are
    the stored format."""

    backend: Literal["embedded", "clickhouse"] = "embedded"
    matched: int
    #: Lines read and described when a broad search was capped (absent when every match was read).
    counted: int | None = None
    by_level: dict[str, int]
    window: tuple[str, str]
    #: (first, last, lines) per burst
    bursts: list[tuple[str, str, int]]
    unparsed: int
    patterns: list[LogPattern]
    #: Of the lines described (``counted`` when set), per time bucket; drawn, never quoted.
    counts_over_time: CountsOverTime | None = None
    #: How a ClickHouse table was read (``otel_logs.Layout.paths``); absent for the embedded file.
    paths: list[str] | None = None


def from_ms(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1000, tz=UTC)


def log_span(conn: sqlite3.Connection, service: str) -> Span | None:
    # MIN and MAX in one SELECT scan the service's whole index range; each alone is one seek.
    first = conn.execute("SELECT MIN(ts) FROM log_line WHERE service=?", (service,)).fetchone()[0]
    if first is None:
        return None
    last = conn.execute("SELECT MAX(ts) FROM log_line WHERE service=?", (service,)).fetchone()[0]
    return Span(first=from_ms(first), last=from_ms(last))


def unleveled(conn: sqlite3.Connection, service: str) -> tuple[int, int] | None:
    """(lines that wrote no level, lines) of the service's imports; None when every line wrote one."""
    row = conn.execute("SELECT unleveled, lines FROM log_levels WHERE service=?", (service,)).fetchone()
    return (int(row[0]), int(row[1])) if row is not None and row[0] else None


def distinct(conn: sqlite3.Connection, table: str) -> list[str]:
    """The distinct services of a table by skipping through its service index: one seek per
    service instead of a scan of every row (SQLite has no skip-scan for DISTINCT)."""
    rows = conn.execute(
        f"WITH RECURSIVE s(x) AS (SELECT MIN(service) FROM {table} UNION ALL "
        f"SELECT (SELECT MIN(service) FROM {table} WHERE service > x) FROM s WHERE x IS NOT NULL) "
        "SELECT x FROM s WHERE x IS NOT NULL"
    )
    return [row[0] for row in rows]


class _Lines:
    """Line by line: the rows of ``table`` that match ``where``; per-call state."""

    def __init__(self, table: str, where: str = "1", params: Sequence[Any] = ()) -> None:
        self.table, self.where, self.params = table, where, list(params)

    @classmethod
    def window(cls, start_ms: int, end_ms: int, args: QueryLogsArgs) -> _Lines:
        """``log_line`` of the window, read through the (service, ts) or the ts index."""
        extra, params = _service_and_level(args)
        return cls("log_line", f"ts >= ? AND ts < ?{extra}", [start_ms, end_ms, *params])

    def tally_into(self, conn: sqlite3.Connection, tally: Tally) -> None:
        groups = conn.execute(
            "SELECT service, COALESCE(template_id, -1), level, COUNT(*), MIN(ts), MAX(ts), MIN(id) "
            f"FROM {self.table} WHERE {self.where} GROUP BY 1, 2, 3",
            self.params,
        )
        minutes = conn.execute(
            f"SELECT ts / {MINUTE_MS}, COUNT(*), MIN(ts), MAX(ts) FROM {self.table} WHERE {self.where} GROUP BY 1",
            self.params,
        )
        tally.add(groups, minutes)

    def first(self, conn: sqlite3.Connection, count: int, until_ms: int) -> list[tuple[int, int, str, str]]:
        """The first ``count`` rows in (ts, id) order, none after ``until_ms``: the scan stops there."""
        return conn.execute(
            f"SELECT id, ts, service, level FROM {self.table} WHERE {self.where} AND ts <= ? "
            f"ORDER BY ts, id LIMIT {count}",
            [*self.params, until_ms],
        ).fetchall()

    def stamps(self, conn: sqlite3.Connection, first_ms: int, last_ms: int, count: int) -> list[int]:
        rows = conn.execute(
            f"SELECT ts FROM {self.table} WHERE {self.where} AND ts >= ? AND ts <= ? ORDER BY ts LIMIT {count}",
            [*self.params, first_ms, last_ms],
        )
        return [ts for (ts,) in rows]


class Tally:
    """A query's matching lines counted per (service, template, level) and per minute, summed
    from ``log_minute`` and from lines read one by one."""

    def __init__(self) -> None:
        #: (service, template_id, level) → [count, first ts, last ts, first id]
        self.groups: dict[tuple[str, int, str], list[int]] = {}
        #: minute → [count, first ts, last ts]
        self.minutes: dict[int, list[int]] = {}

    def add(self, groups: Iterable[Sequence[Any]], minutes: Iterable[Sequence[Any]]) -> None:
        for service, template_id, level, count, first, last, first_id in groups:
            known = self.groups.get((service, template_id, level))
            if known is None:
                self.groups[(service, template_id, level)] = [count, first, last, first_id]
            else:
                known[:] = [known[0] + count, min(known[1], first), max(known[2], last), min(known[3], first_id)]
        for minute, count, first, last in minutes:
            seen = self.minutes.get(minute)
            self.minutes[minute] = (
                [count, first, last] if seen is None else [seen[0] + count, min(seen[1], first), max(seen[2], last)]
            )

    def by_level(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for (_service, _template, level), (count, *_rest) in self.groups.items():
            counts[level] = counts.get(level, 0) + count
        return dict(sorted(counts.items()))

    def over_time(self, start_ms: int, end_ms: int) -> CountsOverTime:
        """The per-minute counts summed into at most ``COUNT_BUCKETS`` buckets of whole minutes
        covering ``[start_ms, end_ms)``."""
        first, last = start_ms // MINUTE_MS, max(start_ms, end_ms - 1) // MINUTE_MS
        step = -(-(last - first + 1) // COUNT_BUCKETS)
        counts = [0] * (-(-(last - first + 1) // step))
        for minute, (count, *_span) in self.minutes.items():
            if first <= minute <= last:
                counts[(minute - first) // step] += count
        return CountsOverTime(start=iso(from_ms(first * MINUTE_MS)), step_seconds=step * 60, counts=counts)

    def spans(self) -> list[tuple[int, int, int]]:
        """``(first ts, last ts, count)`` per minute, in time order."""
        return [(first, last, count) for _minute, (count, first, last) in sorted(self.minutes.items())]

    def until(self, lines: int) -> int:
        """The last timestamp of the minute in which the first ``lines`` lines end."""
        seen = 0
        for _first, last, count in self.spans():
            seen += count
            if seen >= lines:
                return last
        return max((last for _first, last, _count in self.spans()), default=0)

    def top_groups(self, count: int) -> list[tuple[tuple[str, int, str], list[int]]]:
        """The commonest groups; ties go to the one seen first."""
        return sorted(self.groups.items(), key=lambda item: (-item[1][0], item[1][1]))[:count]


def _minute_window(start_ms: int, end_ms: int) -> tuple[int, int] | None:
    """The whole minutes ``[first, last)`` inside the window, or None when there are none."""
    first, last = -(-start_ms // MINUTE_MS), end_ms // MINUTE_MS
    return (first, last) if start_ms >= 0 and first < last else None


def _service_and_level(args: QueryLogsArgs) -> tuple[str, list[str]]:
    """`` AND service = ? AND level = ?`` as asked, for ``log_line`` and ``log_minute`` alike."""
    clauses, params = "", []
    for column, value in (("service", args.service), ("level", args.level)):
        if value:
            clauses += f" AND {column} = ?"
            params.append(value)
    return clauses, params


def _window_tally(conn: sqlite3.Connection, start_ms: int, end_ms: int, args: QueryLogsArgs) -> Tally:
    """Whole minutes from ``log_minute``; the partial minutes at either end line by line."""
    tally = Tally()
    whole = _minute_window(start_ms, end_ms)
    if whole is None:
        _Lines.window(start_ms, end_ms, args).tally_into(conn, tally)
        return tally
    extra, params = _service_and_level(args)
    bounds = [whole[0], whole[1], *params]
    groups = conn.execute(
        "SELECT service, template_id, level, SUM(lines), MIN(first_ts), MAX(last_ts), MIN(first_id) FROM log_minute "
        f"WHERE minute >= ? AND minute < ?{extra} GROUP BY 1, 2, 3",
        bounds,
    )
    minutes = conn.execute(
        "SELECT minute, SUM(lines), MIN(first_ts), MAX(last_ts) FROM log_minute "
        f"WHERE minute >= ? AND minute < ?{extra} GROUP BY 1",
        bounds,
    )
    tally.add(groups, minutes)
    for edge_start, edge_end in ((start_ms, whole[0] * MINUTE_MS), (whole[1] * MINUTE_MS, end_ms)):
        if edge_start < edge_end:
            _Lines.window(edge_start, edge_end, args).tally_into(conn, tally)
    return tally


def _id_range(conn: sqlite3.Connection, start_ms: int, end_ms: int, args: QueryLogsArgs) -> tuple[int, int] | None:
    """Ids that hold every line of the window (from the minutes it touches), or None when the
    window has no lines: full-text search then reads only the window's part of each word's list."""
    if start_ms < 0:
        return (-(2**63), 2**63 - 1)
    extra, params = _service_and_level(args)
    low, high = conn.execute(
        f"SELECT MIN(first_id), MAX(last_id) FROM log_minute WHERE minute >= ? AND minute <= ?{extra}",
        [start_ms // MINUTE_MS, (end_ms - 1) // MINUTE_MS, *params],
    ).fetchone()
    return None if low is None else (int(low), int(high))


def _only_window_lines(
    conn: sqlite3.Connection, start_ms: int, end_ms: int, args: QueryLogsArgs, ids: tuple[int, int]
) -> bool:
    """Whether every id in ``ids`` is a line of the window that passes the filters: true when the
    window holds as many lines as the range has ids (lines imported in time order, no filter that
    leaves lines of the range out). Then the full-text index alone counts the window's matches."""
    low, high = ids
    counted = sum(_window_tally(conn, start_ms, end_ms, args).by_level().values())
    return counted == high - low + 1


def _full_text_hits(
    conn: sqlite3.Connection, start_ms: int, end_ms: int, args: QueryLogsArgs, match: str
) -> tuple[_Lines, int | None]:
    """Search once: the matching lines' small columns go to a temporary table every later
    statement reads, so the full-text index and ``log_line`` are not searched again.

    Each match is looked up by id (~1–2.5 µs). When more than ``LOOKUP_CAP`` lines match and
    the window's ids hold only its own lines, only the first ``LOOKUP_CAP`` matches (storage
    order) are read, and the exact number of matches — the second value, else None — is
    counted by the full-text index alone, which needs no lookup."""
    conn.execute("DROP TABLE IF EXISTS temp.hits")
    conn.execute("CREATE TEMP TABLE hits(id INTEGER PRIMARY KEY, ts INTEGER, service TEXT, level TEXT, template_id)")
    ids = _id_range(conn, start_ms, end_ms, args)
    if ids is None:
        return _Lines("temp.hits"), None
    capped = ids[1] - ids[0] >= LOOKUP_CAP and _only_window_lines(conn, start_ms, end_ms, args, ids)
    window = _Lines.window(start_ms, end_ms, args)
    # log_fts first (CROSS JOIN keeps the order): each hit is one lookup by id in a narrow
    # index, instead of a walk over the window's lines asking the full-text index about each.
    read = conn.execute(
        "INSERT INTO temp.hits SELECT log_line.id, ts, service, level, template_id "
        "FROM log_fts CROSS JOIN log_line INDEXED BY ix_log_hit ON log_line.id = log_fts.rowid "
        f"WHERE log_fts MATCH ? AND log_fts.rowid BETWEEN ? AND ? AND {window.where} "
        f"ORDER BY log_fts.rowid{f' LIMIT {LOOKUP_CAP}' if capped else ''}",
        [match, *ids, *window.params],
    ).rowcount
    if capped and read == LOOKUP_CAP:
        total = conn.execute(
            "SELECT COUNT(*) FROM log_fts WHERE log_fts MATCH ? AND rowid BETWEEN ? AND ?", [match, *ids]
        ).fetchone()[0]
        if total > read:
            return _Lines("temp.hits"), int(total)
    return _Lines("temp.hits"), None


def logql_refused() -> ToolOutput:
    """A LogQL query asked of a store that is not Loki: an error that says what to use instead."""
    message = "logql needs the loki backend"
    return ToolOutput(status="error", error=message, text=f"query_logs error: {message}; use service/query/level")


def no_such_service(conn: sqlite3.Connection, service: str, about_service: list[str]) -> ToolOutput:
    """The asked service has no logs at all: say what it has, and which services have logs."""
    with_logs = [s for s in distinct(conn, "log_line") if s != service]
    has = f" ({'; '.join(about_service)})" if about_service else ""
    message = f"{service} has no logs{has}; services with logs: {', '.join(with_logs) or 'none'}"
    return ToolOutput(status="no_data", text=message, retrieval_details={"services_with_logs": with_logs})


def query_logs(conn: sqlite3.Connection, args: QueryLogsArgs, *, start: datetime, end: datetime) -> ToolOutput:
    match = fts_query(args.query) if args.query else None
    if args.query and match is None:
        return ToolOutput(
            status="error",
            error="query has no searchable words",
            text="query_logs error: query has no searchable words",
        )
    notes: list[str] = []
    searched: str | None = None
    start_ms, end_ms = ms(start), ms(end)
    lines = _Lines.window(start_ms, end_ms, args)
    total: int | None = None
    if match:
        lines, total = _full_text_hits(conn, start_ms, end_ms, args, match)
        tally = Tally()
        lines.tally_into(conn, tally)
        if not tally.groups and args.query and has_cjk(args.query):
            fallback = english_fallback(args.query)
            if fallback:
                lines, total = _full_text_hits(conn, start_ms, end_ms, args, fallback[0])
                lines.tally_into(conn, tally)
                searched = fallback[1]
                notes.append(f"no line contains the Chinese words of {args.query!r}; searched {fallback[1]!r} instead")
    else:
        tally = _window_tally(conn, start_ms, end_ms, args)
    by_level = tally.by_level()
    request = log_request(args, start, end)
    counted = sum(by_level.values()) if total is not None else None
    matched = total if total is not None else sum(by_level.values())
    span = log_span(conn, args.service) if args.service else None
    levels = imported_unleveled(args.service, unleveled(conn, args.service) if args.service else None)
    if matched == 0:
        rendered, evidence = logs_output(request, matched=0, by_level={}, span=span, notes=notes, unleveled=levels)
        empty = {"matched": 0, "window": [iso(start), iso(end)]}
        return ToolOutput(status="no_data", text=rendered.text, retrieval_details=empty, evidence=[evidence])
    templates = _templates(conn, tally)
    bursts = _bursts(conn, tally, lines)
    first = lines.first(conn, args.limit, tally.until(args.limit))
    texts = _texts(conn, [row[0] for row in first])
    samples = [
        LogSample(ts=from_ms(ts), service=service, level=level, line=texts[row_id])
        for row_id, ts, service, level in first
    ]
    found = FoundLines(
        matched=matched,
        by_level=by_level,
        templates=templates,
        bursts=bursts,
        samples=samples,
        unparsed=_unparsed(conn, start_ms, end_ms, args.service),
        counted=counted,
        searched=searched,
    )
    over_time = tally.over_time(start_ms, end_ms)
    return lines_output(request, found, args.limit, notes, span=span, unleveled=levels, counts_over_time=over_time)


def log_request(args: QueryLogsArgs, start: datetime, end: datetime) -> dict[str, str | None]:
    """The call as its output's first line writes it (the window resolved)."""
    return {"service": args.service, "query": args.query, "level": args.level, "start": iso(start), "end": iso(end)}


@dataclass(frozen=True)
class FoundLines:
    """What a backend found for a ``query_logs`` call with lines: the one shape every backend
    hands to ``lines_output``."""

    matched: int
    by_level: dict[str, int]
    templates: Sequence[TemplateRow]
    bursts: Sequence[Burst]
    samples: Sequence[LogSample]
    unparsed: int
    counted: int | None = None
    #: The words searched instead of a query's Chinese words that no line held (their English).
    searched: str | None = None


def lines_output(
    request: dict[str, str | None],
    found: FoundLines,
    limit: int,
    notes: Sequence[str],
    *,
    span: Span | None = None,
    unleveled: Unleveled | None = None,
    backend: Literal["embedded", "clickhouse"] = "embedded",
    counts_over_time: CountsOverTime | None = None,
    paths: list[str] | None = None,
) -> ToolOutput:
    """The ``ok`` output of a call that found lines — its text, typed evidence and stored
    details — the same for every backend; the keywords after ``span`` are a backend's own."""
    rendered, evidence = logs_output(
        request,
        matched=found.matched,
        by_level=found.by_level,
        templates=found.templates,
        bursts=found.bursts,
        samples=found.samples,
        limit=limit,
        unparsed=found.unparsed,
        span=span,
        notes=notes,
        counted=found.counted,
        # The embedded file reads its lines in import order; ClickHouse those of the first minutes.
        counted_order="time order" if backend == "clickhouse" else "storage order",
        unleveled=unleveled,
    )
    details = LogDetails(
        backend=backend,
        matched=found.matched,
        counted=found.counted,
        by_level=found.by_level,
        window=(str(request["start"]), str(request["end"])),
        bursts=[(iso(b.first), iso(b.last), b.count) for b in found.bursts],
        unparsed=found.unparsed,
        patterns=[  # as the text writes them: the service named only in a search over every service
            LogPattern(template=t.template, count=t.count, example=t.example, service=t.service)
            for t in evidence.templates
        ],
        counts_over_time=counts_over_time,
        paths=paths,
    )
    evidence.searched = found.searched
    return ToolOutput(
        status="ok",
        text=rendered.text,
        model_text=rendered.model_text,
        retrieval_details=details.model_dump(mode="json", exclude_none=True),
        evidence=[evidence],
    )


def _unparsed(conn: sqlite3.Connection, start_ms: int, end_ms: int, service: str | None) -> int:
    """Lines of the window (any level: an unparsed line has none) the importer did not understand,
    counted in their own small index (the planner would otherwise walk the service's lines)."""
    clauses = "ts >= ? AND ts < ? AND parsed = 0"
    params: list[int | str] = [start_ms, end_ms]
    if service:
        clauses += " AND service = ?"
        params.append(service)
    query = f"SELECT COUNT(*) FROM log_line INDEXED BY ix_log_unparsed WHERE {clauses}"
    return int(conn.execute(query, params).fetchone()[0])


def _texts(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    for offset in range(0, len(ids), 500):
        chunk = ids[offset : offset + 500]
        marks = ",".join("?" * len(chunk))
        found.update(conn.execute(f"SELECT id, line FROM log_line WHERE id IN ({marks})", chunk).fetchall())
    return found


def _templates(conn: sqlite3.Connection, tally: Tally) -> list[TemplateRow]:
    """The commonest templates of the matching lines, counted exactly, with their first line."""
    rows = []
    for (service, template_id, level), (count, first, last, first_id) in tally.top_groups(TOP_TEMPLATES):
        example = conn.execute("SELECT line FROM log_line WHERE id=?", (first_id,)).fetchone()[0]
        found = conn.execute(
            "SELECT template FROM log_template WHERE service=? AND id=?", (service, template_id)
        ).fetchone()
        template = found[0] if found else _masked(example)
        rows.append(TemplateRow(template, level, count, from_ms(first), from_ms(last), example, service))
    return rows


def _bursts(conn: sqlite3.Connection, tally: Tally, lines: _Lines) -> list[Burst]:
    """Bursts of the first ``BURST_SAMPLE`` matching lines, from their counts per minute; only
    the minute the sample ends in is read line by line."""
    spans: list[tuple[int, int, int]] = []
    room = BURST_SAMPLE
    for first, last, count in tally.spans():
        if count > room:
            if room:
                spans.append((first, lines.stamps(conn, first, last, room)[-1], room))
            break
        spans.append((first, last, count))
        room -= count
    return group_spans(spans)


def _masked(line: str) -> str:
    """A template for a line whose mined one is missing: its timestamp, ids and numbers masked
    (redacted first, as a mined one is: masking can hide an encoded secret from redaction)."""
    line = default_redactor().redact(line)
    for pattern, replacement in _MASKS:
        line = pattern.sub(replacement, line)
    return line
