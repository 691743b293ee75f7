"""The output head of a model decoding on the CPU, computed in blocks of its rows of weights.

A decode step of 4-15 rows spends a fifth of its time in the output head on the CPU: for
that many rows, the float32 matrix product that PyTorch's CPU BLAS (MKL) picks costs as if
it read the whole weight once per three rows, and an output head's weight is large
(SmolLM2's: 49,152 x 576 floats, 113 MB, far past a core's 4 MB of L2). The head alone,
measured on the 2-core machine with its weight out of cache: 4.2-5.4 ms for 1-3 rows,
9.9-10.7 for 4-6, 14.5-15.5 for 7-9, 19.1-19.7 for 10-12, 22.3-24.1 for 13-15, then 10.0 ms
for 16 (where it reads the weight once). In blocks of 1,024 outputs (2.4 MB each) each
block's weight stays in L2 while every row reads it: 7.5 ms for 4 rows, 10.5 for 9, 12.9
for 15. Inside a decode step (``docs/performance.md``, "Two costs found in the step") the
head for 9 rows takes 9.2 ms instead of 15.5, for 12 rows 10.0 instead of 19.3. Below 4
rows and from 16 on blocks are slower (4.6 ms for one row, 12.9 for 16), so those keep the
plain product.

Each logit is the same dot product either way, over the same hidden size in the same
kernel: on that machine the blocked logits equal the plain ones to the bit for 1-69 rows and
blocks of 1,024 to 4,096 (a test checks the model's logits). Only inference is blocked (no
autograd: a trainer's forward pass is untouched), only float32 weights on the CPU (where it
was measured), and only an output head that is a plain linear layer.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

__all__ = ["BLOCK", "block_output_head"]

BLOCK = 1024  # outputs per block: 2.4 MB of float32 weight at a hidden size of 576
ROWS = range(4, 16)  # the row counts whose plain product reads the weight more than once


def block_output_head(model: Any) -> bool:
    """Have ``model``'s output head compute small CPU batches in blocks (see the module
    docstring); whether it does (False: the head is not a plain linear layer). Calling it
    again changes nothing."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if type(head) is not torch.nn.Linear:
        return False
    if not isinstance(head.forward, _BlockedHead):
        # this instance's forward only: the class and every other Linear stay as they are
        head.forward = _BlockedHead(head)  # type: ignore[method-assign, assignment]
    return True


class _BlockedHead:
    """``head``'s forward: in blocks for inference on the CPU in float32 over ``ROWS`` rows,
    else the layer's own."""

    def __init__(self, head: torch.nn.Linear) -> None:
        self.head = head

    def __call__(self, hidden: torch.Tensor) -> torch.Tensor:
        weight, bias = self.head.weight, self.head.bias
        rows = hidden.numel() // hidden.shape[-1] if hidden.shape[-1] else 0
        if (
            torch.is_grad_enabled()
            or hidden.device.type != "cpu"
            or weight.dtype != torch.float32
            or rows not in ROWS
        ):
            return F.linear(hidden, weight, bias)
        blocks = [
            F.linear(hidden, weight[i : i + BLOCK], None if bias is None else bias[i : i + BLOCK])
            for i in range(0, weight.shape[0], BLOCK)
        ]
        return torch.cat(blocks, dim=-1)
