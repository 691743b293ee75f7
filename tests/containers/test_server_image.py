"""The env server in a container: ``agentgym/server:latest`` under the private dockerd, and an
evaluation through it.

Only the ``server`` image is built here (once per ``$AGENTGYM_CACHE``: the image lives in the
private daemon's data root there, and a current image is not rebuilt; a changed checkout
rebuilds its agentgym layer, about half a minute). The family images (web, swe, gui) take
minutes each and are built by hand (``agentgym containers build --all``): containers/README.md
has their figures.

The daemon runs with ``--bridge=none``, so the container shares the host's network
(``network_mode="host"``) and the server binds 127.0.0.1 on a port it picks itself (``--port
0``; it prints its URL, read here from the container's log).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator

import httpx
import pytest

import agentgym
from agentgym import remote
from agentgym.eval import evaluate
from agentgym.sandbox.server_images import build_server_image

pytestmark = pytest.mark.slow

MAZE = "games/Maze-v0"
START_DEADLINE = 60.0


@pytest.fixture(scope="module")
def server_image(docker_daemon) -> str:
    return build_server_image("server", log=lambda line: None)


@contextlib.contextmanager
def served(image: str, *ids: str) -> Iterator[tuple[str, object]]:
    """``agentgym serve-env IDS`` in a container of ``image``; its URL and the container."""
    from agentgym.sandbox.dockerd import docker_client

    container = docker_client().containers.run(
        image, ["--host", "127.0.0.1", "--port", "0", *ids], network_mode="host", detach=True
    )
    try:
        yield _url_of(container), container
    finally:
        container.remove(force=True)


def _url_of(container) -> str:
    """The URL the server printed, once its ``/health`` answers."""
    deadline = time.monotonic() + START_DEADLINE
    while time.monotonic() < deadline:
        container.reload()
        log = container.logs().decode(errors="replace")
        assert container.status != "exited", f"the server exited:\n{log}"
        found = re.search(r"listening on (http://\S+)", log)
        if found:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{found[1]}/health", timeout=2).status_code == 200:
                    return found[1]
        time.sleep(0.2)
    raise AssertionError(f"the server in the container never answered:\n{log}")


def test_an_evaluation_runs_through_the_env_server_in_a_container(server_image, tmp_path):
    with served(server_image, MAZE) as (url, container):
        # It is the container's server that answers, as an unprivileged user.
        processes = container.top(ps_args="-o pid,uid,args")["Processes"]
        assert any(uid != "0" and "serve-env" in args for _, uid, args in processes), processes
        report = agentgym.check_env(lambda: remote.make(url, MAZE), leak_cycles=5)
        assert report.oracle_mean_score == 1.0, report

        opened = _sessions_opened(url)
        run = evaluate(
            env=MAZE, agent="oracle", tasks=3, out=tmp_path / "remote", env_servers=[url]
        )
        # The episodes were the server's: one session each, at least.
        assert _sessions_opened(url) - opened >= 3
    local = evaluate(env=MAZE, agent="oracle", tasks=3, out=tmp_path / "local")
    assert [r.status for r in run.records] == ["ok"] * 3
    assert run.summary["overall"]["success"] == 1.0
    # The same episodes as in-process, but for timing.
    assert _outcomes(run) == _outcomes(local)


def _sessions_opened(url: str) -> int:
    metrics = httpx.get(f"{url}/metrics", timeout=5).text
    found = re.search(r"^agentgym_env_sessions_opened_total (\d+)", metrics, re.M)
    assert found, metrics
    return int(found[1])


def _outcomes(run) -> list[tuple[str, int, float, bool]]:
    return sorted(
        (r.spec.task_id, len(r.steps), r.total_reward, bool(r.verdict and r.verdict.passed))
        for r in run.records
    )
