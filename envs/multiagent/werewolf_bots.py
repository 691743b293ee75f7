"""Werewolf's ``heuristic`` reference player (the oracle): a rule-based bot for every role.

It reads only a :class:`~.werewolf_rules.SeatView` (what its seat knows: its role, its
role's private knowledge, the public transcript), so it plays fair, and it draws its few
random choices from the view's seed, the day and its seat, so it is deterministic given the
reset seed.

* **Werewolves** never pick or vote for a fellow werewolf. At night they kill a player who
  claimed to be the seer, else the victim a fellow werewolf already picked, else a random
  villager. By day the pack accuses one villager (the same one: their choice is drawn
  without the seat) and votes for it; a player whose seer claim names one of them is called
  a liar, accused and voted for instead.
* **The seer** inspects a random living player it has not inspected. Once it has found a
  living werewolf it claims: ``I am the seer: player_3 is a werewolf.`` and votes for it;
  otherwise it stays quiet and votes for the most accused player it has not cleared.
* **The doctor** protects the player who claimed to be the seer, else itself.
* **Villagers (and the doctor by day)** believe a seer claim: they repeat the accusation
  and vote for the named player (a claim naming themselves shows the claimer lies: they
  accuse it). Without a claim they echo and vote for the most accused player of the day;
  without accusations they say nothing and abstain.

Claims and accusations are read from the speeches' words, so an agent's speeches move the
bots as much as another bot's: ``I am the seer`` with ``player_N is a werewolf`` is a claim,
and a speech with ``suspect``, ``accuse``, ``vote``, ``wolf``, ``werewolf``, ``lying`` or
``liar`` in it accuses every other player it names.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from agentgym.envs.multiagent.werewolf_rules import NIGHT, SEER, SILENT, VOTE, WOLF, SeatView

__all__ = ["heuristic_action", "seer_claims"]

_CLAIM = re.compile(r"\bI\s*(?:am|'m|\u2019m)\s+the\s+seer\b", re.IGNORECASE)
_NAMED_WOLF = re.compile(r"\bplayer[\s_-]*(\d+)\s+is\s+a\s+(?:were)?wolf\b", re.IGNORECASE)
_ACCUSING = re.compile(r"\b(suspect|accuse|vote|wolf|werewolf|lying|liar)\b", re.IGNORECASE)
_MENTION = re.compile(r"\bplayer[\s_-]*(\d+)\b", re.IGNORECASE)


def heuristic_action(seat: SeatView) -> str:
    """The bot's action for the seat whose turn it is."""
    if seat.phase == NIGHT:
        return _night(seat)
    if seat.phase == VOTE:
        target = _ballot(seat)
        return f"vote {target}" if target else "abstain"
    return _speech(seat)


# ---------------------------------------------------------------------- reading the day


def seer_claims(seat: SeatView) -> list[tuple[str, str]]:
    """Every ``(claimer, named werewolf)`` of the speeches so far, oldest first; claims by a
    player since revealed as no seer are left out."""
    claims = []
    for _, speaker, text in seat.speeches:
        if seat.revealed.get(speaker, SEER) != SEER or not _CLAIM.search(text):
            continue
        claims += [(speaker, f"player_{int(n)}") for n in _NAMED_WOLF.findall(text)]
    return claims


def _standing_claim(seat: SeatView) -> tuple[str, str] | None:
    """The latest claim naming a living player other than the claimer."""
    live = [(c, t) for c, t in seer_claims(seat) if t in seat.alive and t != c]
    return live[-1] if live else None


def _accused(seat: SeatView) -> Counter[str]:
    """How many of today's speeches accuse each living player."""
    counts: Counter[str] = Counter()
    for day, speaker, text in seat.speeches:
        if day != seat.day or not _ACCUSING.search(text):
            continue
        named = {f"player_{int(n)}" for n in _MENTION.findall(text)}
        counts.update(p for p in named if p != speaker and p in seat.alive)
    return counts


def _discredited(seat: SeatView) -> Counter[str]:
    """Living players by how many players they were first to accuse on a day who have since
    been revealed as no werewolf: a werewolf's accusations fall on villagers."""
    first: dict[tuple[int, str], str] = {}
    for day, speaker, text in seat.speeches:
        if _ACCUSING.search(text):
            for n in _MENTION.findall(text):
                first.setdefault((day, f"player_{int(n)}"), speaker)
    return Counter(
        accuser
        for (_, accused), accuser in first.items()
        if accuser != accused and accuser in seat.alive and seat.revealed.get(accused, WOLF) != WOLF
    )


