"""TextWorld's games, generated once per machine and cached: the part of the TextWorld ids that
makes games (``textworld.py`` plays them).

A game is generated on its first use and kept in ``$AGENTGYM_CACHE/textworld``. Generation runs
in child Pythons with ``PYTHONHASHSEED=0`` and TextWorld's data files read in sorted order, so a
task id names the same game in every process and on every machine (``textworld.py``'s docstring,
"Cache", says why). Starting such a child costs about a second before it generates anything
(importing TextWorld, loading its knowledge base and grammars), as much again as generating a
game, so a child stays up to generate the next game too: a process keeps a pool of them, one per
thread generating at the same moment, and each exits on its own after :data:`IDLE_EXIT` seconds
without a request (or when its parent exits). A game is the same whichever child makes it and
whatever it made before (tested against a fresh child, byte for byte).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import textworld
import textworld.challenges
import textworld.generator
from textworld.generator import QuestGenerationError
from textworld.generator.text_grammar import Grammar

from agentgym.cache import cache_dir as agentgym_cache_dir
from agentgym.cache import exclusive
from agentgym.errors import InfrastructureError

__all__ = ["GENERATION_TIMEOUT", "IDLE_EXIT", "cache_dir", "ensure_game", "game_path"]

GENERATION_ATTEMPTS = 8
GENERATION_TIMEOUT = 300
"""Seconds a child may take over one game before it is killed (an infrastructure error)."""
IDLE_EXIT = 30.0
"""Seconds a generator child waits for its next request before it exits."""


def cache_dir() -> Path:
    """Where generated games are kept: ``$AGENTGYM_CACHE/textworld`` (``~/.cache/agentgym``)."""
    return agentgym_cache_dir() / "textworld"


def _slug(settings: dict[str, Any]) -> str:
    parts = []
    for key, value in settings.items():
        if value is True:
            parts.append(key)
        elif value not in (False, None):
            parts.append(f"{key}{value}")
    return "-".join(parts).replace("_", "")


def game_path(challenge: str, settings: dict[str, Any], seed: int) -> Path:
    """The cached ``.z8`` of a game (which may not exist yet)."""
    return cache_dir() / challenge / _slug(settings) / f"{seed}.z8"


def ensure_game(challenge: str, settings: dict[str, Any], seed: int) -> Path:
    """The game's ``.z8``, generated and cached on first use (atomic, safe across processes).

    A per-game lock file serialises generation across processes (no duplicated work); the
    game is built in a private folder and moved into place ``.json`` first and ``.z8`` last, so
    a reader that finds the ``.z8`` always finds a complete pair.
    """
    path = game_path(challenge, settings, seed)
    if _complete(path):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(path.with_suffix(".lock")):
        if not _complete(path):
            scratch = Path(tempfile.mkdtemp(prefix=f".{seed}-", dir=path.parent))
            try:
                built = _run_generator(challenge, settings, seed, scratch / path.name)
                os.replace(built.with_suffix(".json"), path.with_suffix(".json"))
                os.replace(built, path)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    return path


def _complete(path: Path) -> bool:
    return path.is_file() and path.with_suffix(".json").is_file()


def _run_generator(challenge: str, settings: dict[str, Any], seed: int, path: Path) -> Path:
    """Have a generator child write the game to ``path``.

    A child that was idle may exit just as the request is sent; the request then goes to a
    fresh child, once. Any other failure is the game's: an :class:`InfrastructureError` that
    names it, with the child's traceback.
    """
    request = {"challenge": challenge, "settings": settings, "seed": seed, "path": str(path)}
    what = f"{challenge} {settings} seed {seed}"
    for attempt in range(2):
        generator, reused = _POOL.take()
        try:
            generator.generate(request, what)
        except _ChildGone as gone:
            generator.close()
            if reused and attempt == 0:
                continue
            raise InfrastructureError(f"TextWorld could not generate {what}: {gone}") from None
        except BaseException:
            generator.close()
            raise
        _POOL.give_back(generator)
        if not _complete(path):
            raise InfrastructureError(f"TextWorld's generator wrote no {path} for {what}")
        return path
    raise AssertionError("unreachable")  # pragma: no cover


class _ChildGone(Exception):
    """The child exited or closed its pipe before replying."""


_SERVE = (
    "import glob, sys\n"
    "_glob = glob.glob\n"
    "glob.glob = lambda *args, **kwargs: sorted(_glob(*args, **kwargs))\n"
    "from agentgym.envs.games.textworld_games import serve\n"
    "serve()\n"
)


class _Generator:
    """One generator child, used by one thread at a time."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _SERVE, str(IDLE_EXIT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": "0"},
            bufsize=0,
        )

    def alive(self) -> bool:
        return self.process.poll() is None

    def generate(self, request: dict[str, Any], what: str) -> None:
        """Send one request and wait for its reply (raises on a failed game or a dead child)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(request).encode() + b"\n")
        except (BrokenPipeError, ValueError) as error:
            raise _ChildGone(f"the generator exited ({error})") from None
        deadline = time.monotonic() + GENERATION_TIMEOUT
        reply = b""
        fd = self.process.stdout.fileno()
        while not reply.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise InfrastructureError(
                    f"TextWorld took over {GENERATION_TIMEOUT} s to generate {what}"
                )
            chunk = os.read(fd, 65536)
            if not chunk:
                code = self.process.wait()
                raise _ChildGone(f"the generator exited with code {code}")
            reply += chunk
        failure = json.loads(reply).get("error")
        if failure:
            raise InfrastructureError(f"TextWorld could not generate {what}:\n{failure}")

    def close(self) -> None:
        """Stop the child (if it still runs) and release its pipes."""
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


class _GeneratorPool:
    """The idle generator children of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Generator] = []
        self._pid = os.getpid()

    def take(self) -> tuple[_Generator, bool]:
        """An idle child (``True``: it was reused) or a new one (``False``); dead ones are
        reaped on the way."""
        with self._lock:
            if self._pid != os.getpid():  # a forked copy of the pool: those children are not ours
                self._idle, self._pid = [], os.getpid()
            dead = [generator for generator in self._idle if not generator.alive()]
            self._idle = [generator for generator in self._idle if generator not in dead]
            ready = self._idle.pop() if self._idle else None
        for generator in dead:
            generator.close()
        return (ready, True) if ready is not None else (_Generator(), False)

    def give_back(self, generator: _Generator) -> None:
        with self._lock:
            if self._pid == os.getpid():
                self._idle.append(generator)
                return
        generator.close()


