"""What a submitter says about the model: organisation, open weights, parameters, a link, and
prices per million tokens (the board's cost column). Rows from before have none: empty text
and NULL, shown as a dash.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("organisation", sa.Text(), server_default="", nullable=False))
        batch_op.add_column(sa.Column("open_weights", sa.Boolean(), nullable=True))
        batch_op.add_column(sa.Column("parameters", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("link", sa.Text(), server_default="", nullable=False))
        batch_op.add_column(sa.Column("price_prompt", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("price_completion", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions", schema=None) as batch_op:
        for column in (
            "price_completion", "price_prompt", "link", "parameters", "open_weights",
            "organisation",
        ):  # fmt: skip
            batch_op.drop_column(column)
