"""The terminal tasks (envs/gui/tasks/terminal.py).

Without a desktop: every template makes checked tasks whose oracles differ from seed to seed.
With one: a sample of templates is played through ``DesktopTaskEnv`` (every template under
``make check``): the initial state fails, the oracle passes, another seed's oracle replayed
fails, and so do generic commands (list the home, remove everything in it)."""

import pytest
from gui.test_tasks_files import check_played, check_templates
from sampling import sample

from agentgym.envs.gui import osworld

GENERIC = [['type("ls -la; cat *\\n")'], ['type("rm -rf ~/* ~/.[!.]*\\n")']]
"""Commands that know nothing of the task."""


def test_terminal_templates_make_checked_tasks_with_seeded_oracles():
    check_templates("xterm", minimum=10)


@pytest.mark.sampled
@pytest.mark.parametrize("key", sample([t.key for t in osworld.templates("xterm")], 2))
def test_terminal_oracle_passes_and_blind_or_generic_commands_fail(key):
    check_played("xterm", key, attacks=GENERIC)
