"""``agentgym arena``: play named players against one another in a game and rate them.

agentgym arena --env multiagent/TicTacToe-v0 --agents solver random --games 20
agentgym arena --env multiagent/Chess-v0 --agents stockfish-skill-5 random smollm2 --games 4
agentgym arena ... --schedule swiss --rounds 4          Swiss rounds instead of round-robin
agentgym arena ... --out runs/arena --resume            play only what a killed run left
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentgym.errors import AgentGymError, UsageError

if TYPE_CHECKING:
    from agentgym.arena.records import MatchRecord

__all__ = ["add_commands", "extend_report_command", "format_forfeits", "format_ratings"]


def add_commands(commands: Any) -> None:
    """Register ``arena`` on the main parser's subcommands."""
    arena = commands.add_parser(
        "arena",
        help="play players against one another in a multi-agent game and rate them",
        description="Play every pairing of the named players (round-robin, or Swiss rounds), "
        "games seat-swapped on shared seeds, many matches at once; record each match in "
        "RUN_DIR/matches.jsonl and each agent seat's moves in RUN_DIR/episodes.jsonl; print "
        "the ratings (a Bradley-Terry fit, Plackett-Luce for more seats, with 95% bootstrap "
        "intervals over match groups and tie groups where they overlap) beside openskill's "
        "provisional numbers, and write RUN_DIR/ratings.json. A player is a reference player "
        "of the game (agentgym info ID lists them; the name wins over an agent spec) or an "
        "agent spec as agentgym eval --agent takes it.",
    )
    arena.add_argument("--env", required=True, metavar="ID", help="a multi-agent env id")
    arena.add_argument(
        "--agents",
        required=True,
        nargs="+",
        metavar="PLAYER",
        help="the players: reference player names of the game (stockfish-skill-5, solver, "
        "random, ...) or agent specs (smollm2, openai:MODEL@URL, package.module:name, ...)",
    )
    arena.add_argument(
        "--games",
        required=True,
        type=int,
        metavar="N",
        help="games per table (per pairing and round with --schedule swiss); an even N "
        "gives every game its seat-swapped twin",
    )
    arena.add_argument(
        "--schedule",
        choices=("round-robin", "swiss"),
        default="round-robin",
        help="every table of players, or Swiss rounds pairing players of close score",
    )
    arena.add_argument(
        "--rounds",
        type=int,
        metavar="R",
        help="Swiss rounds (default: ceil(log2 players) + 1)",
    )
    arena.add_argument(
        "--num-matches", type=int, default=8, metavar="M", help="matches played at once"
    )
    arena.add_argument("--seed", type=int, default=0, help="the base seed of the schedule")
    arena.add_argument(
        "--split", default="test", help="the split the games' tasks (positions, deals) come from"
    )
    arena.add_argument(
        "--out", metavar="RUN_DIR", help="run directory (default: runs/ENV-arena-TIME)"
    )
    arena.add_argument("--resume", action="store_true", help="continue the arena in --out")
    arena.add_argument(
        "--agent-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the LLM agents among the players (repeatable), as for eval",
    )
    arena.add_argument(
        "--step-timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="seconds an agent's move may take; an agent that runs over forfeits its seat "
        "(the match is scored, the agent lost)",
    )
    arena.add_argument(
        "--match-timeout", type=float, default=3600.0, metavar="S", help="seconds a match may take"
    )
    arena.add_argument("--retries", type=int, default=2, help="retries of an errored match")
    arena.set_defaults(run=_arena)


def _arena(args: argparse.Namespace) -> int:
    from agentgym.arena.run import Arena, run_arena
    from agentgym.eval.cli import parse_options
    from agentgym.eval.engine import EngineLimits
    from agentgym.eval.run import default_run_dir

    if args.resume and not args.out:
        raise UsageError("--resume needs --out RUN_DIR (the arena to continue)")
    if args.rounds is not None and args.schedule != "swiss":
        raise UsageError("--rounds goes with --schedule swiss (a round-robin plays every table)")
    arena = Arena(
        args.env, tuple(args.agents), args.games, args.schedule, args.rounds, args.seed, args.split
    )
    out = args.out or default_run_dir(args.env.replace("/", "-"), "arena")
    started = time.monotonic()
    result = run_arena(
        arena,
        out,
        num_matches=args.num_matches,
        resume=args.resume,
        limits=EngineLimits(args.step_timeout, args.match_timeout, args.retries),
        agent_options=parse_options(args.agent_option),
        on_match=_Progress(),
    )
    print(format_ratings(result))
    forfeits = format_forfeits(result.records)
    print(
        f"{len(result.records)} matches scored, {len(result.errored)} errored "
        f"({result.resumed} already done), {time.monotonic() - started:.1f} s"
        + (f"; {forfeits}" if forfeits else "")
    )
    print(f"run directory: {result.run_dir}")
    if result.records:  # a run where every match errored has nothing to show
        from agentgym.arena.report import write_report

        print(f"report: {write_report(result.run_dir)}")
    return 0


