"""The store's first schema: tokens, blobs, benchmarks, submissions, re-scores with their
episodes, and the audit log.

Revision ID: 0001
Revises:
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tokens")),
        sa.UniqueConstraint("name", name=op.f("uq_tokens_name")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_tokens_token_sha256")),
    )
    op.create_table(
        "blobs",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_blobs")),
    )
    op.create_table(
        "benchmarks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("spec_hash", sa.String(length=64), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_benchmarks")),
        sa.UniqueConstraint("name", "version", name=op.f("uq_benchmarks_name_version")),
        sa.UniqueConstraint("spec_hash", name=op.f("uq_benchmarks_spec_hash")),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("benchmark_id", sa.Integer(), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=True),
        sa.Column("bundle_sha", sa.String(length=64), nullable=False),
        sa.Column("agent", sa.Text(), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("model_revision", sa.Text(), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("code_hash", sa.Text(), nullable=False),
        sa.Column("contact", sa.Text(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reject_reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('received', 'checking', 'rejected', 'scored')",
            name=op.f("ck_submissions_status"),
        ),
        sa.ForeignKeyConstraint(
            ["benchmark_id"], ["benchmarks.id"], name=op.f("fk_submissions_benchmark_id_benchmarks")
        ),
        sa.ForeignKeyConstraint(
            ["bundle_sha"], ["blobs.sha256"], name=op.f("fk_submissions_bundle_sha_blobs")
        ),
        sa.ForeignKeyConstraint(
            ["token_id"], ["tokens.id"], name=op.f("fk_submissions_token_id_tokens")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_submissions")),
        sa.UniqueConstraint(
            "benchmark_id", "bundle_sha", name=op.f("uq_submissions_benchmark_id_bundle_sha")
        ),
    )
    op.create_index(
        op.f("ix_submissions_token_id_created_at"), "submissions", ["token_id", "created_at"]
    )
    op.create_table(
        "rescores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.String(length=36), nullable=False),
        sa.Column("benchmark", sa.String(length=200), nullable=False),
        sa.Column("benchmark_version", sa.Integer(), nullable=False),
        sa.Column("benchmark_hash", sa.String(length=64), nullable=False),
        sa.Column("scorer_version", sa.String(length=200), nullable=False),
        sa.Column("tier", sa.String(length=16), nullable=False),
        sa.Column("flags", sa.JSON(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("computed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("episodes", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Integer(), nullable=False),
        sa.Column("errored", sa.Integer(), nullable=False),
        sa.Column("missing", sa.Integer(), nullable=False),
        sa.Column("mismatched", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "tier IN ('self-reported', 're-scored', 'verified')", name=op.f("ck_rescores_tier")
        ),
        sa.ForeignKeyConstraint(
            ["submission_id"],
            ["submissions.id"],
            name=op.f("fk_rescores_submission_id_submissions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rescores")),
    )
    op.create_index(op.f("ix_rescores_submission_id_id"), "rescores", ["submission_id", "id"])
    op.create_table(
        "rescore_episodes",
        sa.Column("rescore_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("episode_id", sa.Text(), nullable=False),
        sa.Column("env_id", sa.Text(), nullable=False),
        sa.Column("task_id", sa.Text(), nullable=False),
        sa.Column("repeat", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("claimed_score", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("steps", sa.Integer(), nullable=False),
        sa.Column("prompt_tokens", sa.BigInteger(), nullable=False),
        sa.Column("completion_tokens", sa.BigInteger(), nullable=False),
        sa.Column("oracle_like", sa.Boolean(), nullable=False),
        sa.CheckConstraint(
            "outcome IN ('ok', 'truncated', 'errored', 'missing', 'mismatch')",
            name=op.f("ck_rescore_episodes_outcome"),
        ),
        sa.ForeignKeyConstraint(
            ["rescore_id"], ["rescores.id"], name=op.f("fk_rescore_episodes_rescore_id_rescores")
        ),
        sa.PrimaryKeyConstraint("rescore_id", "position", name=op.f("pk_rescore_episodes")),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=50), nullable=False),
        sa.Column("target", sa.Text(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )


def downgrade() -> None:
    op.drop_table("audit_log")
    op.drop_table("rescore_episodes")
    op.drop_index(op.f("ix_rescores_submission_id_id"), table_name="rescores")
    op.drop_table("rescores")
    op.drop_index(op.f("ix_submissions_token_id_created_at"), table_name="submissions")
    op.drop_table("submissions")
    op.drop_table("benchmarks")
    op.drop_table("blobs")
    op.drop_table("tokens")
