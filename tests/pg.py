"""A PostgreSQL schema of a test's own: an empty database as a new deployment meets it."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import text

from veridiag.store.database import make_engine


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
