"""The checker tested on envs broken in exactly one way: each must fail with its named error."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import pytest
from broken_envs import (
    AcceptsAnythingEnv,
    AlwaysPassEnv,
    ClockEnv,
    CloseTwiceFailsEnv,
    CoinQuizEnv,
    CounterEnv,
    CrashingResetEnv,
    CrashOnBadActionEnv,
    EpisodeCounterEnv,
    GlobalRandomEnv,
    HiddenTargetEnv,
    LazyWorkerEnv,
    NoInstructionsEnv,
    NoStateKeyEnv,
    NumpyGlobalRandomEnv,
    QuizEnv,
    ShallowSnapshotEnv,
    SubmitCounterEnv,
    SubmitPassesEnv,
    SubstringQuizEnv,
    ThreadLeakEnv,
    WrongOracleEnv,
    release_leaked_threads,
)
from gymnasium.envs.registration import EnvSpec

from agentgym import errors
from agentgym.checker import (
    BLIND_POLICIES,
    BLIND_TASKS_AT_CHANCE,
    CHECKS,
    CLASS_CHECKS,
    TASK_LEAK_CYCLES,
    chance_bound,
    check_env,
    plan_tiers,
)
from agentgym.multiagent_checker import MULTIAGENT_CHECKS, check_multiagent_env
from agentgym.registry import make_limited


def factory(cls: type, **kwargs: Any) -> Callable[[], gymnasium.Env]:
    """Fresh wrapped instances of a test env, with a spec but outside the agentgym registry."""
    spec = EnvSpec(
        id=f"test/{cls.__name__}-v0", entry_point=cls, max_episode_steps=50, kwargs=kwargs
    )
    return lambda: gymnasium.make(spec)


def test_a_correct_env_passes_every_check():
    report = check_env(factory(CounterEnv), leak_cycles=20)
    assert report.passed == list(CHECKS)
    assert report.oracle_mean_score == 1.0
    assert report.random_mean_score < 1.0
    assert len(report.oracle_tasks) == 3  # one per split


def test_wrong_oracle_is_an_oracle_error_naming_task_and_seed():
    with pytest.raises(errors.OracleError) as raised:
        check_env(factory(WrongOracleEnv))
    message = str(raised.value)
    assert message.startswith(
        "test/WrongOracleEnv-v0: the oracle did not reach the maximum score on task 'train/easy/"
    )
    assert (
        "(seed 0): score 0.0 of 1.0, passed=False, after 50 steps (truncated (step limit))"
        in message
    )
    assert "The task or its verifier is wrong." in message


def test_a_verifier_that_always_passes_is_caught_by_the_random_agent():
    with pytest.raises(
        errors.NullAgentError,
        match=re.escape(
            "test/AlwaysPassEnv-v0: a random agent scored 1.000 on average over 3 tasks, as high "
            "as the oracle (1.000): the verifier cannot tell success from failure, or the tasks "
            "are trivial"
        ),
    ):
        check_env(factory(AlwaysPassEnv), skip=["gymnasium"])


ONLY_TASK_BLIND = [name for name in CHECKS if name not in ("oracle", "task_blind")]


def test_submitting_at_once_is_a_task_blind_pass_that_only_the_new_check_finds():
    # The verifier judges that the agent submitted, not what: every other check passes it
    # (a random agent never submits), as it passed the SWE grader's "submit the untouched repo".
    check_env(factory(SubmitPassesEnv), skip=["task_blind"], leak_cycles=5)
    with pytest.raises(
        errors.TaskBlindError,
        match=r"^test/SubmitPassesEnv-v0: the task-blind policy end_at_once scored 1\.000 of "
        r"the maximum on average over 2 tasks \(the bound is chance 0: no pass at all\); on "
        r"task 'train/easy/\d' \(seed 0\) it scored 1 of 1, passed=True, playing \['submit'\] ",
    ):
        check_env(factory(SubmitPassesEnv), skip=ONLY_TASK_BLIND)


def test_a_reply_naming_every_option_is_a_task_blind_pass():
    check_env(factory(SubstringQuizEnv), skip=["task_blind", "leaks"])
    with pytest.raises(
        errors.TaskBlindError,
        match=r"the task-blind policy say_every_option scored 1\.000 .* playing \['quiz \d+: "
        r"answer \d+\\nquiz \d+: answer \d+\\nquiz",
    ):
        check_env(factory(SubstringQuizEnv), skip=ONLY_TASK_BLIND)


@pytest.mark.parametrize("env_class", [SubmitCounterEnv, QuizEnv])
def test_an_env_that_judges_the_task_passes_the_task_blind_check(env_class):
    report = check_env(factory(env_class), skip=ONLY_TASK_BLIND)
    assert "task_blind" in report.passed
    assert set(report.blind_scores) <= set(BLIND_POLICIES) and report.blind_scores
    assert max(report.blind_scores.values()) == 0.0


def test_a_blind_episode_that_plays_the_tasks_own_solution_is_not_evidence():
    # Every counter task is solved by repeating "inc": each blind policy, cut to the oracle's
    # length, plays exactly the task's own solution, so nothing is counted (docs/contract.md
    # says so: such tasks pass the check).
    report = check_env(factory(CounterEnv), skip=ONLY_TASK_BLIND)
    assert "task_blind" in report.passed and report.blind_scores == {}


def test_a_declared_chance_is_the_bound_over_enough_tasks():
    # A two-option quiz: the donor's reply names another quiz but, half the time, this
    # quiz's answer. Declared, the chance holds it; undeclared, a blind pass fails it.
    report = check_env(factory(CoinQuizEnv), skip=ONLY_TASK_BLIND)
    assert 0.0 < max(report.blind_scores.values()) <= chance_bound(0.5, BLIND_TASKS_AT_CHANCE)

    class UndeclaredCoinQuizEnv(CoinQuizEnv):
        metadata = {**CoinQuizEnv.metadata, "chance_score": 0.0}

    with pytest.raises(errors.TaskBlindError, match="the bound is chance 0: no pass at all"):
        check_env(factory(UndeclaredCoinQuizEnv), skip=ONLY_TASK_BLIND)


def test_the_chance_bound_is_exact_at_zero_and_three_standard_errors_above():
    assert chance_bound(0.0, 2) == 0.0
    assert chance_bound(0.5, 16) == pytest.approx(0.5 + 3 * 0.125)


@pytest.mark.parametrize("chance", [1.0, -0.1, "half", True])
def test_a_chance_that_is_not_a_fraction_below_one_is_refused(chance):
    class BadChanceEnv(QuizEnv):
        metadata = {**QuizEnv.metadata, "chance_score": chance}

    with pytest.raises(errors.TaskBlindError, match=r"metadata\['chance_score'\] must be a"):
        check_env(factory(BadChanceEnv), skip=ONLY_TASK_BLIND)


MULTI_ONLY_TASK_BLIND = [name for name in MULTIAGENT_CHECKS if name != "task_blind"]


def test_a_reference_player_a_fixed_move_draws_with_fails_the_multiagent_check():
    from agentgym.envs.multiagent.rockpaperscissors import RockPaperScissorsEnv

    class AlwaysRockEnv(RockPaperScissorsEnv):
        """Its reference player throws rock every round: a seat repeating rock ties every
        round and draws every match, without looking at the game."""

        def oracle_action(self, agent):
            return super().oracle_action(agent) and "rock"

    with pytest.raises(
        errors.TaskBlindError,
        match=r"^rockpaperscissors_v0: player_0 repeating 'rock' whatever it was shown scored "
        r"0\.500 of the maximum on average over 2 games against the oracle \(the bound is "
        r"chance 0: no win or draw at all",
    ):
        check_multiagent_env(AlwaysRockEnv, skip=MULTI_ONLY_TASK_BLIND)
    report = check_multiagent_env(RockPaperScissorsEnv, skip=MULTI_ONLY_TASK_BLIND)
    assert report.blind_scores == {"player_0": 0.0, "player_1": 0.0}


def test_an_env_that_declares_no_oracle_fails_conformance():
    class NoOracleEnv(WrongOracleEnv):
        metadata = {**WrongOracleEnv.metadata, "oracle": False}

    with pytest.raises(errors.ConformanceError, match=r"declares no oracle.*Every task needs"):
        check_env(factory(NoOracleEnv), leak_cycles=5)


@pytest.mark.parametrize(
    "env_class", [GlobalRandomEnv, NumpyGlobalRandomEnv, ClockEnv, EpisodeCounterEnv]
)
def test_hidden_state_not_drawn_from_the_seed_is_a_determinism_error_at_its_first_step(env_class):
    # The target is hidden and no actions are listed: only the oracle's replay finds that the
    # two episodes end at different steps. The old check (random text) passed all four.
    name = env_class.__name__
    with pytest.raises(
        errors.DeterminismError,
        match=rf"^test/{name}-v0: the same seed 0 and task 'train/easy/\d' gave different "
        r"episodes playing the oracle's actions, first at step (\d+) \('inc'\): reward differs: "
        r"(1\.0 vs 0\.0|0\.0 vs 1\.0)\. An episode must depend only on the seed",
    ) as raised:
        check_env(factory(env_class), skip=["leaks"])
    first_step = int(re.search(r"first at step (\d+)", str(raised.value)).group(1))
    assert 5 <= first_step < 25  # the smaller of the two hidden targets


def test_the_same_hidden_target_drawn_from_the_seed_passes():
    report = check_env(factory(HiddenTargetEnv), skip=["leaks"])
    assert "determinism" in report.passed


def test_the_determinism_check_puts_back_global_randomness_and_the_clock():
    random.seed(7)
    np.random.seed(7)
    expected = (random.random(), np.random.random())
    random.seed(7)
    np.random.seed(7)
    clock = time.time
    check_env(factory(CounterEnv), skip=[name for name in CHECKS if name != "determinism"])
    assert (random.random(), np.random.random()) == expected
    assert time.time is clock


def test_observations_that_differ_at_reset_name_the_reset():
    class NoisyObservationEnv(CounterEnv):
        def observe(self, world):
            return f"counter {world.value} (noise {random.random():.6f})"

    with pytest.raises(
        errors.DeterminismError,
        match=r"gave different episodes playing the oracle's actions, first at reset: "
        r"observation differs: ",
    ):
        check_env(factory(NoisyObservationEnv), skip=["gymnasium"])


def test_a_task_picked_without_the_seed_is_a_determinism_error():
    class UnseededPickEnv(CounterEnv):
        def reset(self, *, seed=None, options=None):
            if not (options or {}).get("task_id"):
                options = {"task_id": f"train/easy/{random.randrange(5)}"}
            return super().reset(seed=seed, options=options)

    with pytest.raises(
        errors.DeterminismError,
        match=r"the same seed 0 \(no task id: the seed picks the task\) gave different episodes "
        r"playing a reset by the seed alone, first at reset: observation differs: ",
    ):
        check_env(factory(UnseededPickEnv), skip=["gymnasium", "leaks"])


def test_an_exception_on_a_malformed_action_is_a_bad_action_error():
    with pytest.raises(
        errors.BadActionError,
        match=re.escape(
            "test/CrashOnBadActionEnv-v0: step('') raised ValueError: cannot parse ''. A malformed "
            "action is the agent's mistake: answer it with feedback in the observation and "
            "info['invalid_action'] = True"
        ),
    ):
        check_env(factory(CrashOnBadActionEnv), skip=["gymnasium", "random_agent", "determinism"])


def test_silently_ignoring_a_malformed_action_is_a_bad_action_error():
    with pytest.raises(
        errors.BadActionError,
        match=re.escape(
            "test/AcceptsAnythingEnv-v0: step('') was accepted as a valid action; expected "
            "info['invalid_action'] = True and feedback saying what is wrong"
        ),
    ):
        check_env(factory(AcceptsAnythingEnv))


def test_missing_state_key_is_an_info_contract_error():
    with pytest.raises(
        errors.InfoContractError,
        match=re.escape(
            "test/NoStateKeyEnv-v0: reset() info must carry 'state_key' (a non-empty str naming "
            "the canonical state), got ''"
        ),
    ):
        check_env(factory(NoStateKeyEnv))


ONLY_ORACLE = [name for name in CHECKS if name != "oracle"]


def test_a_step_both_terminated_and_truncated_is_an_info_contract_error():
    # A single-reply env under Gymnasium's TimeLimit of one step: every answer said both.
    spec = EnvSpec(id="test/QuizEnv-v0", entry_point=QuizEnv, max_episode_steps=1)
    with pytest.raises(
        errors.InfoContractError,
        match=r"test/QuizEnv-v0: a step returned terminated=True and truncated=True together "
        r"\(task '[a-z]+/easy/\d+', seed 0\); an episode ends for one reason",
    ):
        check_env(lambda: gymnasium.make(spec), skip=ONLY_ORACLE)
    # agentgym's TimeLimit (what agentgym.make gives) truncates only what did not terminate.
    assert check_env(lambda: make_limited(spec), skip=ONLY_ORACLE).passed == ["oracle"]


def test_missing_instructions_is_an_info_contract_error():
    with pytest.raises(
        errors.InfoContractError,
        match=re.escape(
            "test/NoInstructionsEnv-v0: reset() info must carry 'instructions' (a non-empty str: "
            "the goal and the action syntax), got ''"
        ),
    ):
        check_env(factory(NoInstructionsEnv))


def test_a_snapshot_that_aliases_the_live_world_is_a_snapshot_error():
    with pytest.raises(
        errors.SnapshotError,
        match=r"after set_state\(get_state\(\)\) step \d "
        r"with action '\w+' gave a different result",
    ):
        check_env(factory(ShallowSnapshotEnv))


def test_close_that_fails_the_second_time_is_a_close_error():
    with pytest.raises(
        errors.CloseError,
        match=re.escape(
            "test/CloseTwiceFailsEnv-v0: the second close() before any reset raised RuntimeError: "
            "already closed; close() must be idempotent"
        ),
    ):
        check_env(factory(CloseTwiceFailsEnv), skip=["gymnasium"])  # it catches this too


def test_a_thread_per_reset_is_a_leak_error():
    try:
        with pytest.raises(
            errors.LeakError,
            match=r"^test/ThreadLeakEnv-v0: threads grew from "
            rf"\d+ to \d+ over {TASK_LEAK_CYCLES} make/reset/step/close cycles",
        ):  # the task tier's short cycle, whatever the caller asked for
            check_env(factory(ThreadLeakEnv), tier="task", leak_cycles=200)
    finally:
        release_leaked_threads()


def test_growth_that_does_not_continue_is_not_a_leak():
    # One thread started once inside the measured cycles, then never again: a pool filled
    # lazily. The confirming round does not grow it further, so the check passes.
    LazyWorkerEnv.resets, LazyWorkerEnv.start_at = 0, 0
    check_env(factory(LazyWorkerEnv), skip=["leaks"])
    before_leaks = LazyWorkerEnv.resets  # the resets every other check makes (deterministic)
    LazyWorkerEnv.resets, LazyWorkerEnv.start_at = 0, before_leaks + 3 + 5  # 3 warm-up cycles
    try:
        report = check_env(factory(LazyWorkerEnv), leak_cycles=20)
        assert "leaks" in report.passed
        assert LazyWorkerEnv.resets == before_leaks + 3 + 20 + 20  # the confirming round ran
    finally:
        release_leaked_threads()


def test_every_conformance_error_is_an_assertion_error():
    # so plain pytest and unittest report checker failures as test failures
    assert issubclass(errors.ConformanceError, AssertionError)
    for name in (
        "OracleError",
        "NullAgentError",
        "TaskBlindError",
        "DeterminismError",
        "BadActionError",
        "InfoContractError",
        "SnapshotError",
        "CloseError",
        "LeakError",
    ):
        assert issubclass(getattr(errors, name), errors.ConformanceError)


def test_the_task_tier_leaves_out_the_class_checks_and_says_so():
    report = check_env(factory(CounterEnv), tier="task")
    assert report.tier == "task"
    assert report.passed == [name for name in CHECKS if name not in CLASS_CHECKS]
    assert set(report.skipped) == set(CLASS_CHECKS)
    assert "[task tier]" in report.summary()


def test_the_task_tier_still_finds_what_depends_on_the_tasks():
    with pytest.raises(errors.OracleError):
        check_env(factory(WrongOracleEnv), tier="task")
    # and a leak, over its short cycle: test_a_thread_per_reset_is_a_leak_error


def test_tiers_give_the_class_tier_once_per_behaviour_class():
    from agentgym.registry import spec

    miniwob = [spec(f"miniwob/{name}-v0") for name in ("click_test", "click_button")]
    sokoban = spec("games/Sokoban-v0")
    planned = plan_tiers([*miniwob, sokoban])
    assert [tier for _, tier in planned] == ["class", "task", "class"]
    assert [tier for _, tier in plan_tiers([*miniwob, sokoban], full=True)] == ["class"] * 3


def test_an_infrastructure_error_runs_the_check_again_and_is_reported():
    CrashingResetEnv.resets, CrashingResetEnv.crash_on = 0, frozenset({1})
    report = check_env(factory(CrashingResetEnv), leak_cycles=5)
    assert report.passed == list(CHECKS)
    assert report.infrastructure == [
        "gymnasium: EnvCrashedError: simulated engine crash on reset 1"
    ]


def test_a_persistent_infrastructure_error_is_raised_as_itself_not_as_a_breach():
    CrashingResetEnv.resets, CrashingResetEnv.crash_on = 0, frozenset(range(1, 100))
    with pytest.raises(errors.EnvCrashedError) as raised:
        check_env(factory(CrashingResetEnv), skip=["gymnasium"])
    assert not isinstance(raised.value, errors.ConformanceError)


def test_unknown_tiers_are_rejected():
    with pytest.raises(errors.UsageError, match="unknown tier 'fast'"):
        check_env(factory(CounterEnv), tier="fast")


def test_unknown_check_names_are_rejected():
    with pytest.raises(errors.UsageError, match="unknown check name"):
        check_env(factory(CounterEnv), skip=["oracel"])


def test_an_env_without_a_spec_is_refused_with_advice():
    with pytest.raises(errors.UsageError, match=r"pass an env made by agentgym\.make"):
        check_env(CounterEnv())
