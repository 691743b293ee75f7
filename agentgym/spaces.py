"""Gymnasium spaces for what language agents see and do.

Gymnasium's own :class:`gymnasium.spaces.Text` only admits a fixed character set (by default
ASCII letters and digits), so it cannot hold what an LLM writes. These spaces are real
:class:`gymnasium.spaces.Space` subclasses, so ``gymnasium.utils.env_checker.check_env``,
vector envs and wrappers accept them unchanged:

* :class:`Text` — any unicode string of bounded length (observations and free-form actions);
* :class:`ChatMessages` — a list of ``{"role", "content"}`` messages (chat observations);
* :class:`ToolCall` — ``{"name": str, "arguments": dict}`` against declared JSON-schema tools.

:class:`Text` observations also travel through Gymnasium's shared memory, so
``gymnasium.make_vec(id, n, vectorization_mode="async")`` works with its default
``shared_memory=True`` (a batch is a tuple of str, as in the sync vector env).

Images are ordinary ``Box(H, W, 3, uint8)`` and multimodal observations ordinary ``Dict`` spaces.

>>> space = Text(max_length=8)
>>> space.contains("héllo ✓"), space.contains("far too long")
(True, False)
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.spaces import Space
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

__all__ = ["ChatMessages", "Text", "TextObservation", "ToolCall", "describe_tools", "tool"]

# Characters `sample()` draws from: printable ASCII plus a few multi-byte characters, so that
# code handling samples is exercised on non-ASCII input too.
_SAMPLE_ALPHABET = tuple(chr(c) for c in range(32, 127)) + tuple("\n\té✓→中😀")

_ROLES = frozenset({"system", "user", "assistant", "tool"})


class Text(Space[str]):
    """Any unicode string whose length lies in ``[min_length, max_length]``.

    ``sample()`` draws random printable text, which the conformance checker uses as a source of
    malformed actions: a text env must answer it with feedback, never an exception.
    """

    def __init__(
        self, max_length: int = 65_536, *, min_length: int = 0, seed: int | None = None
    ) -> None:
        """Create a text space.

        Args:
            max_length: the longest string the space contains, in characters.
            min_length: the shortest string the space contains.
            seed: seed for :meth:`sample`.
        """
        if not 0 <= min_length <= max_length:
            raise ValueError(
                f"Text space needs 0 <= min_length <= max_length, got "
                f"min_length={min_length}, max_length={max_length}"
            )
        self.min_length = int(min_length)
        self.max_length = int(max_length)
        super().__init__(dtype=str, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Free text has no fixed-size array form."""
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random string of printable characters, at most 64 long (or ``max_length``)."""
        longest = min(self.max_length, max(self.min_length, 64))
        length = int(self.np_random.integers(self.min_length, longest + 1))
        picks = self.np_random.integers(0, len(_SAMPLE_ALPHABET), size=length)
        return "".join(_SAMPLE_ALPHABET[i] for i in picks)

    def contains(self, x: Any) -> bool:
        """True for a ``str`` whose length is within the bounds."""
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"Text(min_length={self.min_length}, max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Text)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash(("Text", self.min_length, self.max_length))

    def to_jsonable(self, sample_n: Iterable[str]) -> list[str]:
        """Strings are already JSON."""
        return list(sample_n)

    def from_jsonable(self, sample_n: Sequence[str]) -> list[str]:
        """Strings are already JSON."""
        return list(sample_n)


class TextObservation(str):
    """A ``str`` that also carries the ``dtype`` of :class:`Text`.

    PettingZoo's ``api_test`` compares ``observation.dtype`` with the space's ``dtype``, which
    only NumPy observations have. Multi-agent text envs return their observations as this
    subclass so the standard test runs unchanged; for everything else it is a plain string.
    """

    __slots__ = ()
    dtype = np.dtype(str)


class ChatMessages(Space[list[dict[str, Any]]]):
    """A chat transcript: a list of ``{"role": ..., "content": str}`` dicts.

    Roles are ``system``, ``user``, ``assistant`` and ``tool``. Messages may carry extra keys
    (``name``, ``tool_calls``, ``tool_call_id``) as OpenAI-style chat APIs do.
    """

    def __init__(
        self, max_messages: int = 4096, *, max_length: int = 65_536, seed: int | None = None
    ) -> None:
        """Create a chat-messages space.

        Args:
            max_messages: the most messages a transcript may hold.
            max_length: the longest ``content`` of one message, in characters.
            seed: seed for :meth:`sample`.
        """
        self.max_messages = int(max_messages)
        self.content = Text(max_length)
        super().__init__(dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Transcripts have no fixed-size array form."""
        return False

    def seed(self, seed: int | None = None) -> int | list[int] | dict[str, int]:
        """Seed this space and the text space used for message contents."""
        seeded = super().seed(seed)
        self.content.seed(int(self.np_random.integers(2**31)))
        return seeded

    def sample(self, mask: Any = None, probability: Any = None) -> list[dict[str, Any]]:
        """A short random transcript alternating user and assistant turns."""
        count = int(self.np_random.integers(1, min(self.max_messages, 4) + 1))
        roles = ("user", "assistant")
        return [{"role": roles[i % 2], "content": self.content.sample()} for i in range(count)]

    def contains(self, x: Any) -> bool:
        """True for a list of well-formed messages within the bounds."""
        if not isinstance(x, list) or len(x) > self.max_messages:
            return False
        return all(
            isinstance(m, Mapping)
            and m.get("role") in _ROLES
            and self.content.contains(m.get("content", ""))
            for m in x
        )

    def __repr__(self) -> str:
        return (
            f"ChatMessages(max_messages={self.max_messages}, max_length={self.content.max_length})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ChatMessages)
            and self.max_messages == other.max_messages
            and self.content == other.content
        )

    def __hash__(self) -> int:
        return hash(("ChatMessages", self.max_messages, self.content.max_length))


