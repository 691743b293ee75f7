"""The conformance checker for multi-agent (PettingZoo) envs: :func:`check_multiagent_env`.

The same idea as :mod:`agentgym.checker`, over PettingZoo's AEC and parallel APIs: PettingZoo's
own ``api_test`` first, then the agentgym contract, each check raising its own
:class:`~agentgym.errors.ConformanceError` subclass with an exact message.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium.utils.env_checker import data_equivalence

from agentgym.checker import (  # the determinism check's shared parts, private there
    _LIKELY_CAUSE,
    BLIND_TASKS,
    BLIND_TASKS_AT_CHANCE,
    WORDLESS_ACTIONS,
    CheckReport,
    EnvFactory,
    _globals_drawn_apart,
    chance_bound,
    check_close,
    check_leaks,
    declared_chance,
)
from agentgym.checking import drawn_tasks, made, more_tasks
from agentgym.core import Verdict
from agentgym.errors import (
    BadActionError,
    DeterminismError,
    InfoContractError,
    InfrastructureError,
    OracleError,
    PettingZooCheckError,
    TaskBlindError,
    UsageError,
)
from agentgym.multiagent import RandomPlayer, play_game

__all__ = [
    "MULTIAGENT_CHECKS",
    "TEXT_ENV_WARNINGS",
    "check_multiagent_env",
    "check_pettingzoo",
]

MULTIAGENT_CHECKS = (
    "pettingzoo",
    "info_contract",
    "oracle",
    "determinism",
    "task_blind",
    "legal_actions",
    "bad_actions",
    "close",
    "leaks",
)

# PettingZoo's api_test recommends NumPy observations and Box/Discrete spaces; text envs
# cannot follow that advice, so these three warnings (and only these) are accepted.
TEXT_ENV_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or "
    "gymnasium.spaces.discrete",
    "Action space for each agent probably should be gymnasium.spaces.box or "
    "gymnasium.spaces.discrete",
)


def check_multiagent_env(
    env: str | EnvFactory,
    *,
    seed: int = 0,
    tasks_per_split: int = 1,
    leak_cycles: int = 200,
    skip: Sequence[str] = (),
) -> CheckReport:
    """Check a PettingZoo (AEC or parallel) env against the contract.

    Runs PettingZoo's own tests (:func:`check_pettingzoo`: ``api_test`` or
    ``parallel_api_test``, then ``seed_test`` or ``parallel_seed_test``), then:
    ``instructions`` and ``state_key`` in every agent's info; the oracle, playing every seat,
    finishes sampled games of every split without an invalid action and every agent gets a
    verdict; real games replayed from the same seed are the same game, step by step
    (:func:`check_multi_determinism`); a seat that repeats one move, whatever the board,
    scores no more than chance against the oracle in the other seats
    (:func:`check_multi_task_blind`); listed legal moves are accepted
    (:func:`check_multi_legal_actions`); malformed actions are feedback, counted, and the
    ``max_invalid_actions``-th forfeits; ``close()`` is idempotent; nothing leaks over
    ``leak_cycles`` cycles.

    Args:
        env: a multi-agent env id or a zero-argument factory.
        seed, tasks_per_split, leak_cycles, skip: as for :func:`check_env`.
    """
    if isinstance(env, str):
        from agentgym.registry import make_multi

        env_id = env
        make_multi(env_id).close()
        factory: Callable[[], Any] = lambda: make_multi(env_id)  # noqa: E731
    elif callable(env):
        factory = env
        with made(factory) as probe:
            env_id = str(probe.unwrapped.metadata.get("name", type(probe.unwrapped).__name__))
    else:
        raise UsageError(
            f"check_multiagent_env() takes an id or a factory, got {type(env).__name__}"
        )
    report = CheckReport.begin(env_id, skip, MULTIAGENT_CHECKS)
    run = report.run
    with made(factory) as probe:
        tasks = drawn_tasks(probe.unwrapped.tasks, seed, tasks_per_split)

    def oracle() -> None:
        report.oracle_tasks = list(tasks)
        for task_id in tasks:
            _check_oracle_game(factory, env_id, task_id, seed)
        report.oracle_mean_score = 1.0

    run("pettingzoo", lambda: check_pettingzoo(factory, env_id))
    run("info_contract", lambda: _check_multi_info(factory, env_id, seed))
    run("oracle", oracle)
    run("determinism", lambda: check_multi_determinism(factory, env_id, tasks[0], seed))

    def task_blind() -> None:
        report.blind_scores = check_multi_task_blind(factory, env_id, tasks, seed)

    run("task_blind", task_blind)
    run("legal_actions", lambda: check_multi_legal_actions(factory, env_id, seed))

    def bad_actions() -> None:
        _check_multi_bad_actions(factory, env_id, seed)
        _check_multi_forfeit(factory, env_id, seed)

    run("bad_actions", bad_actions)
    run("close", lambda: check_close(factory, env_id))
    run(
        "leaks",
        lambda: check_leaks(
            factory,
            env_id,
            leak_cycles,
            seed,
            touch=lambda e, i: _play_game(
                e,
                None,
                seed + i % 3,
                _leak_policy(np.random.default_rng(i), oracle=i % LEAK_ORACLE_EVERY == 0),
                limit=4,
            ),
        ),
    )
    return report


def _is_parallel(env: Any) -> bool:
    import pettingzoo

    return isinstance(env.unwrapped, pettingzoo.ParallelEnv)


def check_pettingzoo(factory: Callable[[], Any], env_id: str, cycles: int = 200) -> None:
    """PettingZoo's own tests: ``api_test`` (AEC) or ``parallel_api_test``, then ``seed_test``
    or ``parallel_seed_test`` (two envs from ``factory``, one seed, the same sampled actions:
    the same game), ``cycles`` cycles each; a failure or a warning beyond
    :data:`TEXT_ENV_WARNINGS` raises :class:`~agentgym.errors.PettingZooCheckError`."""
    from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

    with made(factory) as env, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel = _is_parallel(env)
        tests: list[tuple[str, Callable[[], object]]] = (
            [("parallel_api_test", lambda: parallel_api_test(env, num_cycles=cycles))]
            if parallel
            else [("api_test", lambda: api_test(env, num_cycles=cycles))]
        )
        # PettingZoo's seed tests are unannotated; this is their signature.
        seeded: Callable[..., None] = parallel_seed_test if parallel else seed_test
        name = "parallel_seed_test" if parallel else "seed_test"
        tests.append((name, lambda: seeded(factory, num_cycles=cycles)))
        for test, run in tests:
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    run()
            except InfrastructureError:  # no breach: CheckReport.run retries it
                raise
            except Exception as error:
                raise PettingZooCheckError(
                    f"{env_id}: PettingZoo's {test} failed: {type(error).__name__}: {error}"
                ) from error
    messages = sorted(
        {str(w.message) for w in caught if "pettingzoo" in (w.filename or "")}
        - set(TEXT_ENV_WARNINGS)
    )
    if messages:
        raise PettingZooCheckError(
            f"{env_id}: PettingZoo's api test warned: " + " | ".join(messages)
        )


PolicyFn = Callable[[Any, str], Any]


def _leak_policy(rng: np.random.Generator, oracle: bool) -> PolicyFn:
    """The leak check's moves: the oracle's first move where ``oracle`` (it may hold an
    engine, whose process must not leak), then random legal moves where the game lists them
    and random text half the time, so an expensive oracle is not paid for on every cycle."""
    asked = False

    def act(env: Any, agent: str) -> Any:
        nonlocal asked
        if oracle and not asked:
            asked = True
            move = _oracle_policy(env, agent)
            if move is not None:
                return move
        legal = _legal_moves(env, agent)
        if legal and rng.random() < 0.5:
            return legal[int(rng.integers(len(legal)))]
        return _random_text(env, agent, rng)

    return act


LEAK_ORACLE_EVERY = 10
"""The leak check asks the oracle for a move in one cycle of this many: an oracle that leaks
an engine process per call still grows the count, which is all the check needs."""


def _oracle_policy(env: Any, agent: str) -> Any:
    return env.unwrapped.oracle_action(agent)


def _legal_moves(env: Any, agent: str) -> list[str] | None:
    """The game's legal moves for ``agent`` now, or ``None`` where it lists none."""
    game = env.unwrapped
    listing = getattr(game, "legal_actions", None)
    return None if listing is None else listing(game.world, agent)


