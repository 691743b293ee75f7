"""What crosses the wire between an env server and its clients: values, spaces and errors.

Everything is JSON. Observations, actions and ``info`` are Python values that JSON almost
holds; the few it does not (NumPy arrays and scalars, tuples, a :class:`~agentgym.Verdict`, a
game's :class:`~agentgym.spaces.TextObservation`, dicts with keys that are not strings) travel
as small tagged objects, so a value decodes to one that
:func:`gymnasium.utils.env_checker.data_equivalence` finds equal to the original: a remote
episode is the same episode as a local one.

Spaces travel as descriptions (``{"type": "Text", "max_length": ...}``), never pickled: a
client that unpickled what a server sent would run whatever the server chose.

Errors travel typed: an exception the env raised keeps its class name, and the client raises
the same agentgym or builtin exception class (a wrong argument type stays a ``TypeError``);
any other class becomes a :class:`~agentgym.errors.RemoteEnvError` naming it.
"""

from __future__ import annotations

import base64
import builtins
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

import agentgym.errors as errors
from agentgym.core import Verdict
from agentgym.errors import RemoteEnvError, ServerBusyError, UsageError
from agentgym.spaces import ChatMessages, Text, TextObservation, ToolCall

__all__ = [
    "CODES",
    "HostedError",
    "decode",
    "describe_space",
    "encode",
    "error_from_payload",
    "error_payload",
    "space_from",
]

_TAG = "__"


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data (see the module docstring); raise UsageError if it has a
    part JSON cannot carry (a function, an open file)."""
    if isinstance(value, np.generic):  # before float: np.float64 is one, and must stay itself
        return {"__scalar__": value.item(), "dtype": value.dtype.str}
    if isinstance(value, TextObservation):  # a game's text, which PettingZoo's test reads
        return {"__text__": str(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return _plain(value)
    if isinstance(value, Verdict):
        return {"__verdict__": value.to_dict()}
    if isinstance(value, np.ndarray):
        data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()
        return {"__ndarray__": data, "dtype": value.dtype.str, "shape": list(value.shape)}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        if all(isinstance(k, str) and not k.startswith(_TAG) for k in value):
            return {k: encode(v) for k, v in value.items()}
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    raise UsageError(
        f"cannot send a {type(value).__name__} over the wire ({value!r:.80}): observations, "
        f"actions and info must be made of JSON values, NumPy arrays, tuples and Verdicts"
    )


def _plain(value: Any) -> Any:
    """None, a bool, int, float or str as the plain type (a str subclass as a str)."""
    if value is None or isinstance(value, bool):
        return value
    return (int if isinstance(value, int) else float if isinstance(value, float) else str)(value)


def decode(data: Any) -> Any:
    """The inverse of :func:`encode`."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "__ndarray__" in data:
        raw = base64.b64decode(data["__ndarray__"])
        array = np.frombuffer(raw, dtype=np.dtype(data["dtype"])).reshape(data["shape"])
        return array.copy()  # writable, as the env's own array was
    if "__scalar__" in data:
        return np.dtype(data["dtype"]).type(data["__scalar__"])
    if "__text__" in data:
        return TextObservation(data["__text__"])
    if "__tuple__" in data:
        return tuple(decode(v) for v in data["__tuple__"])
    if "__verdict__" in data:
        return Verdict.from_dict(data["__verdict__"])
    if "__dict__" in data:
        return {_hashable(decode(k)): decode(v) for k, v in data["__dict__"]}
    return {k: decode(v) for k, v in data.items()}


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


# --------------------------------------------------------------------------- spaces


def describe_space(space: gymnasium.Space[Any]) -> dict[str, Any]:
    """A JSON description of ``space`` that :func:`space_from` turns back into an equal one."""
    if isinstance(space, Text):
        return {"type": "Text", "min_length": space.min_length, "max_length": space.max_length}
    if isinstance(space, ChatMessages):
        return {
            "type": "ChatMessages",
            "max_messages": space.max_messages,
            "max_length": space.content.max_length,
        }
    if isinstance(space, ToolCall):
        return {"type": "ToolCall", "tools": list(space.tools)}
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "low": encode(space.low),
            "high": encode(space.high),
            "dtype": np.dtype(space.dtype).str,
        }
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": encode(np.asarray(space.n))}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": encode(space.nvec), "start": encode(space.start)}
    if isinstance(space, spaces.Text):
        charset = "".join(sorted(space.character_set))
        return {"type": "GymText", "min_length": space.min_length,
                "max_length": space.max_length, "charset": charset}  # fmt: skip
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {k: describe_space(s) for k, s in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [describe_space(s) for s in space.spaces]}
    raise UsageError(
        f"the env server cannot describe a {type(space).__name__} space to its clients; "
        f"serve envs whose spaces are agentgym's (Text, ChatMessages, ToolCall) or Gymnasium's "
        f"Discrete, Box, MultiBinary, MultiDiscrete, Text, Dict and Tuple"
    )