_POOL = _GeneratorPool()


def serve() -> None:
    """The generator child: one JSON request a line on stdin, one JSON reply a line, until
    stdin closes or no request comes for ``argv[1]`` seconds.

    The replies go to a private copy of stdout; the process's own stdout then points at stderr,
    so that nothing TextWorld or its compilers print can garble them.
    """
    idle = float(sys.argv[1])
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    known = _load_grammars()
    requests = sys.stdin.buffer
    while select.select([requests], [], [], idle)[0]:
        line = requests.readline()
        if not line:
            return
        try:
            args = json.loads(line)
            _generate(args["challenge"], args["settings"], int(args["seed"]), Path(args["path"]))
            _save_grammars(known)
            known = set(Grammar._cache)
            reply: dict[str, Any] = {}
        except Exception:
            reply = {"error": traceback.format_exc()[-2000:]}
        try:
            replies.write(json.dumps(reply).encode() + b"\n")
        except BrokenPipeError:
            return


def _grammar_cache() -> Path:
    version = f"{textworld.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    return cache_dir() / f".text-grammars-{version}.pickle"


def _load_grammars() -> set[str]:
    """Fill TextWorld's grammar cache from disk: parsing its grammars takes ~2 s a process.

    Entries are keyed by file and used only while the file's size and mtime are unchanged.
    The result is identical to parsing (checked: same games byte for byte).
    """
    try:
        with open(_grammar_cache(), "rb") as handle:
            saved = pickle.load(handle)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return set()
    fresh = {}
    for path, (stamp, grammar) in saved.items():
        with contextlib.suppress(OSError):
            if _stamp(path) == stamp:
                fresh[path] = grammar
    Grammar._cache.update(fresh)
    return set(fresh)


def _save_grammars(known: set[str]) -> None:
    if set(Grammar._cache) <= known:
        return
    target = _grammar_cache()
    scratch = None
    try:
        entries = {path: (_stamp(path), grammar) for path, grammar in Grammar._cache.items()}
        fd, scratch = tempfile.mkstemp(prefix=".grammars-", dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(entries, handle)
        os.replace(scratch, target)  # atomic: readers see the old file or the new one
    except (OSError, pickle.PicklingError):
        if scratch is not None:
            with contextlib.suppress(OSError):
                os.unlink(scratch)


def _stamp(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


def _generate(challenge: str, settings: dict[str, Any], seed: int, path: Path) -> Path:
    """Run TextWorld's generator (as ``tw-make`` does) and compile the game to ``path``."""
    for attempt in range(GENERATION_ATTEMPTS):
        options = textworld.GameOptions()
        options.seeds = seed if attempt == 0 else _retry_seed(seed, attempt)
        options.path = str(path)
        options.file_ext = ".z8"
        options.force_recompile = True
        try:
            if challenge == "custom":
                options.nb_rooms = settings["world_size"]
                options.nb_objects = settings["nb_objects"]
                options.nb_parallel_quests = 1
                options.chaining.min_breadth = 1
                options.chaining.max_breadth = 5  # tw-make's defaults
                options.chaining.min_depth = 1
                options.chaining.min_length = settings["quest_length"]
                options.chaining.max_length = settings["quest_length"]
                options.chaining.max_depth = settings["quest_length"]
                game = textworld.generator.make_game(options)
            else:
                _, make, _ = textworld.challenges.CHALLENGES[challenge]
                game = make(settings=dict(settings), options=options)
        except QuestGenerationError:
            continue
        textworld.generator.compile_game(game, options)
        return path
    raise QuestGenerationError(
        f"TextWorld could not generate a {challenge} game with {settings} from seed {seed} "
        f"in {GENERATION_ATTEMPTS} attempts"
    )


def _retry_seed(seed: int, attempt: int) -> int:
    digest = hashlib.blake2b(f"{seed}:{attempt}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big")


# --------------------------------------------------------------------------- cleaning text
