"""Werewolf for 5 to 8 text agents: a hidden-role team game of talk and votes (AEC).

The village (a seer, a doctor and plain villagers) must find and vote out the werewolves,
who know each other and kill one villager each night. A table has a fixed number of seats,
as PettingZoo's ``possible_agents`` must: ``make_multi("multiagent/Werewolf-v0", players=N)``
with ``N`` from 5 to 8 (7 by default); its tasks vary the deal.

**Roles.** ``5`` players: 1 werewolf, the seer, the doctor, 2 villagers; ``6`` to ``8``: 1
(``one-wolf`` tasks) or 2 (``two-wolves``) werewolves, the seer, the doctor and the rest
villagers. A task is a deal: which seat holds which role, drawn from the task seed.

**A night** (the game opens with night 1). The living werewolves each name a victim in seat
order, each seeing the earlier picks; the victim is the name most of them chose, and with
two werewolves who disagree the first one's choice stands. The seer inspects a living
player and privately learns whether it is a werewolf; the doctor protects a living player
(itself allowed), who survives if it was the victim.

**A day.** The night's death is announced with the dead player's role (every death reveals
the role). Then :data:`DISCUSSION_ROUNDS` discussion rounds, in which every living player
speaks once in turn (free text, cut to :data:`SPEECH_LIMIT` characters); the day's order
starts one seat later each day. Then a vote: each living player names another living player
or abstains; votes are secret until all are in, then published. The player with the most
votes is eliminated and its role revealed; a tie for the most votes, or no votes at all,
eliminates nobody.

**Winning.** The village wins once every werewolf is dead; the werewolves win once they are
as many as the other living players, or when the village has not won after as many days as
there are players (the werewolves survived). Every player scores its team's result, dead or
alive: 1 for a win, 0 for a loss (rewards +1/-1 at the end); ``passed`` is a win.

**What each seat sees.** Its own role; a werewolf also its fellow werewolves, their picks
each night and the pack's victim; the seer its inspections; the doctor whom it protected;
and everyone the public transcript (deaths with roles, speeches, vote tallies) and who is
alive. Nothing else: the roles of living players are never shown to another seat until the
game ends. Task ids and ``info`` name no role. (The env object itself holds the whole game,
and PettingZoo's ``agent_selection`` names whoever acts, night turns included: a seat plays
fair on its observation and info alone, as the bots do on :func:`~.werewolf_rules.view`.)

**What it may do.** In a night action or a vote, text naming one player: ``kill player_3``,
``player 3``, ``3`` and ``I vote for player_3.`` all read as player_3 (a text naming two
players is refused); a vote may be ``abstain`` (``no one``, ``nobody``, ``skip``, ``pass``).
A player the role may not pick (a dead one, a fellow werewolf, itself where not allowed), or
no player, is an invalid action: the same player acts again, told why and given the legal
targets (``info["legal_actions"]``). In discussion any text with a word in it is a speech;
``info["legal_actions"]`` lists the bots' speeches as examples. After
``max_invalid_actions`` (3) mistakes a player forfeits: it dies (its role revealed) and the
game goes on without it; a player who forfeited scores 0 whatever its team's result.

**Reference players.** ``heuristic`` (the oracle; :mod:`.werewolf_bots`) and ``random``
(uniformly random listed actions, speeches included), both deterministic given the reset
seed.

**Chance.** A seat scores its team's result, so a seat that ignores the game wins whenever
its team does: an always-abstaining villager among heuristic players wins as often as the
heuristic village, about half its games. The env declares ``chance_score`` 0.5.

**Version history.** v0: first release.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from agentgym.envs.multiagent.players import PolicyPlayer
from agentgym.envs.multiagent.werewolf_bots import heuristic_action
from agentgym.envs.multiagent.werewolf_rules import (
    DISCUSSION,
    DISCUSSION_ROUNDS,
    DOCTOR,
    NIGHT,
    NIGHT_VERBS,
    PHASE_ACTIONS,
    SEER,
    SPEECH_LIMIT,
    VILLAGER,
    VOTE,
    WOLF,
    SeatView,
    Village,
    advance,
    deal_tasks,
    forfeit,
    options,
    seats,
    team,
    view,
)
from agentgym.errors import UsageError
from agentgym.multiagent import ReferencePlayer, TurnBasedEnv

ROLE_GOALS: Mapping[str, str] = {
    WOLF: "each night you and your pack kill a villager; by day, avoid being voted out",
    SEER: "each night you learn whether one player is a werewolf; help the village vote",
    DOCTOR: "each night you protect one player (yourself allowed) from the werewolves",
    VILLAGER: "find the werewolves and vote them out",
}


def private_lines(seat: SeatView) -> list[str]:
    """The seat's own knowledge, in words, night by night."""
    notes = [
        (n, f"Night {n}: {wolf} chose to kill {victim}.") for n, wolf, victim in seat.pack_picks
    ]
    notes += [(n, f"Night {n}: the pack's victim was {victim}.") for n, victim in seat.kills]
    notes += [
        (n, f"Night {n}: you inspected {who}: {'a' if found else 'not a'} werewolf.")
        for n, who, found in seat.inspections
    ]
    notes += [(n, f"Night {n}: you protected {who}.") for n, who in seat.protections]
    pack = [f"The werewolves are {', '.join(seat.pack)}."] if seat.pack else []
    return pack + [text for _, text in sorted(notes, key=lambda note: note[0])]


