"""Re-scoring by replay: the one code path that turns a bundle into numbers the board can rank,
used by the server and by ``agentgym leaderboard verify`` alike.

A submitter's record says which actions the agent took and what the env answered. Only the
actions are evidence: the env is deterministic given its seed and task, so the server resets
it as the run did, applies the recorded actions in order, checks that every observation,
reward and end flag it gets equals the record, and takes the verdict from the env's own
verifier at the end. An episode whose record does not replay (an edited observation or
reward, an action changed after the fact, steps after the end, a record that stops early)
is a ``mismatch``: it fails, whatever its record claims. Nothing the submitter computed is
ranked; the record's own score is kept as ``claimed_score`` to show where it differs.

Before any replay the bundle must be *for this benchmark*: the manifest's benchmark hash is
the board's, every episode is one of the plan's (``env|task|repeat``) with the plan's seed,
split and env arguments, and none appears twice; and its users must be the envs' own
scripted ones (:func:`check_users`: a model user's messages are the submitter's evidence,
which a replay can only play back). Missing episodes and errored ones count as
failures; when they and the mismatches are more than ``max_uncounted`` of the plan, the
bundle is refused (:class:`~agentgym.leaderboard.bundle.BundleRejected`): an agent cannot
improve its rate by dropping the episodes it lost.

What the replay also notices, for a maintainer (``Rescore.flags``; nothing is rejected for
them): episodes of two or more steps whose every action is the env oracle's (copied
solutions; a single right answer is every solver's, so it proves nothing), token counts that
disagree with the recorded token ids, and claimed scores that differ from the replay.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import agentgym
from agentgym.agents import RecordedUser
from agentgym.core import Verdict
from agentgym.eval import Benchmark, EpisodePlan, episode_passed, episode_score, plan_env
from agentgym.leaderboard.bundle import Bundle, BundleRejected
from agentgym.leaderboard.results import Rescore, ScoredEpisode
from agentgym.ledger import EpisodeRecord, jsonable

__all__ = [
    "BOARD_USERS",
    "ORACLE_SHARE_FLAG",
    "check_users",
    "replay_episode",
    "rescore",
    "scorer_version",
]

BOARD_USERS = ("scripted",)
"""Who may play the user in a run a board ranks: each env's own scripted user (an env
without a user needs none). A model that played the user (``agentgym eval --user``) is the
submitter's code: a replay can only play its recorded messages back, and cannot tell a
model's from a colluding user's (a patient who names the condition), so such a run is
refused, never ranked."""

ORACLE_SHARE_FLAG = 0.2
"""Flag a bundle where more than this share of the passed episodes of two or more steps (the
ones that can show a copy) take exactly the oracle's actions."""
TIMING_RETRIES = 2
"""Replays more, one at a time once the others are done, of an episode of a timing-dependent
env (``metadata["replay"] == "verdict"``) that did not play out as recorded, before it
counts as a mismatch."""


def rescore(
    bundle: Bundle,
    benchmark: Benchmark,
    *,
    replay: bool = True,
    max_uncounted: float = 0.1,
    workers: int = 4,
    progress: Callable[[int, int], None] | None = None,
) -> Rescore:
    """Check ``bundle`` against ``benchmark`` (the board's own copy, not the bundle's) and
    score every episode of its plan.

    Args:
        replay: replay every episode (tier ``re-scored``); False reads the records as they
            are (tier ``self-reported``: format and plan checks only).
        max_uncounted: the largest share of the plan that may be missing, errored or not
            replay before the bundle is refused.
        workers: episodes replayed at once (threads: envs that wait on a browser or a
            sandbox overlap; pure-Python envs gain little).
        progress: called with (episodes done, episodes in all).
    """
    started = time.monotonic()
    check_users(bundle)
    _check_benchmark(bundle, benchmark)
    plans = benchmark.plan()
    records = _match_plan(bundle.episodes, plans)
    judge = _replayed if replay else _as_recorded

    def one(plan: EpisodePlan) -> ScoredEpisode:
        record = records.get(plan.episode_id)
        if record is None:
            return ScoredEpisode(
                plan.episode_id, plan.env_id, plan.task_id, plan.repeat, plan.seed, "missing",
                reason="not in the bundle",
            )  # fmt: skip
        if record.status == "errored":
            return _scored(plan, record, "errored", None, reason=record.error or "errored")
        return judge(plan, record)

    done = 0
    scored: list[ScoredEpisode] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for episode in pool.map(one, plans):
            scored.append(episode)
            done += 1
            if progress is not None:
                progress(done, len(plans))
    if replay:
        _replay_mismatches_again(plans, records, scored)
    _check_counted(scored, max_uncounted)
    return Rescore(
        benchmark=benchmark.name,
        benchmark_version=benchmark.version,
        benchmark_hash=benchmark.digest(),
        tier="re-scored" if replay else "self-reported",
        episodes=scored,
        scorer_version=scorer_version(benchmark),
        flags=_flags(scored, bundle.episodes),
        seconds=time.monotonic() - started,
    )