def _random_text(env: Any, agent: str, rng: np.random.Generator) -> str:
    space = env.action_space(agent)
    space.seed(int(rng.integers(2**31)))
    return str(space.sample())


def _oracle_or_legal(rng: np.random.Generator) -> PolicyFn:
    """The oracle's move; a random legal one (random text where none is listed) if it has
    none for the agent to move."""

    def act(env: Any, agent: str) -> Any:
        move = _oracle_policy(env, agent)
        if move is not None:
            return move
        legal = _legal_moves(env, agent)
        return legal[int(rng.integers(len(legal)))] if legal else _random_text(env, agent, rng)

    return act


def _mixed_policy(rng: np.random.Generator) -> PolicyFn:
    """A fifth invalid text (one mistake short of a forfeit at most, per agent), three
    fifths random legal moves where the game lists them, the oracle's moves otherwise (an
    engine's moves cost time)."""
    mistakes: Counter[str] = Counter()
    fallback = _oracle_or_legal(rng)

    def act(env: Any, agent: str) -> Any:
        draw = rng.random()
        if draw < 0.2 and mistakes[agent] < env.unwrapped.max_invalid_actions - 1:
            mistakes[agent] += 1
            return _random_text(env, agent, rng)
        legal = _legal_moves(env, agent)
        if draw < 0.8 and legal:
            return legal[int(rng.integers(len(legal)))]
        return fallback(env, agent)

    return act