def prompt(seat: SeatView) -> str:
    """The line saying what happens now, and what the seat may do when it is its turn."""
    if seat.winner is not None:
        won = "You won." if team(seat.role) == seat.winner else "You lost."
        return f"The game is over: the {seat.winner} won. {won}"
    where = {
        NIGHT: f"Night {seat.day}",
        DISCUSSION: f"Day {seat.day}, discussion round {seat.round} of {DISCUSSION_ROUNDS}",
        VOTE: f"Day {seat.day}, the vote",
    }[seat.phase]
    if seat.to_act != seat.agent:
        return f"{where}. Waiting for {seat.to_act if seat.phase != NIGHT else 'the night'}."
    asks = {
        NIGHT: f"choose whom to {NIGHT_VERBS.get(seat.role, '')}",
        DISCUSSION: f"say something to the village (at most {SPEECH_LIMIT} characters)",
        VOTE: "vote to eliminate a living player, or abstain",
    }[seat.phase]
    return f"{where}. Your turn: {asks}. E.g.: {' | '.join(seat.options)}"


def render(seat: SeatView, budget: int) -> str:
    """The seat's observation: role, private knowledge, the living and the dead, the latest
    public transcript that fits in ``budget`` characters, and what to do now."""
    head = [
        f"Werewolf, {len(seat.players)} players. You are {seat.agent}; your role: {seat.role} "
        f"({ROLE_GOALS[seat.role]}).",
        *private_lines(seat),
        f"Alive: {', '.join(seat.alive)}.",
    ]
    dead = [f"{a} ({seat.revealed[a]})" for a in seat.players if a not in seat.alive]
    if dead:
        head.append(f"Dead: {', '.join(dead)}.")
    if seat.winner is not None:
        head.append("Roles: " + ", ".join(f"{a} {seat.revealed[a]}" for a in seat.players) + ".")
    tail = prompt(seat)
    room = budget - sum(len(line) + 1 for line in head) - len(tail) - 80
    shown: list[str] = []
    for line in reversed(seat.public):
        room -= len(line) + 1
        if room < 0:
            break
        shown.append(line)
    omitted = len(seat.public) - len(shown)
    transcript = ["Transcript:"] + ([f"({omitted} earlier lines omitted)"] if omitted else [])
    return "\n".join(head + transcript + shown[::-1] + [tail])


# ---------------------------------------------------------------------- the env


