"""Train with two Ray rollout workers and SIGKILL one after the first iteration.

Run by ``test_ray.py`` inside a network namespace with only the loopback up (Ray must not
bind the machine's address in tests): ``python ray_training.py OUT_DIR``. Prints the
metrics rows as JSON on its last line.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).parent))

from training import fast_args


def kill_a_worker_after_the_first_row(out: Path, killed: list[int]) -> None:
    metrics = out / "metrics.csv"
    while not metrics.exists() or len(metrics.read_text().splitlines()) < 2:
        time.sleep(0.05)
    for process in psutil.Process().children(recursive=True):
        try:
            if "_Worker" in " ".join(process.cmdline()):
                os.kill(process.pid, signal.SIGKILL)
                killed.append(process.pid)
                return
        except psutil.NoSuchProcess:
            continue


def main() -> None:
    from agentgym.baselines import grpo

    out = Path(sys.argv[1])
    killed: list[int] = []
    threading.Thread(
        target=kill_a_worker_after_the_first_row, args=(out, killed), daemon=True
    ).start()
    args = fast_args(
        "grpo", out, model="tiny", iterations=3, groups=2, group_size=4, rollout_workers=2
    )
    run = grpo.train(args)
    print(json.dumps({"killed": killed, "rows": run.metrics()}))


if __name__ == "__main__":
    main()
