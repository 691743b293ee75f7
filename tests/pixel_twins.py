"""Make a pixel twin whether or not its id is registered (a guessable twin is left out of the
registry, but its oracle and its refusals are still tested)."""

import agentgym
import agentgym.envs.gui  # registers the gui ids where the entry point is not installed
from agentgym.envs.gui.pixel import PixelWebEnv
from agentgym.envs.gui.pixel_ids import twin_kwargs
from agentgym.registry import list_envs


def make_twin(env_id, **kwargs):
    """``agentgym.make(env_id)`` for a registered twin, else the twin built by hand."""
    if env_id in {s.id for s in list_envs("gui")}:
        return agentgym.make(env_id, **kwargs)
    return PixelWebEnv(**twin_kwargs(env_id), **kwargs)
