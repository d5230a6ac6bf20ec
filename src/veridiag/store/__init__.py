"""Durable sessions and tool invocations (SQLAlchemy 2 + Alembic; SQLite or PostgreSQL)."""

from veridiag.store.database import StoreError, upgrade
from veridiag.store.repository import (
    MAX_STORED_OUTPUT,
    PREVIEW_CHARS,
    ProgressItem,
    SessionStore,
    new_session_id,
    open_store,
    session_cursor,
)

__all__ = [
    "MAX_STORED_OUTPUT",
    "PREVIEW_CHARS",
    "ProgressItem",
    "SessionStore",
    "StoreError",
    "new_session_id",
    "open_store",
    "session_cursor",
    "upgrade",
]
