"""The embedded backend: logs (SQLite FTS5), metric series and runbooks in one SQLite file.

On first use an empty file is filled with the bundled demo environment, so veridiag
diagnoses something real with no setup. Imported data (``veridiag data import-…``) lands
in the same tables. Connections are per thread; writes are serialised by SQLite.
"""

from __future__ import annotations

import logging
import sqlite3
import statistics
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from veridiag.contracts.composer import has_cjk
from veridiag.tools import demo, knowledge
from veridiag.tools.args import LookupKnowledgeArgs, QueryLogsArgs, QueryMetricsArgs, parse_time
from veridiag.tools.render import format_value, iso, render_knowledge, render_logs, render_metrics
from veridiag.tools.results import ToolOutput
from veridiag.tools.text import english_fallback, fts_query, log_template, segment

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS log_line(
    id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, service TEXT NOT NULL, level TEXT NOT NULL, line TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ix_log_service_ts ON log_line(service, ts);
CREATE INDEX IF NOT EXISTS ix_log_ts ON log_line(ts);
CREATE VIRTUAL TABLE IF NOT EXISTS log_fts USING fts5(line, content='');
CREATE TABLE IF NOT EXISTS metric_series(service TEXT NOT NULL, metric TEXT NOT NULL, unit TEXT NOT NULL,
    PRIMARY KEY(service, metric));
CREATE TABLE IF NOT EXISTS metric_point(service TEXT NOT NULL, metric TEXT NOT NULL, ts INTEGER NOT NULL,
    value REAL NOT NULL, PRIMARY KEY(service, metric, ts)) WITHOUT ROWID;
"""
#: Lines examined for patterns; counts above it are exact, patterns are over this sample.
PATTERN_SAMPLE = 5000
#: Lines kept in the stored output (what excerpts are checked against).
STORED_LINES = 500
#: Matching lines whose timestamps are grouped into bursts, and the quiet gap between bursts.
BURST_SAMPLE = 200_000
BURST_GAP_MS = 10 * 60 * 1000
_INIT_LOCK = threading.Lock()
_log = logging.getLogger(__name__)
_MARK_LOADED = "INSERT OR IGNORE INTO meta VALUES ('loaded', 'data')"


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _from_ms(value: int) -> datetime:
    return datetime.fromtimestamp(value / 1000, tz=UTC)


class EmbeddedEnvironment:
    """Implements the log, metric and knowledge backends over one SQLite file."""

    name = "embedded"

    def __init__(self, path: Path, *, load_demo: bool = True, runbook_dir: Path | None = None) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.runbook_dir = runbook_dir
        #: User runbooks the last non-strict indexing left out, with why.
        self.skipped_runbooks: list[str] = []
        self._local = threading.local()
        with _INIT_LOCK, self.connect() as conn:
            conn.executescript(SCHEMA)
            conn.executescript(knowledge.SCHEMA)
            if load_demo and self._is_empty(conn):
                self._load_demo(conn)
            fingerprint = knowledge.sources_fingerprint(self.runbook_dir)
            if self._indexed_fingerprint(conn) != fingerprint:
                # First start, a new release's runbooks, or the user's: never fail on a bad file here.
                self._index(conn, fingerprint, strict=False)

    # -- connections & loading -----------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

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
        loaded = conn.execute("SELECT value FROM meta WHERE key='loaded'").fetchone()
        return loaded is None

    def _load_demo(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        if not self._is_empty(conn):  # another process won the race
            conn.commit()
            return
        self.add_logs(((x.ts, x.service, x.level, x.line) for x in demo.generate_logs()), conn=conn)
        points = demo.generate_metrics()
        self.add_metric_points(((p.service, p.metric, p.unit, p.ts, p.value) for p in points), conn=conn)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('now', ?)", (iso(demo.DAY_END),))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('loaded', 'demo')")
        conn.commit()

    def add_logs(
        self, rows: Iterable[tuple[datetime, str, str, str]], *, conn: sqlite3.Connection | None = None
    ) -> int:
        """Append ``(ts, service, level, line)`` rows; returns how many."""
        own = conn is None
        conn = conn or self._connection()
        count = 0
        cursor = conn.cursor()
        batch: list[tuple[int, str, str, str]] = []

        def flush() -> None:
            cursor.execute("SELECT COALESCE(MAX(id), 0) FROM log_line")
            first = int(cursor.fetchone()[0]) + 1
            cursor.executemany(
                "INSERT INTO log_line(id, ts, service, level, line) VALUES (?,?,?,?,?)",
                [(first + i, *row) for i, row in enumerate(batch)],
            )
            cursor.executemany(
                "INSERT INTO log_fts(rowid, line) VALUES (?, ?)",
                [(first + i, segment(row[3])) for i, row in enumerate(batch)],
            )
            batch.clear()

        for ts, service, level, line in rows:
            batch.append((_ms(ts), service, level, line))
            count += 1
            if len(batch) >= 5000:
                flush()
        if batch:
            flush()
        cursor.execute(_MARK_LOADED)
        if own:
            conn.commit()
        return count

    def add_metric_points(
        self, rows: Iterable[tuple[str, str, str, datetime, float]], *, conn: sqlite3.Connection | None = None
    ) -> int:
        """Upsert ``(service, metric, unit, ts, value)`` points; returns how many."""
        own = conn is None
        conn = conn or self._connection()
        series: set[tuple[str, str, str]] = set()
        batch: list[tuple[str, str, int, float]] = []
        count = 0
        for service, metric, unit, ts, value in rows:
            series.add((service, metric, unit))
            batch.append((service, metric, _ms(ts), float(value)))
            count += 1
            if len(batch) >= 10_000:
                conn.executemany("INSERT OR REPLACE INTO metric_point VALUES (?,?,?,?)", batch)
                batch.clear()
        conn.executemany("INSERT OR REPLACE INTO metric_point VALUES (?,?,?,?)", batch)
        conn.executemany("INSERT OR REPLACE INTO metric_series VALUES (?,?,?)", sorted(series))
        conn.execute(_MARK_LOADED)
        if own:
            conn.commit()
        return count

    def index_knowledge(self) -> int:
        """Re-index bundled runbooks plus the user folder (user ids override bundled); a
        broken user runbook raises ``RunbookError`` (``veridiag kb index`` says which)."""
        with self.connect() as conn:
            return self._index(conn, knowledge.sources_fingerprint(self.runbook_dir), strict=True)

    def _index(self, conn: sqlite3.Connection, fingerprint: str, *, strict: bool) -> int:
        """Index and record ``fingerprint``. Not ``strict`` (start-up): a broken user runbook
        is left out with a logged warning and listed in ``skipped_runbooks``."""
        runbooks = list(knowledge.bundled_runbooks())
        skipped: list[str] = []
        if self.runbook_dir is not None and self.runbook_dir.exists():
            runbooks += list(knowledge.folder_runbooks(self.runbook_dir, None if strict else skipped))
        for problem in skipped:
            _log.warning("runbook left out of the index: %s", problem)
        self.skipped_runbooks = skipped
        count = knowledge.index_runbooks(conn, runbooks)
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('kb_fingerprint', ?)", (fingerprint,))
        conn.commit()
        return count

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
        latest_metric = conn.execute("SELECT MAX(ts) FROM metric_point").fetchone()[0]
        values = [v for v in (latest, latest_metric) if v is not None]
        return _from_ms(max(values)) if values else datetime.now(UTC)

    def services(self) -> list[str]:
        conn = self._connection()
        rows = conn.execute(
            "SELECT DISTINCT service FROM metric_series UNION SELECT DISTINCT service FROM log_line"
        ).fetchall()
        return sorted(row[0] for row in rows)

    def metrics(self, service: str | None = None) -> list[tuple[str, str, str]]:
        conn = self._connection()
        if service:
            rows = conn.execute(
                "SELECT service, metric, unit FROM metric_series WHERE service=? ORDER BY metric", (service,)
            )
        else:
            rows = conn.execute("SELECT service, metric, unit FROM metric_series ORDER BY service, metric")
        return [(r[0], r[1], r[2]) for r in rows.fetchall()]

    def _window(
        self, start: str | None, end: str | None, default: timedelta = timedelta(hours=1)
    ) -> tuple[datetime, datetime]:
        now = self.now()
        end_at = parse_time(end, now) if end else now
        start_at = parse_time(start, now) if start else end_at - default
        if start_at >= end_at:
            raise ValueError(f"start {iso(start_at)} must be before end {iso(end_at)}")
        return start_at, end_at

    # -- query_logs ----------------------------------------------------------------------

    def query_logs(self, args: QueryLogsArgs) -> ToolOutput:
        try:
            start, end = self._window(args.start, args.end)
        except ValueError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_logs error: {exc}")
        if args.logql:
            return ToolOutput(
                status="error",
                error="logql needs the loki backend",
                text="query_logs error: logql needs the loki backend; use service/query/level",
            )
        conn = self._connection()
        if (
            args.service
            and not conn.execute("SELECT 1 FROM log_line WHERE service=? LIMIT 1", (args.service,)).fetchone()
        ):
            known = ", ".join(s for s in self.services())
            message = f"no logs for service {args.service!r}; services with logs: {known}"
            return ToolOutput(status="no_data", text=message, retrieval_details={"known_services": self.services()})
        note = None
        match = fts_query(args.query) if args.query else None
        if args.query and match is None:
            return ToolOutput(
                status="error",
                error="query has no searchable words",
                text="query_logs error: query has no searchable words",
            )
        where: list[str] = ["ts >= ?", "ts < ?"]
        params: list[Any] = [_ms(start), _ms(end)]
        if args.service:
            where.append("service = ?")
            params.append(args.service)
        if args.level:
            where.append("level = ?")
            params.append(args.level)
        total, by_level, rows = self._search(conn, where, params, match)
        used_match = match
        if total == 0 and args.query and has_cjk(args.query):
            fallback = english_fallback(args.query)
            if fallback:
                used_match = fallback[0]
                total, by_level, rows = self._search(conn, where, params, used_match)
                note = f"no line contains the Chinese words of {args.query!r}; searched {fallback[1]!r} instead"
        request = {
            "service": args.service,
            "query": args.query,
            "level": args.level,
            "start": iso(start),
            "end": iso(end),
        }
        if total == 0:
            text = render_logs(request, 0, {}, [], [], limit=args.limit, note=note)
            return ToolOutput(
                status="no_data",
                text=text,
                retrieval_details={"matched": 0, "window": [iso(start), iso(end)]},
            )
        patterns: Counter[str] = Counter()
        examples: dict[str, str] = {}
        for _ts, _service, _level, line in rows:
            template = log_template(line)
            patterns[template] += 1
            examples.setdefault(template, line)
        top = [(t, c, examples[t]) for t, c in patterns.most_common(8)]
        lines = [row[3] for row in rows[:STORED_LINES]]
        bursts = self._bursts(conn, where, params, used_match)
        sampled = len(rows) < total
        text = render_logs(
            request, total, by_level, top, lines, limit=len(lines), note=note, sampled=sampled, bursts=bursts
        )
        model_text = render_logs(
            request,
            total,
            by_level,
            top,
            lines[: args.limit],
            limit=args.limit,
            note=note,
            sampled=sampled,
            bursts=bursts,
        )
        details: dict[str, Any] = {
            "backend": self.name,
            "matched": total,
            "by_level": by_level,
            "window": [iso(start), iso(end)],
            "bursts": bursts,
            "first": iso(_from_ms(rows[0][0])),
            "last": iso(_from_ms(rows[-1][0])) if len(rows) == total else None,
            "patterns": [{"template": t, "count": c, "example": e} for t, c, e in top],
        }
        return ToolOutput(status="ok", text=text, model_text=model_text, retrieval_details=details)

    @staticmethod
    def _bursts(conn: sqlite3.Connection, where: list[str], params: list[Any], match: str | None) -> list[list[Any]]:
        """Runs of matching lines separated by quiet gaps of 10+ minutes: [first, last, count]."""
        clauses, values = list(where), list(params)
        if match:
            clauses.append("id IN (SELECT rowid FROM log_fts WHERE log_fts MATCH ?)")
            values.append(match)
        stamps = [
            row[0]
            for row in conn.execute(
                f"SELECT ts FROM log_line WHERE {' AND '.join(clauses)} ORDER BY ts LIMIT {BURST_SAMPLE}", values
            )
        ]
        bursts: list[list[Any]] = []
        for ts in stamps:
            if bursts and ts - bursts[-1][1] < BURST_GAP_MS:
                bursts[-1][1] = ts
                bursts[-1][2] += 1
            else:
                bursts.append([ts, ts, 1])
        largest = sorted(sorted(bursts, key=lambda b: -b[2])[:5], key=lambda b: b[0])
        return [[iso(_from_ms(a)), iso(_from_ms(b)), n] for a, b, n in largest]

    @staticmethod
    def _search(
        conn: sqlite3.Connection, where: list[str], params: list[Any], match: str | None
    ) -> tuple[int, dict[str, int], list[tuple[int, str, str, str]]]:
        clauses, values = list(where), list(params)
        if match:
            clauses.append("id IN (SELECT rowid FROM log_fts WHERE log_fts MATCH ?)")
            values.append(match)
        condition = " AND ".join(clauses)
        counts = conn.execute(
            f"SELECT level, COUNT(*) FROM log_line WHERE {condition} GROUP BY level", values
        ).fetchall()
        by_level = {level: count for level, count in counts}
        total = sum(by_level.values())
        if not total:
            return 0, {}, []
        rows = conn.execute(
            f"SELECT ts, service, level, line FROM log_line WHERE {condition} ORDER BY ts LIMIT {PATTERN_SAMPLE}",
            values,
        ).fetchall()
        return total, by_level, rows

    # -- query_metrics -------------------------------------------------------------------

    def query_metrics(self, args: QueryMetricsArgs) -> ToolOutput:
        if args.promql:
            message = "promql needs the prometheus backend; use service and metric"
            return ToolOutput(status="error", error=message, text=f"query_metrics error: {message}")
        try:
            start, end = self._window(args.start, args.end)
        except ValueError as exc:
            return ToolOutput(status="error", error=str(exc), text=f"query_metrics error: {exc}")
        if not args.service or not args.metric:
            available = ", ".join(f"{s}/{m}" for s, m, _u in self.metrics(args.service))
            message = f"query_metrics needs service and metric; available: {available}"
            return ToolOutput(status="error", error=message, text=message)
        series = [s for s in self.metrics(args.service) if s[1] == args.metric]
        if not series:
            known = self.metrics(args.service)
            what = (
                f"metrics of {args.service}: {', '.join(m for _s, m, _u in known)}"
                if known
                else f"services with metrics: {', '.join(sorted({s for s, _m, _u in self.metrics()}))}"
            )
            message = f"no metric {args.metric!r} for service {args.service!r}; {what}"
            return ToolOutput(status="no_data", text=message, retrieval_details={"known": [list(k) for k in known]})
        unit = series[0][2]
        length = end - start
        conn = self._connection()

        def points(a: datetime, b: datetime) -> list[tuple[datetime, float]]:
            rows = conn.execute(
                "SELECT ts, value FROM metric_point WHERE service=? AND metric=? AND ts >= ? AND ts < ? ORDER BY ts",
                (args.service, args.metric, _ms(a), _ms(b)),
            ).fetchall()
            return [(_from_ms(ts), value) for ts, value in rows]

        window = points(start, end)
        baseline = points(start - length, start)
        request = {"service": args.service, "metric": args.metric, "start": iso(start), "end": iso(end)}
        if not window:
            span = conn.execute(
                "SELECT MIN(ts), MAX(ts) FROM metric_point WHERE service=? AND metric=?",
                (args.service, args.metric),
            ).fetchone()
            covered = f"{iso(_from_ms(span[0]))} – {iso(_from_ms(span[1]))}" if span[0] is not None else "nothing"
            message = (
                f"no points of {args.service}/{args.metric} between {iso(start)} and {iso(end)} (data covers {covered})"
            )
            return ToolOutput(status="no_data", text=message, retrieval_details={"window": [iso(start), iso(end)]})
        step = max(1, args.step_seconds // 60)
        shown = window[::step] if step > 1 else window
        span = (start - length, start)
        text = render_metrics(request, unit, window=window, baseline=baseline, shown=shown[:240], baseline_span=span)
        model_text = render_metrics(
            request, unit, window=window, baseline=baseline, shown=shown[:60], baseline_span=span
        )
        values = [v for _t, v in window]
        details = {
            "backend": self.name,
            "unit": unit,
            "points": len(window),
            "window": [iso(start), iso(end)],
            "min": min(values),
            "max": max(values),
            "avg": round(statistics.fmean(values), 4),
            "last": values[-1],
            "peak_at": iso(max(window, key=lambda p: p[1])[0]),
            "baseline_avg": round(statistics.fmean(v for _t, v in baseline), 4) if baseline else None,
            "max_text": format_value(max(values), unit),
        }
        return ToolOutput(status="ok", text=text, model_text=model_text, retrieval_details=details)

    # -- lookup_knowledge ----------------------------------------------------------------

    def lookup_knowledge(self, args: LookupKnowledgeArgs) -> ToolOutput:
        hits = knowledge.search(self._connection(), args.query, service=args.service, limit=args.limit)
        if not hits:
            message = f"no runbook matches {args.query!r}" + (f" for {args.service}" if args.service else "")
            return ToolOutput(status="no_data", text=message, retrieval_details={"documents": []})
        text = render_knowledge(args.query, hits, full=True)
        model_text = render_knowledge(args.query, hits, full=False)
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
        return ToolOutput(status="ok", text=text, model_text=model_text, retrieval_details=details)
