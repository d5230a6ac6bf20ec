"""session deliveries: each attempt to post a session to chat, on the session row

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-05

``veridiag ask --deliver`` and ``veridiag deliver`` post a finished session to Slack, Feishu,
DingTalk, WeCom or a JSON webhook; every HTTP attempt (delivered, retrying, failed) is
appended to ``deliveries``, a JSON list on the session itself (docs/spec §23: no new table
for sessions). A plain ``ADD COLUMN`` last in the row: no rebuild, and a listing never reads it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("diagnosis_session", sa.Column("deliveries", JSON))


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite ≥ 3.35): rebuilding the table would cascade into
    # ``tool_invocation`` wherever foreign keys are on.
    op.drop_column("diagnosis_session", "deliveries")
