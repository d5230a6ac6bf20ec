"""diagnosis_session and tool_invocation

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "diagnosis_session",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("lang", sa.String(8)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("plan", JSON),
        sa.Column("verdict", sa.String(16)),
        sa.Column("final_answer", sa.Text()),
        sa.Column("self_evaluation", JSON),
        sa.Column("rounds", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("llm_usage", JSON),
        sa.Column("error", sa.Text()),
    )
    op.create_index("ix_diagnosis_session_status", "diagnosis_session", ["status"])
    op.create_index("ix_diagnosis_session_verdict", "diagnosis_session", ["verdict"])
    op.create_table(
        "tool_invocation",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "session_id",
            sa.String(40),
            sa.ForeignKey("diagnosis_session.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("round", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("tool_name", sa.String(64), nullable=False),
        sa.Column("arguments", JSON, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("output_truncated", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("output_preview", sa.Text(), nullable=False),
        sa.Column("retrieval_details", JSON),
        sa.Column("error", sa.Text()),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
    )
    op.create_index("ix_tool_invocation_session_round", "tool_invocation", ["session_id", "round"])


def downgrade() -> None:
    op.drop_index("ix_tool_invocation_session_round", "tool_invocation")
    op.drop_table("tool_invocation")
    op.drop_index("ix_diagnosis_session_verdict", "diagnosis_session")
    op.drop_index("ix_diagnosis_session_status", "diagnosis_session")
    op.drop_table("diagnosis_session")