def _play_game(
    env: Any, task_id: str | None, seed: int, policy: PolicyFn, limit: int = 10_000
) -> tuple[list[Any], dict[str, dict[str, Any]]]:
    """Play one game; returns the transcript and every agent's last info."""
    options = {"task_id": task_id} if task_id else None
    transcript: list[Any] = []
    if _is_parallel(env):
        observations, infos = env.reset(seed=seed, options=options)
        transcript.append((observations, infos))
        last = dict(infos)
        for _ in range(limit):
            if not env.agents:
                break
            actions = {agent: policy(env, agent) for agent in env.agents}
            step = env.step(actions)
            transcript.append(step)
            last.update(step[4])
        return transcript, last
    env.reset(seed=seed, options=options)
    last = {}
    for count, agent in enumerate(env.agent_iter()):
        observation, reward, terminated, truncated, info = env.last()
        transcript.append((agent, str(observation), reward, terminated, truncated, info))
        last[agent] = info
        if count >= limit:
            break
        env.step(None if terminated or truncated else policy(env, agent))
    return transcript, last


def _check_multi_info(factory: Callable[[], Any], env_id: str, seed: int) -> None:
    with made(factory) as env:
        if _is_parallel(env):
            _, infos = env.reset(seed=seed)
        else:
            env.reset(seed=seed)
            infos = env.infos
        for agent in env.possible_agents:
            info = infos.get(agent, {})
            if not isinstance(info.get("instructions"), str) or not info["instructions"].strip():
                raise InfoContractError(
                    f"{env_id}: reset must give every agent 'instructions' in its info; "
                    f"{agent} has {info.get('instructions')!r:.60}"
                )
            if not isinstance(info.get("state_key"), str) or not info["state_key"]:
                raise InfoContractError(
                    f"{env_id}: every agent's info must carry 'state_key' (a non-empty str); "
                    f"{agent} has {info.get('state_key')!r:.60}"
                )


def _check_oracle_game(factory: Callable[[], Any], env_id: str, task_id: str, seed: int) -> None:
    with made(factory) as env:
        transcript, last = _play_game(env, task_id, seed, _oracle_policy)
    for agent, info in last.items():
        if info.get("invalid_actions"):
            raise OracleError(
                f"{env_id}: the oracle playing {agent} made {info['invalid_actions']} invalid "
                f"action(s) on task {task_id!r} (seed {seed})"
            )
        if not isinstance(info.get("verdict"), Verdict):
            raise OracleError(
                f"{env_id}: oracle self-play on task {task_id!r} (seed {seed}) ended after "
                f"{len(transcript)} turns without a verdict for {agent}: the game did not finish"
            )


def check_multi_determinism(
    factory: Callable[[], Any], env_id: str, task_id: str, seed: int
) -> None:
    """Two fresh envs, the same seed, task and actions: the same game, turn by turn.

    The first env plays real games (:func:`_record_games`): oracle self-play, a game of mixed
    moves (the oracle's, random legal ones where the env lists them, and invalid text, short
    of a forfeit), and the mixed game again from a reset by the seed alone (the seed must pick
    the task too), :data:`DETERMINISM_TURNS` turns each at most. The second env replays the
    same actions; after the reset and every step, every live agent's observation, reward,
    termination, truncation and info (``state_key`` first) must be what they were, and in an
    AEC env the agent to move too. The two replays run with the global random generators and
    the clock drawn apart, as the single-agent check's do
    (:func:`agentgym.checker.check_determinism`).
    """
    with _globals_drawn_apart(0), made(factory) as env:
        recorded = _record_games(env, task_id, seed)
    with _globals_drawn_apart(1), made(factory) as env:
        for game in recorded:
            _replay_game(env, game, env_id, seed)