def _check_benchmark(bundle: Bundle, benchmark: Benchmark) -> None:
    """Refuse a run made for another benchmark (or another version of it) than the board's."""
    recorded = bundle.manifest.get("benchmark_hash")
    if recorded != benchmark.digest():
        raise BundleRejected(
            f"the run was made for a different benchmark: its hash is {str(recorded)[:12]}..., "
            f"{benchmark.name} v{benchmark.version}'s is {benchmark.digest()[:12]}... (run "
            f"`agentgym eval --benchmark {benchmark.name}` with this agentgym)"
        )


def _replay_mismatches_again(
    plans: list[EpisodePlan], records: dict[str, EpisodeRecord], scored: list[ScoredEpisode]
) -> None:
    """Replay each mismatch of an env whose replays need not be exact again, alone, up to
    :data:`TIMING_RETRIES` times: a page's timers can end a replay elsewhere under load."""
    for index, episode in enumerate(scored):
        plan = plans[index]
        for _ in range(TIMING_RETRIES):
            if episode.outcome != "mismatch" or _exact(plan.env_id):
                break
            episode = scored[index] = _replayed(plan, records[plan.episode_id])


def _check_counted(scored: list[ScoredEpisode], max_uncounted: float) -> None:
    """Refuse a bundle of which over ``max_uncounted`` of the plan cannot be scored."""
    uncounted = sum(not e.counted for e in scored)
    if uncounted > max_uncounted * len(scored):
        kinds = {k: sum(e.outcome == k for e in scored) for k in ("missing", "errored", "mismatch")}
        raise BundleRejected(
            f"{uncounted} of {len(scored)} episodes cannot be scored ({kinds}); at most "
            f"{max_uncounted:.0%} may be (re-run the errored ones with `agentgym eval --resume`)"
        )


def check_users(bundle: Bundle) -> None:
    """Refuse a run in which anyone but the envs' own scripted users played the user
    (:data:`BOARD_USERS`): the manifest's ``user``, any episode's ``spec.user`` or recorded
    user turns."""
    named = bundle.manifest.get("user")
    if named is None:
        played = next((r for r in bundle.episodes if r.spec.user or r.user_turns), None)
        if played is None:
            return
        named = played.spec.user or "a model"
    raise BundleRejected(
        f"the run's user was played by {str(named)[:80]!r} (agentgym eval --user); a board "
        f"ranks only runs with each env's own scripted user, since a replay cannot tell a "
        f"model's messages from a colluding user's (run it again without --user)"
    )


def scorer_version(benchmark: Benchmark) -> str:
    """Which code judged: this agentgym and the version of every env of the benchmark (an
    env's verifier changes only with its version)."""
    envs = ",".join(sorted({env.id for env in benchmark.envs}))
    return f"agentgym {agentgym.__version__}; {envs}"


def _match_plan(
    episodes: list[EpisodeRecord], plans: list[EpisodePlan]
) -> dict[str, EpisodeRecord]:
    """The records by plan id, after checking each is one of the plan's, as planned."""
    by_id = {plan.episode_id: plan for plan in plans}
    records: dict[str, EpisodeRecord] = {}
    for record in episodes:
        key = record.episode_id
        plan = by_id.get(key)
        if plan is None:
            raise BundleRejected(f"episode {key[:120]!r} is not in the benchmark's plan")
        if key in records:
            raise BundleRejected(f"episode {key[:120]!r} appears twice in the bundle")
        spec = record.spec
        planned = (plan.env_id, plan.task_id, plan.seed, plan.split, plan.env_kwargs)
        actual = (spec.env_id, spec.task_id, spec.seed, spec.split, spec.env_kwargs)
        if actual != planned:
            field = ("env", "task", "seed", "split", "env kwargs")[
                next(i for i, (a, b) in enumerate(zip(actual, planned, strict=True)) if a != b)
            ]
            raise BundleRejected(
                f"episode {key[:120]!r} was played with another {field} than the plan's "
                f"(the plan's seed is {plan.seed})"
            )
        records[key] = record
    return records