class WerewolfEnv(TurnBasedEnv[Village]):
    __doc__ = __doc__
    # A seat's score is its team's result, so a seat that ignores the game still wins when
    # its team does: a villager that always abstains among heuristic players wins 0.46-0.57
    # of its games by table (docs/envs/multiagent.md, "Werewolf"): chance is about 0.5.
    metadata = {**TurnBasedEnv.metadata, "name": "werewolf_v0", "chance_score": 0.5}

    def __init__(self, players: int = 7, **kwargs: Any) -> None:
        if isinstance(players, bool) or players not in (5, 6, 7, 8):
            raise UsageError(f"Werewolf takes players=5 to 8, got {players!r}")
        self.possible_agents = list(seats(players))
        self.tasks = deal_tasks(players)
        super().__init__(**kwargs)

    def new_world(self, task: Any, rng: np.random.Generator) -> Village:
        world: Village = task.setup(rng)[0]
        return world

    def to_move(self, world: Village) -> str:
        return world.queue[0] if world.queue else self.possible_agents[0]

    def seat_view(self, agent: str) -> SeatView:
        """What ``agent`` knows now (the heuristic bot's only input)."""
        assert self.world is not None
        return view(self.world, agent, self._bot_seed(self.world))

    def _bot_seed(self, world: Village) -> int:
        """The bots' seed: the reset seed and the deal's, so the same reset replays the same
        game and different deals played from one seed differ."""
        text = f"{self.episode_seed or 0}/{world.seed}"
        return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)

    def describe(self, world: Village, agent: str) -> str:
        return render(view(world, agent), self.max_observation_length - 400)

    def act(self, world: Village, agent: str, action: str) -> str:
        feedback = PHASE_ACTIONS[world.phase](world, agent, action)
        world.turns += 1
        world.queue.pop(0)
        advance(world)
        return feedback

    def legal_actions(self, world: Village, agent: str) -> list[str]:
        if world.winner is not None or self.to_move(world) != agent:
            return []
        return options(world, agent)

    def _forfeits(self) -> dict[str, float] | None:
        """A forfeit removes the player (it dies) and the game goes on, where the base would
        end the game; :meth:`step` then ends the forfeiter's own episode."""
        world = self.world
        assert world is not None
        for agent in self.possible_agents:
            out = self._invalid[agent] >= self.max_invalid_actions
            if out and agent in world.alive and world.winner is None:
                forfeit(world, agent)
        return None

    def step(self, action: Any) -> None:
        """The base's step; then a player who just forfeited, in a game that goes on, is
        terminated with a verdict of 0 and takes PettingZoo's dead step next (leaving
        ``agents``), after which the turn passes on as the game says."""
        super().step(action)
        world = self.world
        if world is None or world.winner is not None:
            return
        out = [a for a in world.forfeited if a in self.agents and not self.terminations[a]]
        for agent in out:
            self.terminations[agent] = True
            self.rewards[agent] = -1.0
            self._cumulative_rewards[agent] -= 1.0
            self.infos[agent]["verdict"] = self._verdict(0.0)
        if out:
            self._skip_agent_selection = self.agent_selection
            self.agent_selection = out[0]

    def state_key(self, world: Village) -> str:
        """Roles, the living, the phase and queue, the night's choices, the votes and the
        transcript's digest; kept per turn, as every agent's info asks for it each step."""
        when = (world.turns, len(world.public))
        if world.key_cache[0] != when:
            roles = ",".join(world.roles[a][0] for a in world.players)
            night = f"{world.pack_picks}{world.inspections}{world.protections}"
            key = (
                f"{roles}|{','.join(world.alive)}|{world.day}{world.phase}{world.round}|"
                f"{','.join(world.queue)}|{night}|{sorted(world.votes.items())}|"
                f"{len(world.public)}:{world.digest}|{world.winner}"
            )
            world.key_cache = (when, key)
        return world.key_cache[1]

    def outcome(self, world: Village) -> dict[str, float] | None:
        if world.winner is None:
            return None
        return {
            a: 0.0 if a in world.forfeited else float(team(world.roles[a]) == world.winner)
            for a in world.players
        }

    def rules(self) -> str:
        n = len(self.possible_agents)
        return (
            f"Werewolf with {n} players: werewolves (who know each other), a seer, a doctor "
            "and villagers. Each night the werewolves pick a victim, the seer learns whether "
            "one player is a werewolf, and the doctor protects one player (a protected victim "
            f"survives). Each day the night's death is announced, everyone speaks "
            f"{DISCUSSION_ROUNDS} times in turn, then everyone votes for a living player or "
            "abstains: the most votes eliminate that player; a tie eliminates nobody. Every "
            "death reveals the role. The village wins when every werewolf is dead; the "
            "werewolves win when they are as many as the rest, or if the village has not won "
            f"after {n} days. Your team's result is your score.\n"
            "Actions: at night and in votes, name one player ('kill player_3', 'vote "
            "player_1', 'abstain'); in discussion, any text."
        )

    def oracle_action(self, agent: str) -> str | None:
        if self.world is None or self.world.winner is not None:
            return None
        if self.to_move(self.world) != agent:
            return None
        return heuristic_action(self.seat_view(agent))

    def reference_players(self) -> dict[str, Callable[[], ReferencePlayer]]:
        return {
            **super().reference_players(),
            "heuristic": lambda: PolicyPlayer("heuristic", _heuristic_move),
        }


def _heuristic_move(env: WerewolfEnv, agent: str) -> str:
    return heuristic_action(env.seat_view(agent))
