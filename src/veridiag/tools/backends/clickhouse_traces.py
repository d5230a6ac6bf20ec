"""``query_traces`` over ClickHouse's OpenTelemetry ``otel_traces`` table (``TraceBackend``), through
``clickhouse-connect``: a server over HTTP, or the in-process engine (chdb) on the data directory
the log backend uses — the same SQL either way (``otel_traces.py``).

Counts, errors, percentiles, self times and calls per edge are computed by the engine, one
statement each, from the spans of the service and window asked (the exporter's primary key leads
with the service); only the slowest traces come back span by span, for their critical paths
(``analysis/traces.py``). The table is checked once, on first use: missing, or a column missing
or of another type, is a ``TraceReadError`` saying which, as is a server that does not answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veridiag.analysis.traces import CallCount, SpanFilter, SpanStats, TraceSpan
from veridiag.config import ClickHouseSettings
from veridiag.tools.backends import TraceReadError, call_memo
from veridiag.tools.backends.clickhouse import ClickHouseConnections, ClickHouseUnavailableError
from veridiag.tools.backends.embedded._spans import SpanRow
from veridiag.tools.backends.otel_traces import (
    CALLER_LEAD,
    CHILD_LEAD,
    DERIVATION,
    DERIVED_DAYS_DDL,
    DERIVED_DDL,
    DERIVED_TRACES_DDL,
    EXPORTER_LOOKUP_DDL,
    EXPORTER_LOOKUP_VIEW_DDL,
    EXPORTER_TRACES_DDL,
    TRACE_REACH,
    Bound,
    Bounds,
    Group,
    TraceLayout,
    column_problem,
    derivation_comment,
    derive_sql,
    derive_traces_sql,
    derived_figures_sql,
    derived_spans_sql,
    figures_sql,
    spans_sql,
)
from veridiag.tools.records import Span

_NS_PER_MS = 1e6
_NS_PER_DAY = 86_400 * 10**9
#: A day without spans: no rows, no insert.
_NONE = (0, 0)
#: Spans ``derive`` reads per statement: six hours of them (and their children around them).
_DERIVE_STEP = 6 * 3_600 * 10**9
#: How long ``derive`` waits between marking a derived day underived and dropping its rows.
_GRACE_SECONDS = 2.0
#: The window's longest spans read to find its slowest traces (``_slowest_ids``).
_TOP_SPANS = 64
#: Spans inserted per statement by ``add_spans``.
BATCH = 50_000


def ns(moment: datetime) -> int:
    return int(moment.timestamp()) * 10**9 + moment.microsecond * 1000


def _moment(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1e9, tz=UTC)


@dataclass
class TracesWritten:
    """What one ``add_spans`` did: spans inserted, and spans already stored (or repeated)."""

    added: int = 0
    duplicates: int = 0


#: The exporter table's rows per day now (its partitions' parts: -1 for a day with rows deleted
#: in place, whose parts' row counts still hold them) and its newest insert's block number.
_PARTS_SQL = (
    "SELECT groupArray((partition, n, b)) FROM (SELECT partition, if(max(has_lightweight_delete), -1, "
    "toInt64(sum(rows))) AS n, toInt64(max(max_block_number)) AS b FROM system.parts "
    "WHERE database = {db:String} AND table = {t:String} AND active GROUP BY partition)"
)
#: The exporter's trace id lookup beside its table.
_LOOKUP = "_trace_id_ts"
#: Our derived tables beside it (the spans' figures, the spans by trace), and the days derived:
#: made last, dropped first.
_DERIVED = ("_veridiag_spans", "_veridiag_traces")
_MARKS = "_veridiag_days"
#: How many of our tables are there, the days' only of this ``DERIVATION`` (all: ``_DERIVED`` and
#: the days'; ``_ours`` binds it).
_OURS_SQL = (
    "SELECT count() FROM system.tables WHERE database = {db:String} "
    "AND (name IN {derived:Array(String)} OR (name = {marks:String} AND comment = {derivation:String}))"
)
_ALL_OURS = len(_DERIVED) + 1
#: A function told of each day ``derive`` derives: the day, its number and how many are to be.
DeriveProgress = Callable[[str, int, int], None]


class ClickHouseTraces(ClickHouseConnections):
    """The ``query_traces`` backend over one ``otel_traces`` table; a client per thread."""

    name = "clickhouse"

    def __init__(
        self, settings: ClickHouseSettings, path: Path, *, clock: Callable[[], datetime] | None = None
    ) -> None:
        super().__init__(settings, path, clock=clock)
        self._layout: TraceLayout | None = None

    def now(self) -> datetime:
        return self.clock()

    # -- layout ------------------------------------------------------------------------------

    def _rows(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """The statement's rows; every failure a ``TraceReadError`` naming where it came from."""
        try:
            return [tuple(row) for row in self.client().query(sql, parameters=params).result_rows]
        except ClickHouseUnavailableError as exc:
            raise TraceReadError(str(exc)) from None
        except Exception as exc:  # the client's: a refused statement, a server gone
            raise TraceReadError(f"clickhouse: {type(exc).__name__}: {str(exc)[:300]}") from None

    def _plain(self) -> TraceLayout:
        return TraceLayout(self.settings.database, self.settings.traces_table, self.settings.trace_columns)

    @property
    def layout(self) -> TraceLayout:
        """Checked against the system tables once: the table, its columns and their types."""
        if self._layout is None:
            self._layout = self.detect()
        return self._layout

    def detect(self) -> TraceLayout:
        plain = self._plain()
        where = {"db": plain.database, "t": plain.table}
        kinds = {
            str(name): str(kind)
            for name, kind in self._rows(
                "SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {t:String}", where
            )
        }
        if not kinds:
            raise TraceReadError(
                f"clickhouse: no table {plain.database}.{plain.table} (clickhouse.traces_table): the "
                "OpenTelemetry Collector's ClickHouse exporter makes it, "
                "or `veridiag data import-traces --store clickhouse`"
            )
        wrong = []
        for role, column in plain.columns.model_dump().items():
            if column not in kinds:
                wrong.append(f"no column {column} ({role})")
            elif problem := column_problem(role, kinds[column]):
                wrong.append(f"column {column} {problem}")
        if wrong:
            raise TraceReadError(
                f"clickhouse: table {plain.database}.{plain.table} cannot be read as spans: " + "; ".join(wrong)
            )
        beside = {
            str(name): (str(key), str(comment))
            for name, key, comment in self._rows(
                "SELECT name, partition_key, comment FROM system.tables "
                "WHERE database = {db:String} AND name IN {t:Array(String)}",
                {"db": plain.database, "t": [plain.table + s for s in ("", _LOOKUP, *_DERIVED, _MARKS)]},
            )
        }
        # Days are told apart by the table's partitions: derived figures only for a daily one.
        daily = beside.get(plain.table, ("", ""))[0].replace(" ", "") == f"toDate({plain.columns.timestamp})"
        marks = beside.get(plain.table + _MARKS, ("", ""))[1] == derivation_comment()
        derived = daily and marks and all(plain.table + s in beside for s in _DERIVED)
        return TraceLayout(
            plain.database,
            plain.table,
            plain.columns,
            lookup=plain.table + _LOOKUP in beside,
            derived=derived,
            daily=daily,
        )

    # -- writing -----------------------------------------------------------------------------

    def create_tables(self) -> None:
        """The exporter's table and its trace id lookup (with the view filling it), unless they exist."""
        layout = self._plain()
        client = self.client()
        client.command(f"CREATE DATABASE IF NOT EXISTS `{layout.database}`")
        client.command(EXPORTER_TRACES_DDL.format(table=layout.name))
        client.command(EXPORTER_LOOKUP_DDL.format(lookup=layout.lookup_table))
        client.command(
            EXPORTER_LOOKUP_VIEW_DDL.format(view=layout.lookup_view, lookup=layout.lookup_table, table=layout.name)
        )
        self._layout = None

    def add_spans(self, rows: Iterable[SpanRow], *, known: bool = True) -> TracesWritten:
        """Insert spans as the exporter writes them (a span that states no status gets an empty
        ``StatusCode``), a batch per statement; with ``known``, a span already stored (same trace
        and span id) is not stored again, so a file imported twice adds nothing."""
        self.create_tables()
        layout = self.layout
        written = TracesWritten()
        names = [
            layout.columns.timestamp,
            layout.columns.trace_id,
            layout.columns.span_id,
            layout.columns.parent_span_id,
            layout.columns.span_name,
            "SpanKind",
            layout.columns.service,
            "ResourceAttributes",
            layout.columns.duration,
            layout.columns.status_code,
        ]
        for batch in _batches(rows):
            stored = self._stored_ids(batch) if known else set()
            data = []
            for row in batch:
                key = (row.trace_id, row.span_id)
                if key in stored:
                    written.duplicates += 1
                    continue
                stored.add(key)
                status = "" if row.error is None else ("Error" if row.error else "Unset")
                data.append(
                    [
                        row.start_ns,
                        row.trace_id,
                        row.span_id,
                        row.parent_id,
                        row.operation,
                        "Unspecified",
                        row.service,
                        {"service.name": row.service},
                        max(0, row.end_ns - row.start_ns),
                        status,
                    ]
                )
            if data:
                self._insert(data, names)
                written.added += len(data)
        return written

    def _insert(self, data: list[list[Any]], names: list[str]) -> None:
        layout = self.layout
        # The start goes in as ns since the epoch: a DateTime64(9) takes an integer as its ticks.
        try:
            self.client().insert(layout.table, data, column_names=names, database=layout.database)
        except ClickHouseUnavailableError as exc:
            raise TraceReadError(str(exc)) from None
        except Exception as exc:  # the client's: a refused insert, a server gone
            raise TraceReadError(f"clickhouse: {type(exc).__name__}: {str(exc)[:300]}") from None

    def _stored_ids(self, batch: list[SpanRow]) -> set[tuple[str, str]]:
        layout = self.layout
        bound = Bound()
        ids = bound.bind(sorted({row.trace_id for row in batch}), "Array(String)")
        window = bound.window(layout, min(r.start_ns for r in batch), max(r.start_ns for r in batch) + 1)
        rows = self._rows(
            f"SELECT {layout.col('trace_id')}, {layout.col('span_id')} FROM {layout.name} "
            f"WHERE {window} AND {layout.col('trace_id')} IN {ids}",
            bound.params,
        )
        return {(str(t), str(s)) for t, s in rows}

    def derive(self, progress: DeriveProgress | None = None) -> list[str]:
        """Compute the derived spans (``otel_traces.derive_sql``) of every day whose spans
        changed since it was derived, or never was, or was under another ``DERIVATION`` (making
        our tables anew then); the days derived, each told to ``progress`` before. A table
        with nothing new costs a few statements, however many days it holds. A day is first
        marked underived and marked derived only once all its rows are in, so no reader takes
        its rows half written, nor those of a derive interrupted midway."""
        self._prepare_derived()
        layout = self.layout
        if not layout.derived:
            return []
        counts, marked = self._state(None)
        stale = sorted(day for day in counts if not _derived(day, counts, marked))
        lead = int(CHILD_LEAD.total_seconds()) * 10**9
        done = []
        for number, day in enumerate(stale, 1):
            if progress is not None:
                progress(day, number, len(stale))
            self._mark(day, [], [])
            first = _day_ns(day)
            bound = Bound()
            ((kept,),) = self._rows(
                f"SELECT count() FROM {layout.derived_table} WHERE Day = {bound.bind(day, 'Date')}", bound.params
            )
            if kept:  # a reader that found the day derived just before has read it by then
                time.sleep(_GRACE_SECONDS)
            for table in (layout.derived_table, layout.traces_table):
                self._command(f"ALTER TABLE {table} DROP PARTITION '{_moment(first).date().isoformat()}'")
            for start in range(first, first + _NS_PER_DAY, _DERIVE_STEP):
                for sql in (derive_sql, derive_traces_sql):
                    bound = Bound()
                    self._command(sql(layout, bound, day, start, start + _DERIVE_STEP), bound.params)
            bound = Bound()
            ((last_end,),) = self._rows(
                f"SELECT max({layout.end_ns}) FROM {layout.name} "
                f"WHERE {bound.window(layout, first, first + _NS_PER_DAY)}",
                bound.params,
            )
            read = _days_between(first - lead, max(int(last_end), first + _NS_PER_DAY + lead))
            self._mark(day, read, [counts.get(d, _NONE) for d in read])
            done.append(day)
        return done

    def _ours(self) -> dict[str, str | list[str]]:
        """``_OURS_SQL``'s parameters."""
        plain = self._plain()
        derived, marks = [plain.table + s for s in _DERIVED], plain.table + _MARKS
        return {"db": plain.database, "derived": derived, "marks": marks, "derivation": derivation_comment()}

    def _prepare_derived(self) -> None:
        """Our tables, the days' of this ``DERIVATION``: unless all are there so, they are dropped
        (the days' first: from then on a reader finds no day derived) and made anew (the days'
        last)."""
        plain = self._plain()
        ((ours,),) = self._rows(f"SELECT ({_OURS_SQL})", self._ours())
        if ours < _ALL_OURS:
            for table in (plain.days_table, plain.derived_table, plain.traces_table):
                self._command(f"DROP TABLE IF EXISTS {table}")
            self._command(DERIVED_DDL.format(derived=plain.derived_table))
            self._command(DERIVED_TRACES_DDL.format(traces=plain.traces_table))
            self._command(DERIVED_DAYS_DDL.format(days=plain.days_table, comment=derivation_comment()))
        self._layout = None  # what another process made since is read too

    def _mark(self, day: str, partitions: list[str], counts: list[tuple[int, int]]) -> None:
        """Record the day as derived from these days' rows and inserts (none: not derived)."""
        layout = self.layout
        row = [datetime.fromisoformat(day).date(), partitions, [c for c, _b in counts], [b for _c, b in counts]]
        row += [time.time_ns(), DERIVATION]
        names = ["Day", "Partitions", "Counts", "Blocks", "Version", "Derivation"]
        try:
            self.client().insert(f"{layout.table}_veridiag_days", [row], column_names=names, database=layout.database)
        except Exception as exc:  # the client's: a refused insert, a server gone
            raise TraceReadError(f"clickhouse: {type(exc).__name__}: {str(exc)[:300]}") from None

    def _command(self, sql: str, params: dict[str, Any] | None = None) -> None:
        """Run a statement that returns nothing; a failure a ``TraceReadError``, as ``_rows``."""
        try:
            self.client().command(sql, parameters=params)
        except ClickHouseUnavailableError as exc:
            raise TraceReadError(str(exc)) from None
        except Exception as exc:  # the client's: a refused statement, a server gone
            raise TraceReadError(f"clickhouse: {type(exc).__name__}: {str(exc)[:300]}") from None

    def _state(self, days: list[str] | None) -> tuple[dict[str, tuple[int, int]], dict[str, dict[str, Any]]]:
        """In one statement: the exporter table's rows and newest insert per day now, and of each
        of the days (None: every day) marked derived under this ``DERIVATION``, the days its
        computation read with their rows and newest insert then."""
        layout = self.layout
        which = "" if days is None else "WHERE Day IN {days:Array(Date)}"
        ((now, marked),) = self._rows(
            f"SELECT ({_PARTS_SQL}), (SELECT groupArray((toString(Day), p, c, b, v)) FROM (SELECT Day, "
            f"argMax(Partitions, Version) AS p, argMax(Counts, Version) AS c, argMax(Blocks, Version) AS b, "
            f"argMax(Derivation, Version) AS v FROM {layout.days_table} {which} GROUP BY Day))",
            {"days": days or [], "db": layout.database, "t": layout.table},
        )
        counts = {str(d): (int(c), int(b)) for d, c, b in now}
        derived = {
            str(day): dict(zip(map(str, partitions), zip(map(int, read), map(int, blocks), strict=True), strict=True))
            for day, partitions, read, blocks, derivation in marked
            if int(derivation) == DERIVATION
        }
        return counts, derived

    def _fresh(self, days: list[str]) -> bool:
        """Every one of the days holds no span or is derived under this ``DERIVATION``, and no
        day its computation read has changed since: one statement (``_state``) per call. A process
        that found no derived tables looks for them with one statement per call instead, so
        it reads what a later derive made without a restart; tables dropped since are not read."""
        layout = self.layout
        if not layout.daily:
            return False
        if not layout.derived:
            ((ours,),) = self._rows(f"SELECT ({_OURS_SQL})", self._ours())
            if int(ours) < _ALL_OURS:
                return False
            self._layout = None  # derived since this process looked
            if not self.layout.derived:
                return False
        try:
            counts, marked = self._state(days)
        except TraceReadError:  # our tables dropped (or made otherwise) meanwhile: looked for again
            self._layout = None
            return False
        return all(_derived(day, counts, marked) for day in days)

    def _fresh_in_call(self, days: list[str]) -> bool:
        """``_fresh``, asked once per tool call (``one_call``) for the same days: a call reads a
        window's figures, then its callees' over the same windows (~10 ms a check at 10 M spans)."""
        memo = call_memo()
        if memo is None:
            return self._fresh(days)
        key = (id(self), "fresh", tuple(days))
        if key not in memo:
            memo[key] = self._fresh(days)
        return bool(memo[key])

    # -- reading (``TraceBackend``) ---------------------------------------------------------

    def trace_services(self) -> list[str]:
        layout = self.layout
        rows = self._rows(f"SELECT DISTINCT {layout.col('service')} AS s FROM {layout.name} ORDER BY s", {})
        return [str(service) for (service,) in rows]

    def operations(self, service: str) -> list[str]:
        """The operations of the service's spans (what ``query_traces`` lists for one it lacks)."""
        layout = self.layout
        bound = Bound()
        rows = self._rows(
            f"SELECT DISTINCT {layout.col('span_name')} AS o FROM {layout.name} "
            f"WHERE {layout.col('service')} = {bound.bind(service, 'String')} ORDER BY o",
            bound.params,
        )
        return [str(operation) for (operation,) in rows]

    def span_extent(self, service: str) -> Span | None:
        layout = self.layout
        bound = Bound()
        ((count, first, last),) = self._rows(
            f"SELECT count(), min({layout.start_ns}), max({layout.start_ns}) FROM {layout.name} "
            f"WHERE {layout.col('service')} = {bound.bind(service, 'String')}",
            bound.params,
        )
        return Span(first=_moment(int(first)), last=_moment(int(last))) if count else None

    def span_stats(self, where: SpanFilter) -> SpanStats:
        return self.span_stats_many([where])[0]

    def span_stats_many(self, filters: Sequence[SpanFilter]) -> list[SpanStats]:
        """``span_stats`` of each filter (any services), in one statement for filters no span
        belongs to two of (a span counts in one group of a statement)."""
        found = [SpanStats(spans=0) for _ in filters]
        for batch in _disjoint(filters):
            for index, (stats, _calls) in zip(
                batch, self._figures([filters[i] for i in batch], calls=False), strict=True
            ):
                found[index] = stats
        return found

    def call_counts(self, where: SpanFilter) -> list[CallCount]:
        return self.call_counts_many([where])[0]

    def call_counts_many(self, filters: Sequence[SpanFilter]) -> list[list[CallCount]]:
        """``call_counts`` of each filter, in one statement per service and operation asked."""
        return [calls for _stats, calls in self.span_figures(filters)]

    def span_figures(self, filters: Sequence[SpanFilter]) -> list[tuple[SpanStats, list[CallCount]]]:
        """``span_stats`` and ``call_counts`` of each filter, in one statement (one read of the
        range) per service and operation asked."""
        found: list[tuple[SpanStats, list[CallCount]]] = [(SpanStats(spans=0), []) for _ in filters]
        asked: dict[tuple[str, str | None], list[int]] = {}
        for index, f in enumerate(filters):
            asked.setdefault((f.service, f.operation), []).append(index)
        for indexes in asked.values():
            for part in _disjoint([filters[i] for i in indexes]):
                batch = [indexes[i] for i in part]
                for index, figures in zip(batch, self._figures([filters[i] for i in batch], calls=True), strict=True):
                    found[index] = figures
        return found

    def _figures(self, filters: Sequence[SpanFilter], *, calls: bool) -> list[tuple[SpanStats, list[CallCount]]]:
        layout = self.layout
        bound = Bound()
        groups = [Group(f.service, f.operation, ns(f.start), ns(f.end)) for f in filters]
        lead = int(max(CALLER_LEAD, CHILD_LEAD).total_seconds()) * 10**9
        first = min(g.start_ns for g in groups) - lead
        days = _days_between(first, max(g.end_ns for g in groups))
        build = derived_figures_sql if self._fresh_in_call(days) else figures_sql
        sql = build(layout, bound, groups, calls=calls, lead_ns=lead)
        stats = [SpanStats(spans=0) for _ in filters]
        edges: list[list[CallCount]] = [[] for _ in filters]
        for kind, group, other, count, failed, stated, durations, owns in self._rows(sql, bound.params):
            index, errors = int(group), int(failed) if stated else None
            if kind == 0:
                d50, d90, d99 = (float(v) / _NS_PER_MS for v in durations)
                s50, s90 = (float(v) / _NS_PER_MS for v in owns)
                stats[index] = SpanStats(
                    spans=int(count),
                    errors=errors,
                    stated=int(stated),
                    duration_p50=d50,
                    duration_p90=d90,
                    duration_p99=d99,
                    self_p50=s50,
                    self_p90=s90,
                )
            else:
                service = filters[index].service
                caller, callee = (service, str(other)) if kind == 1 else (str(other), service)
                edges[index].append(CallCount(caller=caller, callee=callee, calls=int(count), errors=errors))
        return list(zip(stats, edges, strict=True))

    def slowest_traces(self, where: SpanFilter, limit: int) -> list[list[TraceSpan]]:
        """The ``limit`` traces in which the service's (operation's) longest span in the window was
        longest, each with all its spans (within the lookup table's bounds of each trace when it
        holds them all, else ``TRACE_REACH`` around the trace's chosen spans); longest first."""
        layout = self.layout
        ids = self._slowest_ids(where, limit)
        if not ids:
            return []
        spans = self._spans_of((self._lookup_bounds(ids) if layout.lookup else None) or self._around(where, ids))
        return [spans[trace_id] for trace_id in ids]

    def _slowest_ids(self, where: SpanFilter, limit: int) -> list[str]:
        """The traces by their longest selected span, longest first (ties by trace id). Read from
        the window's longest spans first: the engine sorts one column and fetches the ids of the top
        rows only (half the time of grouping every span by its trace, measured at 10 M spans);
        only when a few traces hold all those spans is every span grouped."""
        layout = self.layout
        trace, duration = layout.col("trace_id"), layout.col("duration")
        bound = Bound()
        selected = bound.selected(layout, where.service, where.operation, ns(where.start), ns(where.end))
        top = _TOP_SPANS
        rows = self._rows(
            f"SELECT {trace}, {duration} FROM {layout.name} WHERE {selected} "
            f"ORDER BY {duration} DESC, {trace} LIMIT {bound.bind(top, 'UInt32')}",
            bound.params,
        )
        ids = list(dict.fromkeys(str(row[0]) for row in rows))
        if len(ids) >= limit or len(rows) < top:  # the first `limit` distinct are the answer
            return ids[:limit]
        bound = Bound()
        selected = bound.selected(layout, where.service, where.operation, ns(where.start), ns(where.end))
        rows = self._rows(
            f"SELECT {trace} AS trace, max({duration}) AS longest FROM {layout.name} WHERE {selected} "
            f"GROUP BY trace ORDER BY longest DESC, trace LIMIT {bound.bind(limit, 'UInt32')}",
            bound.params,
        )
        return [str(row[0]) for row in rows]

    def _around(self, where: SpanFilter, ids: list[str]) -> Bounds:
        """``TRACE_REACH`` around each trace's selected spans' starts: where to look for its spans
        when the lookup table does not hold it."""
        layout = self.layout
        bound = Bound()
        selected = bound.selected(layout, where.service, where.operation, ns(where.start), ns(where.end))
        trace = layout.col("trace_id")
        rows = self._rows(
            f"SELECT {trace}, min({layout.start_ns}), max({layout.start_ns}) FROM {layout.name} "
            f"WHERE {selected} AND {trace} IN {bound.bind(ids, 'Array(String)')} GROUP BY {trace}",
            bound.params,
        )
        reach = int(TRACE_REACH.total_seconds()) * 10**9
        found = {str(t): (int(first) - reach, int(last) + reach) for t, first, last in rows}
        return {trace_id: found.get(trace_id) for trace_id in ids}

    def trace(self, trace_id: str) -> list[TraceSpan]:
        """One trace's spans by start (``TraceLookup``; its id as stored: lower-case hex first, else
        as asked), within the lookup table's bounds of it when it holds it, else the whole table
        (through the exporter's bloom filter on ``TraceId``)."""
        for wanted in dict.fromkeys([trace_id.lower(), trace_id]):
            bounds = self._lookup_bounds([wanted]) if self.layout.lookup else None
            found = self._spans_of(bounds or {wanted: None})[wanted]
            if found:
                return found
        return []

    def _spans_of(self, bounds: Bounds) -> dict[str, list[TraceSpan]]:
        """The traces' spans (each trace's starting in its bounds, when given), each trace's by start
        (a span written twice, as a retried insert does, once): from the spans by trace when every
        day the bounds touch is derived and current, else from the exporter's table."""
        layout = self.layout
        fetch = Bound()
        known = {trace_id: at for trace_id, at in bounds.items() if at is not None}
        days = _days_between(min(a for a, _b in known.values()), max(b for _a, b in known.values())) if known else []
        if layout.derived and len(known) == len(bounds) and days and self._fresh_in_call(days):
            sql = derived_spans_sql(layout, fetch, known, days)
        else:
            sql = spans_sql(layout, fetch, bounds)
        spans: dict[str, list[TraceSpan]] = {trace_id: [] for trace_id in bounds}
        seen: set[tuple[str, str]] = set()
        for trace_id, span_id, parent, service, operation, start, end, failed, stated in self._rows(sql, fetch.params):
            if (trace_id, span_id) in seen:
                continue
            seen.add((trace_id, span_id))
            spans[str(trace_id)].append(
                TraceSpan(
                    trace_id=str(trace_id),
                    span_id=str(span_id),
                    parent_id=str(parent),
                    service=str(service),
                    operation=str(operation),
                    start_ns=int(start),
                    end_ns=int(end),
                    error=bool(failed) if stated else None,
                )
            )
        return spans

    def _lookup_bounds(self, ids: list[str]) -> Bounds | None:
        """Each trace's first and last span start (``[first, last]`` as ``[first, last + 1 s)``),
        when the lookup table holds every one of them."""
        layout = self.layout
        bound = Bound()
        rows = self._rows(
            f"SELECT TraceId, toUnixTimestamp(min(Start)), toUnixTimestamp(max(End)) "
            f"FROM {layout.lookup_table} WHERE TraceId IN {bound.bind(ids, 'Array(String)')} GROUP BY TraceId",
            bound.params,
        )
        if len(rows) < len(set(ids)):
            return None
        return {str(t): (int(first) * 10**9, (int(last) + 1) * 10**9) for t, first, last in rows}


