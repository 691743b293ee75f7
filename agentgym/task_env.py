"""``TaskEnv``: reset/step, feedback, rewards and ``info`` written once for every text env.

A family subclasses :class:`TaskEnv` and writes only what is particular to it:

* ``tasks`` (a :class:`~agentgym.core.TaskSet`, set in ``__init__``);
* :meth:`TaskEnv.act` — apply the agent's text to the world, return a line of feedback, and
  raise :class:`InvalidAction` with a helpful message for anything it cannot do;
* :meth:`TaskEnv.observe` — the world as text;
* :meth:`TaskEnv.state_key` — the canonical state (no history);
* optionally :meth:`TaskEnv.admissible_actions`, :meth:`TaskEnv.is_over` and
  :meth:`TaskEnv.action_syntax`.

Everything else — seeding, task choice, option checking, invalid-action counting, rewards as
verdict deltas, ``info``, snapshots, rendering and the clear errors for misuse — lives here, so
every family behaves the same way.

**Agent text is cleaned before a family sees it** (:func:`clean_text`, :func:`clean_action`):
a model's reply can hold a lone surrogate (an OpenAI-compatible server's ``\\ud800`` escape
decodes to one) or a NUL, which no UTF-8 encoder, C string or process argument accepts, so
the first ``.encode()``, ``ast.parse`` or sandbox call of a family would raise, and the
episode would be errored for what the agent wrote. :meth:`TaskEnv.step` cleans the action it
is handed, and :func:`parse_tool_call` the strings its parsers decode from escapes
(``"\\ud800"`` written out in ASCII). The evaluator cleans every reply where it arrives,
before the env and the ledger see it (``agentgym/eval/engine.py``).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import numpy as np
from gymnasium.spaces import Space

from agentgym.core import Env, Task, Verdict
from agentgym.errors import ResetNeeded, TaskError, UsageError
from agentgym.spaces import Text, ToolCall

__all__ = [
    "InvalidAction",
    "TaskEnv",
    "clean_action",
    "clean_text",
    "looks_like_tool_call",
    "parse_tool_call",
]

WorldT = TypeVar("WorldT")

RESET_OPTIONS = ("task_id", "split", "difficulty")
REPLACEMENT = "\ufffd"
"""What :func:`clean_text` puts in place of a character nothing downstream can take."""
MAX_ACTION_NESTING = 32
"""How deep a tool call's arguments may nest; :func:`clean_action` cuts what lies deeper."""


class InvalidAction(Exception):
    """Raised by :meth:`TaskEnv.act` for an action the env cannot carry out.

    The message is shown to the agent, so it should say what was wrong and what would work:
    ``"there is a wall to the north; open directions: south, east"``.
    """


def clean_text(text: str) -> str:
    """``text`` as every encoder, parser, file and process takes it.

    Lone surrogates (U+D800-U+DFFF: not characters, and unencodable in UTF-8) and NUL (which
    ends a C string and is refused in process arguments and by ``ast.parse``) become U+FFFD;
    a surrogate pair split into two code points is joined into its character. Text without
    them comes back as it is, at the cost of a scan or two in C (a few microseconds for a
    long reply).

    >>> clean_text("up\\ud800"), clean_text("ok\\x00"), clean_text("\\ud83d\\ude00 fine")
    ('up\ufffd', 'ok\ufffd', '\U0001f600 fine')
    """
    if "\0" not in text:
        if text.isascii():  # O(1): CPython keeps the flag
            return text
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            pass
        else:
            return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return joined.replace("\0", REPLACEMENT)


def clean_action(action: Any) -> Any:
    """An agent's action with :func:`clean_text` applied to it, or, for a tool call, to every
    string in it (keys too); lists and dicts nested deeper than :data:`MAX_ACTION_NESTING`
    become the string ``"[nested too deeply]"`` (the env then says what is wrong), so that no
    encoder or record of the action runs out of stack. Anything else is returned as it is."""
    return _clean(action, 0)


