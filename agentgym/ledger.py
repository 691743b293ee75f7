"""The episode record (the ledger): one schema for the evaluator, the trainers and the leaderboard.

An :class:`EpisodeRecord` is what happened in one episode: its :class:`EpisodeSpec` (which env,
version, task, seed, agent and sampling settings), the initial observation, every
:class:`StepRecord` (action, observation, reward, flags, a JSON-safe subset of ``info``, timing
and — when the model backend gives them — the exact token ids, logprobs and loss mask), the
final :class:`~agentgym.core.Verdict`, a ``status`` and the error if any.

Records are stored one per line in ``episodes.jsonl``. Writes are crash-safe: each record is
one ``write`` of one line followed by ``fsync``; a writer opening a file whose last line was
torn by a crash cuts that partial line off first, and a reader skips a torn last line. So a
killed run loses at most the episode it was writing, never a finished one, and never leaves a
line that breaks later reads.

Frames (a GUI env's screenshots, :mod:`agentgym.frames`) are not written into the line: each
is written once as a PNG file under the ledger's directory (``frames/ab/ab12….png``, named by
the sha256 of its pixels) and the record holds its reference ``{"sha256", "path", "shape"}``
where the frame was (schema 1.4). A frame is on disk, fsynced, before any line that names it.

Token in, token out: ``prompt_ids``/``completion_ids`` are the ids the model actually saw and
sampled. Trainers use them directly and never re-tokenize text.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from agentgym.core import Verdict
from agentgym.errors import LedgerError
from agentgym.frames import FrameStore, frame_ref, has_frames, is_frame

__all__ = [
    "SCHEMA_VERSION",
    "EpisodeRecord",
    "EpisodeSpec",
    "EpisodeWriter",
    "StepRecord",
    "TokenRecord",
    "UserTurnRecord",
    "jsonable",
    "read_episodes",
    "record_with_frames_stored",
    "rewrite_episodes",
]

SCHEMA_VERSION = "1.4"
"""``MAJOR.MINOR``. Readers accept any minor of their major; a new major is a breaking change."""

Status = Literal["ok", "truncated", "errored"]

MAX_INT_BITS = 14_000
"""The longest int a record writes as a number: under ``str()``'s limit of 4,300 digits."""


@dataclass
class TokenRecord:
    """The model's tokens for one step, exactly as sampled.

    Attributes:
        prompt_ids: the prompt token ids the model was given.
        completion_ids: the token ids it generated.
        logprobs: the log-probability of each completion token under the sampling policy.
        loss_mask: 1 for completion tokens a trainer should learn from, 0 for the rest
            (e.g. tokens the env or a tool inserted); ``None`` means all ones.
    """

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float] | None = None
    loss_mask: list[int] | None = None

    def __post_init__(self) -> None:
        n = len(self.completion_ids)
        for name in ("logprobs", "loss_mask"):
            value = getattr(self, name)
            if value is not None and len(value) != n:
                raise LedgerError(
                    f"TokenRecord.{name} has {len(value)} entries for {n} completion tokens"
                )


@dataclass
class StepRecord:
    """One step: the action taken and what the env answered."""

    action: Any
    observation: Any
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any] = field(default_factory=dict)
    env_seconds: float = 0.0
    agent_seconds: float = 0.0
    tokens: TokenRecord | None = None


@dataclass
class UserTurnRecord:
    """One message of a model that played the user (conversation envs, ``--user``): kept
    apart from the agent's steps, so a trainer never learns from the user's tokens.

    Attributes:
        after_step: how many agent steps had been taken when the user wrote it (0: during
            the reset, the user's opening message).
        text: the user's message as the env received it.
        tokens: the user model's exact tokens, when its backend gives them.
        usage: prompt and completion token counts.
    """

    after_step: int
    text: str
    tokens: TokenRecord | None = None
    usage: dict[str, int] = field(default_factory=dict)