def _rng(seat: SeatView, *salt: int) -> np.random.Generator:
    return np.random.default_rng([seat.seed, seat.day, *salt])


def _pick(seat: SeatView, choices: list[str], *salt: int) -> str | None:
    """One of ``choices`` (sorted first, so the draw depends on the set alone)."""
    if not choices:
        return None
    ordered = sorted(choices)
    return ordered[int(_rng(seat, *salt).integers(len(ordered)))]


def _suspect(seat: SeatView, excluded: set[str]) -> str | None:
    """The player to suspect without a seer claim: the most discredited, else the most
    accused today (ties drawn), leaving out ``excluded``."""
    return _most(seat, _discredited(seat), excluded) or _most(seat, _accused(seat), excluded)


def _most(seat: SeatView, counted: Counter[str], excluded: set[str]) -> str | None:
    counts = {p: n for p, n in counted.items() if p not in excluded}
    if not counts:
        return None
    top = max(counts.values())
    return _pick(seat, [p for p, n in counts.items() if n == top], _index(seat), 3)


def _index(seat: SeatView) -> int:
    return seat.players.index(seat.agent)


# ---------------------------------------------------------------------- the roles


def _pack_target(seat: SeatView, lie_low: bool) -> str | None:
    """Whom the werewolves accuse and vote for: a player whose seer claim names one of them;
    else the villager most accused today; else (unless ``lie_low``: speaking first draws
    suspicion) a villager drawn without the seat, so the pack agrees."""
    claim = _standing_claim(seat)
    if claim and claim[1] in seat.pack and claim[0] in seat.alive:
        return claim[0]
    accused = _most(seat, _accused(seat), set(seat.pack))
    if accused or lie_low:
        return accused
    return _pick(seat, [p for p in seat.alive if p not in seat.pack], 1)


def _night(seat: SeatView) -> str:
    candidates = [option.split()[-1] for option in seat.options]
    if seat.role == WOLF:
        claimers = [c for c, _ in seer_claims(seat) if c in candidates]
        earlier = [v for n, w, v in seat.pack_picks if n == seat.day and v in candidates]
        preferred = claimers or earlier
        target = preferred[-1] if preferred else _pick(seat, candidates, 2)
    elif seat.role == SEER:
        seen = {who for _, who, _ in seat.inspections}
        fresh = [c for c in candidates if c not in seen] or candidates
        target = _pick(seat, fresh, _index(seat), 4)
    else:  # the doctor
        claimers = [c for c, _ in seer_claims(seat) if c in candidates]
        target = claimers[-1] if claimers else seat.agent
    assert target is not None
    return next(option for option in seat.options if option.endswith(f" {target}"))


def _known_wolf(seat: SeatView) -> str | None:
    found = [who for _, who, wolf in seat.inspections if wolf and who in seat.alive]
    return found[-1] if found else None


def _speech(seat: SeatView) -> str:
    if seat.role == WOLF:
        target = _pack_target(seat, lie_low=True)
        claim = _standing_claim(seat)
        if claim and target == claim[0]:
            return f"{target} is lying; I suspect {target}."
        return f"I suspect {target} too." if target else SILENT
    if seat.role == SEER:
        wolf = _known_wolf(seat)
        return f"I am the seer: {wolf} is a werewolf. Vote for {wolf}." if wolf else SILENT
    claim = _standing_claim(seat)
    if claim and claim[1] == seat.agent and claim[0] in seat.alive:
        return f"{claim[0]} is lying: I am no werewolf. I suspect {claim[0]}."
    if claim and claim[1] != seat.agent:
        return f"I suspect {claim[1]}: the seer named them."
    suspect = _suspect(seat, {seat.agent})
    return f"I suspect {suspect}." if suspect else SILENT


def _ballot(seat: SeatView) -> str | None:
    """Whom to vote for (``None``: abstain)."""
    if seat.role == WOLF:
        return _pack_target(seat, lie_low=True)
    if seat.role == SEER:
        cleared = {who for _, who, wolf in seat.inspections if not wolf}
        return _known_wolf(seat) or _suspect(seat, cleared | {seat.agent})
    claim = _standing_claim(seat)
    if claim and claim[1] != seat.agent:
        return claim[1]
    if claim and claim[0] in seat.alive:  # it names this villager: the claimer lies
        return claim[0]
    return _suspect(seat, {seat.agent})
