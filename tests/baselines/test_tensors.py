"""Ledger correctness: the trainer learns from exactly the tokens the rollout sampled.

Rollouts here are real: the ``tiny`` policy (random weights, so its replies are arbitrary
token strings, the hardest case for tokenization) plays FrozenLake through the engine.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from agentgym.agents.prompting import PromptConfig  # noqa: E402
from agentgym.baselines.policy import load_policy  # noqa: E402
from agentgym.baselines.rollouts import LocalRollouts, plan_groups  # noqa: E402
from agentgym.baselines.tensors import completion_logprobs, step_samples, to_batch  # noqa: E402
from agentgym.errors import LedgerError  # noqa: E402
from agentgym.eval.plan import BenchmarkEnv  # noqa: E402
from agentgym.ledger import EpisodeRecord, EpisodeSpec, StepRecord, TokenRecord  # noqa: E402

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def policy():
    return load_policy("tiny", device="cpu", seed=3)


def _collect(policy, *, temperature=1.0, max_tokens=6, iteration=0):
    tasks = BenchmarkEnv("games/FrozenLake-v0", "train", "easy", 1, max_steps=3)
    plans, groups = plan_groups(
        tasks, tasks.task_ids(), iteration=iteration, groups=2, group_size=4, seed=0
    )
    rollouts = LocalRollouts(
        policy,
        PromptConfig(history_window=1),
        sampling={"temperature": temperature, "max_tokens": max_tokens},
        num_envs=8,
    )
    return rollouts, rollouts.collect(plans, groups)


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_recomputed_logprobs_match_the_rollouts(policy, temperature):
    _, batch = _collect(policy, temperature=temperature)
    samples = step_samples(batch.records, batch.groups, policy.eos_ids)
    assert len(samples) >= 8
    tensors = to_batch(samples, policy.pad_id)
    with torch.no_grad():
        recomputed, _ = completion_logprobs(policy.model, tensors, temperature)
    gap = ((recomputed - tensors.old_logprobs).abs() * tensors.mask).max()
    assert float(gap) < TOLERANCE


def test_the_loss_mask_covers_exactly_the_completion_tokens(policy):
    _, batch = _collect(policy)
    samples = step_samples(batch.records, batch.groups, policy.eos_ids)
    tensors = to_batch(samples, policy.pad_id)
    assert int(tensors.mask.sum()) == sum(len(s.completion_ids) for s in samples)
    for row, sample in enumerate(samples):
        n = len(sample.completion_ids)
        masked = tensors.targets[row][tensors.mask[row] > 0].tolist()
        assert masked == sample.completion_ids
        # Everything before the completion (template, instructions, observation) is prompt.
        real = tensors.input_ids[row][tensors.attention_mask[row] > 0].tolist()
        assert real == sample.prompt_ids + sample.completion_ids
        assert int(tensors.prompt_end[row]) == tensors.input_ids.shape[1] - n - 1


def test_a_records_own_loss_mask_is_kept():
    spec = EpisodeSpec("games/FrozenLake-v0", "t", seed=0, agent="x")
    tokens = TokenRecord([1, 2, 3], [7, 8, 9], logprobs=[-1.0, -1.0, -1.0], loss_mask=[1, 0, 1])
    record = EpisodeRecord(
        spec, "start", steps=[StepRecord("up", "o", 0.0, True, False, {}, tokens=tokens)]
    )
    tensors = to_batch(step_samples([record], ["g"], {2}), pad_id=0)
    assert tensors.mask.tolist() == [[1.0, 0.0, 1.0]]


def test_training_uses_the_sampled_ids_never_a_retokenization(policy):
    # A random model writes token strings that decode->encode does not give back. The batch
    # must hold the sampled ids, and only they reproduce the rollout's logprobs: a trainer
    # that re-tokenized the text would train on other tokens with other logprobs.
    _, batch = _collect(policy, max_tokens=8)
    samples = step_samples(batch.records, batch.groups, policy.eos_ids)
    tokenizer = policy.tokenizer
    drifting = [
        s
        for s in samples
        if tokenizer(tokenizer.decode(s.completion_ids), add_special_tokens=False)["input_ids"]
        != s.completion_ids
    ]
    assert drifting, "no reply whose text re-tokenizes differently: the test cannot tell"
    tensors = to_batch(drifting, policy.pad_id)
    for row, sample in enumerate(drifting):
        assert tensors.targets[row][tensors.mask[row] > 0].tolist() == sample.completion_ids
    with torch.no_grad():
        recomputed, _ = completion_logprobs(policy.model, tensors, 1.0)
    assert float(((recomputed - tensors.old_logprobs).abs() * tensors.mask).max()) < TOLERANCE
    # What re-tokenizing would have given: other ids, and logprobs that do not match.
    for sample in drifting:
        sample.completion_ids = tokenizer(
            tokenizer.decode(sample.completion_ids), add_special_tokens=False
        )["input_ids"]
        sample.loss_mask = [1] * len(sample.completion_ids)
        sample.old_logprobs = [0.0] * len(sample.completion_ids)
    retokenized = to_batch(drifting, policy.pad_id)
    with torch.no_grad():
        wrong, _ = completion_logprobs(policy.model, retokenized, 1.0)
    assert float((wrong * retokenized.mask).sum()) != pytest.approx(
        float((tensors.old_logprobs * tensors.mask).sum()), abs=1e-2
    )


def test_after_an_update_new_rollouts_match_the_new_weights(policy):
    # The hf backend caches prompt keys/values; after the weights change they are stale
    # and must be dropped, or the rollout would sample from a mix of old and new weights.
    rollouts, _ = _collect(policy)
    with torch.no_grad():
        for parameter in policy.model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.05)
    rollouts.weights_changed()
    tasks = BenchmarkEnv("games/FrozenLake-v0", "train", "easy", 1, max_steps=3)
    plans, groups = plan_groups(
        tasks, tasks.task_ids(), iteration=1, groups=2, group_size=4, seed=0
    )
    batch = rollouts.collect(plans, groups)
    tensors = to_batch(step_samples(batch.records, batch.groups, policy.eos_ids), policy.pad_id)
    with torch.no_grad():
        recomputed, _ = completion_logprobs(policy.model, tensors, 1.0)
    assert float(((recomputed - tensors.old_logprobs).abs() * tensors.mask).max()) < TOLERANCE


def test_steps_without_tokens_cannot_be_trained_on():
    spec = EpisodeSpec("games/FrozenLake-v0", "t", seed=0, agent="random")
    record = EpisodeRecord(spec, "start", steps=[StepRecord("up", "o", 0.0, True, False)])
    with pytest.raises(LedgerError, match="has no token record; train with a token backend"):
        step_samples([record], ["g"], {2})