def _derived(day: str, counts: dict[str, tuple[int, int]], marked: dict[str, dict[str, Any]]) -> bool:
    """The day holds no span or is derived, and no day its computation read has changed since
    (``_state``'s rows and marks)."""
    read = marked.get(day, {})
    if not read:
        return day not in counts  # no span that day: nothing to derive
    # changed, or rows deleted in place (their count tells nothing)
    return not any(counts.get(p, _NONE) != was or was[0] < 0 for p, was in read.items())


def _day_ns(day: str) -> int:
    return ns(datetime.fromisoformat(day).replace(tzinfo=UTC))


def _days_between(first_ns: int, last_ns: int) -> list[str]:
    """The days (``YYYY-MM-DD``, UTC) ``[first_ns, last_ns)`` touches."""
    first = first_ns - first_ns % _NS_PER_DAY
    return [_moment(day).date().isoformat() for day in range(first, max(last_ns, first + 1), _NS_PER_DAY)]


def _overlap(a: SpanFilter, b: SpanFilter) -> bool:
    """Some span could belong to both."""
    operations = a.operation is None or b.operation is None or a.operation == b.operation
    return a.service == b.service and operations and a.start < b.end and b.start < a.end


def _disjoint(filters: Sequence[SpanFilter]) -> list[list[int]]:
    """The filters' indexes in batches whose members no span belongs to two of (a window and its
    baseline, callees: one batch)."""
    batches: list[list[int]] = []
    for index, where in enumerate(filters):
        batch = next((b for b in batches if not any(_overlap(where, filters[i]) for i in b)), None)
        if batch is None:
            batches.append([index])
        else:
            batch.append(index)
    return batches


def _batches(rows: Iterable[SpanRow]) -> Iterator[list[SpanRow]]:
    batch: list[SpanRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
