"""Does self-play help? A seat-swapped match between two policies (a trained checkpoint and
its start) on a two-player game, with intervals.

Game ``k`` is played twice from the same reset seed (the same deal or board), once with each
policy in each seat; the two games are one bootstrap group (they are not independent
draws). Each game is a :class:`~agentgym.arena.MatchRecord` scored by the seats' verdicts
(1 win, 0 loss, 0.5 draw; in Kuhn poker 0.25/0.75 for a one-chip pot), so the arena's
:func:`~agentgym.arena.rate` gives Bradley-Terry ratings with group-bootstrap intervals. Two
more figures, each with a group-bootstrap interval (:func:`~agentgym.eval.bootstrap_ci`):
the mean score difference (first policy's score less the second's, per game) and the
first policy's win rate less its loss rate.

    python -m agentgym.baselines.selfplay_match --env multiagent/KuhnPoker-v0 \\
        --first RUN/checkpoints/iter-11/policy --second smollm2 --games 200

A game still going after ``--max-turns`` turns counts as a draw; a backend failure stops
the match (an infrastructure error, never a score).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentgym.agents import PromptConfig, TokenAgent
from agentgym.arena import MatchRecord, rate
from agentgym.errors import ModelError
from agentgym.eval import bootstrap_ci
from agentgym.seeding import derive

__all__ = ["MatchSummary", "main", "play_match", "summarize"]


async def _play_pair(
    env_id: str,
    backends: Mapping[str, Any],
    seats: Sequence[str],
    k: int,
    *,
    seed: int,
    prompt: PromptConfig,
    sampling: Mapping[str, Any],
    max_turns: int,
) -> list[MatchRecord]:
    """Game ``k`` and its seat-swapped twin, from one reset seed."""
    from agentgym.baselines.selfplay import play_game

    names = list(backends)
    start = derive(seed, env_id, "match", k)
    out: list[MatchRecord] = []
    for swap in (0, 1):
        order = names if swap == 0 else names[::-1]
        seated = dict(zip(seats, order, strict=True))
        agents = {seat: TokenAgent(backends[name], prompt, name) for seat, name in seated.items()}
        records = await play_game(
            env_id,
            agents,
            seated,
            seed=start,
            agent_seed=derive(start, "agent", swap),
            sampling=sampling,
            max_turns=max_turns,
        )
        errored = [r.error for r in records.values() if r.status == "errored"]
        if errored:
            raise ModelError(f"match game {k}/{swap}: {errored[0]}")
        scores = {
            seat: r.verdict.score if r.verdict is not None else 0.5 for seat, r in records.items()
        }
        out.append(MatchRecord(f"{k}-{swap}", env_id, seated, scores, group=str(k)))
    return out


def play_match(
    env_id: str,
    policies: Mapping[str, Any],
    *,
    games: int,
    seed: int = 0,
    prompt: PromptConfig | None = None,
    sampling: Mapping[str, Any] | None = None,
    max_turns: int = 20,
    num_envs: int = 16,
) -> list[MatchRecord]:
    """``games`` seat-swapped pairs of games between the two named ``policies``."""
    from agentgym.backends import HFBackend
    from agentgym.registry import make_multi

    if len(policies) != 2:
        raise ValueError(f"a match needs two policies, got {sorted(policies)}")
    env = make_multi(env_id)
    seats = list(env.possible_agents)
    env.close()
    backends = {
        name: HFBackend(p.model, p.tokenizer, max_batch=max(num_envs, 1))
        for name, p in policies.items()
    }
    limit = asyncio.Semaphore(max(num_envs // 2, 1))

    async def pair(k: int) -> list[MatchRecord]:
        async with limit:
            return await _play_pair(
                env_id,
                backends,
                seats,
                k,
                seed=seed,
                prompt=prompt or PromptConfig(),
                sampling=dict(sampling or {}),
                max_turns=max_turns,
            )

    async def everything() -> list[list[MatchRecord]]:
        return list(await asyncio.gather(*(pair(k) for k in range(games))))

    return [record for pair_records in asyncio.run(everything()) for record in pair_records]


@dataclass(frozen=True)
class MatchSummary:
    """The figures of a match, each ``(estimate, low, high)`` at 95%."""

    first: str
    second: str
    games: int
    score_difference: tuple[float, float, float]
    win_minus_loss: tuple[float, float, float]
    rating_difference: tuple[float, float, float]
    """The first policy's Bradley-Terry rating (Elo scale) with the second anchored at 0."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "first": self.first,
            "second": self.second,
            "games": self.games,
            "score_difference": list(self.score_difference),
            "win_minus_loss": list(self.win_minus_loss),
            "rating_difference": list(self.rating_difference),
        }


def summarize(records: Sequence[MatchRecord], first: str, second: str) -> MatchSummary:
    """The score difference, win-minus-loss rate and rating difference of ``first`` over
    ``second``, each with a bootstrap interval over the seat-swapped pairs."""
    by_group: dict[str, list[float]] = {}
    outcomes: dict[str, list[float]] = {}
    for record in records:
        seat = {player: s for s, player in record.seats.items()}
        difference = record.scores[seat[first]] - record.scores[seat[second]]
        by_group.setdefault(record.cluster, []).append(difference)
        outcomes.setdefault(record.cluster, []).append(float(difference > 0) - (difference < 0))
    ratings = rate(records, anchor=second).by_player()[first]
    return MatchSummary(
        first,
        second,
        len(records),
        bootstrap_ci(list(by_group.values())),
        bootstrap_ci(list(outcomes.values())),
        (ratings.rating, ratings.low, ratings.high),
    )


def main(argv: list[str] | None = None) -> int:
    from agentgym.baselines.policy import load_policy

    parser = argparse.ArgumentParser(prog="python -m agentgym.baselines.selfplay_match")
    parser.add_argument("--env", required=True, help="a two-player turn-based game id")
    parser.add_argument("--first", required=True, help="a policy: a checkpoint's policy/ dir")
    parser.add_argument("--second", required=True, help="the other policy, e.g. smollm2")
    parser.add_argument("--games", type=int, default=100, help="seat-swapped pairs to play")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--max-turns", type=int, default=20)
    parser.add_argument("--num-envs", type=int, default=32)
    parser.add_argument("--format-hint", default="Reply with the action only, on one line.")
    parser.add_argument("--out", help="write the records and the figures here (JSON)")
    args = parser.parse_args(argv)
    names = {"first": args.first, "second": args.second}
    policies = {spec: load_policy(spec, device="cpu") for spec in names.values()}
    records = play_match(
        args.env,
        policies,
        games=args.games,
        seed=args.seed,
        prompt=PromptConfig(format_hint=args.format_hint, history_window=1),
        sampling={"temperature": args.temperature, "max_tokens": args.max_tokens},
        max_turns=args.max_turns,
        num_envs=args.num_envs,
    )
    summary = summarize(records, args.first, args.second)
    for label, (estimate, low, high) in (
        ("score difference", summary.score_difference),
        ("win rate - loss rate", summary.win_minus_loss),
        ("rating difference (Elo)", summary.rating_difference),
    ):
        print(f"{label}: {estimate:+.3f} [{low:+.3f}, {high:+.3f}] ({summary.games} games)")
    if args.out:
        data = {"summary": summary.to_dict(), "records": [r.to_dict() for r in records]}
        Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
