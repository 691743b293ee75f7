"""What an attacker writes in every free-text field a board stores and shows: script, an
attribute break-out and SQL. The leaderboard's tests store it, serve it and look for it
literally on the pages (``method`` and ``code_hash`` are checked values, so they stay plain)."""

from __future__ import annotations

from agentgym.leaderboard.submission import SubmissionInfo

SCRIPT = "<script>window.__pwned = 1; alert(1)</script>"
ATTRIBUTE = '"><img src=x onerror="window.__pwned = 2; alert(2)">'
SQL = "'); DROP TABLE submissions; --"
HOSTILE = SubmissionInfo(
    agent=f"{SCRIPT}{SQL}",
    model=ATTRIBUTE,
    model_revision=f"{SQL}{ATTRIBUTE}",
    method="custom",
    contact=f"{SCRIPT} x@example.org",
    notes=f"{SCRIPT}\n{ATTRIBUTE}\n{SQL}",
)
SHOWN_FIELDS = ("agent", "model", "model_revision", "notes")
"""The fields the pages show (``contact`` is never shown)."""
