"""Benchmark: the board page's latency with 1,000 entries of 300 episodes each.

Not a test (these machines are noisy). It fills a store (SQLite by default, or ``--db URL``)
with ``--entries`` scored submissions of a 300-episode plan (3 envs x 50 tasks x 2 repeats;
each entry passes each episode with its own rate, so intervals overlap and tie groups form),
serves the app with uvicorn on 127.0.0.1 and times GETs with httpx:

* **cold**: the first board page: every entry's episodes read from the store, every
  bootstrap run, the page rendered;
* **warm**: the same page again (kept, with its HTML, until the store changes);
* **after a write**: the page after a new token is made (any write is a new store version,
  so the board is computed again, as after a new submission);
* the board's JSON, warm, and an entry page.

    python tests/perf/bench_leaderboard.py [--entries 1000] [--requests 20] [--db URL]
"""

from __future__ import annotations

import argparse
import random
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from agentgym.leaderboard.results import Rescore, ScoredEpisode
from agentgym.leaderboard.server import create_app
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import SubmissionInfo

ENVS, TASKS, REPEATS = ("games/Maze-v0", "games/Sokoban-v0", "games/Wordle-v0"), 50, 2
NAME = "bench-board"


def fill(store: Store, entries: int, seed: int = 0) -> None:
    """``entries`` scored submissions, each a re-score of the whole plan."""
    spec = {"name": NAME, "envs": [{"id": env, "tasks": TASKS} for env in ENVS]}
    bench = store.add_benchmark(NAME, 1, "b" * 64, spec)
    rng = random.Random(seed)
    for number in range(entries):
        rate = rng.random()
        episodes = [
            episode(rng, env, task, repeat, rate)
            for env in ENVS
            for task in range(TASKS)
            for repeat in range(REPEATS)
        ]
        sha = store.put_blob(f"bundle {number}".encode())
        info = SubmissionInfo(agent=f"agent-{number:04d}", model=f"model-{number % 37}")
        submission, _ = store.add_submission(bench, sha, info, {}, None)
        rescore = Rescore(NAME, 1, "b" * 64, "re-scored", episodes, "bench", [], 0.0)
        store.add_rescore(submission.id, rescore)


def episode(rng: random.Random, env: str, task: int, repeat: int, rate: float) -> ScoredEpisode:
    passed = rng.random() < rate
    return ScoredEpisode(
        episode_id=f"{env}|test/{task}|{repeat}",
        env_id=env,
        task_id=f"test/{task}",
        repeat=repeat,
        seed=task,
        outcome="ok",
        passed=passed,
        score=float(passed),
        claimed_score=float(passed),
        steps=rng.randint(3, 30),
        prompt_tokens=rng.randint(500, 5000),
        completion_tokens=rng.randint(20, 400),
    )


def serve(app: object) -> tuple[uvicorn.Server, str]:
    """uvicorn on a free port of 127.0.0.1, in a thread."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))  # type: ignore[arg-type]
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}"


def timed(client: httpx.Client, path: str) -> float:
    started = time.perf_counter()
    response = client.get(path)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=20, help="warm requests per figure")
    parser.add_argument("--db", help="a database URL (default: a SQLite file in a temp folder)")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    store = Store(args.db or folder / "leaderboard.db", blob_dir=folder / "blobs")
    store.migrate()
    started = time.perf_counter()
    fill(store, args.entries)
    episodes = args.entries * len(ENVS) * TASKS * REPEATS
    print(f"filled {args.entries} entries ({episodes:,} episodes) in "
          f"{time.perf_counter() - started:.1f} s ({store.engine.dialect.name})")  # fmt: skip

    # replay=False: no re-score at start of these synthetic rows (no bundle behind them)
    server, url = serve(create_app(store, replay=False))
    try:
        with httpx.Client(base_url=url, timeout=300) as client:
            board = f"/b/{NAME}"
            cold = timed(client, board)
            warm = [timed(client, board) for _ in range(args.requests)]
            store.create_token("a write", ["submit"])
            after_write = timed(client, board)
            api = [timed(client, f"/api/v1/benchmarks/{NAME}/board") for _ in range(args.requests)]
            entry_id = store.submissions(NAME)[0].id
            entry = [timed(client, f"/s/{entry_id}") for _ in range(args.requests)]
            size = len(client.get(board).content)
    finally:
        server.should_exit = True
        store.close()
    print(f"board page, {args.entries} entries ({size / 1e6:.1f} MB of HTML):")
    print(f"  cold (read + rank + render)   {1000 * cold:8.0f} ms")
    print(f"  warm (kept page), median      {1000 * statistics.median(warm):8.0f} ms")
    print(f"  after a write (recomputed)    {1000 * after_write:8.0f} ms")
    print(f"  board JSON, warm, median      {1000 * statistics.median(api):8.0f} ms")
    print(f"  entry page, warm, median      {1000 * statistics.median(entry):8.0f} ms")


if __name__ == "__main__":
    main()
