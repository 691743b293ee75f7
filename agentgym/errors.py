"""The typed error tree: every failure agentgym raises is one of these.

Three kinds of failure are kept apart, because they are handled differently:

* **The caller used the API wrongly** (a programming error): wrong argument types, stepping a
  finished episode, an unknown env id. These raise at once with a message that names the value
  and the likely cause.
* **The agent made a mistake** (a malformed or illegal action): that is *not* an exception. The
  env turns it into feedback in the next observation and counts it in ``info``.
* **The infrastructure failed** (an env process died, a verifier could not judge): these raise
  an :class:`InfrastructureError`. The evaluator records the episode as ``errored`` and retries
  or excludes it; it is never scored 0.

::

    AgentGymError
    ├── UsageError (also TypeError)          the caller passed something wrong
    │   └── ResetNeeded                      step() before reset() or after the episode ended
    ├── RegistryError
    │   ├── UnknownEnvError (also KeyError)  unknown id; says "did you mean ..."
    │   ├── DuplicateEnvError                an id registered twice with different entry points
    │   └── MissingExtraError (ImportError)  a family's optional dependency is not installed
    ├── TaskError (also KeyError)            unknown task id, split or difficulty
    ├── InfrastructureError                  could not run or judge: excluded, never scored 0
    │   ├── EnvCrashedError
    │   │   └── RemoteEnvError               an env server failed, vanished or lost the session
    │   │       └── ServerBusyError          an env server at capacity or draining
    │   ├── VerifierError
    │   ├── ModelError                       a model backend failed or cannot serve a request
    │   │   └── ContextLengthError           the prompt and reply do not fit the context
    │   └── SandboxError                     a sandbox could not be made or stopped working
    │       ├── SandboxUnavailableError      no usable backend (says how to get one)
    │       └── ImageNotFoundError           the rootfs or image named in the spec is not there
    ├── SandboxClosedError (UsageError)      a closed sandbox or session was used
    ├── SandboxFileNotFoundError (FileNotFoundError)   get_file/get_dir of a missing path
    ├── LedgerError                          an episode record that cannot be read or written
    └── ConformanceError (also AssertionError)   raised by the checker; one subclass per check
        ├── GymnasiumCheckError / PettingZooCheckError
        ├── OracleError, NullAgentError (TaskBlindError), DeterminismError, BadActionError,
        ├── InfoContractError, SnapshotError, CloseError, LeakError
"""

from __future__ import annotations

__all__ = [
    "AgentGymError",
    "BadActionError",
    "CloseError",
    "ConformanceError",
    "ContextLengthError",
    "DeterminismError",
    "DuplicateEnvError",
    "EnvCrashedError",
    "GymnasiumCheckError",
    "ImageNotFoundError",
    "InfoContractError",
    "InfrastructureError",
    "LeakError",
    "LedgerError",
    "MissingExtraError",
    "ModelError",
    "NullAgentError",
    "OracleError",
    "PettingZooCheckError",
    "RegistryError",
    "RemoteEnvError",
    "ResetNeeded",
    "SandboxClosedError",
    "SandboxError",
    "SandboxFileNotFoundError",
    "SandboxUnavailableError",
    "ServerBusyError",
    "SnapshotError",
    "TaskBlindError",
    "TaskError",
    "UnknownEnvError",
    "UsageError",
    "VerifierError",
]


class AgentGymError(Exception):
    """Base class of every error agentgym raises."""

    def __str__(self) -> str:
        # KeyError quotes its message; we want the plain text for every subclass.
        return str(self.args[0]) if self.args else ""


class UsageError(AgentGymError, TypeError):
    """The caller passed a value of the wrong type or shape to an agentgym API."""


class ResetNeeded(UsageError):
    """``step()`` was called before ``reset()`` or after the episode had ended."""


class RegistryError(AgentGymError):
    """Something is wrong with an env id or its registration."""


class UnknownEnvError(RegistryError, KeyError):
    """No env is registered under this id; the message suggests the closest ids."""


class DuplicateEnvError(RegistryError):
    """The same id was registered twice with different entry points."""


class MissingExtraError(RegistryError, ImportError):
    """An env family needs an optional dependency that is not installed.

    The message names the ``pip install 'agentgym[EXTRA]'`` command that installs it.
    """


class TaskError(AgentGymError, KeyError):
    """An unknown task id, split or difficulty was asked for."""


class InfrastructureError(AgentGymError):
    """The env or verifier could not run or judge. The episode is errored, not failed."""


class EnvCrashedError(InfrastructureError):
    """The process, interpreter or engine behind an env stopped working."""


class RemoteEnvError(EnvCrashedError):
    """An env server (``agentgym serve-env``) could not be reached within the client's
    deadline, lost the session (restarted, or the lease lapsed) or failed inside the env."""


class ServerBusyError(RemoteEnvError):
    """An env server refused a new session or episode: it is at capacity or draining."""


class VerifierError(InfrastructureError):
    """A verifier could not reach a verdict (as opposed to judging an answer wrong)."""


class ModelError(InfrastructureError):
    """A model backend failed (generation raised) or cannot serve a request (context too long).

    Raised into the agent's ``act``, so the episode is errored: never an empty action instead.
    """


class ContextLengthError(ModelError):
    """The prompt and the reply asked for do not fit the model's context (a request that no
    retry can serve: a server answers it with a 400)."""


class SandboxError(InfrastructureError):
    """A sandbox could not be created, or its machinery (not the code in it) failed."""


class SandboxUnavailableError(SandboxError):
    """No sandbox backend is usable here; the message says how to get one."""


class ImageNotFoundError(SandboxError):
    """The rootfs directory or container image named in a sandbox spec does not exist."""


class SandboxClosedError(UsageError):
    """A sandbox or session was used after ``close()``."""


class SandboxFileNotFoundError(AgentGymError, FileNotFoundError):
    """``get_file``/``get_dir`` asked for a path that does not exist in the sandbox."""


class LedgerError(AgentGymError):
    """An episode record could not be read or written (bad schema version, corrupt line)."""


class ConformanceError(AgentGymError, AssertionError):
    """An env broke the contract. Raised by :func:`agentgym.check_env`; one subclass per check."""


class GymnasiumCheckError(ConformanceError):
    """Gymnasium's own ``check_env`` failed or warned."""


class PettingZooCheckError(ConformanceError):
    """PettingZoo's own ``api_test`` failed."""


class OracleError(ConformanceError):
    """The task's oracle did not reach the maximum score: the task or its verifier is wrong."""


class NullAgentError(ConformanceError):
    """A do-nothing or random agent scored as well as the oracle: the verifier cannot tell."""


class TaskBlindError(NullAgentError):
    """A policy that sees nothing of the task (ends at once, repeats one action, replays
    another task's solution, names every option) scored more than the env's chance."""


class DeterminismError(ConformanceError):
    """The same seed, task and actions gave a different episode."""


class BadActionError(ConformanceError):
    """A malformed action raised an exception or did not come back as feedback."""


class InfoContractError(ConformanceError):
    """``info`` lacks a required key (``state_key``, ``instructions``, ``verdict``...)."""


class SnapshotError(ConformanceError):
    """``get_state``/``set_state`` did not restore the same situation."""


class CloseError(ConformanceError):
    """``close()`` raised, or could not be called twice."""


class LeakError(ConformanceError):
    """Threads, file descriptors or child processes grew over reset/close cycles."""
