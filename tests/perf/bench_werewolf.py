"""Werewolf's reference players against each other: the village's and the werewolves' win
rates with each team played by ``heuristic`` or ``random``, over many games; then the chance
of a seat that ignores the game: one plain villager played by ``heuristic``, ``random`` or
always ``abstain`` among heuristic players, and that seat's mean score.

    .venv/bin/python tests/perf/bench_werewolf.py [--games 200] [--players 7]

Figures in docs/envs/multiagent.md, "Werewolf". Every game is a fresh deal (task) of the
chosen table from the ``dev`` split, seed = game number; all seats of a team are played by
the same reference player.
"""

from __future__ import annotations

import argparse
import time

import agentgym
from agentgym.envs.multiagent.werewolf_rules import VILLAGE, VILLAGER, WOLF
from agentgym.multiagent import Seat, play_game

PAIRS = (
    ("heuristic", "heuristic"),
    ("heuristic", "random"),
    ("random", "heuristic"),
    ("random", "random"),
)

SEAT_PLAYERS = ("heuristic", "random", "abstain")


def village_win_rate(players: int, village: str, wolves: str, games: int) -> float:
    """The fraction of ``games`` the village wins, each team played by the named player."""
    env = agentgym.make_multi("multiagent/Werewolf-v0", players=players)
    game = env.unwrapped
    made = game.reference_players()
    tasks = list(game.tasks.ids("dev"))
    wins = 0
    for seed in range(games):
        task = tasks[seed % len(tasks)]
        roles = game.tasks.get(task).roles()
        seats = {a: made[wolves if roles[a] == WOLF else village]() for a in roles}
        play_game(env, seats, seed, task_id=task)
        wins += game.world.winner == VILLAGE
    env.close()
    return wins / games


def villager_seat_score(players: int, seat_player: str, games: int) -> float:
    """The mean score of the first plain villager's seat played by ``seat_player`` (a
    reference player's name, or ``"abstain"``: that text every turn), the rest heuristic."""
    env = agentgym.make_multi("multiagent/Werewolf-v0", players=players)
    game = env.unwrapped
    made = game.reference_players()
    tasks = list(game.tasks.ids("dev"))
    total = 0.0
    for seed in range(games):
        task = tasks[seed % len(tasks)]
        roles = game.tasks.get(task).roles()
        seat = next(a for a in roles if roles[a] == VILLAGER)
        seats: dict[str, Seat] = {a: made["heuristic"]() for a in roles}
        if seat_player == "abstain":
            seats[seat] = lambda _env, _agent: "abstain"
        else:
            seats[seat] = made[seat_player]()
        total += play_game(env, seats, seed, task_id=task).outcome[seat]
    env.close()
    return total / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--players", type=int, nargs="*", default=[5, 6, 7, 8])
    args = parser.parse_args()
    print(f"village win rate over {args.games} dev games per cell (village vs werewolves)")
    print("players | " + " | ".join(f"{v} vs {w}" for v, w in PAIRS))
    for players in args.players:
        start = time.perf_counter()
        rates = [village_win_rate(players, v, w, args.games) for v, w in PAIRS]
        took = time.perf_counter() - start
        cells = " | ".join(f"{r:.2f}" for r in rates)
        print(f"{players} | {cells}   ({took / (len(PAIRS) * args.games) * 1000:.0f} ms/game)")
    print("a villager seat's mean score among heuristic players (heuristic | random | abstain)")
    for players in args.players:
        scores = [villager_seat_score(players, p, args.games) for p in SEAT_PLAYERS]
        print(f"{players} | " + " | ".join(f"{x:.2f}" for x in scores))


if __name__ == "__main__":
    main()