class _Progress:
    """A line on stderr every few seconds while matches finish, so a long arena is not
    silent (the evaluator's progress bar counts episodes; an arena counts matches)."""

    def __init__(self) -> None:
        from agentgym.eval.progress import PLAIN_EVERY_SECONDS

        self.every = PLAIN_EVERY_SECONDS
        self.scored = self.errored = 0
        self.last = time.monotonic()

    def __call__(self, record: Any) -> None:
        if record is None:
            self.errored += 1
        else:
            self.scored += 1
        if time.monotonic() - self.last >= self.every:
            self.last = time.monotonic()
            print(f"arena: {self.scored} matches scored, {self.errored} errored", file=sys.stderr)


def format_forfeits(records: Iterable[MatchRecord]) -> str:
    """``"forfeits: alice 2, bob 1"``: each player's matches lost by its agent failing
    (most first); empty when none was."""
    counts = Counter(r.seats[r.forfeit.seat] for r in records if r.forfeit is not None)
    if not counts:
        return ""
    return "forfeits: " + ", ".join(f"{p} {n}" for p, n in counts.most_common())


def format_ratings(result: Any) -> str:
    """The rating table (rank, rating and interval, matches, openskill's provisional mu and
    ordinal) and the tie groups."""
    if result.ratings is None:
        return "no match was scored: no ratings"
    live = {p.player: p for p in result.provisional}
    ratings = result.ratings
    rows = [("RANK", "PLAYER", "RATING", f"{ratings.confidence:.0%} INTERVAL", "MATCHES",
             "OPENSKILL MU", "ORDINAL")]  # fmt: skip
    for row in ratings.rows:
        p = live.get(row.player)
        rows.append(
            (
                str(row.rank),
                row.player,
                f"{row.rating:.1f}",
                f"[{row.low:.1f}, {row.high:.1f}]",
                str(row.matches),
                f"{p.mu:.1f}" if p else "",
                f"{p.ordinal:.1f}" if p else "",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    groups: dict[int, list[str]] = {}
    for row in ratings.rows:
        groups.setdefault(row.tie_group, []).append(row.player)
    tied = " | ".join(", ".join(names) for _, names in sorted(groups.items()))
    lines.append(f"tie groups (one rank: the intervals do not separate them): {tied}")
    lines.append(
        f"{ratings.method}, Elo scale, {ratings.matches} matches in {ratings.groups} groups, "
        f"{ratings.samples} bootstrap draws; openskill columns are provisional (online: they "
        f"depend on match order, no interval)"
    )
    return "\n".join(lines)


# `agentgym report RUN_DIR` of an arena run directory


def extend_report_command(commands: Any) -> None:
    """Let ``agentgym report RUN_DIR`` (the evaluator's command, which may not import the
    arena) read an arena run directory too: one RUN_DIR holding ``matches.jsonl`` prints
    each env's ratings and writes the arena's HTML report (:mod:`agentgym.arena.report`);
    anything else goes to the evaluator's."""
    report = commands.choices["report"]
    evaluations = report.get_default("run")
    report.description = (
        f"{report.description} An arena run directory (one RUN_DIR holding matches.jsonl) "
        "prints each env's ratings and writes the arena's report: ratings, head to head, games."
    )

    def run(args: argparse.Namespace) -> int:
        if len(args.run_dirs) == 1 and (Path(args.run_dirs[0]) / "matches.jsonl").is_file():
            return _report_arena(Path(args.run_dirs[0]), args)
        return int(evaluations(args))

    report.set_defaults(run=run)


def _report_arena(run_dir: Path, args: argparse.Namespace) -> int:
    from agentgym.arena import provisional_ratings, rate
    from agentgym.arena.report import read_matches, write_report

    if args.episode is not None:
        raise UsageError(f"{run_dir} is an arena run: --episode reads evaluation runs only")
    records = read_matches(run_dir)
    for env_id in sorted({record.env_id for record in records}):
        matches = [record for record in records if record.env_id == env_id]
        try:
            live = provisional_ratings(matches)
        except AgentGymError:  # openskill absent: the official table alone
            live = []
        print(env_id)
        print(format_ratings(argparse.Namespace(ratings=rate(matches), provisional=live)))
        if forfeits := format_forfeits(matches):
            print(forfeits)
    if not args.no_html:
        print(f"report: {write_report(run_dir, Path(args.html) if args.html else None)}")
    return 0