def tool(
    name: str,
    description: str,
    parameters: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    optional: Sequence[str] = (),
) -> dict[str, Any]:
    """One tool as a JSON-schema function declaration in OpenAI's format: the one way to
    declare a tool, so every family's tools read alike and :class:`ToolCall` judges them alike.

    Every parameter is required unless named in ``optional``. ``additionalProperties`` is
    always ``False``: an argument the tool does not declare is a mistake the agent hears about
    (:meth:`ToolCall.problems`), not one silently dropped, which would let a misspelled optional
    argument look like it took effect.

    Args:
        name: the tool's name, unique among an env's tools.
        description: what the tool does, as the model reads it.
        parameters: argument name -> its JSON schema (``{"type": "string", ...}``), in the order
            the model should read them.
        optional: the arguments that may be left out.

    Raises:
        ValueError: an optional name that is not a parameter (a typo would make it required).
    """
    parameters = parameters or {}
    unknown = [key for key in optional if key not in parameters]
    if unknown:
        raise ValueError(f"tool {name!r}: optional arguments {unknown} are not its parameters")
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {key: dict(schema) for key, schema in parameters.items()},
            "required": [key for key in parameters if key not in optional],
            "additionalProperties": False,
        },
    }


def describe_tools(tools: Sequence[Mapping[str, Any]]) -> str:
    """Tool declarations as text a model reads: each tool's name and description, then one
    line per argument (name, type, required or optional, meaning).

    The one rendering of tool schemas as prose: an env's instructions list its tools with it
    (SWE's), and an in-process agent's prompt adds it for an env whose instructions do not
    describe its tools (:mod:`agentgym.agents.prompting`), so both read alike and always
    match the schemas that judge the calls.

    >>> print(describe_tools([tool("view", "Show a file.", {"path": {"type": "string",
    ...     "description": "which file"}, "line": {"type": "integer"}}, optional=("line",))]))
    view: Show a file.
      - path (string, required): which file
      - line (integer, optional)
    """
    return "\n".join(_describe_tool(declared) for declared in tools)


def _describe_tool(declared: Mapping[str, Any]) -> str:
    schema = declared.get("parameters") or {}
    properties: Mapping[str, Mapping[str, Any]] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    heading = f"{declared['name']}: {str(declared.get('description', '')).strip()}"
    if not properties:
        return f"{heading} (no arguments)"
    lines = [heading]
    for name, argument in properties.items():
        need = "required" if name in required else "optional"
        meaning = str(argument.get("description", "")).strip()
        if "enum" in argument:
            choices = ", ".join(json.dumps(choice) for choice in argument["enum"])
            meaning = f"{meaning}; one of {choices}" if meaning else f"one of {choices}"
        line = f"  - {name} ({_type_name(argument)}, {need})"
        lines.append(f"{line}: {meaning}" if meaning else line)
    return "\n".join(lines)


def _type_name(argument: Mapping[str, Any]) -> str:
    """``string``, ``array of string``, ``integer or null``: a JSON schema's type, in words."""
    kind = argument.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    items = argument.get("items")
    if kind == "array" and isinstance(items, Mapping) and "type" in items:
        return f"array of {_type_name(items)}"
    return str(kind)