@dataclass
class EpisodeSpec:
    """Everything needed to re-run the episode."""

    env_id: str
    task_id: str
    seed: int | None
    agent: str
    env_version: int | None = None
    split: str | None = None
    sampling: dict[str, Any] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    agentgym_version: str = ""
    iteration: int | None = None
    """The training iteration that played the episode (a trainer's ledger); ``None`` in an
    evaluation. Added in schema 1.1; a 1.0 record reads as ``None``."""
    user: str | None = None
    """The agent spec of the model that played the user (``--user``); ``None`` when the env
    played its own user (a scripted one) or has none. Added in schema 1.2, and written only
    when set."""

    def __post_init__(self) -> None:
        if self.env_version is None and "-v" in self.env_id:
            suffix = self.env_id.rsplit("-v", 1)[1]
            self.env_version = int(suffix) if suffix.isdigit() else None
        if not self.agentgym_version:
            from agentgym import __version__

            self.agentgym_version = __version__


@dataclass
class EpisodeRecord:
    """One episode, as stored in ``episodes.jsonl``."""

    spec: EpisodeSpec
    initial_observation: Any
    steps: list[StepRecord] = field(default_factory=list)
    verdict: Verdict | None = None
    status: Status = "ok"
    error: str | None = None
    episode_id: str = ""
    started_at: float = 0.0
    seconds: float = 0.0
    schema_version: str = SCHEMA_VERSION
    user_turns: list[UserTurnRecord] = field(default_factory=list)
    """The messages of a model that played the user (schema 1.2; written only when any)."""
    instructions: str | None = None
    """The instructions the env gave at reset (its ``info["instructions"]``), once per
    episode, so a reader sees what the agent was told (schema 1.3; written only when set)."""

    @property
    def total_reward(self) -> float:
        """The episode's return."""
        return float(sum(step.reward for step in self.steps))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        data = asdict(self)
        data["verdict"] = self.verdict.to_dict() if self.verdict is not None else None
        # Written only when used, so records of envs without a model user keep their bytes.
        if not data["user_turns"]:
            del data["user_turns"]
        if data["spec"]["user"] is None:
            del data["spec"]["user"]
        if data["instructions"] is None:
            del data["instructions"]
        out: dict[str, Any] = jsonable(data)
        return out

    def to_line(self) -> str:
        """The record as one line of ``episodes.jsonl`` (without the newline), always
        writable as UTF-8.

        Text that UTF-8 cannot hold (a lone surrogate in an observation, say) is written as
        JSON escapes (``\\ud800``), which read back as the same string, and an int too long
        for ``str()`` as its hex string: what a record holds never loses the record.
        """
        data = self.to_dict()
        try:
            line = json.dumps(data, ensure_ascii=False, allow_nan=False)
            if not line.isascii():  # O(1); then one encode, only for non-ASCII lines
                line.encode("utf-8")
        except ValueError:  # UnicodeEncodeError, or an int beyond str()'s digit limit
            return json.dumps(_writable(data), allow_nan=False)
        return line

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeRecord:
        """Parse a dict written by :meth:`to_dict`; reject an incompatible schema version."""
        version = str(data.get("schema_version", ""))
        if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
            raise LedgerError(
                f"episode record has schema version {version!r}; this agentgym reads "
                f"{SCHEMA_VERSION.split('.')[0]}.x (upgrade agentgym to read newer records)"
            )
        try:
            steps = [
                StepRecord(
                    **{**s, "tokens": TokenRecord(**s["tokens"]) if s.get("tokens") else None}
                )
                for s in data["steps"]
            ]
            verdict = data.get("verdict")
            user_turns = [
                UserTurnRecord(
                    **{
                        **turn,
                        "tokens": TokenRecord(**turn["tokens"]) if turn.get("tokens") else None,
                    }
                )
                for turn in data.get("user_turns", ())
            ]
            return cls(
                spec=EpisodeSpec(**data["spec"]),
                initial_observation=data["initial_observation"],
                steps=steps,
                verdict=Verdict.from_dict(verdict) if verdict is not None else None,
                status=data["status"],
                error=data.get("error"),
                episode_id=data.get("episode_id", ""),
                started_at=float(data.get("started_at", 0.0)),
                seconds=float(data.get("seconds", 0.0)),
                schema_version=version,
                user_turns=user_turns,
                instructions=data.get("instructions"),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise LedgerError(
                f"malformed episode record: {type(error).__name__}: {error}"
            ) from error


def jsonable(value: Any) -> Any:
    """``value`` with Verdicts, numpy values, tuples and sets turned into JSON types.

    Values JSON cannot hold (objects, NaN) become their ``repr`` string, so an unusual
    ``info`` entry never makes a record unwritable. A frame becomes its reference
    (:func:`~agentgym.frames.frame_ref`: what a record holds once the frame is stored, so a
    replayed screen compares equal to the recorded one), never a list of its pixels.
    """
    if isinstance(value, Verdict):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if is_frame(value):
        return frame_ref(value)
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return repr(value)


def _writable(value: Any) -> Any:
    """JSON data with the ints ``str()`` refuses (over 4,300 digits) as hex strings."""
    if isinstance(value, dict):
        return {key: _writable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_writable(item) for item in value]
    if type(value) is int and value.bit_length() > MAX_INT_BITS:
        return hex(value)
    return value


def record_with_frames_stored(record: EpisodeRecord, frames: FrameStore) -> EpisodeRecord:
    """``record`` with the frames of its observations and infos written to ``frames`` and
    replaced by their references; ``record`` itself when it holds none (a text env's)."""
    steps = record.steps
    if not has_frames(record.initial_observation) and not any(
        has_frames(step.observation) or has_frames(step.info) for step in steps
    ):
        return record
    return replace(
        record,
        initial_observation=frames.externalize(record.initial_observation),
        steps=[
            replace(
                step,
                observation=frames.externalize(step.observation),
                info=frames.externalize(step.info),
            )
            for step in steps
        ],
    )


class EpisodeWriter:
    """Appends records to an ``episodes.jsonl`` file, one fsynced line each; their frames
    go to ``frames/`` beside it (:func:`record_with_frames_stored`).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "episodes.jsonl"
    >>> spec = EpisodeSpec("games/Maze-v0", "dev/easy/0", seed=0, agent="oracle")
    >>> with EpisodeWriter(path) as writer:
    ...     writer.write(EpisodeRecord(spec, initial_observation="start"))
    >>> [r.spec.task_id for r in read_episodes(path)]
    ['dev/easy/0']
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _cut_torn_tail(self.path)
        self.frames = FrameStore(self.path.parent)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def write(self, record: EpisodeRecord) -> None:
        """Append one record durably (its frames first)."""
        self._file.write(record_with_frames_stored(record, self.frames).to_line() + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file (idempotent)."""
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rewrite_episodes(path: str | os.PathLike[str], records: Iterable[EpisodeRecord]) -> None:
    """Replace the file at ``path`` with ``records``, atomically: a reader (or a crash) sees the
    old file or the whole new one, never a part. One fsync for the file, not one per record.
    Frames still in the records are stored beside it first, as :class:`EpisodeWriter` does."""
    target = Path(path)
    scratch = target.with_suffix(".jsonl.tmp")
    frames = FrameStore(target.parent)
    with open(scratch, "w", encoding="utf-8") as out:
        for record in records:
            out.write(record_with_frames_stored(record, frames).to_line() + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(scratch, target)


def read_episodes(path: str | os.PathLike[str]) -> Iterator[EpisodeRecord]:
    """Yield the records of an ``episodes.jsonl`` file.

    A torn last line (a crash mid-write) is skipped with a warning; a corrupt line anywhere
    else raises :class:`LedgerError` naming the line.
    """
    path = Path(path)
    with open(path, encoding="utf-8") as file:
        lines = file.read().split("\n")
    # After the final "\n" there is "" for a clean file, or a torn partial line.
    *complete, tail = lines
    if tail:
        warnings.warn(
            f"{path}: skipping a torn last line ({len(tail)} characters) left by an interrupted "
            f"write",
            stacklevel=2,
        )
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise LedgerError(f"{path}:{number}: not valid JSON ({error})") from error
        try:
            yield EpisodeRecord.from_dict(data)
        except LedgerError as error:
            raise LedgerError(f"{path}:{number}: {error}") from error


def _cut_torn_tail(path: Path) -> None:
    """Truncate a partial last line so the next append starts on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as file:
        file.seek(0, os.SEEK_END)
        size = file.tell()
        file.seek(size - 1)
        if file.read(1) == b"\n":
            return
        chunk_end = size
        while chunk_end > 0:
            start = max(0, chunk_end - 65_536)
            file.seek(start)
            chunk = file.read(chunk_end - start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                file.truncate(start + cut + 1)
                return
            chunk_end = start
        file.truncate(0)
