"""What the leaderboard knows of a submission once it has checked it: one :class:`ScoredEpisode`
per episode of the benchmark's plan, and the :class:`Rescore` that holds them.

These are the shapes every part of the board shares: the re-scorer
(:mod:`agentgym.leaderboard.rescore`) makes them, the store keeps them, the ranking
(:mod:`agentgym.leaderboard.ranking`) reads them and the pages show them. No number a
submitter wrote reaches them except ``claimed_score``, which is kept only to show where the
submitter's record and the replay disagree.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["DUPLICATE_FLAG", "OUTCOMES", "TIERS", "Outcome", "Rescore", "ScoredEpisode", "Tier"]

Outcome = Literal["ok", "truncated", "errored", "missing", "mismatch"]
"""How an episode of the plan came out of the check:

* ``ok`` / ``truncated``: it replayed exactly (or, for a self-reported bundle, was read as
  recorded) and ended by the env's own termination / by its step limit;
* ``errored``: the run recorded it as errored (an infrastructure failure: it counts as a
  failure on the board and towards the bundle's errored cap);
* ``missing``: the plan has it and the bundle does not (a failure);
* ``mismatch``: it did not replay: an observation, reward or flag differs from the record,
  or an action the env rejects (a failure, and the bundle cannot be ranked above
  self-reported).
"""
OUTCOMES: tuple[Outcome, ...] = ("ok", "truncated", "errored", "missing", "mismatch")

Tier = Literal["self-reported", "re-scored", "verified"]
"""``self-reported``: the bundle's format was checked, its verdicts were not recomputed;
``re-scored``: every episode replayed and every verdict was recomputed by the env's verifier;
``verified``: a maintainer re-ran the agent with the same spec and got a matching run."""
TIERS: tuple[Tier, ...] = ("self-reported", "re-scored", "verified")

DUPLICATE_FLAG = "duplicate of "
"""How the flag of a duplicate begins (:mod:`agentgym.leaderboard.duplicates`): the earlier
submission's id follows, then ``:``."""


@dataclass(frozen=True)
class ScoredEpisode:
    """One episode of the benchmark's plan, as the board counts it.

    ``passed`` and ``score`` are the recomputed verdict's (for a self-reported bundle: the
    record's); an episode that is not ``ok`` or ``truncated`` counts as failed with score 0.
    """

    episode_id: str
    """The plan's id, ``env_id|task_id|repeat`` (:attr:`EpisodePlan.episode_id`)."""
    env_id: str
    task_id: str
    repeat: int
    seed: int | None
    outcome: Outcome
    passed: bool = False
    score: float = 0.0
    claimed_score: float | None = None
    """The score the submitter's record holds (None when missing): shown beside ``score``
    only where they differ, never ranked."""
    reason: str | None = None
    """Why the episode is not ``ok``: the first difference of a mismatch, the recorded
    error of an errored episode."""
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    oracle_like: bool = False
    """Its actions equal the env oracle's for the task: flagged for a maintainer's review."""

    @property
    def counted(self) -> bool:
        """Whether the episode ran to an end the board can score."""
        return self.outcome in ("ok", "truncated")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoredEpisode:
        return cls(**data)


@dataclass
class Rescore:
    """The check of one bundle against its benchmark: every episode of the plan, the tier
    the bundle reached, and what a maintainer should look at."""

    benchmark: str
    benchmark_version: int
    benchmark_hash: str
    tier: Tier
    episodes: list[ScoredEpisode]
    scorer_version: str
    """The agentgym version that replayed the episodes, with the versions of the envs it
    replayed (a new verifier version is a new scorer version: the board re-scores)."""
    flags: list[str] = field(default_factory=list)
    """Reasons for a maintainer's review that do not reject the bundle (oracle-like
    episodes, token counts that do not add up, claimed scores that differ)."""
    seconds: float = 0.0

    @property
    def duplicate_of(self) -> str | None:
        """The id of the earlier submission whose episodes these are (None: not a duplicate);
        a duplicate is listed on the board, not ranked."""
        for flag in self.flags:
            if flag.startswith(DUPLICATE_FLAG):
                return flag[len(DUPLICATE_FLAG) :].split(":", 1)[0]
        return None

    @property
    def errored(self) -> int:
        return sum(e.outcome == "errored" for e in self.episodes)

    @property
    def missing(self) -> int:
        return sum(e.outcome == "missing" for e in self.episodes)

    @property
    def mismatched(self) -> int:
        return sum(e.outcome == "mismatch" for e in self.episodes)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["episodes"] = [e.to_dict() for e in self.episodes]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rescore:
        fields = {k: v for k, v in data.items() if k != "episodes"}
        return cls(episodes=[ScoredEpisode.from_dict(e) for e in data["episodes"]], **fields)
