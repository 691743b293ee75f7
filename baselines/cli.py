"""``agentgym train ALGO``: run a baseline from the command line.

Every field of the algorithm's ``Args`` dataclass is an option (``clip_high`` is
``--clip-high``; booleans take ``--flag`` / ``--no-flag``; ``none`` sets an optional one to
None), documented by the field's docstring. Two short names: ``--env`` (``env_id``) and
``--out`` (``output_dir``). ``--steps``, the old name of ``--iterations``, still works and
says so: it counted iterations, not env steps.

    agentgym train grpo --env games/FrozenLake-v0 --model tiny --iterations 30
    agentgym train grpo --env games/FrozenLake-v0 --out runs/a --resume --iterations 60
    agentgym eval --benchmark quickstart --agent hf:runs/a   # its latest checkpoint
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import types
import typing
from typing import Any

from agentgym.clihelp import HelpFormatter
from agentgym.errors import UsageError

__all__ = ["ALGORITHMS", "add_commands", "load_algorithm", "main", "parse_args", "train_parser"]

ALGORITHMS: dict[str, str] = {
    "grpo": "GRPO with DAPO's switches and Dr.GRPO's loss",
    "ppo": "PPO with a turn-level value head and GAE (or critic-free)",
    "rloo": "REINFORCE with a leave-one-out group baseline",
    "reinforce_pp": "REINFORCE++ (batch-whitened advantages, clipped loss)",
    "gigpo": "GiGPO: episode-level plus anchor-state step-level advantages",
    "expert_iteration": "rejection-sampling fine-tuning, or SFT on oracle/random demos",
    "selfplay": "self-play on a two-player game (itself or a pool), SPIRAL's RAE",
}
"""The baselines, by the name ``agentgym train`` takes."""

ALIASES = {"env_id": "--env", "output_dir": "--out"}

RENAMED = {"--steps": "iterations"}
"""Old option names still accepted, with a note on standard error naming the new one."""


def load_algorithm(name: str) -> types.ModuleType:
    """The module of baseline ``name`` (its ``Args`` and ``train``)."""
    if name not in ALGORITHMS:
        raise UsageError(f"unknown algorithm {name!r}; use one of {sorted(ALGORITHMS)}")
    return importlib.import_module(f"agentgym.baselines.{name}")


def add_commands(commands: Any) -> None:
    """List ``train`` among the ``agentgym`` commands. ``agentgym.cli.main`` hands its
    arguments to :func:`main`: the options depend on the algorithm, whose module imports
    torch, so they are built only when used."""
    _describe(commands.add_parser("train", help=SUMMARY, add_help=False))


SUMMARY = "train a policy with a reference RL baseline"


def _describe(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``agentgym train``'s help, the same in the command list and in ``--help``: the
    module's docstring, ``ALGO``, and the algorithms."""
    parser.description = __doc__
    parser.epilog = "algorithms:\n" + "\n".join(
        f"  {name:18} {summary}" for name, summary in ALGORITHMS.items()
    )
    parser.add_argument(
        "ALGO", help="the algorithm (below); agentgym train ALGO --help lists its options"
    )
    return parser


def train_parser() -> argparse.ArgumentParser:
    """The parser ``agentgym train --help`` prints (the options come with an algorithm)."""
    return _describe(_Parser(prog="agentgym train", formatter_class=HelpFormatter))


def main(argv: list[str]) -> int:
    """``agentgym train ALGO [options]``."""
    if not argv or argv[0] in ("-h", "--help"):
        train_parser().print_help()
        return 0
    name, options = argv[0], argv[1:]
    parsed = parse_args(name, options)
    run = load_algorithm(name).train(parsed)
    rows = run.metrics()
    if rows:
        last = rows[-1]
        print(
            f"done: {len(rows)} iterations in {run.dir}; last success rate "
            f"{last.get('rollout/success_rate', float('nan')):.3f}; "
            f"checkpoint: {run.latest_checkpoint()}"
        )
    return 0


def parse_args(name: str, argv: list[str]) -> Any:
    """The algorithm's ``Args`` from command-line options."""
    module = load_algorithm(name)
    parser = _options_parser(name, module.Args)
    namespace = parser.parse_args(argv)
    values = {f.name: getattr(namespace, f.name) for f in dataclasses.fields(module.Args)}
    hints = typing.get_type_hints(module.Args)
    for name in values:  # a repeatable option: what it was given, as a tuple
        if typing.get_origin(hints[name]) is tuple:
            values[name] = tuple(values[name] or ())
    return module.Args(**values)


def _options_parser(name: str, cls: type) -> argparse.ArgumentParser:
    from agentgym.baselines.common import field_docs

    parser = _Parser(
        prog=f"agentgym train {name}",
        description=(importlib.import_module(cls.__module__).__doc__ or "").strip(),
        formatter_class=HelpFormatter,
    )
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    for spec in dataclasses.fields(cls):
        flags = [f"--{spec.name.replace('_', '-')}"]
        if spec.name in ALIASES:
            flags.insert(0, ALIASES[spec.name])
        kind, optional = _kind(hints[spec.name])
        # Always the value: a field's docstring may speak of a default ("TRL's") without it.
        doc = (docs.get(spec.name) or spec.name.replace("_", " ")).replace("%", "%%")
        help_text = f"{doc} (default: %(default)s)"
        if typing.get_origin(hints[spec.name]) is tuple:  # a repeatable option
            parser.add_argument(
                *flags, dest=spec.name, action="append", default=None,
                help=f"{doc} (repeatable; default: none)",
            )  # fmt: skip
        elif kind is bool:
            parser.add_argument(
                *flags,
                dest=spec.name,
                action=argparse.BooleanOptionalAction,
                default=spec.default,
                help=help_text,
            )
        else:
            parser.add_argument(
                *flags,
                dest=spec.name,
                type=_converter(kind, optional, spec.name),
                default=spec.default,
                help=help_text,
            )
    for old, name in RENAMED.items():
        parser.add_argument(
            old,
            dest=name,
            type=_renamed(old, name),
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )
    return parser


def _renamed(old: str, name: str) -> Any:
    def convert(text: str) -> int:
        new = f"--{name.replace('_', '-')}"
        print(f"agentgym train: {old} is now {new} (it counts iterations)", file=sys.stderr)
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{new} takes an int, got {text!r}") from None

    return convert


class _Parser(argparse.ArgumentParser):
    """Bad options are a :class:`UsageError` (the ``agentgym`` command prints it, exit 2)."""

    def error(self, message: str) -> typing.NoReturn:
        raise UsageError(f"{self.prog}: {message} (see {self.prog} --help)")


def _kind(hint: Any) -> tuple[type, bool]:
    """The scalar type of a field's annotation and whether it may be None."""
    args = typing.get_args(hint)
    if args and type(None) in args:
        return next(a for a in args if a is not type(None)), True
    return hint, False


def _converter(kind: type, optional: bool, name: str) -> Any:
    def convert(text: str) -> Any:
        if optional and text.lower() == "none":
            return None
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"--{name.replace('_', '-')} takes a {kind.__name__}, got {text!r}"
            ) from None

    return convert
