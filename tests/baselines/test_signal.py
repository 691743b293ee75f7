"""A trainer says when an iteration taught nothing, and how far a slow iteration has got."""

from __future__ import annotations

import re

from training import fast_args

from agentgym.baselines.common import Progress, signal_warning
from agentgym.baselines.rollouts import Rollouts
from agentgym.ledger import EpisodeRecord, EpisodeSpec, StepRecord


def _record(*invalid: bool) -> EpisodeRecord:
    steps = [StepRecord("x", "o", 0.0, False, False, {"invalid_action": i}) for i in invalid]
    return EpisodeRecord(EpisodeSpec("games/FrozenLake-v0", "t", 0, "a"), "o", steps=steps)


def test_tied_groups_are_no_signal_and_the_warning_names_the_likely_cause():
    rollouts = Rollouts([_record(True, True), _record(True, True)], ["g", "g"])
    warning = signal_warning(rollouts, {"train/samples": 4, "train/advantage_std": 0.0})
    assert warning is not None
    assert warning.startswith("no learning signal: every advantage is 0")
    assert "0/2 episodes passed, 4/4 actions were invalid" in warning
    assert "format warm start" in warning  # nothing the env can read: the likely cause


def test_an_accident_or_two_among_invalid_actions_is_warned_about_too():
    # the untrained tiny model: 1 readable move in 320, no episode passes
    records = [_record(*([True] * 10)) for _ in range(31)] + [_record(*([True] * 9), False)]
    rollouts = Rollouts(records, ["g"] * 32)
    warning = signal_warning(rollouts, {"train/samples": 320, "train/advantage_std": 0.18})
    assert warning is not None
    assert warning.startswith("almost no learning signal: nearly every action was invalid")
    assert "0/32 episodes passed, 319/320 actions were invalid" in warning


def test_an_update_with_spread_or_without_advantages_is_not_warned_about():
    rollouts = Rollouts([_record(False), _record(True, False)], ["g", "g"])
    assert signal_warning(rollouts, {"train/samples": 4, "train/advantage_std": 0.3}) is None
    # expert iteration: no advantages, but samples to imitate
    assert signal_warning(rollouts, {"train/samples": 4}) is None
    nothing_kept = signal_warning(rollouts, {"train/samples": 0})
    assert nothing_kept is not None and "no step sample" in nothing_kept


def test_progress_speaks_at_most_every_interval(capsys):
    progress = Progress("grpo")
    progress.every = 0.0
    progress.start(3)
    progress("episodes", 12, 32)
    assert re.fullmatch(r"\[grpo\] iter 3: episodes 12/32 \(\d+ s\)\n", capsys.readouterr().out)
    quiet = Progress("grpo")
    quiet.start(0)  # the default interval has not passed
    quiet("episodes", 1, 32)
    assert capsys.readouterr().out == ""


def test_a_random_policy_trains_on_nothing_and_the_trainer_says_so(tmp_path, capsys):
    # The untrained tiny model writes no action FrozenLake can read: every episode of every
    # group gets the same return, every advantage is 0.
    from agentgym.baselines import grpo

    args = fast_args("grpo", tmp_path, model="tiny", iterations=1, groups=2, group_size=2)
    args.max_steps = 2
    run = grpo.train(args)
    out = capsys.readouterr().out
    assert "[grpo] iter 0: warning: no learning signal: every advantage is 0" in out, out
    assert run.metrics()[0]["train/advantage_std"] == 0.0


def test_progress_reaches_the_rollouts_and_the_update(tmp_path, capsys, monkeypatch):
    from agentgym.baselines import grpo

    monkeypatch.setattr(Progress, "every", 0.0)
    args = fast_args("grpo", tmp_path, model="tiny", iterations=1, groups=1, group_size=2)
    args.max_steps, args.minibatch_size = 2, 1
    grpo.train(args)
    out = capsys.readouterr().out
    assert "[grpo] iter 0: episodes 2/2" in out
    assert re.search(r"\[grpo\] iter 0: minibatches \d+/\d+", out)
