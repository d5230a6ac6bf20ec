"""sessions at scale: (created_at, id) index for keyset pages, compact and compressed audits

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04

Listing newest first reads ``ix_diagnosis_session_created_at_id`` backwards instead of
sorting the table (``…_verdict_created_at_id`` when a verdict is asked for). New audits go to
``audit`` (compact JSON: references to the session's invocation text instead of copies) and,
once older, ``audit_zlib`` (the same, compressed); both columns are added last, so on SQLite
a listing does not walk past a large audit to reach its columns. Existing rows keep their
``self_evaluation`` as written and are read as before; the store's maintenance step
(``SessionStore.compress_older_audits``) moves them to ``audit_zlib``, finding them through
``ix_diagnosis_session_uncompressed_audit``. Plain ``ADD COLUMN``s and indexes: no table
rebuild, on SQLite or PostgreSQL.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
# A literal copy of the model's predicate: a migration states the schema of its own time.
UNCOMPRESSED_AUDIT = "audit IS NOT NULL OR self_evaluation IS NOT NULL"


def upgrade() -> None:
    op.add_column("diagnosis_session", sa.Column("audit", JSON))
    op.add_column("diagnosis_session", sa.Column("audit_zlib", sa.LargeBinary()))
    op.create_index("ix_diagnosis_session_created_at_id", "diagnosis_session", ["created_at", "id"])
    op.create_index("ix_diagnosis_session_verdict_created_at_id", "diagnosis_session", ["verdict", "created_at", "id"])
    op.create_index(
        "ix_diagnosis_session_uncompressed_audit",
        "diagnosis_session",
        ["created_at", "id"],
        sqlite_where=sa.text(UNCOMPRESSED_AUDIT),
        postgresql_where=sa.text(UNCOMPRESSED_AUDIT),
    )


def downgrade() -> None:
    """Back to full ``self_evaluation`` JSON: every compact or compressed audit is read back
    (references resolved against the session's invocations) before its columns go."""
    from veridiag.store.audit_storage import InvocationTexts, decompress, hydrate

    connection = op.get_bind()
    sessions = sa.table(
        "diagnosis_session",
        sa.column("id", sa.String()),
        sa.column("self_evaluation", JSON),
        sa.column("audit", JSON),
        sa.column("audit_zlib", sa.LargeBinary()),
    )
    invocations = sa.table(
        "tool_invocation",
        sa.column("id", sa.Integer()),
        sa.column("session_id", sa.String()),
        sa.column("output", sa.Text()),
        sa.column("output_preview", sa.Text()),
        sa.column("error", sa.Text()),
    )
    rows = connection.execute(
        sa.select(sessions.c.id, sessions.c.audit, sessions.c.audit_zlib).where(
            sessions.c.audit.is_not(None) | sessions.c.audit_zlib.is_not(None)
        )
    ).all()
    for row in rows:
        stored = decompress(row.audit_zlib) if row.audit_zlib is not None else row.audit
        texts = {
            found.id: InvocationTexts(found.output, found.output_preview, found.error)
            for found in connection.execute(sa.select(invocations).where(invocations.c.session_id == row.id))
        }
        connection.execute(
            sa.update(sessions).where(sessions.c.id == row.id).values(self_evaluation=hydrate(stored, texts))
        )
    op.drop_index("ix_diagnosis_session_uncompressed_audit", "diagnosis_session")
    op.drop_index("ix_diagnosis_session_verdict_created_at_id", "diagnosis_session")
    op.drop_index("ix_diagnosis_session_created_at_id", "diagnosis_session")
    # Plain DROP COLUMN (SQLite ≥ 3.35): a batch rebuild would drop the table, and with foreign
    # keys on that cascades into tool_invocation.
    op.drop_column("diagnosis_session", "audit_zlib")
    op.drop_column("diagnosis_session", "audit")
