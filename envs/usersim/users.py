"""Who plays the simulated person of a ``usersim`` env: its scripted one, or a model.

Every env of the family takes ``user="scripted"`` (the default) or an
:class:`~agentgym.UserModel`, and refuses snapshots while a model plays: the model's side of
the conversation lives outside the env, so no snapshot could restore it.
"""

from __future__ import annotations

from typing import Any

from agentgym.core import UserModel
from agentgym.errors import UsageError

__all__ = ["ModelUserEnv", "model_user"]


def model_user(user: Any) -> UserModel | None:
    """The model that plays the user, or ``None`` for the env's scripted one."""
    if user == "scripted":
        return None
    if isinstance(user, UserModel):
        return user
    raise UsageError(
        f"user must be 'scripted' or an agentgym.UserModel (the evaluator makes one from an "
        f"agent spec with --user), got {user!r}"
    )


class ModelUserEnv:
    """Mixin (before :class:`~agentgym.TaskEnv`) for the envs whose user a model may play."""

    user: UserModel | None

    def get_state(self) -> Any:
        if self.user is not None:
            name = self._name()  # type: ignore[attr-defined]
            raise UsageError(
                f"{name}: snapshots need the scripted user; a model playing the user keeps its "
                f"side of the conversation outside the env"
            )
        return super().get_state()  # type: ignore[misc]
