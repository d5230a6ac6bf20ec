"""diagnosis_session.source, answer_line, service: what the session list shows of each session

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

The list of sessions (workbench, ``GET /api/v1/sessions``, ``veridiag sessions``) shows, beside
the question, where the session came from (``source``: cli, api, web, alert, mcp, eval, bench),
the line of the answer that answers it (``answer_line``: the first after the scope) and the
service that line is about (``service``). Written with the answer, read without decoding the
audit. Plain nullable ``ADD COLUMN``s: sessions stored before have none, and the list shows
their question alone, as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("diagnosis_session", sa.Column("source", sa.String(16)))
    op.add_column("diagnosis_session", sa.Column("answer_line", sa.Text))
    op.add_column("diagnosis_session", sa.Column("service", sa.String(255)))


def downgrade() -> None:
    # Plain DROP COLUMNs (SQLite ≥ 3.35), as 0007's.
    for column in ("service", "answer_line", "source"):
        op.drop_column("diagnosis_session", column)
