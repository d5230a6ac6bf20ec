"""Signed-out browser sessions in the store (``store/revocations.py``, migration 0008): what one
server records, another on the same database reads; expired rows go at the next sign-out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from sqlalchemy import func, select

from veridiag.store import SessionStore
from veridiag.store.models import REVOKED_BROWSER_SESSIONS
from veridiag.store.revocations import RevokedSessions


def _rows(store: SessionStore) -> dict[str, datetime]:
    with store.engine.connect() as connection:
        rows = connection.execute(select(REVOKED_BROWSER_SESSIONS)).all()
    return {row.id: row.expires_at.replace(tzinfo=UTC) for row in rows}


def test_a_revocation_is_read_by_another_store_on_the_database(empty_url: str) -> None:
    here, there = SessionStore(empty_url), SessionStore(empty_url)
    revoked = RevokedSessions(here.engine)
    until = datetime.now(UTC) + timedelta(hours=1)
    assert not RevokedSessions(there.engine).is_revoked("sid-a")
    revoked.add("sid-a", until)
    assert revoked.is_revoked("sid-a") and RevokedSessions(there.engine).is_revoked("sid-a")
    assert not RevokedSessions(there.engine).is_revoked("sid-b")
    # A second sign-out of the same session (two servers at once) keeps one row, still revoked.
    RevokedSessions(there.engine).add("sid-a", until)
    assert list(_rows(here)) == ["sid-a"]
    here.close()
    reopened = SessionStore(empty_url)  # a restart reads what was stored
    assert RevokedSessions(reopened.engine).is_revoked("sid-a")
    for store in (there, reopened):
        store.close()


def test_expired_revocations_are_purged_at_the_next_sign_out(empty_url: str) -> None:
    store = SessionStore(empty_url)
    revoked = RevokedSessions(store.engine)
    now = datetime.now(UTC)
    revoked.add("old", now - timedelta(seconds=1))
    assert set(_rows(store)) == {"old"} and revoked.is_revoked("old")
    # Stored in UTC whatever zone the caller used: an offset must not move the expiry.
    revoked.add("zoned", (now + timedelta(hours=2)).astimezone(timezone(timedelta(hours=8))))
    assert set(_rows(store)) == {"zoned"}, "the expired row goes with the next sign-out"
    revoked.add("new", now + timedelta(hours=1))
    rows = _rows(store)
    assert set(rows) == {"zoned", "new"}
    assert abs(rows["zoned"] - (now + timedelta(hours=2))) < timedelta(seconds=1)
    assert revoked.purge(now + timedelta(hours=1, minutes=30)) == 1
    assert set(_rows(store)) == {"zoned"}
    assert revoked.purge(now + timedelta(hours=3)) == 1 and not _rows(store)
    assert revoked.purge() == 0
    store.close()


def test_the_lookup_is_by_primary_key(empty_url: str) -> None:
    """The per-request check reads one row by its key: the table's primary key is the id."""
    store = SessionStore(empty_url)
    assert [c.name for c in REVOKED_BROWSER_SESSIONS.primary_key.columns] == ["id"]
    with store.engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(REVOKED_BROWSER_SESSIONS)).scalar() == 0
        if store.engine.dialect.name == "sqlite":
            plan = connection.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT id FROM revoked_browser_session WHERE id = 'x'"
            ).all()
            assert "USING" in str(plan) and "INDEX" in str(plan), plan  # never a SCAN
    store.close()
