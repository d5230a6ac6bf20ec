"""revoked_browser_session: workbench sign-outs every server on the store refuses

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04

A browser session is a signed cookie any server sharing the session secret accepts; signing
out must stop a copy of it on all of them and after a restart, so the revoked session ids live
here, each with the moment its cookie would have expired anyway (``expires_at``): a server
looks a cookie's id up by the primary key, and rows past ``expires_at`` are deleted by the
next sign-out (indexed, never a scan).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "revoked_browser_session",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_revoked_browser_session_expires_at", "revoked_browser_session", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_revoked_browser_session_expires_at", table_name="revoked_browser_session")
    op.drop_table("revoked_browser_session")
