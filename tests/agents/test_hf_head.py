"""The output head in blocks (agentgym/backends/hf_head.py): the same logits as the plain
product, computed in blocks only where that is faster, and never under autograd."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from agentgym.backends import hf_head  # noqa: E402
from agentgym.backends.hf_head import block_output_head  # noqa: E402

VOCAB = 2 * hf_head.BLOCK + 300  # three blocks, the last one short


def llama() -> object:
    config = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
    )
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).eval()


@pytest.fixture
def linear_calls(monkeypatch):
    """How many products the head ran (a counting stand-in for ``F.linear`` in hf_head)."""
    calls = []

    def linear(*args):
        calls.append(args[1].shape[0])
        return torch.nn.functional.linear(*args)

    monkeypatch.setattr(hf_head, "F", SimpleNamespace(linear=linear))
    return calls


def test_blocked_logits_equal_the_plain_ones(linear_calls):
    plain, blocked = llama(), llama()
    assert block_output_head(blocked) and block_output_head(blocked)  # twice: no change
    ids = torch.randint(0, VOCAB, (20, 6), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        for rows in range(1, 21):
            linear_calls.clear()
            expected = plain(input_ids=ids[:rows], logits_to_keep=1).logits
            got = blocked(input_ids=ids[:rows], logits_to_keep=1).logits
            assert torch.equal(got, expected), rows
            blocks = [hf_head.BLOCK, hf_head.BLOCK, 300]
            assert linear_calls == (blocks if rows in hf_head.ROWS else [VOCAB]), rows


def test_autograd_and_other_heads_keep_the_plain_product(linear_calls):
    model = llama()
    block_output_head(model)
    model(input_ids=torch.zeros((8, 3), dtype=torch.long), logits_to_keep=1)
    assert linear_calls == [VOCAB]  # a trainer's forward pass: one product
    assert not block_output_head(SimpleNamespace())  # no output embeddings: left alone
