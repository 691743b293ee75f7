"""Ledger records to training tensors, and the logprobs a trainer recomputes on them.

**Token in, token out.** Every step of an episode played by a token backend carries a
:class:`~agentgym.ledger.TokenRecord`: the prompt ids the model saw and the completion ids
it sampled, with their logprobs. A trainer learns from exactly those ids; nothing here
decodes or re-tokenizes text (decode→encode is not the identity for BPE, and the papers'
frameworks that did it trained on tokens nobody sampled).

**One sample per step** (the step-wise view of verl-agent and ROLL). A multi-turn episode
gives one :class:`StepSample` per model call: its prompt (which already holds whatever
history the agent kept, rendered by the chat template) and its completion. Observation and
template tokens are only ever in the prompt, so the loss mask covers completion tokens
alone, further cut by the record's own ``loss_mask`` where a backend marked tokens it did
not sample.

**Batch layout.** A :class:`TokenBatch` right-aligns each prompt + completion (left padding,
position ids counting real tokens, as the ``hf`` backend decodes), so every completion ends
in the last column: the model's logits are needed for the last ``C + 1`` positions only
(``logits_to_keep``), where ``C`` is the longest completion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from agentgym.errors import LedgerError
from agentgym.ledger import EpisodeRecord

__all__ = ["StepSample", "TokenBatch", "completion_logprobs", "step_samples", "to_batch"]


@dataclass
class StepSample:
    """One model call of one episode, with where it sits (episode, step, group)."""

    prompt_ids: list[int]
    completion_ids: list[int]
    old_logprobs: list[float]
    loss_mask: list[int]
    episode: int  # index of the episode in the batch of records
    step: int  # index of the step in its episode
    group: str  # episodes of one group share the task and the env's reset seed
    state_key: str  # the env's canonical state when the model was asked (GiGPO's anchor)
    finished: bool  # the completion ended with an end-of-sequence token (not cut by max_tokens)
    advantage: float = 0.0  # filled in by the algorithm


def step_samples(
    records: list[EpisodeRecord],
    groups: list[str],
    eos_ids: set[int],
    *,
    need_logprobs: bool = True,
) -> list[StepSample]:
    """Every step of ``records`` as a sample; ``groups[i]`` names record ``i``'s group.

    A step without tokens cannot be trained on (an agent that records none, or text written
    by hand): that is a :class:`LedgerError`, never a silent skip. Policy-gradient data needs
    the rollout's logprobs; supervised data (``need_logprobs=False``) does not.
    """
    samples: list[StepSample] = []
    for episode, (record, group) in enumerate(zip(records, groups, strict=True)):
        state_key = "reset"  # a group's episodes share their reset (task and seed)
        for index, step in enumerate(record.steps):
            tokens = step.tokens
            if tokens is None or not tokens.completion_ids:
                raise LedgerError(
                    f"episode {record.episode_id or episode} step {index} has no token record; "
                    f"train with a token backend (hf, vllm) so the ledger holds the sampled ids"
                )
            if tokens.logprobs is None and need_logprobs:
                raise LedgerError(
                    f"episode {record.episode_id or episode} step {index} has no logprobs"
                )
            n = len(tokens.completion_ids)
            samples.append(
                StepSample(
                    prompt_ids=list(tokens.prompt_ids),
                    completion_ids=list(tokens.completion_ids),
                    old_logprobs=list(tokens.logprobs or [0.0] * n),
                    loss_mask=list(tokens.loss_mask) if tokens.loss_mask else [1] * n,
                    episode=episode,
                    step=index,
                    group=group,
                    state_key=state_key,
                    finished=tokens.completion_ids[-1] in eos_ids,
                )
            )
            # The state the next call is asked in is the one this step led to.
            state_key = str(step.info.get("state_key", f"{episode}:{index + 1}"))
    return samples


@dataclass
class TokenBatch:
    """Samples as tensors: ``B`` rows, ``T`` columns, completions in the last ``C``."""

    input_ids: torch.Tensor  # [B, T] prompt + completion, left-padded
    attention_mask: torch.Tensor  # [B, T]
    position_ids: torch.Tensor  # [B, T]
    targets: torch.Tensor  # [B, C] the completion ids (padding where a row is shorter)
    mask: torch.Tensor  # [B, C] float: 1 on the completion tokens the loss may use
    old_logprobs: torch.Tensor  # [B, C] the rollout's logprobs
    advantages: torch.Tensor  # [B] or [B, C]
    prompt_end: torch.Tensor  # [B] column of each row's last prompt token (values read there)

    @property
    def rows(self) -> int:
        return int(self.input_ids.shape[0])

    def select(self, index: torch.Tensor) -> TokenBatch:
        """The rows at ``index`` (a minibatch), trimmed of columns that are padding for all."""
        mask = self.attention_mask[index]
        start = int((mask.sum(0) > 0).nonzero()[0]) if mask.numel() else 0
        return TokenBatch(
            input_ids=self.input_ids[index, start:],
            attention_mask=mask[:, start:],
            position_ids=self.position_ids[index, start:],
            targets=self.targets[index],
            mask=self.mask[index],
            old_logprobs=self.old_logprobs[index],
            advantages=self.advantages[index],
            prompt_end=self.prompt_end[index] - start,
        )

    def to(self, device: Any) -> TokenBatch:
        return TokenBatch(**{k: v.to(device) for k, v in self.__dict__.items()})


def to_batch(samples: list[StepSample], pad_id: int) -> TokenBatch:
    """Stack ``samples`` (their ``advantage`` set) into one left-padded :class:`TokenBatch`."""
    if not samples:
        raise LedgerError("no samples to batch")
    rows = len(samples)
    width = max(len(s.prompt_ids) + len(s.completion_ids) for s in samples)
    span = max(len(s.completion_ids) for s in samples)
    input_ids = torch.full((rows, width), pad_id, dtype=torch.long)
    attention = torch.zeros((rows, width), dtype=torch.long)
    positions = torch.zeros((rows, width), dtype=torch.long)
    targets = torch.full((rows, span), pad_id, dtype=torch.long)
    mask = torch.zeros((rows, span))
    old = torch.zeros((rows, span))
    prompt_end = torch.zeros(rows, dtype=torch.long)
    for row, sample in enumerate(samples):
        ids = sample.prompt_ids + sample.completion_ids
        n, c = len(ids), len(sample.completion_ids)
        input_ids[row, width - n :] = torch.tensor(ids)
        attention[row, width - n :] = 1
        positions[row, width - n :] = torch.arange(n)
        targets[row, span - c :] = torch.tensor(sample.completion_ids)
        mask[row, span - c :] = torch.tensor(sample.loss_mask, dtype=torch.float)
        old[row, span - c :] = torch.tensor(sample.old_logprobs)
        prompt_end[row] = width - c - 1
    advantages = torch.tensor([s.advantage for s in samples], dtype=torch.float)
    return TokenBatch(input_ids, attention, positions, targets, mask, old, advantages, prompt_end)


def completion_logprobs(
    model: Any, batch: TokenBatch, temperature: float = 1.0, *, hidden: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``log p(target)`` of every completion token ``[B, C]`` under ``model`` at
    ``temperature`` (the policy the rollout sampled from), and with ``hidden`` the last
    layer's state at each row's last prompt token ``[B, H]`` (a value head's input)."""
    span = batch.targets.shape[1]
    out = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        logits_to_keep=span + 1,
        output_hidden_states=hidden,
        use_cache=False,
    )
    logits = out.logits[:, :-1].float()  # position t predicts token t + 1
    if temperature > 0:
        logits = logits / temperature
    logp = torch.log_softmax(logits, dim=-1).gather(-1, batch.targets.unsqueeze(-1)).squeeze(-1)
    state = None
    if hidden:
        last = out.hidden_states[-1]
        state = last[torch.arange(last.shape[0], device=last.device), batch.prompt_end]
    return logp, state
