"""An entry's episodes as files to download: JSON and CSV, one row per episode, as the board
counts it. The server serves them (``/s/ID/episodes.json``, ``/s/ID/episodes.csv``) and the
static export writes them beside each entry's page, so a reader can redo any number of the
board in a notebook without the API.

A row is the board's count, not the submitter's claim: an episode that did not run to a
scored end (errored, missing, not replaying) has ``passed`` false and ``score`` 0. A
submission never checked has its episodes as recorded, with ``passed`` and ``score`` empty.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from .results import ScoredEpisode

__all__ = ["COLUMNS", "episode_rows", "episodes_csv", "episodes_json"]

COLUMNS = (
    "episode_id", "env_id", "task_id", "repeat", "outcome", "passed", "score",
    "prompt_tokens", "completion_tokens",
)  # fmt: skip
"""The columns of both files, in order."""


def episode_rows(episodes: Sequence[ScoredEpisode], *, checked: bool) -> list[dict[str, Any]]:
    """One dict per episode with :data:`COLUMNS`; ``checked``: whether a re-score counted
    them (else ``passed`` and ``score`` are None: nobody has judged them)."""
    rows = []
    for e in episodes:
        counted = checked and e.counted
        rows.append(
            {
                "episode_id": e.episode_id,
                "env_id": e.env_id,
                "task_id": e.task_id,
                "repeat": e.repeat,
                "outcome": e.outcome if checked else "not checked",
                "passed": (counted and e.passed) if checked else None,
                "score": (e.score if counted else 0.0) if checked else None,
                "prompt_tokens": e.prompt_tokens,
                "completion_tokens": e.completion_tokens,
            }
        )
    return rows


def episodes_json(submission_id: str, episodes: Sequence[ScoredEpisode], *, checked: bool) -> str:
    """The JSON file: the submission, whether it was checked, the columns and the rows."""
    data = {
        "submission": submission_id,
        "checked": checked,
        "columns": list(COLUMNS),
        "episodes": episode_rows(episodes, checked=checked),
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def episodes_csv(episodes: Sequence[ScoredEpisode], *, checked: bool) -> str:
    """The CSV file: a header of :data:`COLUMNS`, then a row per episode (``passed`` as
    ``true``/``false``, empty where not checked)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in episode_rows(episodes, checked=checked):
        writer.writerow([_cell(row[column]) for column in COLUMNS])
    return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