def space_from(data: Mapping[str, Any]) -> gymnasium.Space[Any]:
    """The space :func:`describe_space` described."""
    kind = data["type"]
    if kind == "Text":
        return Text(data["max_length"], min_length=data["min_length"])
    if kind == "ChatMessages":
        return ChatMessages(data["max_messages"], max_length=data["max_length"])
    if kind == "ToolCall":
        return ToolCall(data["tools"])
    if kind == "Discrete":
        return spaces.Discrete(data["n"], start=data["start"])
    if kind == "Box":
        low, high = decode(data["low"]), decode(data["high"])
        return spaces.Box(low, high, shape=low.shape, dtype=np.dtype(data["dtype"]))
    if kind == "MultiBinary":
        return spaces.MultiBinary(decode(data["n"]).tolist())
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(decode(data["nvec"]), start=decode(data["start"]))
    if kind == "GymText":
        return spaces.Text(data["max_length"], min_length=data["min_length"],
                           charset=data["charset"])  # fmt: skip
    if kind == "Dict":
        return spaces.Dict({k: space_from(s) for k, s in data["spaces"].items()})
    if kind == "Tuple":
        return spaces.Tuple([space_from(s) for s in data["spaces"]])
    raise RemoteEnvError(f"the env server described a space of unknown type {kind!r}")


# --------------------------------------------------------------------------- errors

CODES: Mapping[str, int] = {
    "INVALID_JSON": 400,
    "VALIDATION_ERROR": 400,
    "UNKNOWN_TYPE": 400,
    "USAGE_ERROR": 400,
    "UNAUTHORIZED": 401,
    "NO_SESSION": 404,
    "OUT_OF_ORDER": 409,
    "RESET_NEEDED": 409,
    "EXECUTION_ERROR": 500,
    "CAPACITY_REACHED": 503,
    "DRAINING": 503,
}
"""The error codes of the protocol and the HTTP status each answers with. OpenEnv's own
codes (``INVALID_JSON``, ``UNKNOWN_TYPE``, ``VALIDATION_ERROR``, ``EXECUTION_ERROR``,
``CAPACITY_REACHED``) keep their meaning; the others are ours."""

_BUILTINS = (TypeError, ValueError, KeyError, IndexError, NotImplementedError, AssertionError)


class HostedError(Exception):
    """An exception raised in a session's child process (:mod:`agentgym.remote.hosts`),
    carried as its wire form (class name, module, message, code): the server answers it
    exactly as it would the original."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload.get("message", ""))
        self.payload = payload


def error_payload(error: BaseException, code: str | None = None) -> dict[str, Any]:
    """The wire form of an exception: its class name, message and protocol code (an
    exception from a session's child process carries its wire form already)."""
    if isinstance(error, HostedError):
        return {**error.payload, "code": code or error.payload["code"]}
    if code is None:
        if isinstance(error, (errors.ResetNeeded, gymnasium.error.ResetNeeded)):
            code = "RESET_NEEDED"
        elif isinstance(error, errors.UsageError):
            code = "USAGE_ERROR"
        else:
            code = "EXECUTION_ERROR"
    kind = type(error)
    return {"code": code, "error": kind.__name__, "module": kind.__module__, "message": str(error)}


def error_from_payload(payload: Mapping[str, Any], where: str) -> Exception:
    """The exception a client raises for an error answer from the server at ``where``: the
    env's own class where it is agentgym's, Gymnasium's or a builtin one."""
    code, name = str(payload.get("code", "")), str(payload.get("error", ""))
    message = str(payload.get("message", ""))
    if code in ("CAPACITY_REACHED", "DRAINING"):
        return ServerBusyError(f"the env server at {where} is busy ({code}): {message}")
    known = _known_class(str(payload.get("module", "")), name)
    if known is not None:
        return known(message)
    return RemoteEnvError(f"the env server at {where} answered {code} ({name}): {message}")


def _known_class(module_name: str, name: str) -> type[Exception] | None:
    """The exception class ``module_name.name`` where the client may raise it as itself."""
    module = _ERROR_MODULES.get(module_name)
    found = getattr(module, name, None) if module is not None else None
    if not isinstance(found, type) or not issubclass(found, Exception) or found is Exception:
        return None
    return found if module is not builtins or issubclass(found, _BUILTINS) else None


_ERROR_MODULES = {"agentgym.errors": errors, "gymnasium.error": gymnasium.error,
                  "builtins": builtins}  # fmt: skip
"""The modules whose exception classes a client raises as themselves."""