# ----------------------------------------------------------------------------- judging


def _as_recorded(plan: EpisodePlan, record: EpisodeRecord) -> ScoredEpisode:
    """A self-reported episode: the record's own verdict, unchecked."""
    outcome = "truncated" if record.status == "truncated" else "ok"
    return _scored(plan, record, outcome, record.verdict, oracle_like=False)


def _replayed(plan: EpisodePlan, record: EpisodeRecord) -> ScoredEpisode:
    result = replay_episode(plan, record)
    if isinstance(result, str):
        return _scored(plan, record, "mismatch", None, reason=result)
    outcome, verdict, oracle_like, differed = result
    reason = "observations differed on replay (a timing-dependent env)" if differed else None
    return _scored(plan, record, outcome, verdict, reason=reason, oracle_like=oracle_like)


def replay_episode(
    plan: EpisodePlan, record: EpisodeRecord
) -> tuple[str, Verdict | None, bool, bool] | str:
    """Replay ``record``'s actions in a fresh env; ``(outcome, verdict, oracle_like,
    observations_differed)``, or the first difference from the record as one line.

    An env that raises on a recorded action is a difference too: the run that made the
    record got an observation for that action, so a replay that cannot is not the same
    episode. An infrastructure failure of the server's own (an env that cannot start) is
    not the submitter's: it raises.

    An env whose observations depend on timing (``metadata["replay"] == "verdict"``:
    MiniWoB++'s pages run their own timers and animations) is held to less: its
    observations and rewards may differ from the record's, and the episode is scored by
    the replay's own verdict, whatever the record says. The actions still have to play out
    to the record's end.
    """
    # A model played the user: the replay plays its recorded messages back (a board never
    # gets here with one: rescore refuses such runs first, check_users).
    user = RecordedUser([turn.text for turn in record.user_turns]) if record.spec.user else None
    env = plan_env(plan) if user is None else plan_env(plan, user=user)
    try:
        exact = env.unwrapped.metadata.get("replay", "exact") != "verdict"
        differed = False
        observation, info = env.reset(seed=plan.seed, options={"task_id": plan.task_id})
        if _canonical(observation) != _canonical(record.initial_observation):
            if exact:
                return "the initial observation differs from the record"
            differed = True
        oracle = getattr(env.unwrapped, "oracle_action", None)
        # One right answer is every solver's answer: only a sequence of moves can be copied.
        oracle_like = oracle is not None and len(record.steps) >= 2
        ended = False
        terminated = truncated = False
        for number, step in enumerate(record.steps, 1):
            if ended:
                return f"step {number} comes after the episode ended"
            if oracle_like and oracle is not None:
                oracle_like = _oracle_agrees(oracle, step.action)
            try:
                observation, reward, terminated, truncated, info = env.step(step.action)
            except Exception as error:
                refused = type(error).__name__
                return f"step {number}: the env refused the recorded action ({refused})"
            if _canonical(observation) != _canonical(step.observation):
                if exact:
                    return f"step {number}: the observation differs from the record"
                differed = True
            if float(reward) != float(step.reward) and exact:
                return f"step {number}: the reward is {reward}, the record says {step.reward}"
            if _ending(terminated, truncated) != _ending(step.terminated, step.truncated):
                return f"step {number}: the episode's end differs from the record"
            ended = bool(terminated or truncated)
        if not ended:
            return "the record stops before the episode ended"
    finally:
        env.close()
    verdict = info.get("verdict")
    return ("ok" if terminated else "truncated"), verdict, oracle_like, differed


def _ending(terminated: Any, truncated: Any) -> str:
    """How a step ended the episode: ``terminated``, ``truncated`` or ``""`` (not at all).
    A terminated step is not truncated too (``docs/contract.md``, "Ending an episode"); a
    record from an agentgym before that rule, with both flags on a single-reply env's answer
    (Gymnasium's step limit), reads as terminated, as its status did."""
    return "terminated" if terminated else "truncated" if truncated else ""


