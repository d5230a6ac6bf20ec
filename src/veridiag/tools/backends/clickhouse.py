"""Logs in ClickHouse's OpenTelemetry ``otel_logs`` table, through ``clickhouse-connect``: a
server over HTTP, or the in-process engine (chdb) on a local directory — the same SQL either way.

Outputs are rendered by the same code as the embedded backend's, with the same typed evidence,
so the offline engine states the same facts from either store. The table is read as it is: the
template column and a token index on lower(Body) are used when present and the output says which
way it read (``Layout.paths``). The client library and the engine are imported only when this
backend is configured (the ``veridiag[clickhouse]`` extra).
"""

from __future__ import annotations

import fcntl
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veridiag.config import ClickHouseSettings
from veridiag.text.cjk import has_cjk
from veridiag.text.render import iso
from veridiag.text.search import fallback_terms, search_terms
from veridiag.tools.args import QueryLogsArgs, parse_time
from veridiag.tools.backends.embedded._ingest import LogRow, Written, keyed_batches, ms
from veridiag.tools.backends.embedded._logs import (
    LOOKUP_CAP,
    STORED_LINES,
    TOP_TEMPLATES,
    FoundLines,
    Tally,
    from_ms,
    lines_output,
    log_request,
    logql_refused,
)
from veridiag.tools.backends.otel_logs import (
    KEY_ATTRIBUTE,
    MINER_DDL,
    MINUTES_BACKFILL,
    MINUTES_DDL,
    MINUTES_VIEW_DDL,
    TEMPLATE_ATTRIBUTE,
    TEMPLATES_DDL,
    TEXT_INDEXES_SINCE,
    UNPARSED_ATTRIBUTE,
    Layout,
    Where,
    bigrams_expression,
    exporter_ddl,
    pairs_expression,
    template_key,
    veridiag_indexes,
)
from veridiag.tools.records import LogSample, Span
from veridiag.tools.render import TemplateRow, group_spans, logs_output, window_unleveled
from veridiag.tools.results import ToolOutput

if TYPE_CHECKING:
    from clickhouse_connect.driver.client import Client

    from veridiag.tools.templates import TemplateMiner

#: OTel severity numbers of the four levels veridiag keeps (the first of each range).
SEVERITY_NUMBER = {"DEBUG": 5, "INFO": 9, "WARN": 13, "ERROR": 17}
_MINUTE_MS = 60_000
#: A tally's two groupings of one pass: per minute, and per (service, template, level).
_TWO_SETS = "GROUP BY GROUPING SETS ((minute), (service, template, level))"


class ClickHouseUnavailableError(RuntimeError):
    """The engine cannot be used: the extra is not installed, or the data directory is held."""


def _held_by(path: Path) -> str | None:
    """Which other process holds the engine's data directory, if one does: the engine locks its
    ``status`` file (flock) for its life and writes its pid there, while its own error on meeting
    the lock says only that it could not start. This process's own engine shares the directory."""
    try:
        with (path / "status").open("rb") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                said = handle.read(200).decode("utf-8", "replace").splitlines()
                pid = next((line for line in said if line.startswith("PID:")), "")
                return None if pid == f"PID: {os.getpid()}" else (pid or "another process")
            fcntl.flock(handle, fcntl.LOCK_UN)
    except OSError:
        return None
    return None


def _refuse_if_held(path: Path) -> None:
    holder = _held_by(path)
    if holder:
        raise ClickHouseUnavailableError(f"the ClickHouse data directory {path} is in use by {holder}; stop it first")


def _load_client_library(settings: ClickHouseSettings) -> None:
    """The client library, and the engine when there is no server, imported as the backend is
    made rather than at its first query: a server freezes what it built before it serves
    (``cli/common.started_once``), and their ~4·10⁴ objects left outside it made each full
    collection ~25 ms longer (measured). A missing extra is said at the first query."""
    with suppress(ImportError):
        import clickhouse_connect  # noqa: F401

        if not settings.url:
            import chdb  # noqa: F401