def _clean(value: Any, depth: int) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if not isinstance(value, Mapping | list | tuple):
        return value
    if depth >= MAX_ACTION_NESTING:
        return "[nested too deeply]"
    if isinstance(value, Mapping):
        return {_clean(k, depth + 1): _clean(v, depth + 1) for k, v in value.items()}
    items = [_clean(item, depth + 1) for item in value]
    return items if isinstance(value, list) else tuple(items)


_JSON_CALL_START = re.compile(r"^\s*(?:```[a-z]*\s*)?\{")


def looks_like_tool_call(text: str) -> bool:
    """Whether ``text`` is written as a JSON tool call: it opens with ``{``, maybe inside a code
    fence (```` ``` ````, ```` ```json ````, any lowercase language tag — the usersim agents'
    reading since its v1 ids, kept so that their scores do not move).

    The one test of "did the writer mean a call", for envs where plain text is also a valid
    move (a reply to a simulated user, a user's own message): such text goes to
    :func:`parse_tool_call`, whose errors then become feedback, and anything else is prose.
    Python-style calls (``name(...)``) are not recognised here, since prose can look like them.
    """
    return _JSON_CALL_START.match(text) is not None


def parse_tool_call(text: str, space: ToolCall) -> tuple[str, dict[str, Any]]:
    """``(name, arguments)`` of a call of ``space``'s tools written as text, checked.

    Reads JSON, ``{"name": ..., "arguments": {...}}`` (arguments as an object or as a JSON
    string, as OpenAI-style APIs return them; absent means none; a ```` ```json ```` fence and
    text after the object are ignored), or a Python-style call ``name(key=literal, ...)``
    read with ``ast`` (literal arguments only, nothing is evaluated). Anything else, and a
    call the space finds wrong, raises :class:`InvalidAction` saying what would work.
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0].strip()
    call = _json_call(body) if body.startswith("{") else _python_call(body, space)
    if isinstance(call.get("arguments"), str):
        try:
            call["arguments"] = json.loads(call["arguments"])
        except (ValueError, RecursionError):
            raise InvalidAction(
                f"the arguments of {body[:80]!r} are a string that is not a JSON object"
            ) from None
    # The parsers decode escapes: ASCII text can spell a lone surrogate or a NUL.
    call = clean_action(call)
    call.setdefault("arguments", {})
    problems = space.problems(call)
    if problems:
        raise InvalidAction("; ".join(problems))
    return call["name"], dict(call["arguments"])


def _json_call(body: str) -> dict[str, Any]:
    try:
        call, _ = json.JSONDecoder().raw_decode(body)
    except json.JSONDecodeError as error:
        raise InvalidAction(
            f"{body[:80]!r} is not valid JSON ({error.msg} at character {error.pos}); write a "
            f'tool call as {{"name": ..., "arguments": {{...}}}}'
        ) from None
    except (ValueError, RecursionError):  # nested too deeply, a number too long
        raise InvalidAction(f"{body[:80]!r} cannot be read as a tool call") from None
    if not isinstance(call, dict):
        raise InvalidAction(
            f"a tool call is a JSON object with 'name' and 'arguments': {body[:80]!r}"
        )
    return call


def _python_call(body: str, space: ToolCall) -> dict[str, Any]:
    first = space.tools[0]
    required = first.get("parameters", {}).get("required", [])
    example = f"{first['name']}({', '.join(f'{k}=...' for k in required)})"
    try:
        node = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # NUL, nesting, size
        raise InvalidAction(
            f'write one tool call, as {{"name": "{first["name"]}", "arguments": {{...}}}} or '
            f"{example}"
        ) from None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.args:
        raise InvalidAction(f"a tool call looks like {example}: keyword arguments only")
    try:
        arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except (ValueError, TypeError, RecursionError, MemoryError):  # {[1]: 2} is unhashable
        raise InvalidAction("tool arguments must be literal values (strings, numbers)") from None
    return {"name": node.func.id, "arguments": arguments}


def _joined(*parts: str) -> str:
    """An observation's parts, a blank line between them; an empty part is left out (an env
    whose feedback says everything observes nothing more)."""
    return "\n\n".join(part for part in parts if part)


def _call_text(call: Mapping[Any, Any]) -> str:
    """A native tool call as the JSON text :meth:`TaskEnv.act` reads."""
    try:
        return json.dumps(clean_action(call), default=str)
    except (TypeError, ValueError) as error:  # keys that are not strings, say
        raise InvalidAction(f"the tool call cannot be read as JSON: {error}") from None


@dataclass
class _Snapshot:
    """What :meth:`TaskEnv.get_state` returns: everything an episode's future depends on."""

    task: Task[Any]
    world: Any
    rng_state: Mapping[str, Any]
    score: float
    invalid_actions: int
    done: bool
    observation: str


