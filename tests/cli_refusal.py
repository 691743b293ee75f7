"""The one assertion every CLI error test makes: a refusal is one line and exit 2."""

from __future__ import annotations

from agentgym.cli import main


def refused(capsys, argv: list[str], *words: str) -> str:
    """Run the CLI; it must exit 2 with a one-line ``agentgym: ...`` naming ``words``."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("agentgym: ") and "\n" not in err and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err