def connect(settings: ClickHouseSettings, path: Path) -> Client:
    """A client: the server at ``settings.url``, else the in-process engine on ``path``."""
    try:
        import clickhouse_connect
    except ImportError:
        raise ClickHouseUnavailableError(
            "the clickhouse log store needs the clickhouse extra: pip install 'veridiag[clickhouse]'"
        ) from None
    if settings.url:
        password = settings.password.get_secret_value() if settings.password else ""
        return clickhouse_connect.get_client(
            dsn=settings.url,
            username=settings.username,
            password=password,
            connect_timeout=settings.timeout_seconds,
            send_receive_timeout=settings.timeout_seconds,
            autogenerate_session_id=False,
        )
    _refuse_if_held(path)
    path.mkdir(parents=True, exist_ok=True)
    try:
        return clickhouse_connect.get_client(interface="chdb", path=str(path))
    except ImportError:
        raise ClickHouseUnavailableError(
            "the in-process ClickHouse engine (chdb-core) is not installed: pip install 'veridiag[clickhouse]'"
        ) from None
    except Exception as exc:
        _refuse_if_held(path)  # the engine met the lock: say who holds it
        raise ClickHouseUnavailableError(f"cannot open the ClickHouse data directory {path}: {exc}") from None


class ClickHouseConnections:
    """What every ClickHouse backend (logs, spans) shares: its settings, its clock and a client
    per thread (clickhouse-connect's client is not thread-safe), all closed together."""

    def __init__(
        self,
        settings: ClickHouseSettings,
        path: Path,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.settings, self.path = settings, path
        #: "now" for relative times: the wall clock for a server, the data's end for imported history.
        self.clock = clock or (lambda: datetime.now(UTC))
        self._local = threading.local()
        self._clients: list[Client] = []
        self._lock = threading.Lock()
        _load_client_library(settings)

    def client(self) -> Client:
        found: Client | None = getattr(self._local, "client", None)
        if found is None:
            found = connect(self.settings, self.path)
            self._local.client = found
            with self._lock:
                self._clients.append(found)
        return found

    def close(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
            self._local = threading.local()
        for client in clients:
            client.close()


class ClickHouseLogs(ClickHouseConnections):
    """The ``query_logs`` backend over one ``otel_logs`` table; a client per thread."""

    name = "clickhouse"

    def __init__(
        self,
        settings: ClickHouseSettings,
        path: Path,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__(settings, path, clock=clock)
        self._layout: Layout | None = None

    # -- layout --------------------------------------------------------------------------------

    def _rows(self, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in self.client().query(sql, parameters=params).result_rows]

    @property
    def layout(self) -> Layout:
        """Read from the system tables once: the columns there, the index on lower(Body)."""
        if self._layout is None:
            self._layout = self.detect()
        return self._layout

    def detect(self) -> Layout:
        database, table, columns = self.settings.database, self.settings.table, self.settings.columns
        where = {"db": database, "t": table}
        names = {
            row[0]
            for row in self._rows(
                "SELECT name FROM system.columns WHERE database = {db:String} AND table = {t:String}", where
            )
        }
        beside = {
            str(name)
            for (name,) in self._rows(
                "SELECT name FROM system.tables WHERE database = {db:String} AND name IN {names:Array(String)}",
                {"db": database, "names": [f"{table}_templates", f"{table}_minutes"]},
            )
        }
        templates = f"{table}_templates" in beside
        indexes = self._rows(
            "SELECT name, expr, type, type_full FROM system.data_skipping_indices "
            "WHERE database = {db:String} AND table = {t:String}",
            where,
        )
        words, pairs, bigrams = _body_indexes(columns.body, indexes)
        return Layout(
            database,
            table,
            columns,
            timestamp_time=columns.timestamp_time in names,
            template=columns.template in names and templates,
            body_index=words[0] if words else None,
            words_indexed=bool(words and words[1]),
            pair_index=pairs,
            bigram_index=bigrams,
            attributes=columns.log_attributes in names,
            minutes=f"{table}_minutes" in beside and templates,
        )

    # -- writing (``data import-logs --store clickhouse``) ---------------------------------------

    def create_tables(self) -> list[str]:
        """The exporter's table with veridiag's template column and indexes, unless it exists
        (then it is written as it is), the template tables and the per-minute counts beside it.
        A table an earlier veridiag made (it has the template column) gets what it lacks, built
        over the lines it holds before this returns: what was added is returned."""
        client = self.client()
        layout = Layout(self.settings.database, self.settings.table, self.settings.columns)
        client.command(f"CREATE DATABASE IF NOT EXISTS `{self.settings.database}`")
        ((existed,),) = self._rows(f"EXISTS TABLE {layout.name}", {})
        text = self.server_version() >= TEXT_INDEXES_SINCE
        client.command(exporter_ddl(self.settings.database, self.settings.table, veridiag=True, text_indexes=text))
        client.command(TEMPLATES_DDL.format(table=layout.templates_table))
        client.command(MINER_DDL.format(table=layout.miner_table))
        self._layout = None
        added = self._complete(layout, veridiag_indexes(text)) if self.layout.template else []  # else not ours
        self._layout = None
        return added if existed else []

    def server_version(self) -> tuple[int, int]:
        """The engine's (major, minor) version."""
        ((version,),) = self._rows("SELECT version()", {})
        found = re.match(r"(\d+)\.(\d+)", str(version))
        return (int(found[1]), int(found[2])) if found else (0, 0)

    def _complete(self, layout: Layout, indexes: dict[str, str]) -> list[str]:
        """The indexes and the per-minute counts a veridiag table lacks, built for its lines."""
        client = self.client()
        present = {
            name
            for (name,) in self._rows(
                "SELECT name FROM system.data_skipping_indices WHERE database = {db:String} AND table = {t:String}",
                {"db": layout.database, "t": layout.table},
            )
        }
        added = [name for name in indexes if name not in present]
        for name in added:
            client.command(f"ALTER TABLE {layout.name} ADD INDEX IF NOT EXISTS {name} {indexes[name]}")
            client.command(f"ALTER TABLE {layout.name} MATERIALIZE INDEX {name}", settings={"mutations_sync": 2})
        if not self.layout.minutes:
            # The view counts the lines inserted from now on, the backfill those already there
            # (one writer: this import holds the table; lines written between the two by
            # another writer would be counted twice).
            names = {"minutes": layout.minutes_table, "view": layout.minutes_view, "table": layout.name}
            client.command(MINUTES_DDL.format(**names))
            client.command(MINUTES_VIEW_DDL.format(**names))
            client.command(MINUTES_BACKFILL.format(**names))
            added.append(f"{layout.table}_minutes")
        return added

    def add_logs(self, rows: Iterable[LogRow]) -> Written:
        """Insert the rows not stored yet (keyed as the embedded store keys them), a batch per
        insert, each line's template mined per service as it arrives; then the templates."""
        self.create_tables()
        layout = Layout(self.settings.database, self.settings.table, self.settings.columns)
        miners = _Miners(self)
        written = Written()
        column_names = [
            self.settings.columns.timestamp,
            self.settings.columns.service,
            self.settings.columns.severity_text,
            self.settings.columns.severity_number,
            self.settings.columns.body,
            self.settings.columns.log_attributes,
        ]
        for batch in keyed_batches(rows):
            known = self._known_keys(layout, batch)
            data = []
            for key, stamp, row in batch:
                if str(key) in known:
                    written.duplicates += 1
                    continue
                known.add(str(key))
                attributes = {
                    TEMPLATE_ATTRIBUTE: str(miners.get(row.service).add(row.message or row.text)),
                    KEY_ATTRIBUTE: str(key),
                }
                if not row.parsed:
                    attributes[UNPARSED_ATTRIBUTE] = "1"
                if row.component:
                    attributes["component"] = row.component
                # Trace and span as attributes: a user's table need not have the exporter's TraceId, SpanId.
                if row.trace_id:
                    attributes["trace_id"] = row.trace_id
                if row.span_id:
                    attributes["span_id"] = row.span_id
                # A line that wrote no level is OTel's "unspecified" (0, no text), never a made-up INFO.
                level = row.level.upper() if row.leveled else ""
                data.append([from_ms(stamp), row.service, level, SEVERITY_NUMBER.get(level, 0), row.text, attributes])
            if data:
                self.client().insert(
                    self.settings.table, data, column_names=column_names, database=self.settings.database
                )
                written.added += len(data)
        miners.save()
        return written

    def _known_keys(self, layout: Layout, batch: list[tuple[int, int, LogRow]]) -> set[str]:
        """Keys of the batch's rows already stored (one statement): re-importing a file adds nothing."""
        stamps = [ts for _key, ts, _row in batch]
        where = Where(layout).window(min(stamps), max(stamps) + 1)
        services = where.bind(sorted({row.service for _key, _ts, row in batch}), "Array(String)")
        where.clauses.append(f"{layout.col('service')} IN {services}")
        attribute = where.bind(KEY_ATTRIBUTE, "String")
        sql = f"SELECT {layout.col('log_attributes')}[{attribute}] FROM {layout.name} WHERE {where.sql}"
        return {key for (key,) in self._rows(sql, where.params)}

    # -- reading ---------------------------------------------------------------------------

    def _window(self, args: QueryLogsArgs) -> tuple[datetime, datetime]:
        now = self.clock()
        end = parse_time(args.end, now) if args.end else now
        start = parse_time(args.start, now) if args.start else end - timedelta(hours=1)
        if start >= end:
            raise ValueError(f"start {iso(start)} must be before end {iso(end)}")
        return start, end

    def log_span(self, service: str) -> Span | None:
        return self._span(Where(self.layout).service(service))

    def table_span(self) -> Span | None:
        """Where the whole table has lines: one statement, not one per service."""
        return self._span(Where(self.layout))

    def _span(self, where: Where) -> Span | None:
        layout = self.layout
        ((count, first, last),) = self._rows(
            f"SELECT count(), min({layout.ts_ms}), max({layout.ts_ms}) FROM {layout.name} WHERE {where.sql}",
            where.params,
        )
        return Span(first=from_ms(first), last=from_ms(last)) if count else None

    def services(self) -> list[str]:
        layout = self.layout
        return [s for (s,) in self._rows(f"SELECT DISTINCT {layout.col('service')} FROM {layout.name} ORDER BY 1", {})]

    def query_logs(self, args: QueryLogsArgs) -> ToolOutput:
        if args.logql:
            return logql_refused()
        try:
            start, end = self._window(args)
            return self._query_logs(args, start, end)
        except ValueError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_logs error: {exc}")
        except ClickHouseUnavailableError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_logs error: {exc}")
        except Exception as exc:  # the client's errors: a refused query, a server gone
            message = f"clickhouse: {type(exc).__name__}: {str(exc)[:300]}"
            return ToolOutput(status="error", error=message, text=f"query_logs error from {message}")

    def _matching(self, args: QueryLogsArgs, start_ms: int, end_ms: int, terms: list[list[str]]) -> Where:
        return Where(self.layout).window(start_ms, end_ms).service(args.service).level(args.level).terms(terms)

    def _count(self, where: Where) -> int:
        ((count,),) = self._rows(f"SELECT count() FROM {self.layout.name} WHERE {where.sql}", where.params)
        return int(count)

    def _query_logs(self, args: QueryLogsArgs, start: datetime, end: datetime) -> ToolOutput:
        """One pass over the matching lines (counts per minute, and per service, template and
        level; a broad search counted per minute first), then the first lines up to the minute
        where the stored ones end (most templates' examples among them), the template texts and
        the unparsed: four to six statements, each a few ms however small."""
        terms = search_terms(args.query) if args.query else []
        if args.query and not terms:
            message = "query has no searchable words"
            return ToolOutput(status="error", error=message, text=f"query_logs error: {message}")
        layout = self.layout
        start_ms, end_ms = ms(start), ms(end)
        notes: list[str] = []
        searched: str | None = None
        where, tally, total = self._search(args, start_ms, end_ms, terms)
        if not tally.groups and args.query and has_cjk(args.query):
            fallback = fallback_terms(args.query)
            if fallback:
                where, tally, total = self._search(args, start_ms, end_ms, [part.split(" ") for part in fallback])
                searched = " ".join(fallback)
                notes.append(
                    f"no line contains the Chinese words of {args.query!r}; searched {' '.join(fallback)!r} instead"
                )
        paths = layout.paths(bool(terms))
        notes.append("read: " + "; ".join(paths))
        request = log_request(args, start, end)
        by_level = tally.by_level()
        counted = sum(by_level.values())
        matched = total if total is not None else counted
        if matched == 0:
            # The service's span is only said when nothing matched (the embedded backend's output too).
            span = self.log_span(args.service) if args.service else None
            if args.service and span is None:
                others = [s for s in self.services() if s != args.service]
                message = f"{args.service} has no logs; services with logs: {', '.join(others) or 'none'}"
                return ToolOutput(status="no_data", text=message, retrieval_details={"services_with_logs": others})
            unleveled = self._unleveled(start_ms, end_ms, args.service) if span is not None else None
            rendered, evidence = logs_output(
                request,
                matched=0,
                by_level={},
                span=span,
                notes=notes,
                unleveled=window_unleveled(args.service, unleveled),
            )
            empty = {"backend": self.name, "matched": 0, "window": [iso(start), iso(end)], "paths": paths}
            return ToolOutput(status="no_data", text=rendered.text, retrieval_details=empty, evidence=[evidence])
        samples, seen = self._first_lines(where, tally, start_ms)
        templates = self._templates(where, tally, seen)
        bursts = group_spans(tally.spans())
        unparsed = self._unparsed(start_ms, end_ms, args.service) if layout.attributes else 0
        counted_only = counted if total else None
        found = FoundLines(matched, by_level, templates, bursts, samples, unparsed, counted_only, searched)
        unleveled = None
        if args.level is None and not terms:  # every line of the window was tallied
            unleveled = (tally.unleveled, matched) if args.service and tally.unleveled else None
        elif args.level is None:
            unleveled = self._unleveled(start_ms, end_ms, args.service)
        return lines_output(
            request,
            found,
            args.limit,
            notes,
            unleveled=window_unleveled(args.service, unleveled),
            backend="clickhouse",
            counts_over_time=tally.over_time(start_ms, end_ms),
            paths=paths,
        )

    def _search(
        self, args: QueryLogsArgs, start_ms: int, end_ms: int, terms: list[list[str]]
    ) -> tuple[Where, _Counted, int | None]:
        """The matching lines' conditions and tally. A search whose words more than
        ``LOOKUP_CAP`` lines hold, as the embedded store does, describes the first of them only:
        the lines of the minutes in which the first ``LOOKUP_CAP`` stand, and the exact number
        that matched (the third value, else None) is counted per minute first, from the text
        index and the second each line was written in. Reading every matching line's small
        columns grows with the table (500 k of 10 M lines: ~200 ms), counting them does not."""
        where = self._matching(args, start_ms, end_ms, terms)
        if not terms:
            return where, self._window_tally(args, start_ms, end_ms, where), None
        if where.reads_lines:  # counting first would read every line twice
            return where, self._tally(where), None
        layout = self.layout
        minute = f"intDiv(toUInt32({layout.col('timestamp_time')}), 60)" if layout.timestamp_time else None
        minute = minute or f"intDiv({layout.ts_ms}, {_MINUTE_MS})"
        counts = self._rows(
            f"SELECT {minute} AS minute, count() FROM {layout.name} WHERE {where.sql} GROUP BY minute ORDER BY minute",
            where.params,
        )
        total = sum(int(count) for _minute, count in counts)
        if total <= LOOKUP_CAP:
            return where, self._tally(where), None
        running = accumulate(int(count) for _minute, count in counts)
        last = next(int(at) for (at, _count), seen in zip(counts, running, strict=True) if seen >= LOOKUP_CAP)
        first = self._matching(args, start_ms, min(end_ms, (last + 1) * _MINUTE_MS), terms)
        return first, self._tally(first), total

    def _tally(self, where: Where) -> _Counted:
        """The one pass: matching lines counted per minute, and per service, template and level
        (two grouping sets of one scan: ~1.5 k rows back for a day, not one per minute × group),
        summed by the embedded backend's ``Tally``."""
        layout = self.layout
        grouped = where.copy()
        key = template_key(layout, grouped)
        rows = self._rows(
            f"SELECT grouping(minute) = 0 AS per_minute, intDiv({layout.ts_ms}, {_MINUTE_MS}) AS minute, "
            f"{layout.col('service')} AS service, {key} AS template, {layout.level} AS level, "
            f"count(), min({layout.ts_ms}), max({layout.ts_ms}), countIf({layout.unleveled}) "
            f"FROM {layout.name} WHERE {grouped.sql} {_TWO_SETS}",
            grouped.params,
        )
        return _Counted().add_sets(rows)

    def _window_tally(self, args: QueryLogsArgs, start_ms: int, end_ms: int, where: Where) -> _Counted:
        """A window's lines with no words asked: its whole minutes from the per-minute table when
        there is one, and only the partial minutes at its ends line by line."""
        first, last = -(-start_ms // _MINUTE_MS), end_ms // _MINUTE_MS
        layout = self.layout
        if not layout.minutes or start_ms < 0 or first >= last:
            return self._tally(where)
        inside = (first * _MINUTE_MS, last * _MINUTE_MS)
        ends = (start_ms, end_ms) != inside
        tally = self._tally(where.copy().outside(*inside)) if ends else _Counted()
        rollup = Where(layout).service(args.service).level(args.level)
        rollup.clauses += [
            f"Minute >= toDateTime({rollup.bind(first * 60, 'Int64')})",
            f"Minute < toDateTime({rollup.bind(last * 60, 'Int64')})",
        ]
        milli = "toUnixTimestamp64Milli(toDateTime64({}, 3))"
        rows = self._rows(
            "SELECT grouping(minute) = 0 AS per_minute, intDiv(toUInt32(Minute), 60) AS minute, "
            f"{layout.col('service')} AS service, {layout.col('template')} AS template, {layout.level} AS level, "
            f"sum(Lines), {milli.format('min(First)')}, {milli.format('max(Last)')}, sum(Unleveled) "
            f"FROM {layout.minutes_table} WHERE {rollup.sql} {_TWO_SETS}",
            rollup.params,
        )
        return tally.add_sets(rows)

    def _first_lines(self, where: Where, tally: Tally, start_ms: int) -> tuple[list[LogSample], dict[_Group, _Line]]:
        """The first ``STORED_LINES`` matching lines (up to the minute where they end), and the
        first of them of each (service, template, level): most groups' first line is one."""
        layout = self.layout
        first = where.copy().window(start_ms, tally.until(STORED_LINES) + 1)
        key = template_key(layout, first)
        rows = self._rows(
            f"SELECT {layout.ts_ms} AS ts, {layout.col('service')}, {layout.level}, {layout.col('body')}, {key} "
            f"FROM {layout.name} WHERE {first.sql} ORDER BY {layout.col('timestamp')} LIMIT {STORED_LINES}",
            first.params,
        )
        seen: dict[_Group, _Line] = {}
        for ts, service, level, body, template in rows:
            seen.setdefault((service, template, level), (int(ts), str(body)))
        return [
            LogSample(ts=from_ms(ts), service=service, level=level, line=body) for ts, service, level, body, _ in rows
        ], seen

    def _templates(self, where: Where, tally: Tally, seen: dict[_Group, _Line]) -> list[TemplateRow]:
        """The commonest (service, template, level) groups with their first line — read at the
        instant it was written where the first lines did not hold it — and their text from the
        template table."""
        layout = self.layout
        top = tally.top_groups(TOP_TEMPLATES)
        missing = sorted(
            {(group[0], first) for group, (_n, first, *_rest) in top if seen.get(group, (-1,))[0] != first}
        )
        if missing:
            at = where.copy().any_of(missing)
            key = template_key(layout, at)
            for service, template, level, ts, body in self._rows(
                f"SELECT {layout.col('service')}, {key}, {layout.level}, {layout.ts_ms} AS ts, {layout.col('body')} "
                f"FROM {layout.name} WHERE {at.sql} ORDER BY ts",
                at.params,
            ):
                if seen.get((service, template, level), (-1,))[0] != int(ts):
                    seen[(service, template, level)] = (int(ts), str(body))
        texts = self._template_texts([group for group, _figures in top]) if layout.template else {}
        rows = []
        for group, (count, first, last, _first_id) in top:
            line = seen.get(group)
            if line is None or line[0] != first:
                continue  # the line was gone between the two statements
            text = texts.get((group[0], group[1])) if layout.template else str(group[1])
            rows.append(TemplateRow(text or line[1], group[2], count, from_ms(first), from_ms(last), line[1], group[0]))
        return rows

    def _template_texts(self, groups: list[_Group]) -> dict[tuple[str, int], str]:
        """The newest text of each (service, template id) of the template table."""
        where = Where(self.layout)
        services = where.bind(sorted({service for service, _t, _l in groups}), "Array(String)")
        ids = where.bind(sorted({int(template) for _s, template, _l in groups}), "Array(UInt64)")
        rows = self._rows(
            f"SELECT ServiceName, TemplateId, argMax(Template, Version) FROM {self.layout.templates_table} "
            f"WHERE ServiceName IN {services} AND TemplateId IN {ids} GROUP BY ServiceName, TemplateId",
            where.params,
        )
        return {(str(service), int(template)): str(text) for service, template, text in rows}

    def _unleveled(self, start_ms: int, end_ms: int, service: str | None) -> tuple[int, int] | None:
        """(lines that wrote no level, lines) of the service in the window; None when every line
        wrote one. Asked only where it changes what may be said: nothing matched a level, or
        every level was asked for (a statement costs the engine ≥ 8 ms)."""
        if not service:
            return None
        layout = self.layout
        where = Where(layout).window(start_ms, end_ms).service(service)
        ((none, lines),) = self._rows(
            f"SELECT countIf({layout.unleveled}), count() FROM {layout.name} WHERE {where.sql}", where.params
        )
        return (int(none), int(lines)) if none else None

    def _unparsed(self, start_ms: int, end_ms: int, service: str | None) -> int:
        return self._count(Where(self.layout).window(start_ms, end_ms).service(service).unparsed())

    def error_minutes(self, start: datetime, end: datetime) -> dict[str, list[tuple[datetime, int]]]:
        """ERROR lines per service per minute (which service's errors moved first), in time order."""
        layout = self.layout
        where = Where(layout).window(ms(start), ms(end)).level("ERROR")
        rows = self._rows(
            f"SELECT {layout.col('service')} AS service, intDiv({layout.ts_ms}, {_MINUTE_MS}) AS minute, count() "
            f"FROM {layout.name} WHERE {where.sql} GROUP BY service, minute ORDER BY minute, service",
            where.params,
        )
        found: dict[str, list[tuple[datetime, int]]] = {}
        for service, minute, count in rows:
            found.setdefault(str(service), []).append((from_ms(int(minute) * _MINUTE_MS), int(count)))
        return found


def _body_indexes(body: str, indexes: list[tuple[Any, ...]]) -> tuple[tuple[str, bool] | None, str | None, str | None]:
    """Of a table's skip indexes: the token index on lower(body) (its name, and whether it is a
    text index ``hasToken`` reads exactly: one that splits as ``splitByNonAlpha`` does, with no
    preprocessor of its own), preferring that kind; the word-pair and the character-pair text
    indexes, if any."""

    def squashed(expression: str) -> str:
        return expression.replace(" ", "")

    def forms(expression: Callable[[str], str]) -> set[str]:
        return {squashed(expression(name)) for name in (body, f"`{body}`")}

    lowered, paired, bigrammed = (
        forms(lambda name: f"lower({name})"),
        forms(pairs_expression),
        forms(bigrams_expression),
    )
    words: tuple[str, bool] | None = None
    pairs = bigrams = None
    for name, expr, kind, full in indexes:
        exact = kind == "text" and squashed(full) == "text(tokenizer=splitByNonAlpha)"
        if squashed(expr) in lowered and kind in ("tokenbf_v1", "text") and (words is None or exact):
            words = (str(name), exact)
        elif squashed(expr) in paired and exact:
            pairs = str(name)
        elif squashed(expr) in bigrammed and kind == "text" and squashed(full) == "text(tokenizer=ngrams(2))":
            bigrams = str(name)
    return words, pairs, bigrams


#: A (service, template, level) group of lines, and a line's (ms, text).
_Group = tuple[str, Any, str]
_Line = tuple[int, str]


class _Counted(Tally):
    """A tally that also knows how many of its lines wrote no level."""

    unleveled = 0

    def add_sets(self, rows: list[tuple[Any, ...]]) -> _Counted:
        """Rows of the two grouping sets: (per minute?, minute, service, template, level,
        lines, first ms, last ms, unleveled)."""
        self.add(
            [(*row[2:8], 0) for row in rows if not row[0]],
            [(row[1], *(int(x) for x in row[5:8])) for row in rows if row[0]],
        )
        self.unleveled += sum(int(row[8]) for row in rows if not row[0])
        return self


class _Miners:
    """Each service's template miner, restored from the miner table on first use (one import)."""

    def __init__(self, logs: ClickHouseLogs) -> None:
        self.logs = logs
        self.layout = Layout(logs.settings.database, logs.settings.table, logs.settings.columns)
        self.miners: dict[str, TemplateMiner] = {}

    def get(self, service: str) -> TemplateMiner:
        miner = self.miners.get(service)
        if miner is None:
            from veridiag.tools.templates import TemplateMiner  # drain3: for writing lines only

            rows = self.logs._rows(
                f"SELECT State FROM {self.layout.miner_table} FINAL WHERE ServiceName = {{s:String}}", {"s": service}
            )
            miner = TemplateMiner(bytes.fromhex(rows[0][0]) if rows else None)
            self.miners[service] = miner
        return miner

    def save(self) -> None:
        version = time.time_ns()
        client = self.logs.client()
        for service, miner in self.miners.items():
            client.insert(
                f"{self.layout.table}_templates",
                [[service, template_id, text, version] for template_id, text in miner.templates().items()],
                column_names=["ServiceName", "TemplateId", "Template", "Version"],
                database=self.layout.database,
            )
            client.insert(
                f"{self.layout.table}_miner",
                [[service, miner.state().hex(), version]],
                column_names=["ServiceName", "State", "Version"],
                database=self.layout.database,
            )
