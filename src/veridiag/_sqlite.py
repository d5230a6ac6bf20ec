"""Opening a SQLite file the same way everywhere (the session store, the embedded data file)."""

from __future__ import annotations

from typing import Any

from veridiag._retry import Backoff

#: Switching a new file to WAL needs it alone, and SQLite answers "database is locked" at once,
#: without its busy handler, to processes opening it together (3 failures in 15 runs of 8
#: processes, measured): retried for a few seconds.
_WAL_SWITCH = Backoff(attempts=10, first_wait=0.05, max_wait=1.0)


def _locked(error: BaseException) -> bool:
    return "database is locked" in str(error)


def use_wal(connection: Any) -> None:
    """WAL (readers beside the single writer) and a 30 s busy timeout (writers queue instead of
    failing) on a DB-API SQLite connection; the journal mode is switched only when it is not
    WAL yet, with retries."""
    connection.execute("PRAGMA busy_timeout=30000")
    if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        for attempt in _WAL_SWITCH.retrying(_locked):
            with attempt:
                connection.execute("PRAGMA journal_mode=WAL")
