"""session progress and the owner's pid space: what several processes on one store need

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03

``progress``: each stage event a diagnosis emits (what ``POST /api/v1/chat/stream`` sends),
appended as it happens, so any process on the store can stream a session another one runs
(``GET /api/v1/sessions/{id}/events``). ``owner_space``: the owner's pid space (kernel boot id
and pid namespace, ``store/owner.py``): a process judges the owner's pid only where that pid
means the same process — not in a container on another machine that shares its host name.
Plain ``ADD COLUMN``s last in the row (docs/spec §23: no new table for sessions); a listing
reads neither JSON column.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("diagnosis_session", sa.Column("progress", JSON))
    op.add_column("diagnosis_session", sa.Column("owner_space", sa.String(100)))


def downgrade() -> None:
    # Plain DROP COLUMNs (SQLite ≥ 3.35): rebuilding the table would cascade into
    # ``tool_invocation`` wherever foreign keys are on.
    op.drop_column("diagnosis_session", "owner_space")
    op.drop_column("diagnosis_session", "progress")
