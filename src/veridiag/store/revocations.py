"""Signed-out workbench sessions, in the store every server shares (migration 0008).

A browser session is a signed cookie (``api/security.py``) that any server holding the session
secret accepts until it expires. Signing out records the session's id here, with the moment the
cookie would have expired anyway, so a copy of the cookie is refused by every server on the
store at once and after any restart — a revocation held in one process's memory was neither.

The check runs on every cookie-authenticated request: one primary-key lookup, by a statement
built once. Nothing grows without bound: each sign-out deletes, in its own transaction, the
rows already past their expiry (an indexed range), so the table holds at most the sign-outs of
one cookie lifetime (12 h).
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, Engine, bindparam, delete, insert, or_, select
from sqlalchemy.exc import IntegrityError

from veridiag.store.models import REVOKED_BROWSER_SESSIONS as REVOKED

#: Built once: the per-request lookup pays for neither statement construction nor its cache key.
_LOOKUP = select(REVOKED.c.id).where(REVOKED.c.id == bindparam("sid"))


def _now() -> datetime:
    return datetime.now(UTC)


class RevokedSessions:
    """The ``revoked_browser_session`` table on the store's engine (SQLite or PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, session_id: str, expires_at: datetime) -> None:
        """Records a sign-out until ``expires_at`` and purges the expired rows, in one transaction.
        Signing out one session twice at once (two servers) leaves one row: the second insert
        meets the first's key and there is nothing more to record."""
        now = _now()
        try:
            with self.engine.begin() as connection:
                self._purge(connection, now, also=session_id)
                connection.execute(insert(REVOKED).values(id=session_id, expires_at=expires_at.astimezone(UTC)))
        except IntegrityError:
            if not self.is_revoked(session_id):
                raise

    def is_revoked(self, session_id: str) -> bool:
        """Whether ``session_id`` was signed out (one primary-key lookup). A store error is
        raised, never read as "not revoked": the caller refuses the cookie."""
        with self.engine.connect() as connection:
            return connection.execute(_LOOKUP, {"sid": session_id}).first() is not None

    def purge(self, now: datetime | None = None) -> int:
        """Deletes the sign-outs whose cookies have expired by ``now``; returns how many."""
        with self.engine.begin() as connection:
            return self._purge(connection, now or _now())

    @staticmethod
    def _purge(connection: Connection, now: datetime, also: str | None = None) -> int:
        expired = REVOKED.c.expires_at <= now.astimezone(UTC)
        condition = expired if also is None else or_(expired, REVOKED.c.id == also)
        return connection.execute(delete(REVOKED).where(condition)).rowcount
