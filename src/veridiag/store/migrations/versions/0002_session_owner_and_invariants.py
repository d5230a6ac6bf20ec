"""session owner (pid, host, start time), status interrupted, no verdict without an answer

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03

Before this revision the verdict was written after each round and the answer at the end, so
a process that died in between left a verdict with no answer. Those verdicts judged nothing
the user saw and are cleared (the rounds of a failed session keep theirs in
``self_evaluation.partial``); then the schema refuses a verdict without an answer. On SQLite
the constraints rebuild the table: ``store.database.upgrade`` turns foreign keys off around
it so the rebuild does not cascade into ``tool_invocation``.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

# Literal copies of the models' rules: a migration states the schema of its own time.
STATUS_CHECK = "status IN ('running', 'completed', 'failed', 'interrupted')"
VERDICT_CHECK = "verdict IS NULL OR (final_answer IS NOT NULL AND final_answer <> '')"


def upgrade() -> None:
    op.execute(
        "UPDATE diagnosis_session SET verdict = NULL"
        " WHERE verdict IS NOT NULL AND (final_answer IS NULL OR final_answer = '')"
    )
    with op.batch_alter_table("diagnosis_session") as batch:
        batch.add_column(sa.Column("owner_pid", sa.Integer()))
        batch.add_column(sa.Column("owner_host", sa.String(255)))
        batch.add_column(sa.Column("owner_started_at", sa.DateTime(timezone=True)))
        batch.create_check_constraint("ck_diagnosis_session_status", sa.text(STATUS_CHECK))
        batch.create_check_constraint("ck_diagnosis_session_verdict_needs_answer", sa.text(VERDICT_CHECK))


def downgrade() -> None:
    op.execute("UPDATE diagnosis_session SET status = 'failed' WHERE status = 'interrupted'")
    with op.batch_alter_table("diagnosis_session") as batch:
        batch.drop_constraint("ck_diagnosis_session_verdict_needs_answer", type_="check")
        batch.drop_constraint("ck_diagnosis_session_status", type_="check")
        batch.drop_column("owner_started_at")
        batch.drop_column("owner_host")
        batch.drop_column("owner_pid")
