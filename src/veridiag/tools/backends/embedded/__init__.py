"""The embedded backend: logs (SQLite FTS5 + mined templates), metric series, change events,
the call graph, spans (read as the metric series derived from them) and runbooks in one SQLite file.

On first use an empty file is filled with the bundled demo environment, so veridiag
diagnoses something real with no setup — unless an import opened it first (``data import-…``
opens it without the demo): a file holding data is never filled. Imported data (``veridiag data import-…``) lands
in the same tables. Connections are per thread; writes are serialised by SQLite.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from veridiag._sqlite import use_wal
from veridiag.analysis.traces import CallCount, SpanFilter, SpanStats, TraceSpan
from veridiag.redaction import Redactor, default_redactor
from veridiag.text.render import iso
from veridiag.tools import knowledge
from veridiag.tools.args import LookupKnowledgeArgs, QueryChangesArgs, QueryLogsArgs, QueryMetricsArgs, parse_time
from veridiag.tools.backends.embedded import _changes, _ingest, _logs, _metrics, _schema, _spans, _traces
from veridiag.tools.backends.embedded._ingest import ChangeRow, EdgeRow, LogRow, Written
from veridiag.tools.backends.embedded._spans import SpanRow, SpansWritten
from veridiag.tools.promql import ShownSeries
from veridiag.tools.records import KnowledgeEvidence, RunbookMatch, Span
from veridiag.tools.render import render_knowledge
from veridiag.tools.results import ToolOutput

__all__ = ["ChangeRow", "EdgeRow", "EmbeddedEnvironment", "LogRow", "SpanRow", "SpansWritten", "Written"]

_INIT_LOCK = threading.Lock()
#: The tables an import writes: a file with a row in any of them holds data of its own.
_DATA_TABLES = ("log_line", "metric_point", "change_event", "call_edge", "span")
_log = logging.getLogger(__name__)


class _Connection(sqlite3.Connection):
    """A connection that can be weakly referenced (``sqlite3.Connection`` cannot), so
    ``EmbeddedEnvironment`` can find every thread's without keeping a gone thread's open."""


def _absolute(moment: str) -> bool:
    """An ISO time, not one relative to the clock ("now-30m")."""
    return not moment.strip().lower().startswith("now")


class EmbeddedEnvironment:
    """Implements the log, metric, change and knowledge backends over one SQLite file."""

    name = "embedded"
    #: Imported history, not a live system: relative times anchor to the data, not the wall clock.
    live = False

    def __init__(
        self,
        path: Path,
        *,
        load_demo: bool = True,
        demo_incidents: Path | None = None,
        runbook_dir: Path | None = None,
        redactor: Redactor | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        #: What this backend logs about its data (a runbook's YAML error quotes its lines) passes
        #: through the same redactor as tool output.
        self.redactor = redactor or default_redactor()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.runbook_dir = runbook_dir
        #: Incidents added to the bundled demo (an incident folder, or a folder of them); their
        #: runbooks are indexed with the user's.
        self.demo_incidents = demo_incidents.expanduser() if load_demo and demo_incidents else None
        #: User runbooks the last non-strict indexing left out, with why.
        self.skipped_runbooks: list[str] = []
        self._local = threading.local()
        #: Every live thread's connection, so ``close`` reaches those of the tool threads too.
        self._opened: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._opened_lock = threading.Lock()
        with _INIT_LOCK, self.connect() as conn:
            untemplated = _schema.migrate(conn)
            _schema.ensure_read_side(conn)
            _schema.ensure_merge_policy(conn)
            if untemplated:
                _log.info(
                    "mined templates for %d lines stored before templates existed", _ingest.template_untemplated(conn)
                )
                _schema.refill_log_minute(conn)
            conn.executescript(knowledge.SCHEMA)
            if load_demo and self._is_empty(conn):
                self._load_demo(conn)
            fingerprint = knowledge.sources_fingerprint(self._runbook_folders())
            if self._indexed_fingerprint(conn) != fingerprint:
                # First start, a new release's runbooks, or the user's: never fail on a bad file
                # here. Checked again under the write lock: processes starting together on one
                # home index once, the others wait and find it done (as ``_load_demo``).
                conn.execute("BEGIN IMMEDIATE")
                if self._indexed_fingerprint(conn) != fingerprint:
                    self._index(conn, fingerprint, strict=False)
                conn.commit()

    # -- connections & loading -----------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, factory=_Connection)
            use_wal(conn)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._opened_lock:
                self._opened.add(conn)
        return conn

    def close(self) -> None:
        """Close every thread's connection (SQLite checkpoints its WAL as the last one closes);
        a later call opens a new one. Closed explicitly because a process that exits without
        collecting garbage (``veridiag ask`` freezes its objects) never finalizes them."""
        with self._opened_lock:
            opened, self._opened = list(self._opened), weakref.WeakSet()
            self._local = threading.local()
        for conn in opened:
            conn.close()

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        conn = self._connection()
        try:
            yield conn
            conn.commit()
        except BaseException:
            conn.rollback()
            raise

    @staticmethod
    def _is_empty(conn: sqlite3.Connection) -> bool:
        """Neither the demo nor anything imported: a file an import opened without the demo
        (``data import-…`` on a new home) holds the user's data and is never filled with it."""
        loaded = conn.execute("SELECT value FROM meta WHERE key='loaded'").fetchone()
        return loaded is None and not any(
            conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None for table in _DATA_TABLES
        )

    def holds_demo(self) -> bool:
        """Whether the bundled demo was loaded into this file (its shop, its day, its clock)."""
        loaded = self._connection().execute("SELECT value FROM meta WHERE key='loaded'").fetchone()
        return loaded is not None and loaded[0] == "demo"

    def _load_demo(self, conn: sqlite3.Connection) -> None:
        from veridiag.tools import demo  # the generator and its models: only a new file needs them

        day = demo.load_environment(self.demo_incidents) if self.demo_incidents else demo.bundled_environment()
        conn.execute("BEGIN IMMEDIATE")
        if not self._is_empty(conn):  # another process won the race
            conn.commit()
            return
        _ingest.add_logs(conn, (LogRow(x.ts, x.service, x.level, x.line, x.message, x.component) for x in day.logs()))
        _ingest.add_metric_points(conn, ((p.service, p.metric, p.unit, p.ts, p.value) for p in day.metrics()))
        _ingest.add_changes(
            conn, (ChangeRow(c.ts, c.service, c.kind, c.description, source="demo") for c in day.changes())
        )
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('now', ?)", (iso(day.end),))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('loaded', 'demo')")
        conn.commit()

    def add_logs(self, rows: Iterable[LogRow]) -> Written:
        """Store the rows not stored yet (idempotent), mining their templates; one transaction."""
        with self.connect() as conn:
            return _ingest.add_logs(conn, rows)

    def add_metric_points(self, rows: Iterable[tuple[str, str, str, datetime, float]]) -> int:
        """Upsert ``(service, metric, unit, ts, value)`` points; returns how many."""
        with self.connect() as conn:
            return _ingest.add_metric_points(conn, rows)

    def import_metric_points(self, rows: Iterable[tuple[str, str, str, datetime, float]]) -> Written:
        """``add_metric_points`` for an import: what was added, what was not, and how many of
        those repeated a point of the same rows (``Written.in_file``)."""
        with self.connect() as conn:
            return _ingest.add_metric_points_counted(conn, rows)

    def add_changes(self, rows: Iterable[ChangeRow]) -> Written:
        with self.connect() as conn:
            return _ingest.add_changes(conn, rows)

    def add_dependencies(self, rows: Iterable[EdgeRow]) -> Written:
        """Store call-graph edges (``data import-dependencies``); a source imported again replaces its weights."""
        with self.connect() as conn:
            return _ingest.add_edges(conn, rows)

    def add_spans(self, rows: Iterable[SpanRow], *, source: str, reach_key: str) -> SpansWritten:
        """Store one file's spans (idempotent) and recompute what they change: self times, the
        per-minute span series of the minutes concerned, the call graph they state (returned,
        not stored: ``data import-traces`` stores it as ``import-dependencies`` does). One
        transaction; ``source`` names the file, ``reach_key`` its reach (``_spans.py``)."""
        with self.connect() as conn:
            return _spans.add_spans(conn, rows, source=source, reach_key=reach_key)

    def span_summary(self) -> tuple[int, int] | None:
        """How many spans and traces are stored (None: none)."""
        return _spans.span_summary(self._connection())

    # -- spans, as ``query_traces`` reads them (``TraceBackend``) -------------------------

    def trace_services(self) -> list[str]:
        return _traces.trace_services(self._connection())

    def span_extent(self, service: str) -> Span | None:
        return _traces.span_extent(self._connection(), service)

    def operations(self, service: str) -> list[str]:
        """The operations of the service's spans (what ``query_traces`` lists for one it lacks)."""
        return _traces.operations(self._connection(), service)

    def span_stats(self, where: SpanFilter) -> SpanStats:
        return _traces.stats(self._connection(), where)

    def slowest_traces(self, where: SpanFilter, limit: int) -> list[list[TraceSpan]]:
        return _traces.slowest_traces(self._connection(), where, limit)

    def call_counts(self, where: SpanFilter) -> list[CallCount]:
        return _traces.call_counts(self._connection(), where)

    def trace(self, trace_id: str) -> list[TraceSpan]:
        return _traces.trace(self._connection(), trace_id)

    def index_knowledge(self) -> int:
        """Re-index bundled runbooks plus the added demo incidents' and the user folder's (user
        ids override bundled); a broken one raises ``RunbookError`` (``veridiag kb index`` says which)."""
        with self.connect() as conn:
            return self._index(conn, knowledge.sources_fingerprint(self._runbook_folders()), strict=True)

    def _index(self, conn: sqlite3.Connection, fingerprint: str, *, strict: bool) -> int:
        """Index and record ``fingerprint``. Not ``strict`` (start-up): a broken user runbook
        is left out with a logged warning and listed in ``skipped_runbooks``."""
        runbooks = list(knowledge.bundled_runbooks())
        skipped: list[str] = []
        for folder in self._runbook_folders():
            if folder.exists():
                runbooks += list(knowledge.folder_runbooks(folder, None if strict else skipped))
        skipped = [self.redactor.redact(problem) for problem in skipped]
        for problem in skipped:
            _log.warning("runbook left out of the index: %s", problem)
        self.skipped_runbooks = skipped
        count = knowledge.index_runbooks(conn, runbooks)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('kb_fingerprint', ?)", (fingerprint,))
        conn.commit()
        return count

    def _runbook_folders(self) -> list[Path]:
        """Folders of runbooks beyond the bundled ones; the user's last, so theirs win by id."""
        return [folder for folder in (self.demo_incidents, self.runbook_dir) if folder is not None]

    @staticmethod
    def _indexed_fingerprint(conn: sqlite3.Connection) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key='kb_fingerprint'").fetchone()
        return str(row[0]) if row else None

    # -- clock & catalogue ---------------------------------------------------------------

    def now(self) -> datetime:
        """The environment's clock: the demo's end of day, else the latest data, else wall time."""
        conn = self._connection()
        row = conn.execute("SELECT value FROM meta WHERE key='now'").fetchone()
        if row:
            return datetime.fromisoformat(row[0].replace("Z", "+00:00"))
        latest = conn.execute("SELECT MAX(ts) FROM log_line").fetchone()[0]
        latest_metric = _metrics.latest(conn)
        values = [v for v in (latest, latest_metric) if v is not None]
        return _logs.from_ms(max(values)) if values else datetime.now(UTC)

    def services(self) -> list[str]:
        conn = self._connection()
        found = {row[0] for row in conn.execute("SELECT DISTINCT service FROM metric_series")}
        found.update(_logs.distinct(conn, "log_line"), _logs.distinct(conn, "change_event"))
        return sorted(found)

    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]:
        """``(service, metric, unit)`` of every series (of one service)."""
        return _metrics.series(self._connection(), service)

    def log_span(self, service: str) -> Span | None:
        return _logs.log_span(self._connection(), service)

    def dependencies(self) -> list[tuple[str, str]]:
        """The call graph imported: ``(caller, callee)`` pairs, each once, sorted."""
        rows = self._connection().execute("SELECT DISTINCT caller, callee FROM call_edge ORDER BY caller, callee")
        return [(str(caller), str(callee)) for caller, callee in rows]

    def metric_span(self, service: str, metric: str | None = None) -> Span | None:
        return _metrics.metric_span(self._connection(), service, metric)

    def series_points(self, service: str, metric: str, unit: str, start: datetime, end: datetime) -> ShownSeries | None:
        """A series in ``[start, end)`` as ``query_metrics`` shows it, with its unit (None: a histogram)."""
        return _metrics.series_as_shown(self._connection(), service, metric, unit, start=start, end=end)

    def data_end(self, service: str | None = None) -> datetime | None:
        """The minute boundary just after the newest data point of ``service`` (of anything when
        None): what "now" means for imported history (the demo day ends at 16:00)."""
        if service is None:
            conn = self._connection()
            stamps = [conn.execute("SELECT MAX(ts) FROM log_line").fetchone()[0], _metrics.latest(conn)]
            known = [s for s in stamps if s is not None]
            if not known:
                return None
            newest = _logs.from_ms(max(known))
        else:
            spans = [s for s in (self.log_span(service), self.metric_span(service)) if s is not None]
            if not spans:
                return None
            newest = max(s.last for s in spans)
        return newest.replace(second=0, microsecond=0) + timedelta(minutes=1)

    def describe(self, service: str) -> list[str]:
        """What data ``service`` has, in words ("edge-api has metrics 2014-02-14T14:30:00Z – …")."""
        said = []
        for what, span in (("logs", self.log_span(service)), ("metrics", self.metric_span(service))):
            if span is not None:
                said.append(f"{service} has {what} {iso(span.first)} – {iso(span.last)}")
        return said or [f"{service} has no logs or metrics"]

    def _window(
        self, start: str | None, end: str | None, default: timedelta = timedelta(hours=1)
    ) -> tuple[datetime, datetime]:
        # The clock only when a bound needs it: over millions of points the newest one is a scan
        # (~90 ms a call at 770 k metric points, measured), and most calls give both bounds.
        now = self.now() if not (start and end and _absolute(start) and _absolute(end)) else datetime.now(UTC)
        end_at = parse_time(end, now) if end else now
        start_at = parse_time(start, now) if start else end_at - default
        if start_at >= end_at:
            raise ValueError(f"start {iso(start_at)} must be before end {iso(end_at)}")
        return start_at, end_at

    # -- tools ---------------------------------------------------------------------------

    def query_logs(self, args: QueryLogsArgs) -> ToolOutput:
        if args.logql:
            return _logs.logql_refused()
        try:
            start, end = self._window(args.start, args.end)
        except ValueError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_logs error: {exc}")
        conn = self._connection()
        if args.service and self.log_span(args.service) is None:
            return _logs.no_such_service(conn, args.service, self.describe(args.service))
        return _logs.query_logs(conn, args, start=start, end=end)

    def query_metrics(self, args: QueryMetricsArgs) -> ToolOutput:
        if args.promql:
            message = "promql needs the prometheus backend; use service and metric"
            return ToolOutput(status="error", error=message, text=f"query_metrics error: {message}")
        try:
            start, end = self._window(args.start, args.end)
            at = parse_time(args.at, self.now() if not _absolute(args.at) else end) if args.at else None
        except ValueError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_metrics error: {exc}")
        about = self.describe(args.service) if args.service else []
        return _metrics.query_metrics(self._connection(), args, start, end, about, at=at)

    def query_changes(self, args: QueryChangesArgs) -> ToolOutput:
        try:
            start, end = self._window(args.start, args.end, default=timedelta(hours=24))
        except ValueError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_changes error: {exc}")
        return _changes.query_changes(self._connection(), args, start, end)

    def lookup_knowledge(self, args: LookupKnowledgeArgs) -> ToolOutput:
        hits = knowledge.search(self._connection(), args.query, service=args.service, limit=args.limit)
        if not hits:
            message = f"no runbook matches {args.query!r}" + (f" for {args.service}" if args.service else "")
            return ToolOutput(status="no_data", text=message, retrieval_details={"documents": []})
        text = render_knowledge(args.query, hits, full=True)
        model_text = render_knowledge(args.query, hits, full=False)
        evidence = KnowledgeEvidence(
            query=args.query,
            documents=[
                RunbookMatch(
                    id=h.runbook.id,
                    title=h.runbook.title,
                    services=list(h.runbook.services),
                    score=h.score,
                    matched_terms=knowledge.shared_terms(args.query, h.runbook),
                    sections=knowledge.sections(h.runbook.body),
                )
                for h in hits
            ],
        )
        details = {
            "backend": self.name,
            "documents": [
                {
                    "id": h.runbook.id,
                    "title": h.runbook.title,
                    "score": h.score,
                    "services": list(h.runbook.services),
                }
                for h in hits
            ],
        }
        return ToolOutput(status="ok", text=text, model_text=model_text, retrieval_details=details, evidence=[evidence])
