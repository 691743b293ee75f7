"""What a code task is (:class:`CodeProblem`) and how the built-in templates make them
(:class:`Problem`); small generators of random inputs the templates share."""

from __future__ import annotations

import copy
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import Any

import numpy as np

from agentgym.verifiers.code import CodeTests

__all__ = ["CodeProblem", "Problem"]

HIDDEN_RANDOM_TESTS = 12

Params = dict[str, Any]
Rng = np.random.Generator


@dataclass(frozen=True)
class CodeProblem:
    """One programming task, ready to be played.

    Attributes:
        prompt: what the agent reads (the function to write, its docstring, examples).
        entry_point: the name of the function the tests call.
        reference: a complete program that passes every test (the oracle's answer).
        hidden: the tests that score a submission.
        examples: the visible examples, as tests the agent may run (``None`` if there are
            none).
        prefix: code a reply is appended to when the reply does not define ``entry_point``
            itself (HumanEval's completion style); empty for the built-in set.
    """

    prompt: str
    entry_point: str
    reference: str
    hidden: CodeTests
    examples: CodeTests | None = None
    prefix: str = ""


@dataclass(frozen=True)
class Problem:
    """A template of problems: one function, parameterised, with a generator of inputs.

    ``doc`` and ``body`` are :class:`string.Template` texts over the parameters (``$k``);
    ``body`` is the reference solution's body. ``draw(rng, params)`` makes one hidden
    argument tuple; ``examples(params)`` the visible ones; ``edges`` are argument tuples
    every task of the template is tested on.
    """

    name: str
    signature: str
    doc: str
    body: str
    draw: Callable[[Rng, Params], tuple[Any, ...]]
    examples: Callable[[Params], Sequence[tuple[Any, ...]]]
    params: Callable[[Rng], Params] = field(default=lambda rng: {})
    edges: Sequence[tuple[Any, ...]] = ()
    imports: str = ""

    def instance(self, rng: Rng) -> CodeProblem:
        """A task of this template, every choice drawn from ``rng``."""
        params = self.params(rng)
        doc = Template(self.doc).substitute(params)
        body = Template(self.body).substitute(params)
        reference = self._solve(self._source(doc, body, ()))
        examples = [tuple(args) for args in self.examples(params)]
        shown = [(args, reference(*copy.deepcopy(args))) for args in examples]
        hidden = [tuple(args) for args in self.edges]
        for _ in range(4 * HIDDEN_RANDOM_TESTS):  # distinct inputs, as many as the draws allow
            if len(hidden) >= len(self.edges) + HIDDEN_RANDOM_TESTS:
                break
            args = tuple(self.draw(rng, params))
            if args not in hidden:
                hidden.append(args)
        stub = self._source(doc, "", shown, imports=False).rstrip()
        return CodeProblem(
            prompt=f"Write a Python function `{self.name}`:\n\n```python\n{stub}\n```",
            entry_point=self.name,
            reference=self._source(doc, body, shown),
            hidden=self._tests(reference, hidden),
            examples=self._tests(reference, examples),
        )

    def _source(
        self,
        doc: str,
        body: str,
        shown: Sequence[tuple[tuple[Any, ...], Any]],
        imports: bool = True,
    ) -> str:
        """The function's source: imports, signature, docstring with examples, body."""
        lines = textwrap.fill(doc, 88).splitlines()
        if shown:
            lines.append("")
        for args, value in shown:
            lines += [f">>> {_call(self.name, args)}", repr(value)]
        docstring = textwrap.indent('"""' + "\n".join(lines) + '\n"""', "    ").lstrip()
        head = f"{self.imports}\n\n\n" if self.imports and imports else ""
        code = textwrap.indent(body.strip("\n"), "    ") if body else ""
        return f"{head}def {self.name}{self.signature}:\n    {docstring}\n{code}\n"

    def _solve(self, source: str) -> Callable[..., Any]:
        namespace: dict[str, Any] = {}
        exec(compile(source, f"<reference {self.name}>", "exec"), namespace)  # our own code
        function: Callable[..., Any] = namespace[self.name]
        return function

    def _tests(self, reference: Callable[..., Any], inputs: Sequence[tuple[Any, ...]]) -> CodeTests:
        cases = [(_call(self.name, args), reference(*copy.deepcopy(args))) for args in inputs]
        return CodeTests(cases=cases, entry_point=self.name, case_timeout=2.0)


def _call(name: str, args: tuple[Any, ...]) -> str:
    return f"{name}({', '.join(map(repr, args))})"


# ----------------------------------------------------------------------------- random inputs


def pick(rng: Rng, options: Sequence[Any]) -> Any:
    """One of ``options``, uniformly."""
    return options[int(rng.integers(len(options)))]


def some(rng: Rng, options: Sequence[Any], low: int, high: int) -> list[Any]:
    """Between ``low`` and ``high`` distinct options, in the order given."""
    count = int(rng.integers(low, high + 1))
    chosen = sorted(rng.choice(len(options), size=count, replace=False).tolist())
    return [options[i] for i in chosen]


def integers(rng: Rng, low: int, high: int, shortest: int = 0, longest: int = 10) -> list[int]:
    """A list of ``shortest``..``longest`` integers in ``[low, high]``."""
    size = int(rng.integers(shortest, longest + 1))
    return [int(v) for v in rng.integers(low, high + 1, size=size)]


def text(rng: Rng, alphabet: str, shortest: int = 0, longest: int = 20) -> str:
    """A string of ``shortest``..``longest`` characters of ``alphabet``."""
    size = int(rng.integers(shortest, longest + 1))
    return "".join(alphabet[int(i)] for i in rng.integers(len(alphabet), size=size))


def grid(
    rng: Rng, cells: str, fill: float, rows: tuple[int, int], cols: tuple[int, int]
) -> list[str]:
    """Rows of equal length; each cell is ``cells[1]`` with probability ``fill``."""
    height = int(rng.integers(rows[0], rows[1] + 1))
    width = int(rng.integers(cols[0], cols[1] + 1))
    return [
        "".join(cells[1] if rng.random() < fill else cells[0] for _ in range(width))
        for _ in range(height)
    ]
