"""alert intake queue: alert_job (queued diagnoses under a lease) and alert (each alert received)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05

Two new tables, nothing existing changes. ``alert_job`` is the queue ``veridiag worker`` (and
``serve``'s in-process worker) claims from: ``(status, next_run_at)`` finds the due jobs and
the running ones whose lease ran out. ``alert`` records every alert received, unique by
``(source, fingerprint, starts_at)`` — a repeated delivery is the same row, never a second
diagnosis — and points to the job that diagnoses it (none for a resolved alert).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
# Literal copies of the models' rules: a migration states the schema of its own time.
JOB_STATUS_CHECK = "status IN ('queued', 'running', 'done', 'failed')"
ALERT_STATUS_CHECK = "status IN ('firing', 'resolved')"


def upgrade() -> None:
    op.create_table(
        "alert_job",
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("service", sa.String(255), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("lang", sa.String(8), nullable=False),
        sa.Column("given_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("given_source", sa.String(255), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_owner", sa.String(255)),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True)),
        sa.Column("session_id", sa.String(40)),
        sa.Column("progress", sa.String(32)),
        sa.Column("error", sa.Text()),
        sa.CheckConstraint(JOB_STATUS_CHECK, name="ck_alert_job_status"),
    )
    op.create_index("ix_alert_job_status_next_run_at", "alert_job", ["status", "next_run_at"])
    op.create_table(
        "alert",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("fingerprint", sa.String(200), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("alertname", sa.String(500), nullable=False),
        sa.Column("service", sa.String(255), nullable=False),
        sa.Column("labels", JSON, nullable=False),
        sa.Column("annotations", JSON, nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True)),
        sa.Column("job_id", sa.String(40), sa.ForeignKey("alert_job.id", ondelete="SET NULL")),
        sa.CheckConstraint(ALERT_STATUS_CHECK, name="ck_alert_status"),
        sa.UniqueConstraint("source", "fingerprint", "starts_at", name="uq_alert_source_fingerprint_starts_at"),
    )
    op.create_index("ix_alert_job_id", "alert", ["job_id"])


def downgrade() -> None:
    op.drop_index("ix_alert_job_id", table_name="alert")
    op.drop_table("alert")
    op.drop_index("ix_alert_job_status_next_run_at", table_name="alert_job")
    op.drop_table("alert_job")