class TaskEnv(Env[str, str], Generic[WorldT]):
    """A text env over a :class:`~agentgym.core.TaskSet`; see the module docstring.

    Args:
        split: the split tasks are drawn from when ``reset`` gets no ``task_id``.
        difficulty: restrict sampled tasks to one difficulty (``None``: all of them).
        max_invalid_actions: truncate the episode after this many invalid actions
            (``None``: never; default: the family's :attr:`max_invalid_default`).
        render_mode: ``"ansi"`` (``render()`` returns the text) or ``"human"`` (prints it).
    """

    metadata: dict[str, Any] = {
        "render_modes": ["ansi", "human"],
        "render_fps": 4,
        "supports_state_snapshot": True,
        "multimodal": False,
        "needs_sandbox": False,
        "needs_browser": False,
    }
    max_observation_length = 16_384
    max_action_length = 4_096
    max_invalid_default: int | None = None
    """The family's invalid-action limit when the caller does not choose one."""
    tools: Sequence[Mapping[str, Any]] | None = None
    """JSON-schema tool declarations (OpenAI's function format) that the env's actions can also
    be written as. When set, the action space is a :class:`~agentgym.spaces.ToolCall` space, so
    function-calling agents get the tools natively, and ``step`` accepts a call
    ``{"name", "arguments"}``, which reaches :meth:`act` as its JSON text: one parser serves
    native calls and calls written in text."""

    def __init__(
        self,
        *,
        split: str = "train",
        difficulty: str | None = None,
        max_invalid_actions: int | Literal["default"] | None = "default",
        render_mode: str | None = None,
    ) -> None:
        if max_invalid_actions == "default":
            max_invalid_actions = self.max_invalid_default
        self.tasks.check_split(split)
        self.tasks.check_difficulty(difficulty)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise UsageError(
                f"render_mode={render_mode!r} is not supported; use one of "
                f"{self.metadata['render_modes']} or None"
            )
        if max_invalid_actions is not None and (
            not isinstance(max_invalid_actions, int) or max_invalid_actions < 1
        ):
            raise UsageError(
                f"max_invalid_actions must be an int >= 1 or None, got {max_invalid_actions!r}"
            )
        self.split = split
        self.difficulty = difficulty
        self.max_invalid_actions = max_invalid_actions
        self.render_mode = render_mode
        self.observation_space = Text(self.max_observation_length)
        # A tool-calling env takes tool calls (dicts) as well as text: Gymnasium's Env[str, str]
        # cannot say "or", so the space is declared for what it is.
        self.action_space: Space[Any] = (
            ToolCall(self.tools) if self.tools else Text(self.max_action_length)
        )
        self._task: Task[WorldT] | None = None
        self._world: WorldT | None = None
        self._score = 0.0
        self._invalid_actions = 0
        self._done = False
        self._observation = ""

    # ----------------------------------------------------------------- hooks for families

    def act(self, world: WorldT, action: str) -> str:
        """Apply the agent's action to ``world``; return feedback or raise InvalidAction."""
        raise NotImplementedError

    def observe(self, world: WorldT) -> str:
        """The world as the agent sees it, as text."""
        raise NotImplementedError

    def state_key(self, world: WorldT) -> str:
        """A canonical string of the state the agent is in (no history, no step count)."""
        raise NotImplementedError

    def admissible_actions(self, world: WorldT) -> list[str] | None:
        """The valid actions now, where the env can list them (``None`` if it cannot)."""
        return None

    def is_over(self, world: WorldT) -> bool:
        """Whether the episode has ended without success (lost, out of moves)."""
        return False

    def action_syntax(self) -> str:
        """How to write actions: the part of :meth:`instructions` after the goal. Empty by
        default; an env whose actions are not obvious from its observations says how to
        write them here."""
        return ""

    def start(self, task: Task[WorldT]) -> tuple[WorldT, str]:
        """Begin an episode of ``task``: ``task.setup`` with the env's generator.

        A family whose worlds need the env's own resources (the web family's browser) overrides
        this to attach them to the world ``setup`` returned; the task's ``teardown`` releases them.
        """
        return task.setup(self.np_random)

    def parse_tool_call(self, action: str) -> tuple[str, dict[str, Any]]:
        """``(name, arguments)`` of a call of :attr:`tools` (native calls arrive as JSON text);
        see :func:`parse_tool_call`."""
        if not isinstance(self.action_space, ToolCall):
            raise UsageError(f"{self._name()} declares no tools to parse calls of")
        return parse_tool_call(action, self.action_space)

    # ----------------------------------------------------------------- the Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start an episode.

        Args:
            seed: seeds the env's generator; with no ``task_id`` it also picks the task.
            options: ``{"task_id": str}`` to play a given task, or ``{"split": str,
                "difficulty": str}`` to sample from another split or level than the env's.
        """
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise UsageError(f"reset(seed=...) takes an int or None, got {type(seed).__name__}")
        opts = self._check_options(options)
        super().reset(seed=seed)
        self._release()
        if "task_id" in opts:
            task = self.tasks.get(opts["task_id"])
        else:
            task = self.tasks.sample(
                self.np_random,
                opts.get("split", self.split),
                opts.get("difficulty", self.difficulty),
            )
        world, goal = self.start(task)
        self._task, self._world = task, world
        self._invalid_actions, self._done = 0, False
        verdict = task.validate(world)
        self._score = verdict.score
        self._observation = self._clip(_joined(goal, self.observe(world)))
        info = self._info(verdict, invalid=False)
        info["instructions"] = self.instructions(goal)
        info["goal"] = goal
        return self._observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply the agent's action. Bad actions come back as feedback, not exceptions."""
        if self._task is None or self._world is None:
            raise ResetNeeded(f"{self._name()}: call reset() before step()")
        if self._done:
            raise ResetNeeded(
                f"{self._name()}: the episode has ended (terminated or truncated); call reset()"
            )
        native = bool(self.tools) and isinstance(action, Mapping)  # a native tool call
        if not (native or isinstance(action, str)):
            raise UsageError(
                f"{self._name()}.step() takes the agent's action as a str, got "
                f"{type(action).__name__} {action!r:.80}. Pass the text the agent wrote; "
                f"the env parses it."
            )
        invalid = False
        try:
            action = _call_text(action) if isinstance(action, Mapping) else clean_text(action)
            if len(action) > self.max_action_length:
                raise InvalidAction(
                    f"the action is {len(action)} characters long; the limit is "
                    f"{self.max_action_length}"
                )
            feedback = self.act(self._world, action)
        except InvalidAction as mistake:
            invalid = True
            self._invalid_actions += 1
            feedback = f"Invalid action: {mistake}"
        verdict = self._task.validate(self._world)
        reward = verdict.score - self._score
        self._score = verdict.score
        terminated = verdict.passed or self.is_over(self._world)
        truncated = (
            not terminated
            and self.max_invalid_actions is not None
            and self._invalid_actions >= self.max_invalid_actions
        )
        self._done = terminated or truncated
        self._observation = self._clip(_joined(feedback, self.observe(self._world)))
        info = self._info(verdict, invalid)
        if truncated:
            info["truncation_reason"] = "invalid_actions"
        if self.render_mode == "human":
            self.render()
        return self._observation, float(reward), bool(terminated), bool(truncated), info

    def render(self) -> str | None:
        """``ansi``: the current observation text; ``human``: print it."""
        if self.render_mode == "human":
            print(self._observation)
            return None
        return self._observation

    def close(self) -> None:
        """Release the current task's resources. Safe to call any number of times."""
        self._release()

    # ----------------------------------------------------------------- oracle, snapshots

    def oracle_action(self) -> Any:
        """The task's oracle, asked from the current state: the next action (text, or a tool
        call where the env takes them), ``None`` when nothing is left to do."""
        if self._task is None or self._world is None:
            raise ResetNeeded(f"{self._name()}: call reset() before oracle_action()")
        return self._task.solve(self._world)

    def get_state(self) -> _Snapshot:
        """A deep copy of everything the rest of the episode depends on."""
        if not self.metadata.get("supports_state_snapshot"):
            snapshot: _Snapshot = super().get_state()
            return snapshot
        if self._task is None:
            raise ResetNeeded(f"{self._name()}: call reset() before get_state()")
        return _Snapshot(
            task=self._task,
            world=copy.deepcopy(self._world),
            rng_state=copy.deepcopy(self.np_random.bit_generator.state),
            score=self._score,
            invalid_actions=self._invalid_actions,
            done=self._done,
            observation=self._observation,
        )

    def set_state(self, state: _Snapshot) -> None:
        """Continue from a snapshot; the next ``step`` behaves as it did after ``get_state``."""
        if not self.metadata.get("supports_state_snapshot"):
            return super().set_state(state)
        if not isinstance(state, _Snapshot):
            raise UsageError(
                f"set_state() takes what get_state() returned, got {type(state).__name__}"
            )
        self._release()  # the abandoned world's resources (a sandbox) go with it
        self._task, self._world = state.task, copy.deepcopy(state.world)
        self.np_random.bit_generator.state = copy.deepcopy(state.rng_state)
        self._score, self._invalid_actions = state.score, state.invalid_actions
        self._done, self._observation = state.done, state.observation

    # ----------------------------------------------------------------- helpers

    @property
    def task(self) -> Task[WorldT] | None:
        """The task of the current episode."""
        return self._task

    def instructions(self, goal: str) -> str:
        """Goal and action syntax: what a system prompt needs."""
        syntax = self.action_syntax()
        return f"{goal}\n\n{syntax}".strip()

    def _info(self, verdict: Verdict, invalid: bool) -> dict[str, Any]:
        assert self._task is not None and self._world is not None
        info: dict[str, Any] = {
            "task_id": self._task.id,
            "split": self._task.split,
            "difficulty": self._task.difficulty,
            "state_key": self.state_key(self._world),
            "verdict": verdict,
            "invalid_action": invalid,
            "invalid_actions": self._invalid_actions,
        }
        actions = self.admissible_actions(self._world)
        if actions is not None:
            info["admissible_actions"] = list(actions)
        return info

    def _check_options(self, options: Any) -> dict[str, Any]:
        if options is None:
            return {}
        if not isinstance(options, Mapping):
            raise UsageError(
                f"reset(options=...) takes a dict or None, got {type(options).__name__}"
            )
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            raise UsageError(
                f"unknown reset option(s) {unknown}; {self._name()} accepts {list(RESET_OPTIONS)}"
            )
        for key, value in options.items():
            if not (isinstance(value, str) or (key == "difficulty" and value is None)):
                raise UsageError(
                    f"reset option {key!r} must be a str, got {type(value).__name__} {value!r}"
                )
        if "split" in options:
            self.tasks.check_split(options["split"])
        if "difficulty" in options:
            self.tasks.check_difficulty(options["difficulty"])
        if "task_id" in options and {"split", "difficulty"} & set(options):
            raise TaskError("give either 'task_id' or 'split'/'difficulty' in reset options")
        return dict(options)

    def _release(self) -> None:
        if self._task is not None and self._world is not None:
            task, world = self._task, self._world
            self._task, self._world = None, None
            task.teardown(world)

    def _clip(self, text: str) -> str:
        if len(text) <= self.max_observation_length:
            return text
        marker = "\n[... observation cut to fit the limit ...]"
        keep = max(0, self.max_observation_length - len(marker))
        return (text[:keep] + marker)[: self.max_observation_length]

    def _name(self) -> str:
        return self.spec.id if self.spec is not None else type(self).__name__
