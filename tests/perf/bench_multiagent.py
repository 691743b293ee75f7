"""Benchmark: what the multi-agent env adds to an engine's move, and the connect-four solver.

Not a test (too long for the suite); ``make perf`` runs it. Figures go to docs/performance.md
and docs/envs/multiagent.md. It measures, in one run:

* **An engine move through the env vs the engine called directly**, as a ratio of medians
  over ``--rounds`` rounds on the same position: Stockfish's reference player choosing (our
  ``uci`` client, ``ucinewgame`` first) plus ``env.step`` vs python-chess's engine on a kept
  process with the same node limit, also a new game each time (else its hash table would
  remember the repeated search); GNU Go's reference player (its engine told the position)
  plus ``env.step`` vs our bare ``gtp`` client's ``genmove`` and ``undo`` on a kept process.
* **The connect-four solver**: seconds per move and the share of moves proved exact, by ply
  band, along games of the ``solver`` from the empty board and from openings; its results
  as first player and second player against ``random`` and against the Python-only solver
  it replaces (``old``), from the empty board and from ``--games`` - 1 random two-move
  openings.
* ``--empty-games N``: N games a seat from the empty board against ``random``: how many of
  the solver's moves were proved, and the slowest.
* ``--verify-book N``: N book moves proved again to keep their positions' values (seconds to
  minutes each; the entries taken from Allis' result, not the solver's, are left out).

    python tests/perf/bench_multiagent.py [--rounds 30] [--games 6] [--verify-book 0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import chess
import chess.engine

import agentgym
from agentgym.envs.multiagent import connectfour_solver as c4
from agentgym.envs.multiagent import go
from agentgym.envs.multiagent.chess import PLAYER_NODES
from agentgym.envs.multiagent.connectfour_native import native
from agentgym.envs.multiagent.engines import find_engine
from agentgym.envs.multiagent.gtp import GnuGo


def ratio(name: str, through_env: list[float], direct: list[float]) -> None:
    ours, theirs = statistics.median(through_env), statistics.median(direct)
    print(
        f"{name}: {ours * 1000:.1f} ms through the env vs {theirs * 1000:.1f} ms direct "
        f"(ratio {ours / theirs:.2f})"
    )


def env_moves(
    env_id: str, task_id: str, player: str, rounds: int, before: Callable[[], Any]
) -> list[float]:
    """Seconds of ``player`` choosing plus ``env.step``, from the same reset position."""
    env = agentgym.make_multi(env_id)
    chooser = env.unwrapped.reference_players()[player]()
    seconds = []
    for _ in range(rounds + 1):  # the first round starts the engine: not counted
        env.reset(seed=0, options={"task_id": task_id})
        before()
        start = time.perf_counter()
        env.step(chooser.act(env, env.agent_selection))
        seconds.append(time.perf_counter() - start)
    chooser.close()
    env.close()
    return seconds[1:]


def stockfish(rounds: int) -> None:
    task = "train/italian"
    through_env = env_moves("multiagent/Chess-v0", task, "stockfish-skill-20", rounds, lambda: None)
    env = agentgym.make_multi("multiagent/Chess-v0")
    env.reset(seed=0, options={"task_id": task})
    board = env.unwrapped.world.board
    engine = chess.engine.SimpleEngine.popen_uci(find_engine("stockfish", "stockfish"))
    engine.configure({"Threads": 1, "Hash": 1})
    direct = []
    for _ in range(rounds + 1):
        start = time.perf_counter()
        engine.play(board, chess.engine.Limit(nodes=PLAYER_NODES), game=object())
        direct.append(time.perf_counter() - start)
    engine.quit()
    ratio(f"stockfish move ({PLAYER_NODES} nodes)", through_env, direct[1:])


def gnugo(rounds: int) -> None:
    level, task = 1, "dev/opening/0"
    through_env = env_moves(
        "multiagent/Go9x9-v0", task, f"gnugo-level-{level}", rounds, go._REMEMBERED.clear
    )
    env = agentgym.make_multi("multiagent/Go9x9-v0")
    env.reset(seed=0, options={"task_id": task})
    engine = GnuGo(level, go.SIZE, go.KOMI)
    history = env.unwrapped.world.history()
    for index, point in enumerate(history):
        engine.command(f"play {'BW'[index % 2]} {go.point_name(point)}")
    colour = go.COLOURS[env.agent_selection]
    direct = []
    for _ in range(rounds + 1):
        start = time.perf_counter()
        engine.command(f"genmove {colour}")
        engine.command("undo")
        direct.append(time.perf_counter() - start)
    engine.close()
    ratio(f"gnugo move (level {level})", through_env, direct[1:])


def old_solver(columns: list[int]) -> int:
    """The player this solver replaces: Python only, 25,000 positions, then 6 plies."""
    if not columns:
        return 3
    position = c4.Position.from_columns(columns)
    playable = [c for c in c4.CENTRE_FIRST if position.can_play(c)]
    for column in playable:
        if position.is_winning_move(column):
            return column
    try:
        return c4._proven_best(position, playable, c4.Solver(c4.BUDGET), 6)
    except c4.SearchBudgetExceeded:
        return c4.searched_best(position, playable, 6)


def timed_solver(columns: list[int], bands: dict[int, list[tuple[float, bool]]]) -> int:
    c4._decide.cache_clear()
    start = time.perf_counter()
    decision = c4.decide(columns)
    bands.setdefault(len(columns) // 6 * 6, []).append(
        (time.perf_counter() - start, decision.exact)
    )
    return decision.column


def c4_game(
    first: Callable[[list[int]], int], second: Callable[[list[int]], int], premoves: list[int]
) -> float:
    """The score (1, 0.5, 0) of ``first``, who moves after ``premoves``, against ``second``."""
    position, columns = c4.Position.from_columns(premoves), list(premoves)
    for ply in range(len(columns), 42):
        column = (first if ply % 2 == len(premoves) % 2 else second)(columns)
        if position.is_winning_move(column):
            return 1.0 if ply % 2 == len(premoves) % 2 else 0.0
        position, columns = position.play(column), [*columns, column]
    return 0.5


RESULT = {1.0: "won", 0.5: "drawn", 0.0: "lost"}


def connect_four(games: int) -> None:
    print(f"connect four C solver: {'built' if native() else 'UNAVAILABLE (Python stands in)'}")
    from_empty: dict[int, list[tuple[float, bool]]] = {}
    from_openings: dict[int, list[tuple[float, bool]]] = {}
    rng = random.Random(0)

    def rand(columns: list[int]) -> int:
        position = c4.Position.from_columns(columns)
        return rng.choice([c for c in range(7) if position.can_play(c)])

    starts = [[]] + [[rng.randrange(7), rng.randrange(7)] for _ in range(games - 1)]
    for opponent, name in ((rand, "random"), (old_solver, "old")):
        for seat in ("first", "second"):
            scores = []
            for start in starts:
                bands = from_openings if start else from_empty

                def solver(columns: list[int], bands: Any = bands) -> int:
                    return timed_solver(columns, bands)

                if seat == "first":
                    scores.append(c4_game(solver, opponent, start))
                else:
                    scores.append(1.0 - c4_game(opponent, solver, start))
            rest = scores[1:]
            print(
                f"connect four solver as {seat} player vs {name}: "
                f"{RESULT[scores[0]]} from the empty board; from {len(rest)} random two-move "
                f"openings {rest.count(1.0)} won, {rest.count(0.5)} drawn, "
                f"{rest.count(0.0)} lost (an opening may already be lost)"
            )
    for title, bands in (("from the empty board", from_empty), ("from openings", from_openings)):
        for band, moves in sorted(bands.items()):
            seconds = statistics.mean(s for s, _ in moves)
            slowest = max(s for s, _ in moves)
            exact = sum(e for _, e in moves) / len(moves)
            print(
                f"connect four {title}, plies {band:2d}-{band + 5:2d}: {seconds:.3f} s a move "
                f"(slowest {slowest:.2f}), {exact:5.1%} proved exact ({len(moves)} moves)"
            )


def connect_four_from_empty(games: int) -> None:
    """``games`` games a seat from the empty board against ``random``: whether every move of
    the solver was proved (the book, then weak proofs within the budget) and the slowest."""
    if games < 1:
        return
    rng = random.Random(1)
    moves: list[tuple[float, bool]] = []

    def solver(columns: list[int]) -> int:
        c4._decide.cache_clear()
        start = time.perf_counter()
        decision = c4.decide(columns)
        moves.append((time.perf_counter() - start, decision.exact))
        return decision.column

    def rand(columns: list[int]) -> int:
        position = c4.Position.from_columns(columns)
        return rng.choice([c for c in range(7) if position.can_play(c)])

    won = sum(c4_game(solver, rand, []) for _ in range(games))
    won += sum(1.0 - c4_game(rand, solver, []) for _ in range(games))
    exact = sum(e for _, e in moves)
    print(
        f"connect four from the empty board vs random, {games} games a seat: {won:g} points of "
        f"{2 * games}; {exact} of {len(moves)} moves proved exact; slowest move "
        f"{max(s for s, _ in moves):.2f} s, mean {statistics.mean(s for s, _ in moves):.3f} s"
    )


def verify_book(entries: int) -> None:
    """Prove again that ``entries`` book moves keep their position's value (a weak proof of
    the position and of the position after the move)."""
    solver = native()
    assert solver is not None, "the book is checked with the C solver"
    theory = {"", *c4.LOST_BY_THEORY}  # Allis 1988, not proved again
    book = sorted(item for item in c4.opening_book().items() if item[0] not in theory)
    for moves, column in random.Random(0).sample(book, entries):
        start = time.perf_counter()
        columns = [int(c) - 1 for c in moves]
        found = solver.best_move(columns, weak=True)
        assert found is not None
        value = found[1]
        if value < 0:
            verdict = "lost: every column loses"
        elif c4.Position.from_columns(columns).is_winning_move(column):
            verdict = "agrees (wins at once)"
        else:
            child = solver.best_move([*columns, column], weak=True)
            kept = child is not None and -child[1] == value
            verdict = "agrees" if kept else f"DIFFERS: value {value}, after the move {child}"
        print(f"book {moves}: value {value}, {verdict} ({time.perf_counter() - start:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--games", type=int, default=6)
    parser.add_argument("--verify-book", type=int, default=0)
    parser.add_argument("--connect-four-only", action="store_true")
    parser.add_argument("--empty-games", type=int, default=20)
    args = parser.parse_args()
    if not args.connect_four_only:
        stockfish(args.rounds)
        gnugo(args.rounds)
    connect_four(args.games)
    connect_four_from_empty(args.empty_games)
    verify_book(args.verify_book)


if __name__ == "__main__":
    main()
