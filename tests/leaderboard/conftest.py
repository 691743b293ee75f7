"""Fixtures of the leaderboard's tests: a throwaway PostgreSQL cluster, a fresh database in it
per test, and a migrated :class:`Store` on SQLite and on PostgreSQL.

The cluster is started with the server's own ``initdb`` and ``pg_ctl`` (on PATH, or where
Debian puts them: ``/usr/lib/postgresql/N/bin``) in a temporary folder, and listens only on
a unix socket in that folder: no TCP port, nothing another test or process can reach by
accident. PostgreSQL refuses to run as root, so as root (CI) the cluster runs as ``nobody``
through ``setpriv``, in a folder ``nobody`` owns. Its tests are skipped only where neither
binary exists; ``make install`` installs Debian's ``postgresql`` as root, so CI runs them.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from half_oracle import HalfOracle  # tests/: the oracle on even seeds, random on the others

from agentgym.leaderboard.store import Store

USER = "agentgym"
"""The cluster's superuser (trust authentication over its private socket)."""
SETTINGS = """
listen_addresses = ''
unix_socket_directories = '{socket_dir}'
fsync = off
synchronous_commit = off
full_page_writes = off
"""
"""No TCP, the socket in the cluster's folder, and no waiting on the disk: the data is thrown
away at the end anyway."""