class ToolCall(Space[dict[str, Any]]):
    """A structured tool call ``{"name": str, "arguments": dict}`` against declared tools.

    ``tools`` are JSON-schema function declarations in the OpenAI format, ``{"name",
    "description", "parameters": {"type": "object", "properties", "required"}}``. ``contains``
    checks the name, the required arguments and the JSON types of the given ones; that is what
    an env needs to turn a wrong call into feedback rather than a crash.
    """

    _JSON_TYPES: Mapping[str, tuple[type, ...]] = {
        "string": (str,),
        "integer": (int,),
        "number": (int, float),
        "boolean": (bool,),
        "array": (list, tuple),
        "object": (dict,),
        "null": (type(None),),
    }

    def __init__(self, tools: Sequence[Mapping[str, Any]], *, seed: int | None = None) -> None:
        """Create a tool-call space.

        Args:
            tools: the tool declarations (JSON-schema functions); names must be unique.
            seed: seed for :meth:`sample`.
        """
        names = [t.get("name") for t in tools]
        if not tools or any(not isinstance(n, str) or not n for n in names):
            raise ValueError(f"ToolCall needs tools with non-empty 'name' strings, got {names!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"ToolCall tool names must be unique, got {names!r}")
        self.tools = tuple(json.loads(json.dumps(t)) for t in tools)  # deep, JSON-only copy
        self._by_name = {t["name"]: t for t in self.tools}
        super().__init__(dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        """Tool calls have no fixed-size array form."""
        return False

    def problems(self, call: Any) -> list[str]:
        """Everything wrong with ``call``, as messages for the agent (empty if it is valid)."""
        if not isinstance(call, Mapping):
            return [f"a tool call must be an object with 'name' and 'arguments', got {call!r}"]
        name, arguments = call.get("name"), call.get("arguments", {})
        if name not in self._by_name:
            return [f"unknown tool {name!r}; available tools: {', '.join(self._by_name)}"]
        if not isinstance(arguments, Mapping):
            return [f"arguments of {name!r} must be an object, got {arguments!r}"]
        schema = self._by_name[name].get("parameters", {})
        properties = schema.get("properties", {})
        found = [
            f"{name}: missing required argument {key!r}"
            for key in schema.get("required", [])
            if key not in arguments
        ]
        for key, value in arguments.items():
            if key not in properties:
                if schema.get("additionalProperties", True) is False:
                    found.append(f"{name}: unexpected argument {key!r}")
                continue
            expected = properties[key].get("type")
            types = self._JSON_TYPES.get(expected) if isinstance(expected, str) else None
            is_bool = isinstance(value, bool) and expected in ("integer", "number")
            if types is not None and (not isinstance(value, types) or is_bool):
                found.append(f"{name}: argument {key!r} must be {expected}, got {value!r}")
        return found

    def contains(self, x: Any) -> bool:
        """True when ``x`` names a declared tool with well-typed arguments."""
        return not self.problems(x)

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        """A call of a random tool with random arguments of the declared types."""
        tool = self.tools[int(self.np_random.integers(len(self.tools)))]
        properties = tool.get("parameters", {}).get("properties", {})
        return {
            "name": tool["name"],
            "arguments": {k: self._sample_value(v.get("type")) for k, v in properties.items()},
        }

    def _sample_value(self, json_type: Any) -> Any:
        rng = self.np_random
        match json_type:
            case "integer":
                return int(rng.integers(-100, 100))
            case "number":
                return float(rng.normal())
            case "boolean":
                return bool(rng.integers(2))
            case "array":
                return []
            case "object":
                return {}
            case "null":
                return None
            case _:
                return "".join(chr(int(c)) for c in rng.integers(97, 123, size=6))

    def __repr__(self) -> str:
        return f"ToolCall(tools={[t['name'] for t in self.tools]})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolCall) and self.tools == other.tools

    def __hash__(self) -> int:
        return hash(("ToolCall", json.dumps(self.tools, sort_keys=True)))


# Gymnasium's AsyncVectorEnv hands observations between processes through shared memory, with
# one function per space type to create, write and read it. A Text observation is stored as
# its length and its code points (uint32, so any str fits, lone surrogates included): one row
# of ``max_length + 1`` per env. A batch reads back as a tuple of str, as the sync vector env
# batches them.


@create_shared_memory.register(Text)
def _text_shared_memory(space: Text, n: int = 1, ctx: Any = multiprocessing) -> Any:
    return ctx.Array(np.dtype(np.uint32).char, n * (space.max_length + 1))


@write_to_shared_memory.register(Text)
def _write_text(space: Text, index: int, value: str, shared_memory: Any) -> None:
    points = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    if len(points) > space.max_length:
        raise ValueError(f"a {len(points)}-character observation does not fit {space!r}")
    row = space.max_length + 1
    memory = np.frombuffer(shared_memory.get_obj(), dtype=np.uint32)
    memory[index * row] = len(points)
    memory[index * row + 1 : index * row + 1 + len(points)] = points


@read_from_shared_memory.register(Text)
def _read_text(space: Text, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(np.frombuffer(shared_memory.get_obj(), dtype=np.uint32).reshape(n, -1))


class SharedTexts(Sequence[str]):
    """A live view of the Text observations in shared memory, one str per env.

    AsyncVectorEnv reads its shared memory once, when it starts, and expects views that follow
    the workers' writes (NumPy arrays do). This view decodes on access; a deep copy (what the
    vector env returns by default, ``copy=True``) is a plain tuple of str.
    """

    def __init__(self, rows: np.ndarray[Any, np.dtype[np.uint32]]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        row = self._rows[index]
        return row[1 : 1 + int(row[0])].tobytes().decode("utf-32-le", "surrogatepass")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"
