"""index alert_job.session_id: a session page asks which alert job, if any, made the session

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03

Every workbench session page and audit looks the job up by its session (``for_session``);
without an index that read scans the whole queue, which grows with every alert ever received.
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_alert_job_session_id", "alert_job", ["session_id"])


def downgrade() -> None:
    op.drop_index("ix_alert_job_session_id", table_name="alert_job")