DETERMINISM_TURNS = 60
"""Turns each game of the determinism check plays at most."""


@dataclass
class _Game:
    """One game of the determinism check's first run: how it was reset, the actions played
    (one per AEC step, a dict per parallel step) and what every agent saw after each."""

    name: str
    task_id: str | None
    actions: list[Any] = field(default_factory=list)
    views: list[list[tuple[str, Any]]] = field(default_factory=list)


def _record_games(env: Any, task_id: str, seed: int) -> list[_Game]:
    rng = np.random.default_rng(seed)
    return [
        _record(env, _Game("oracle self-play", task_id), seed, _oracle_or_legal(rng)),
        _record(env, _Game("mixed moves", task_id), seed, _mixed_policy(rng)),
        _record(env, _Game("mixed moves, reset by the seed alone", None), seed, _mixed_policy(rng)),
    ]


def _record(env: Any, game: _Game, seed: int, policy: PolicyFn) -> _Game:
    """Play ``game`` with ``policy``, recording each action and the view after it."""
    options = None if game.task_id is None else {"task_id": game.task_id}
    game.views.append(_view(env, env.reset(seed=seed, options=options)))
    while len(game.actions) < DETERMINISM_TURNS and env.agents:
        if _is_parallel(env):
            action: Any = {agent: policy(env, agent) for agent in env.agents}
        else:
            agent = env.agent_selection
            done = env.terminations[agent] or env.truncations[agent]
            action = None if done else policy(env, agent)
        game.actions.append(action)
        game.views.append(_view(env, env.step(action)))
    return game


_RESET_FIELDS = ("observation", "info")
_STEP_FIELDS = ("observation", "reward", "terminated", "truncated", "info")


def _view(env: Any, returned: Any) -> list[tuple[str, Any]]:
    """What every live agent sees now, as ``(name, value)`` pairs, ``state_key`` first."""
    if _is_parallel(env):
        names = _RESET_FIELDS if len(returned) == 2 else _STEP_FIELDS
        fields: dict[str, Any] = dict(zip(names, returned, strict=True))
    else:
        fields = {
            "agent to move": env.agent_selection if env.agents else None,
            "observation": {a: str(env.observe(a)) for a in env.agents},
            "reward": dict(env.rewards),
            "terminated": dict(env.terminations),
            "truncated": dict(env.truncations),
            "info": env.infos,
        }
    infos = fields.pop("info")
    pairs = [(f"{a}'s info['state_key']", info.get("state_key")) for a, info in infos.items()]
    pairs += [(name, copy.deepcopy(value)) for name, value in fields.items()]
    for agent, info in infos.items():
        pairs += [(f"{agent}'s info[{key!r}]", copy.deepcopy(info[key])) for key in sorted(info)]
    return pairs


def _replay_game(env: Any, game: _Game, env_id: str, seed: int) -> None:
    """Play ``game``'s actions again; raise at the first view that differs."""
    options = None if game.task_id is None else {"task_id": game.task_id}
    views = itertools.chain(
        [_view(env, env.reset(seed=seed, options=options))],
        (_view(env, env.step(action)) for action in game.actions),
    )
    for index, (first, again) in enumerate(zip(game.views, views, strict=True)):
        difference = _first_difference(first, again)
        if difference is None:
            continue
        name, x, y = difference
        where = "reset" if index == 0 else f"step {index} ({game.actions[index - 1]!r:.80})"
        episode = (
            f"the same seed {seed} and task {game.task_id!r}"
            if game.task_id is not None
            else f"the same seed {seed} (no task id: the seed picks the task)"
        )
        raise DeterminismError(
            f"{env_id}: {episode} gave different games playing {game.name}, first at {where}: "
            f"{name} differs: {x!r:.200} vs {y!r:.200}. {_LIKELY_CAUSE}"
        )


