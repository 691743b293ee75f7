"""Arena boards: submitted arena match records, each re-scored by replay before it is stored,
and the submissions that brought them.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "arena_submissions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=True),
        sa.Column("content_sha", sa.String(length=64), nullable=False),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["token_id"], ["tokens.id"], name=op.f("fk_arena_submissions_token_id_tokens")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_arena_submissions")),
        sa.UniqueConstraint("content_sha", name=op.f("uq_arena_submissions_content_sha")),
    )
    op.create_table(
        "arena_matches",
        sa.Column("submission_id", sa.String(length=36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("env_id", sa.String(length=200), nullable=False),
        sa.Column("match_id", sa.Text(), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["arena_submissions.id"],
            name=op.f("fk_arena_matches_submission_id_arena_submissions"),
        ),
        sa.PrimaryKeyConstraint("submission_id", "position", name=op.f("pk_arena_matches")),
    )
    op.create_index(op.f("ix_arena_matches_env_id"), "arena_matches", ["env_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_arena_matches_env_id"), table_name="arena_matches")
    op.drop_table("arena_matches")
    op.drop_table("arena_submissions")
