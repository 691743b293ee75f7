"""The filtered spawn path of the bwrap backend: several threads, every one filtered.

Every bwrap command is started by a thread that has the syscall filter loaded
(:func:`agentgym.sandbox.syscalls.filtered_popen`). These tests hold the two halves of that
design: sandboxes driven at once do not queue behind a single spawning thread, and no command
started that way escapes the filter.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from agentgym.sandbox import create, syscalls

# conftest's backend fixture, for bwrap only: it skips off Linux or without root, else fails
# when bwrap (with its filter) cannot run.
pytestmark = pytest.mark.parametrize("backend", ["bwrap"], indirect=True)


def seccomp_mode() -> str:
    """This thread's seccomp mode as ``/proc`` shows it ("2": a filter is loaded)."""
    with open("/proc/thread-self/status") as status:
        return next(line.split()[1] for line in status if line.startswith("Seccomp:"))


def test_spawning_threads_serve_callers_at_once_and_each_is_filtered(backend):
    """Three spawns in progress together: with one spawning thread they would wait in line
    (here: the barrier would time out)."""
    meet = threading.Barrier(3, timeout=10)

    def spawn() -> tuple[str, str]:
        meet.wait()
        return threading.current_thread().name, seccomp_mode()

    futures = [syscalls._spawner().submit(spawn) for _ in range(3)]
    results = [future.result(timeout=20) for future in futures]
    assert len({name for name, _ in results}) == 3
    assert {mode for _, mode in results} == {"2"}
    assert seccomp_mode() == "0"  # the caller's own thread stays unfiltered


def test_commands_of_sandboxes_run_at_once_are_all_filtered(backend, spec):
    boxes = [create(spec, backend=backend) for _ in range(4)]
    try:
        with ThreadPoolExecutor(max_workers=4) as callers:
            runs = [
                callers.submit(lambda box=box: [box.exec("grep Seccomp: /proc/self/status")])
                for box in boxes
                for _ in range(5)
            ]
            outputs = [result.stdout.split() for run in runs for result in run.result()]
    finally:
        for box in boxes:
            box.close()
    assert outputs and all(output == ["Seccomp:", "2"] for output in outputs), outputs