def _first_difference(
    first: list[tuple[str, Any]], again: list[tuple[str, Any]]
) -> tuple[str, Any, Any] | None:
    missing = "(missing)"
    seen, other = dict(first), dict(again)
    for name in [*seen, *(n for n in other if n not in seen)]:
        x, y = seen.get(name, missing), other.get(name, missing)
        if x is missing or y is missing or not data_equivalence(x, y, exact=True):
            return name, x, y
    return None


def check_multi_task_blind(
    factory: Callable[[], Any], env_id: str, tasks: Sequence[str], seed: int
) -> dict[str, float]:
    """A seat that repeats one move, whatever it is shown, scores no more than chance against
    the oracle (the env's reference player) in every other seat; returns each seat's mean score.

    The move is the seat's first in oracle self-play of one sampled task (valid at least
    there), repeated in every game whatever the board. Each seat plays ``BLIND_TASKS``
    sampled tasks (``BLIND_TASKS_AT_CHANCE`` where the env declares
    ``metadata["chance_score"]`` above 0, as a draw-prone game might); the bound is
    :func:`~agentgym.checker.chance_bound`. A game that does not finish counts 0.
    """
    with made(factory) as env:
        chance = declared_chance(env, env_id)
        count = BLIND_TASKS if chance == 0 else BLIND_TASKS_AT_CHANCE
        targets = more_tasks(env, tasks, seed, count)[:count]
        moves = _first_oracle_moves(env, tasks[1 % len(tasks)], seed)
        means = {}
        for agent in env.possible_agents:
            move = moves.get(agent)
            if move is None:
                continue
            scores = [_blind_seat_score(env, task, seed, agent, move) for task in targets]
            means[agent] = float(np.mean(scores))
            if means[agent] > chance_bound(chance, len(scores)) + 1e-9:
                limit = "chance 0: no win or draw at all" if chance == 0 else f"chance {chance:g}"
                raise TaskBlindError(
                    f"{env_id}: {agent} repeating {move!r:.60} whatever it was shown scored "
                    f"{means[agent]:.3f} of the maximum on average over {len(scores)} games "
                    f"against the oracle (the bound is {limit}; scores per game "
                    f"{[round(x, 3) for x in scores]} on tasks {targets}, seed {seed}). The "
                    f"reference player or the verdict gives away what a blind seat should not "
                    f"earn; a game where a guess does this well declares "
                    f"metadata['chance_score']"
                )
    return means


def _first_oracle_moves(env: Any, task_id: str, seed: int) -> dict[str, Any]:
    """Each agent's first move in oracle self-play of ``task_id``."""
    first: dict[str, Any] = {}

    def recording(game: Any, agent: str) -> Any:
        move = _oracle_policy(game, agent)
        if move is not None:
            first.setdefault(agent, move)
        return move

    _play_game(env, task_id, seed, recording)
    return first


def _blind_seat_score(env: Any, task_id: str, seed: int, seat: str, move: Any) -> float:
    """``seat``'s score, a fraction of the maximum, repeating ``move`` against the oracle."""

    def policy(game: Any, agent: str) -> Any:
        return move if agent == seat else _oracle_policy(game, agent)

    _, last = _play_game(env, task_id, seed, policy, limit=BLIND_GAME_TURNS)
    verdict = last.get(seat, {}).get("verdict")
    if not isinstance(verdict, Verdict) or verdict.max_score <= 0:
        return 0.0
    return verdict.score / verdict.max_score


BLIND_GAME_TURNS = 500
"""Turns a game of the task-blind check plays at most (a blind seat's invalid moves forfeit)."""


def _check_multi_bad_actions(factory: Callable[[], Any], env_id: str, seed: int) -> None:
    with made(factory) as env:
        for action in WORDLESS_ACTIONS:
            if _is_parallel(env):
                env.reset(seed=seed)
                agent = env.agents[0]
                others = {a: env.unwrapped.oracle_action(a) for a in env.agents[1:]}
                try:
                    infos = env.step({agent: action, **others})[4]
                except InfrastructureError:  # no breach: CheckReport.run retries it
                    raise
                except Exception as error:
                    raise _bad_action(env_id, action, error) from error
                invalid = infos[agent].get("invalid_action")
            else:
                env.reset(seed=seed)
                agent = env.agent_selection
                try:
                    env.step(action)
                except InfrastructureError:  # no breach: CheckReport.run retries it
                    raise
                except Exception as error:
                    raise _bad_action(env_id, action, error) from error
                invalid = env.infos[agent].get("invalid_action")
            if invalid is not True:
                raise BadActionError(
                    f"{env_id}: {agent}'s action {action!r:.40} was accepted; expected "
                    f"info['invalid_action'] = True and feedback in its next observation"
                )