def postgres_bin() -> Path | None:
    """The folder holding both ``initdb`` and ``pg_ctl``: PATH's first, else Debian's newest."""
    folders = []
    on_path = shutil.which("initdb")
    if on_path:
        folders.append(Path(on_path).resolve().parent)
    debian = glob.glob("/usr/lib/postgresql/*/bin")
    folders += sorted(map(Path, debian), key=lambda f: _version(f.parent.name), reverse=True)
    for folder in folders:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def _version(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


@dataclass
class PostgresCluster:
    """A running throwaway cluster: databases made and dropped by name."""

    socket_dir: Path
    started_in: float
    """Seconds from ``initdb`` to a cluster accepting connections."""

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{USER}@/{database}?host={self.socket_dir}"

    def execute(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(
            host=str(self.socket_dir), user=USER, dbname="postgres", autocommit=True
        ) as connection:
            connection.execute(sql)


class _Owner:
    """Runs the cluster's commands as the user who owns it: ``nobody`` when we are root."""

    def __init__(self) -> None:
        self.root = os.geteuid() == 0
        self.user = pwd.getpwnam("nobody") if self.root else None

    def folder(self) -> Path:
        # Under a folder everyone may traverse (a root-only TMPDIR would lock nobody out),
        # with a short path: a unix socket's path is at most 107 bytes.
        parent = tempfile.gettempdir()
        if self.root and not os.stat(parent).st_mode & 0o001:
            parent = "/tmp"
        folder = Path(tempfile.mkdtemp(prefix="agentgym-pg-", dir=parent))
        if self.user is not None:
            os.chown(folder, self.user.pw_uid, self.user.pw_gid)
        return folder

    def run(self, command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        if self.user is not None:
            user = self.user
            command = [
                "setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                "--clear-groups", "--", *command,
            ]  # fmt: skip
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
        return subprocess.run(
            command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=60
        )


def _start(owner: _Owner, binaries: Path, folder: Path) -> PostgresCluster:
    began = time.perf_counter()
    data, log = folder / "data", folder / "server.log"
    initdb = [str(binaries / "initdb"), "-D", str(data), "-U", USER, "--auth=trust",
              "--no-sync", "--locale=C", "--encoding=UTF8"]  # fmt: skip
    _check(owner.run(initdb, folder), "initdb", log)
    with open(data / "postgresql.conf", "a") as conf:
        conf.write(SETTINGS.format(socket_dir=folder))
    start = [str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "30", "start"]
    _check(owner.run(start, folder), "pg_ctl start", log)
    return PostgresCluster(folder, time.perf_counter() - began)


def _check(done: subprocess.CompletedProcess[str], what: str, log: Path) -> None:
    if done.returncode != 0:
        server_log = log.read_text()[-3000:] if log.exists() else ""
        raise RuntimeError(
            f"{what} failed ({done.returncode}):\n{done.stdout}{done.stderr}\n{server_log}"
        )


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """A PostgreSQL cluster for the whole session, stopped and deleted at its end."""
    binaries = postgres_bin()
    if binaries is None:
        pytest.skip(
            "PostgreSQL's initdb and pg_ctl are neither on PATH nor in /usr/lib/postgresql/*/bin "
            "(Debian: apt-get install postgresql; `make install` does it as root)"
        )
    owner = _Owner()
    folder = owner.folder()
    try:
        cluster = _start(owner, binaries, folder)
        yield cluster
    finally:
        stop = [str(binaries / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "stop"]
        if (folder / "data" / "postmaster.pid").exists():
            owner.run(stop, folder)
        shutil.rmtree(folder, ignore_errors=True)


_databases = itertools.count()


@pytest.fixture
def postgres_url(postgres: PostgresCluster) -> Iterator[str]:
    """A fresh, empty database in the session's cluster, dropped after the test."""
    name = f"test_{os.getpid()}_{next(_databases)}"
    postgres.execute(f"CREATE DATABASE {name}")
    yield postgres.url(name)
    postgres.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'leaderboard.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def store(database_url: str, tmp_path: Path) -> Iterator[Store]:
    """A migrated store on each database, its bundle files in the test's folder."""
    with Store(database_url, blob_dir=tmp_path / "blobs") as opened:
        opened.migrate()
        yield opened


# ---------------------------------------------------------------------------------------------
# The server's tests: real runs of a tiny benchmark, and a server on 127.0.0.1


TINY = {
    "name": "tiny-games",
    "version": 1,
    "description": "Two small games, four test tasks each: the server's tests' board.",
    "seed": 0,
    "envs": [
        {"id": "games/Wordle-v0", "split": "test", "difficulty": "easy", "tasks": 4,
         "max_steps": 6},
        {"id": "games/TowerOfHanoi-v0", "split": "test", "difficulty": "easy", "tasks": 4,
         "max_steps": 10},
    ],
}  # fmt: skip
"""A benchmark whose runs take a tenth of a second and replay as fast (8 episodes)."""


def tiny_benchmark():
    from agentgym.eval import Benchmark

    return Benchmark.from_dict(TINY)


@pytest.fixture(scope="session")
def tiny():
    """The tiny benchmark (:data:`TINY`)."""
    return tiny_benchmark()


def _first_listed(observation, info):
    """The first action the env lists: a real agent, weaker than the oracle."""
    actions = info.get("admissible_actions") or ["?"]
    return actions[0]


TINY_AGENTS = ("oracle", "random", "first-listed", "half-oracle")


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A run directory of the tiny benchmark for each of :data:`TINY_AGENTS` (evaluated once)."""
    from agentgym.eval import evaluate

    agents = {"first-listed": _first_listed, "half-oracle": HalfOracle}
    folder = tmp_path_factory.mktemp("tiny-runs")
    runs = {}
    for name in TINY_AGENTS:
        runs[name] = evaluate(tiny_benchmark(), agents.get(name, name), folder / name).run_dir
    return runs


class LiveServer:
    """An ASGI app served by uvicorn on 127.0.0.1 in a thread (its lifespan runs)."""

    def __init__(self, app) -> None:
        import socket
        import threading

        import uvicorn

        self.app = app
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        # log_config=None: uvicorn's own logging setup is dictConfig, which closes every
        # handler the process ever made. absl's (imported with OpenSpiel by the multi-agent
        # games) holds the sys.stderr of its import, under pytest a capture file that the
        # close then shuts for every later test of the worker ("I/O operation on closed file").
        config = uvicorn.Config(app, log_level="warning", lifespan="on", log_config=None)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(30)
        self._socket.close()


@pytest.fixture
def serve() -> Iterator:
    """``serve(app)`` starts a :class:`LiveServer`; every one is stopped after the test."""
    started: list[LiveServer] = []

    def start(app) -> LiveServer:
        started.append(LiveServer(app))
        return started[-1]

    yield start
    for server in started:
        server.close()


@pytest.fixture(scope="session")
def live_server_type() -> type[LiveServer]:
    """:class:`LiveServer` itself, for fixtures of a wider scope than ``serve``."""
    return LiveServer
