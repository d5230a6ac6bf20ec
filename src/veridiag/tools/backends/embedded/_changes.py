"""``query_changes`` over the embedded file: deploys, config changes, restarts, scaling.

Changes come only from structured sources (``veridiag data import-changes``, records a log
format marks as changes, the demo's change list) — never from a log line that merely
contains a word like "config" or "release", which anyone who can write a log line controls.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from veridiag.text.render import iso
from veridiag.tools.args import QueryChangesArgs
from veridiag.tools.backends.embedded._ingest import ms
from veridiag.tools.backends.embedded._logs import from_ms
from veridiag.tools.records import ChangeRecord
from veridiag.tools.render import change_line, changes_output
from veridiag.tools.results import ToolOutput

#: Changes listed per call (newest kept when there are more).
LIMIT = 50


def query_changes(conn: sqlite3.Connection, args: QueryChangesArgs, start: datetime, end: datetime) -> ToolOutput:
    clauses = ["ts >= ?", "ts < ?"]
    params: list[int | str] = [ms(start), ms(end)]
    if args.service:
        clauses.append("service = ?")
        params.append(args.service)
    if args.kind:
        clauses.append("kind = ?")
        params.append(args.kind)
    rows = conn.execute(
        f"SELECT ts, service, kind, description, version, source FROM change_event WHERE {' AND '.join(clauses)} "
        f"ORDER BY ts DESC, id DESC LIMIT {LIMIT}",
        params,
    ).fetchall()
    changes = [
        ChangeRecord(
            ts=from_ms(ts),
            service=service,
            kind=kind,
            description=description,
            version=version,
            source=source,
            line=change_line(from_ms(ts), service, kind, description, version),
        )
        for ts, service, kind, description, version, source in reversed(rows)
    ]
    request = {"service": args.service, "kind": args.kind, "start": iso(start), "end": iso(end)}
    feed_empty = not changes and conn.execute("SELECT 1 FROM change_event LIMIT 1").fetchone() is None
    rendered, evidence = changes_output(request, changes, feed_empty=feed_empty)
    details = {"backend": "embedded", "changes": len(changes), "window": [iso(start), iso(end)]}
    status = "ok" if changes else "no_data"
    return ToolOutput(status=status, text=rendered.text, retrieval_details=details, evidence=[evidence])
