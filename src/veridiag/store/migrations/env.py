"""Alembic environment: run programmatically by ``veridiag.store.migrate`` (no alembic.ini)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from veridiag.store.models import schema_metadata

config = context.config
target_metadata = schema_metadata()


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run()
