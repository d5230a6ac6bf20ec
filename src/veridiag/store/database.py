"""Engines and migrations: SQLite by default, PostgreSQL by URL (psycopg 3)."""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import PydanticSerializationError, to_json
from sqlalchemy import Connection, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url

from veridiag._sqlite import use_wal

if TYPE_CHECKING:
    from alembic.config import Config

_MIGRATIONS = Path(__file__).with_name("migrations")
#: Alembic's table of the applied revision (its default name; ``env.py`` keeps it).
_VERSION_TABLE = "alembic_version"
_migrate_lock = threading.Lock()
#: The PostgreSQL advisory lock a migration holds ("veridiag" in ASCII): processes that start
#: together on a new database migrate one after another, not into each other's tables.
_PG_MIGRATION_LOCK = 0x7665726964696167


class StoreError(RuntimeError):
    """The store cannot be used (bad URL, unreachable server, failed migration)."""


def database_hint(message: str) -> str:
    """What a SQLite message most likely means for the person reading it ('' when unsure)."""
    lowered = message.lower()
    if "readonly" in lowered or "read-only" in lowered:
        return " (the file or its directory is read-only)"
    if "not a database" in lowered or "malformed" in lowered:
        return " (the file is damaged or is not a veridiag database)"
    if "unable to open database file" in lowered:
        return " (the file or its directory is missing, unreadable or read-only)"
    return ""


def normalise_url(url: str) -> str:
    """``postgresql://`` means psycopg 3 here; everything else is passed through."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    use_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


#: JSON columns keep non-ASCII text as UTF-8, not ``\uXXXX`` escapes (a Chinese audit is half
#: the size); what is read back is the same. What is stored is JSON a model dumped or a decoded
#: document, never cyclic: the encoder skips its cycle check (the same text, ~10 % less time for a
#: session's ~85 KB audit, measured).
_json_text_py = partial(json.dumps, ensure_ascii=False, check_circular=False)


def _json_text(value: object) -> str:
    """``value`` as compact JSON, written by pydantic-core's encoder: a session's ~85 KB audit in
    ~0.2 ms instead of the ``json`` module's ~0.6 ms (measured), and without the blanks after
    separators. What ``json.loads`` reads back is what ``_json_text_py`` wrote for the same JSON
    value (NaN and the infinities too; a float may be spelt otherwise, "0.00001" for "1e-05", the
    same number); ``tests/test_cost_equivalents.py`` holds the two to it. A value that encoder
    refuses (a lone surrogate) goes to ``_json_text_py``, as before."""
    try:
        return to_json(value, inf_nan_mode="constants").decode("utf-8")
    except PydanticSerializationError:
        return _json_text_py(value)


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise StoreError(f"invalid database URL {url!r}: {exc}") from None
    if parsed.get_backend_name() == "sqlite":
        # A ``file:`` URI (``?uri=true``, e.g. ``mode=ro``) names an existing file through
        # SQLite itself: making "its parent" would create a ``file:`` directory in the cwd.
        uri = parsed.query.get("uri") == "true"
        if parsed.database and parsed.database != ":memory:" and not uri:
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"timeout": 30, "check_same_thread": False}, json_serializer=_json_text
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, json_serializer=_json_text)


def _alembic_config(engine: Engine) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    # The option goes through configparser interpolation: a % (an encoded password character,
    # ``options=-csearch_path%3D…``) must be doubled or the migration cannot even start.
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    return config


@cache
def head_revision() -> str | None:
    """The newest migration: the one no other names as its ``down_revision``.

    Read from the scripts' source rather than with alembic's ``ScriptDirectory``: every start
    that opens the store asks, and importing alembic and each migration costs ~150 ms that only
    a store needing an upgrade should pay. ``tests/test_store.py`` holds it to alembic's answer.
    """
    parents: dict[str, str | None] = {}
    for script in (_MIGRATIONS / "versions").glob("*.py"):
        names = {
            target.id: node.value
            for node in ast.parse(script.read_text(encoding="utf-8")).body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        if "revision" in names:
            parent = names.get("down_revision")
            parents[ast.literal_eval(names["revision"])] = None if parent is None else ast.literal_eval(parent)
    heads = set(parents) - set(parents.values())
    if len(heads) > 1:
        raise StoreError(f"the migrations have {len(heads)} heads ({', '.join(sorted(heads))}); merge them")
    return heads.pop() if heads else None


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None: never migrated), read with one query."""
    with engine.connect() as connection:
        return _revision(connection)


def _revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table(_VERSION_TABLE):
        return None
    revisions = list(connection.execute(text(f"SELECT version_num FROM {_VERSION_TABLE}")).scalars())
    if len(revisions) > 1:
        raise StoreError(f"the store records {len(revisions)} schema revisions ({', '.join(revisions)}); expected one")
    return revisions[0] if revisions else None


@contextmanager
def _only_migrator(engine: Engine) -> Iterator[None]:
    """Held while this process migrates a SQLite file: another process starting on the same file
    waits here, then finds the schema done. A lock file beside the database, never the database
    file itself — closing any descriptor of that file would drop SQLite's own locks in this
    process. (PostgreSQL takes an advisory lock inside the migration's transaction instead.)"""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:" or database.startswith("file:"):
        yield
        return
    try:
        import fcntl
    except ImportError:  # Windows: no flock; one process per store file there
        yield
        return
    with open(f"{Path(database).expanduser()}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def upgrade(engine: Engine) -> tuple[str | None, str | None]:
    """Migrate to the latest schema; returns (before, after) revisions. Safe when several
    processes start at once on one store: one migrates, the others wait for it and find the
    schema at head (a PostgreSQL advisory lock, a lock file beside a SQLite database)."""
    with _migrate_lock:
        before = current_revision(engine)
        if before == head_revision():
            return before, before
        with _only_migrator(engine), engine.connect() as connection:
            sqlite = connection.dialect.name == "sqlite"
            if sqlite:
                # SQLite changes a constraint by rebuilding the table, dropping the old one;
                # with foreign keys on, that drop would delete every invocation (ON DELETE
                # CASCADE). The pragma only works outside a transaction, hence here.
                connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
                connection.commit()
            try:
                with connection.begin():
                    if connection.dialect.name == "postgresql":  # released with the transaction
                        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK})
                    before = _revision(connection)  # another process may have migrated meanwhile
                    if before != head_revision():
                        _run_migrations(engine, connection)
            finally:
                if sqlite:
                    connection.exec_driver_sql("PRAGMA foreign_keys=ON")
                    connection.commit()
        return before, current_revision(engine)


def _run_migrations(engine: Engine, connection: Connection) -> None:
    from alembic import command  # only an upgrade pays for importing alembic

    config = _alembic_config(engine)
    config.attributes["connection"] = connection
    command.upgrade(config, "head")
    if connection.dialect.name == "sqlite" and connection.exec_driver_sql("PRAGMA foreign_key_check").first():
        raise StoreError("migration left invocations without their session")
