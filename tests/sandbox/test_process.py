"""run_process's output cap: kept, or (stop_at_cap) the command stopped once it passes it."""

from agentgym.sandbox.process import run_process


def test_a_command_past_the_cap_is_stopped_at_once_when_asked():
    """``yes`` never ends: with stop_at_cap it is killed at the cap, not at the timeout."""
    result = run_process(["yes"], stdin=b"", timeout=30, output_cap=1000, stop_at_cap=True)
    assert result.truncated and not result.timed_out
    assert result.stdout_bytes == b"y\n" * 500
    assert result.duration < 10


def test_without_stop_at_cap_the_rest_is_dropped_and_the_command_finishes():
    result = run_process(
        ["sh", "-c", "head -c 5000 /dev/zero; echo done >&2"],
        stdin=b"",
        timeout=30,
        output_cap=1000,
    )
    assert result.truncated and result.exit_code == 0 and len(result.stdout_bytes) == 1000
    assert result.stderr_bytes == b"done\n"