@functools.cache
def _exact(env_id: str) -> bool:
    """Whether ``env_id``'s replays must match its records exactly (its ``replay`` metadata)."""
    metadata = getattr(agentgym.spec(env_id).load(), "metadata", {})
    return bool(metadata.get("replay", "exact") != "verdict")


def _scored(
    plan: EpisodePlan,
    record: EpisodeRecord,
    outcome: Any,
    verdict: Verdict | None,
    *,
    reason: str | None = None,
    oracle_like: bool = False,
) -> ScoredEpisode:
    counted = outcome in ("ok", "truncated")
    if counted:
        judged = EpisodeRecord(record.spec, None, record.steps, verdict, record.status)
        passed, score = episode_passed(judged), episode_score(judged)
    else:
        passed, score = False, 0.0
    prompt, completion, _ = _tokens(record)
    return ScoredEpisode(
        episode_id=plan.episode_id,
        env_id=plan.env_id,
        task_id=plan.task_id,
        repeat=plan.repeat,
        seed=plan.seed,
        outcome=outcome,
        passed=passed,
        score=float(score),
        claimed_score=float(episode_score(record)),
        reason=reason,
        steps=len(record.steps),
        prompt_tokens=prompt,
        completion_tokens=completion,
        oracle_like=oracle_like and passed,
    )


def _tokens(record: EpisodeRecord) -> tuple[int, int, int]:
    """``(prompt, completion, disagreements)``: tokens counted from the recorded ids where a
    step has them (the agent's ``usage`` otherwise), and how many steps report a usage that
    disagrees with their own ids."""
    prompt = completion = disagree = 0
    for step in record.steps:
        usage = step.info.get("usage") if isinstance(step.info, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        if step.tokens is not None:
            ids = (len(step.tokens.prompt_ids), len(step.tokens.completion_ids))
            said = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
            disagree += any(s is not None and s != n for s, n in zip(said, ids, strict=True))
            prompt, completion = prompt + ids[0], completion + ids[1]
        else:
            prompt += _count(usage.get("prompt_tokens"))
            completion += _count(usage.get("completion_tokens"))
    return prompt, completion, disagree


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _flags(scored: list[ScoredEpisode], records: list[EpisodeRecord]) -> list[str]:
    flags = []
    # Only an episode of two or more steps can show a copied solution; counting one-reply
    # passes too would let any suite of single answers hide a copied oracle (the quickstart
    # oracle's own run: 18 of 98 passed episodes, 18 of its 18 that can show it).
    comparable = [e for e in scored if e.passed and e.steps >= 2]
    copied = sum(e.oracle_like for e in comparable)
    if comparable and copied > ORACLE_SHARE_FLAG * len(comparable):
        flags.append(
            f"{copied} of {len(comparable)} passed episodes of two or more steps take exactly "
            f"the oracle's actions"
        )
    differ = sum(
        e.counted and e.claimed_score is not None and e.claimed_score != e.score for e in scored
    )
    if differ:
        flags.append(f"{differ} episodes claim another score than their replay gives")
    noisy = sum(e.counted and e.reason is not None for e in scored)
    if noisy:
        flags.append(
            f"{noisy} episodes saw other observations on replay (envs whose pages depend on "
            f"timing: scored by the replay's verdict)"
        )
    mismatched = sum(e.outcome == "mismatch" for e in scored)
    if mismatched:
        flags.append(f"{mismatched} episodes do not replay (each counts as failed)")
    disagree = sum(_tokens(r)[2] for r in records)
    if disagree:
        flags.append(f"{disagree} steps report token counts that differ from their token ids")
    return flags


def _canonical(value: Any) -> Any:
    """``value`` as the ledger writes it and reads it back (JSON types, tuples as lists)."""
    return json.loads(json.dumps(jsonable(value), ensure_ascii=False))


def _oracle_agrees(oracle: Callable[[], Any], action: Any) -> bool:
    """Whether the oracle, asked from the current state, takes the recorded action (an
    oracle that cannot answer does not agree)."""
    try:
        return bool(_canonical(oracle()) == _canonical(action))
    except Exception:
        return False
