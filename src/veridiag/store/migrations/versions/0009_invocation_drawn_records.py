"""tool_invocation.drawn: the typed evidence a tool produced, kept to be drawn, never grounded

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-06

The points, episodes, log line times and changes a tool produced, as ``tools/drawn.py``'s
``Drawn`` dumped them (a versioned JSON document), beside the rendered output: the incident
timeline and the evidence charts read them instead of re-reading the output text. The output
stays what claims quote and the Gatekeeper grounds against; nothing grounds a fact in ``drawn``.
A plain nullable ``ADD COLUMN`` last in the row: invocations stored before it have none (SQL
NULL), and their pages read the text as before.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("tool_invocation", sa.Column("drawn", JSON))


def downgrade() -> None:
    # A plain DROP COLUMN (SQLite ≥ 3.35), as 0007's.
    op.drop_column("tool_invocation", "drawn")
