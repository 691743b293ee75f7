"""The conformance checker for multi-agent (PettingZoo) envs: :func:`check_multiagent_env`.

The same idea as :mod:`agentgym.checker`, over PettingZoo's AEC and parallel APIs: PettingZoo's
own ``api_test`` first, then the agentgym contract, each check raising its own
:class:`~agentgym.errors.ConformanceError` subclass with an exact message.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium.utils.env_checker import data_equivalence

from agentgym.checker import (
    BLIND_TASKS,
    BLIND_TASKS_AT_CHANCE,
    WORDLESS_ACTIONS,
    CheckReport,
    EnvFactory,
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

__all__ = ["MULTIAGENT_CHECKS", "TEXT_ENV_WARNINGS", "check_multiagent_env"]

MULTIAGENT_CHECKS = (
    "pettingzoo",
    "info_contract",
    "oracle",
    "determinism",
    "task_blind",
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

    Runs PettingZoo's ``api_test`` or ``parallel_api_test`` (warnings count as failures, but
    for the three that text observations cannot avoid: :data:`TEXT_ENV_WARNINGS`), then:
    ``instructions`` and ``state_key`` in every agent's info; the oracle, playing every seat,
    finishes sampled games of every split without an invalid action and every agent gets a
    verdict; same seed and actions give the same game; a seat that repeats one move, whatever
    the board, scores no more than chance against the oracle in the other seats
    (:func:`check_multi_task_blind`); malformed actions are feedback;
    ``close()`` is idempotent; nothing leaks over ``leak_cycles`` cycles.

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

    run("pettingzoo", lambda: _check_pettingzoo(factory, env_id))
    run("info_contract", lambda: _check_multi_info(factory, env_id, seed))
    run("oracle", oracle)
    run("determinism", lambda: _check_multi_determinism(factory, env_id, tasks[0], seed))

    def task_blind() -> None:
        report.blind_scores = check_multi_task_blind(factory, env_id, tasks, seed)

    run("task_blind", task_blind)
    run("bad_actions", lambda: _check_multi_bad_actions(factory, env_id, seed))
    run("close", lambda: check_close(factory, env_id))
    run(
        "leaks",
        lambda: check_leaks(
            factory,
            env_id,
            leak_cycles,
            seed,
            touch=lambda e, i: _play_game(
                e, None, seed + i % 3, _random_policy(np.random.default_rng(i)), limit=4
            ),
        ),
    )
    return report


def _is_parallel(env: Any) -> bool:
    import pettingzoo

    return isinstance(env.unwrapped, pettingzoo.ParallelEnv)


def _check_pettingzoo(factory: Callable[[], Any], env_id: str) -> None:
    from pettingzoo.test import api_test, parallel_api_test

    with made(factory) as env, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                if _is_parallel(env):
                    parallel_api_test(env, num_cycles=200)
                else:
                    api_test(env, num_cycles=200)
        except InfrastructureError:  # no breach: CheckReport.run retries it
            raise
        except Exception as error:
            test = "parallel_api_test" if _is_parallel(env) else "api_test"
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


def _random_policy(rng: np.random.Generator) -> PolicyFn:
    """Oracle moves half the time (so games advance), random text otherwise."""

    def act(env: Any, agent: str) -> Any:
        if rng.random() < 0.5:
            move = env.unwrapped.oracle_action(agent)
            if move is not None:
                return move
        space = env.action_space(agent)
        space.seed(int(rng.integers(2**31)))
        return space.sample()

    return act


def _oracle_policy(env: Any, agent: str) -> Any:
    return env.unwrapped.oracle_action(agent)


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


def _check_multi_determinism(
    factory: Callable[[], Any], env_id: str, task_id: str, seed: int
) -> None:
    runs = []
    for _ in range(2):
        with made(factory) as env:
            runs.append(
                _play_game(
                    env, task_id, seed, _random_policy(np.random.default_rng(seed)), limit=60
                )[0]
            )
    if not data_equivalence(runs[0], runs[1], exact=True):
        index = next(
            (
                i
                for i, (a, b) in enumerate(zip(*runs, strict=False))
                if not data_equivalence(a, b, exact=True)
            ),
            min(len(runs[0]), len(runs[1])),
        )
        raise DeterminismError(
            f"{env_id}: the same seed {seed}, task {task_id!r} and actions gave different games "
            f"at turn {index}"
        )


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


def _bad_action(env_id: str, action: str, error: Exception) -> BadActionError:
    return BadActionError(
        f"{env_id}: the action {action!r:.40} raised {type(error).__name__}: {error}; a "
        f"malformed action is the agent's mistake and must come back as feedback"
    )
