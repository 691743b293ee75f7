"""Duplicates: a submission whose episodes are an earlier entry's, sent again under a name.

A bundle re-packed under a second agent name has another sha, so it is another submission,
but it is the same evidence. Ranking both counts that evidence twice: a tie group grows by a
copy, and the row between them reads "not separable" against itself. So the later one is
flagged ``duplicate of ID`` (:attr:`.Rescore.duplicate_of`), and the board lists it under the
ranked rows, unranked. Its entry page says whose episodes they are.

The :func:`fingerprint` covers what the replay judges and what the agent wrote. Per episode
that is the plan's id, the recorded status, every action, the agent's own text where the
record keeps it (step info ``agent_text``) and the user's turns. It leaves out the timings,
the token ids and usage, and the submission's description. A copy cannot escape by editing
those, and two models whose extracted answers agree on every one-reply task still differ in
what they wrote. Agents that record no text of their own (the oracle, a script) are
duplicates when their actions are the same in every episode: a board cannot tell them apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from agentgym.ledger import EpisodeRecord, jsonable

from .bundle import Bundle, BundleLimits, BundleRejected, read_bundle
from .results import DUPLICATE_FLAG, TIERS, Rescore
from .store import Store, SubmissionRecord

__all__ = [
    "duplicate_flag",
    "earlier_twin",
    "fingerprint",
    "split_duplicates",
]


def fingerprint(records: Iterable[EpisodeRecord]) -> str:
    """The sha256 of an episode set: per episode (in id order) its id, status, actions, the
    agent's own text and the user's turns, as canonical JSON."""
    episodes = sorted(
        (
            record.episode_id,
            record.status,
            [step.action for step in record.steps],
            [_agent_text(step.info) for step in record.steps],
            [(turn.after_step, turn.text) for turn in record.user_turns],
        )
        for record in records
    )
    text = json.dumps(jsonable(episodes), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _agent_text(info: Any) -> Any:
    return info.get("agent_text") if isinstance(info, dict) else None


def earlier_twin(
    store: Store, submission: SubmissionRecord, bundle: Bundle, limits: BundleLimits
) -> SubmissionRecord | None:
    """The first scored submission of the same benchmark version, sent before ``submission``,
    whose bundle has ``bundle``'s :func:`fingerprint` (None: there is none).

    Only the submissions whose latest check has the same episode ids and step counts (read
    from the records, as the fingerprint is) have their bundles read: equal fingerprints
    imply equal counts, and on a board most entries differ there.
    """
    shape = {(r.episode_id, len(r.steps)) for r in bundle.episodes}
    mine: str | None = None
    found = store.board_entries(
        submission.benchmark, version=submission.benchmark_version, tiers=TIERS
    )
    for other, rescore in found:  # oldest first: the first twin is the original
        if (other.created_at, other.id) >= (submission.created_at, submission.id):
            break
        if _shape(rescore) != shape:
            continue
        try:
            theirs = read_bundle(store.get_blob(other.bundle_sha), limits)
        except BundleRejected:  # a bundle read under older limits: not comparable
            continue
        mine = mine or fingerprint(bundle.episodes)
        if fingerprint(theirs.episodes) == mine:
            return other
    return None


def _shape(rescore: Rescore) -> set[tuple[str, int]]:
    """The recorded episodes' ids and step counts (a missing episode has no record)."""
    return {(e.episode_id, e.steps) for e in rescore.episodes if e.outcome != "missing"}


def duplicate_flag(original: SubmissionRecord) -> str:
    """The flag of a duplicate of ``original``."""
    return (
        f"{DUPLICATE_FLAG}{original.id}: the same actions and agent text in every episode as "
        f"{original.info.agent!r}, submitted earlier; not ranked"
    )


def split_duplicates(
    found: Iterable[tuple[SubmissionRecord, Rescore]],
) -> tuple[list[tuple[SubmissionRecord, Rescore]], list[tuple[SubmissionRecord, str]]]:
    """A board's entries split into those it ranks and its duplicates, each with the id of
    the submission it duplicates."""
    ranked, duplicates = [], []
    for submission, rescore in found:
        original = rescore.duplicate_of
        if original is None:
            ranked.append((submission, rescore))
        else:
            duplicates.append((submission, original))
    return ranked, duplicates
