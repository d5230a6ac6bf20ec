"""A PostgreSQL database of a test process's own, and a schema of a test's own in it: an empty
database as a new deployment meets it."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import create_engine, make_url, text

from veridiag.store.database import make_engine, normalise_url


def worker() -> str:
    """This test process's name: xdist's worker id (gw0, gw1, …), ``main`` when run alone."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


@contextmanager
def own_database(url: str, suffix: str) -> Iterator[str]:
    """``url``'s database with ``_suffix`` appended, created empty (dropped first if an
    interrupted run left it) and dropped afterwards; made through ``url``'s own database."""
    parsed = make_url(url)
    name = f"{parsed.database}_{suffix}"
    admin = create_engine(normalise_url(url), isolation_level="AUTOCOMMIT")
    drop = text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    try:
        with admin.connect() as connection:
            connection.execute(drop)
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield parsed.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(drop)
        admin.dispose()


@contextmanager
def own_schema(url: str) -> Iterator[str]:
    """``url`` with its search path set to a new, empty schema, dropped afterwards."""
    schema = "t_" + secrets.token_hex(4)
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in url else "?"
    try:
        yield f"{url}{separator}options=-csearch_path%3D{schema}"
    finally:
        with engine.begin() as connection:
            connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        engine.dispose()