def _check_multi_forfeit(factory: Callable[[], Any], env_id: str, seed: int) -> None:
    """An agent whose every action is invalid (the others playing the oracle) has them
    counted in ``info["invalid_actions"]`` and loses (score 0) by its ``max_invalid_actions``-th
    mistake at the latest."""
    with made(factory) as env:
        limit = env.unwrapped.max_invalid_actions
        if not 1 <= limit <= MAX_INVALID_LIMIT:
            raise BadActionError(
                f"{env_id}: max_invalid_actions = {limit!r}; it must be 1 to "
                f"{MAX_INVALID_LIMIT}: an agent whose every action is invalid may not stall a "
                f"game longer"
            )
        action = WORDLESS_ACTIONS[0]
        if _is_parallel(env):
            env.reset(seed=seed)
            agent, rounds, infos = env.agents[0], 0, {}
            while env.agents and rounds < limit:
                others = {a: _oracle_policy(env, a) for a in env.agents if a != agent}
                infos = env.step({agent: action, **others})[4]
                rounds += 1
            info = infos.get(agent, {})
        else:
            env.reset(seed=seed)
            agent, rounds = env.agent_selection, 0
            while rounds < limit and not env.terminations[agent]:
                env.step(action)
                rounds += 1
            info = env.infos[agent]
        verdict = info.get("verdict")
        if info.get("invalid_actions") != rounds:
            raise BadActionError(
                f"{env_id}: {agent} made {rounds} invalid action(s) ({action!r}) but its "
                f"info['invalid_actions'] is {info.get('invalid_actions')!r}"
            )
        if not isinstance(verdict, Verdict) or verdict.score > 0:
            raise BadActionError(
                f"{env_id}: {agent} made {rounds} invalid action(s) ({action!r}; the limit is "
                f"max_invalid_actions = {limit}) and was given {verdict!r:.120}; it must have "
                f"lost (a verdict with score 0): a limit of mistakes forfeits the game"
            )


MAX_INVALID_LIMIT = 100
"""The largest ``max_invalid_actions`` a game may set."""


def check_multi_legal_actions(factory: Callable[[], Any], env_id: str, seed: int) -> None:
    """Where the game lists legal moves (``info["legal_actions"]``), they are legal: a game of
    :class:`~agentgym.multiagent.RandomPlayer` in every seat, which plays only listed moves,
    has none of them refused, and the agent to move always has one listed. A game that lists
    none passes."""
    with made(factory) as env:
        if _is_parallel(env):
            infos = env.reset(seed=seed)[1]
        else:
            env.reset(seed=seed)
            infos = env.infos
        if not any("legal_actions" in info for info in infos.values()):
            return
        for agent, info in infos.items():
            listed = info.get("legal_actions")
            if not isinstance(listed, list) or not all(isinstance(a, str) for a in listed):
                raise InfoContractError(
                    f"{env_id}: info['legal_actions'] must be a list of str for every agent; "
                    f"{agent} has {listed!r:.80}"
                )
        seats = {agent: RandomPlayer(seed=seed) for agent in env.possible_agents}
        try:
            result = play_game(env, seats, seed, max_turns=LEGAL_GAME_TURNS)
        except UsageError as error:  # RandomPlayer found no legal move for the agent to move
            raise InfoContractError(f"{env_id}: {error} (seed {seed})") from error
    refused = {a: n for a, n in result.invalid_actions.items() if n}
    if refused:
        raise InfoContractError(
            f"{env_id}: moves listed in info['legal_actions'] were refused as invalid "
            f"{refused} time(s) per agent in a game of random listed moves (seed {seed}, task "
            f"{result.task_id!r}, moves {result.moves[:40]!r:.400})"
        )


LEGAL_GAME_TURNS = 1_000
"""Turns the legal-actions check's random game plays at most (it need not finish)."""


def _bad_action(env_id: str, action: str, error: Exception) -> BadActionError:
    return BadActionError(
        f"{env_id}: the action {action!r:.40} raised {type(error).__name__}: {error}; a "
        f"malformed action is the agent's mistake and must come back as feedback"
    )
