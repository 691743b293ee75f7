"""The registry: ids like ``games/Sokoban-v0`` to env classes, loaded lazily.

* ``register(id, entry_point="module:Class", ...)`` records an env without importing it, so a
  family whose optional dependency is missing breaks only itself, with an error naming the
  extra to install.
* ``make(id, **kwargs)`` builds a single-agent env through :func:`gymnasium.make`, so the
  standard wrappers are applied and visible in the repr::

      <TimeLimit<OrderEnforcing<PassiveEnvChecker<SokobanEnv<games/Sokoban-v0>>>>>

  The step limit is :class:`TimeLimit`, Gymnasium's save that the step on which the env ends
  the episode is never also truncated (an episode ends for one reason).

  Every single-agent id is also registered with Gymnasium, so ``gymnasium.make(id)`` works
  after ``import agentgym``.
* ``make_multi(id, **kwargs)`` builds a PettingZoo env (AEC or parallel).
* A family may register its ids on demand (:func:`register_resolver`): ``textarena/<Game>-v0``
  names any of TextArena's offline games without registering each in advance.
* Every family, ours and third-party ones alike, registers through the Python entry-point
  group ``agentgym.envs``: the entry point names a module whose import calls
  :func:`register` and imports nothing heavy. ``import agentgym`` loads them all
  (:func:`load_families`, about 20 ms), so Gymnasium knows every id at once.
* A family that is not installed (a module in a checkout, a notebook's file) loads without a
  package: ``AGENTGYM_PLUGINS=module[,module]`` in the environment, ``agentgym --import
  MODULE ...`` on the command line, or :func:`load_plugin` in Python. The module is imported
  from ``sys.path``, or else from the current directory.
* Ids are ``family/Name-vN``. Bump ``N`` whenever rewards, verifiers or task semantics change.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import re
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, SupportsFloat

import gymnasium

from agentgym.errors import (
    DuplicateEnvError,
    MissingExtraError,
    RegistryError,
    UnknownEnvError,
    UsageError,
)

__all__ = [
    "EnvSpec",
    "TimeLimit",
    "families",
    "list_envs",
    "load_families",
    "load_plugin",
    "make",
    "make_limited",
    "make_multi",
    "register",
    "register_resolver",
    "spec",
]

ID_PATTERN = re.compile(
    r"^(?P<family>[a-z][a-z0-9_-]*)/(?P<name>[A-Za-z][A-Za-z0-9_]*)-v(?P<version>\d+)$"
)
ENTRY_POINT_GROUP = "agentgym.envs"
"""The entry-point group every family registers through, ours (``pyproject.toml``) and
third-party ones alike: an entry point names a module whose import calls :func:`register`."""
PLUGINS_VARIABLE = "AGENTGYM_PLUGINS"
"""The environment variable naming modules to import as families (comma-separated)."""

BUILTIN_PREFIX = "agentgym.envs."
"""Entry points under this package are ours: one that fails to import is a bug that raises,
where a third-party family that fails only warns."""

Kind = Literal["env", "aec", "parallel"]

DEFAULT_EPISODE_CPUS = 0.125
"""A text env's share of a core per episode (:attr:`EnvSpec.episode_cpus`): eight a core."""


@dataclass(frozen=True)
class EnvSpec:
    """What the registry knows about an env before importing it.

    Attributes:
        id: ``family/Name-vN``.
        entry_point: ``"module:Class"``, imported on first use.
        kind: ``env`` (Gymnasium), ``aec`` or ``parallel`` (PettingZoo).
        kwargs: default constructor arguments.
        max_episode_steps: the step limit (Gymnasium's ``TimeLimit``); ``None`` for none.
        extra: the pip extra that installs the family's dependencies (``agentgym[EXTRA]``).
        description: one line for ``agentgym list``.
        nondeterministic: the observations after a seeded reset and the same actions may
            differ (Gymnasium's flag: its checker then skips comparing them). A real
            desktop's frames depend on when an application redraws; the verdicts replay,
            which agentgym's own determinism check holds every env to.
        episode_cpus: how much of a CPU core one episode takes, the env and what it runs
            (a browser, a desktop, a sandbox) together: what a Ray actor reserves per
            episode it plays (:mod:`agentgym.eval.ray_pool`), so Ray places actors on nodes
            with room. A browser, a desktop or a repository's tests take a core; a text
            env's step takes microseconds, so the default is a small share.
    """

    id: str
    entry_point: str
    kind: Kind = "env"
    kwargs: dict[str, Any] = field(default_factory=dict)
    max_episode_steps: int | None = None
    extra: str | None = None
    description: str = ""
    nondeterministic: bool = False
    episode_cpus: float = DEFAULT_EPISODE_CPUS

    @property
    def family(self) -> str:
        """The namespace before the slash: ``games`` in ``games/Sokoban-v0``."""
        return self.id.split("/", 1)[0]

    @property
    def version(self) -> int:
        """The number after ``-v``."""
        return int(self.id.rsplit("-v", 1)[1])

    def load(self) -> type:
        """Import and return the env class, or raise MissingExtraError naming the extra."""
        module_name, _, attr = self.entry_point.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as missing:
            if self.extra is None or (missing.name or "").startswith("agentgym"):
                raise
            raise MissingExtraError(
                f"{self.id} needs the Python package {missing.name!r}, which is not installed. "
                f"Install the family's extra: pip install 'agentgym[{self.extra}]'"
            ) from missing
        try:
            loaded: type = getattr(module, attr)
            return loaded
        except AttributeError as error:
            raise RegistryError(
                f"{self.id}: entry point {self.entry_point!r} names no attribute {attr!r}"
            ) from error


_registry: dict[str, EnvSpec] = {}
_resolvers: dict[str, Callable[[str], None]] = {}
_loaded = False
_loading = False
_load_lock = threading.RLock()


def register(
    id: str,
    entry_point: str,
    *,
    kind: Kind = "env",
    kwargs: dict[str, Any] | None = None,
    max_episode_steps: int | None = None,
    extra: str | None = None,
    description: str = "",
    nondeterministic: bool = False,
    episode_cpus: float = DEFAULT_EPISODE_CPUS,
) -> EnvSpec:
    """Register an env under ``id``; see :class:`EnvSpec` for the arguments."""
    if not isinstance(id, str) or not ID_PATTERN.match(id):
        raise RegistryError(
            f"env id {id!r} is not of the form 'family/Name-vN' (e.g. 'games/Sokoban-v0')"
        )
    if not isinstance(entry_point, str) or ":" not in entry_point:
        raise RegistryError(f"{id}: entry_point must be 'module:Class', got {entry_point!r}")
    if kind not in ("env", "aec", "parallel"):
        raise RegistryError(f"{id}: kind must be 'env', 'aec' or 'parallel', got {kind!r}")
    cpus = episode_cpus
    if isinstance(cpus, bool) or not isinstance(cpus, int | float) or not cpus > 0:
        raise RegistryError(f"{id}: episode_cpus is a share of a core (> 0), got {cpus!r}")
    new = EnvSpec(
        id,
        entry_point,
        kind,
        dict(kwargs or {}),
        max_episode_steps,
        extra,
        description,
        nondeterministic,
        float(episode_cpus),
    )
    old = _registry.get(id)
    if old is not None and old != new:
        raise DuplicateEnvError(
            f"{id} is already registered with entry point {old.entry_point!r}; "
            f"bump the version to register {entry_point!r}"
        )
    _registry[id] = new
    if kind == "env":
        gymnasium.register(
            id=id,
            entry_point=partial(_create, id),
            max_episode_steps=max_episode_steps,
            kwargs=dict(kwargs or {}),
            nondeterministic=nondeterministic,
        )
    return new


def _create(env_id: str, **kwargs: Any) -> Any:
    """Gymnasium's entry point for our ids: load lazily, then construct."""
    return spec(env_id).load()(**kwargs)


def load_plugin(module: str) -> None:
    """Import ``module``, a family's registering module that is not installed as a package
    (its :func:`register` calls run on import). It is looked up on ``sys.path``, then in the
    current directory, as ``python -m`` would. Raises :class:`UsageError` naming the module
    and the cause when it cannot be imported."""
    if not isinstance(module, str) or not module.strip():
        raise UsageError(f"a plug-in is a module name, got {module!r}")
    module = module.strip()
    try:
        import_here(module)
    except Exception as error:
        raise UsageError(f"cannot import the env family module {module!r}: {error!r}") from error


def import_here(module: str) -> Any:
    """Import ``module`` as ``python -m`` finds it: on ``sys.path``, else in the current
    directory, which is then put first on ``sys.path`` as ``python -m`` puts it (so that the
    module's own imports of its neighbours work too). A console script such as ``agentgym``
    has its own folder on ``sys.path``, not the current one: without this, a module beside
    the user (``--import``, ``--agent my_agents:act``) would not be found."""
    import os
    import sys

    here = os.getcwd()
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as missing:
        if missing.name != module.split(".")[0] or here in sys.path:
            raise
    sys.path.insert(0, here)
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as missing:
        if missing.name == module.split(".")[0]:
            sys.path.remove(here)  # not here either: leave the path as it was
        raise


def _plugin_modules() -> list[str]:
    import os

    value = os.environ.get(PLUGINS_VARIABLE, "")
    return [name.strip() for name in value.split(",") if name.strip()]


def load_families() -> None:
    """Import every family's registering module once (``import agentgym`` does it, so
    ``gymnasium.make`` knows every id at once; the modules import nothing heavy).

    Threads that ask while another loads wait for it: the evaluator's first ``make`` calls
    come from several worker threads at once, and a thread that went on with a half-filled
    registry would find no such env.
    """
    global _loaded, _loading
    if _loaded:
        return
    with _load_lock:
        if _loaded or _loading:  # loaded meanwhile, or asked again by a family being imported
            return
        _loading = True
        try:
            entries = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
            ours = [entry for entry in entries if entry.value.startswith(BUILTIN_PREFIX)]
            if not ours:
                raise RegistryError(
                    f"no env family of agentgym's own is registered in the entry-point group "
                    f"{ENTRY_POINT_GROUP!r}: agentgym's package metadata is missing or stale. "
                    f"Reinstall it: make install (or pip install -e .) in a checkout"
                )
            for entry in sorted(ours, key=lambda entry: entry.name):
                entry.load()
            for entry in entries:
                if entry in ours:
                    continue
                try:
                    entry.load()
                except Exception as error:  # a broken plug-in must not break the others
                    warnings.warn(
                        f"agentgym: env family {entry.name!r} ({entry.value}) failed to load: "
                        f"{error!r}",
                        stacklevel=2,
                    )
            for module in _plugin_modules():
                try:
                    load_plugin(module)
                except UsageError as error:  # as for an entry point: the others still load
                    warnings.warn(f"agentgym: {PLUGINS_VARIABLE}: {error}", stacklevel=2)
            _loaded = True
        finally:
            _loading = False


def spec(id: str) -> EnvSpec:
    """The :class:`EnvSpec` of ``id``; unknown ids raise with the closest matches."""
    load_families()
    if not isinstance(id, str):
        raise UsageError(f"env ids are strings like 'games/Sokoban-v0', got {type(id).__name__}")
    found = _registry.get(id)
    resolver = _resolvers.get(id.split("/", 1)[0])
    if found is None and resolver is not None and ID_PATTERN.match(id):
        resolver(id)  # registers the id, or raises why it is not one
        found = _registry.get(id)
    if found is None:
        raise UnknownEnvError(_unknown_message(id))
    return found


def register_resolver(family: str, resolver: Callable[[str], None]) -> None:
    """Let ``family`` register its ids on demand: :func:`spec` calls ``resolver(id)`` for an
    id of the family that is not registered, and the resolver registers it (or raises a
    :class:`UsageError` saying why it cannot be). For a family that wraps a catalogue too
    large to register in advance (TextArena's games: ``textarena/<Game>-v0``)."""
    _resolvers[family] = resolver


def _unknown_message(id: str) -> str:
    ids = sorted(_registry)
    message = f"no env is registered as {id!r}."
    base = id.rsplit("-v", 1)[0]
    versions = [i for i in ids if i.rsplit("-v", 1)[0] == base]
    folded = {i.lower(): i for i in ids}
    guesses = versions or ([folded[id.lower()]] if id.lower() in folded else [])
    guesses = guesses or difflib.get_close_matches(id, ids, n=3, cutoff=0.6)
    if not guesses:
        by_name = {i.split("/", 1)[-1].lower(): i for i in ids}
        name = id.split("/", 1)[-1].lower()
        guesses = [by_name[n] for n in difflib.get_close_matches(name, by_name, n=3, cutoff=0.6)]
    if guesses:
        message += " Did you mean " + " or ".join(repr(g) for g in guesses) + "?"
    message += " Run `agentgym list` to see every id."
    return message


def make(id: str, **kwargs: Any) -> gymnasium.Env[Any, Any]:
    """Build a single-agent env with the standard wrappers.

    Keyword arguments go to the env's constructor, except Gymnasium's own ``max_episode_steps``,
    ``disable_env_checker`` and ``render_mode``. A multi-agent id with ``opponent=NAME`` (and
    ``seat=``) is one seat of the game against reference players (:mod:`agentgym.seating`).

    >>> env = make("games/TowerOfHanoi-v0")
    >>> env
    <TimeLimit<OrderEnforcing<PassiveEnvChecker<TowerOfHanoiEnv<games/TowerOfHanoi-v0>>>>>
    """
    found = spec(id)
    if found.kind != "env":
        return _make_seated(id, **kwargs)
    found.load()  # surface MissingExtraError before Gymnasium wraps anything
    return make_limited(id, **kwargs)


def _make_seated(env_id: str, **kwargs: Any) -> gymnasium.Env[Any, Any]:
    """:func:`agentgym.make` of a multi-agent id: the game, made by
    :func:`~agentgym.registry.make_multi` with the other kwargs, seated as a
    :class:`~agentgym.seating.SeatedEnv` (``opponent``, ``seat``) under the standard wrappers."""
    found = spec(env_id)
    if "opponent" not in kwargs:
        players = ", ".join(sorted(_player_names(env_id)))
        raise UsageError(
            f"{env_id} is a multi-agent ({found.kind}) game: seat an agent against reference "
            f"players with make({env_id!r}, opponent=NAME) (--opponent NAME on the command "
            f"line), NAME one of {players}; or build the whole game with make_multi()"
        )
    found.load()  # a missing extra is a MissingExtraError before anything is wrapped
    seated = gymnasium.envs.registration.EnvSpec(
        id=env_id,
        entry_point=partial(_seated_game, env_id),
        max_episode_steps=found.max_episode_steps,
    )
    return make_limited(seated, **kwargs)


def _seated_game(
    env_id: str,
    *,
    opponent: str | Mapping[str, str],
    seat: str | None = None,
    render_mode: str | None = None,
    **game_kwargs: Any,
) -> Any:
    """The entry point of a seated game: the game, then its seat (by default the side
    follows the task: :data:`agentgym.seating.ALTERNATE`)."""
    from agentgym.seating import ALTERNATE, SeatedEnv

    game = make_multi(env_id, **game_kwargs)
    try:
        return SeatedEnv(game, opponent, seat or ALTERNATE, render_mode)
    except BaseException:
        game.close()
        raise


def _player_names(env_id: str) -> list[str]:
    game = make_multi(env_id)
    try:
        return list(game.unwrapped.reference_players())
    finally:
        game.close()


def make_limited(
    target: str | gymnasium.envs.registration.EnvSpec, **kwargs: Any
) -> gymnasium.Env[Any, Any]:
    """``gymnasium.make(target, **kwargs)`` with agentgym's :class:`TimeLimit` in place of
    Gymnasium's (the same step limit: ``max_episode_steps`` if given, else the spec's)."""
    limit = kwargs.pop("max_episode_steps", None)
    env = gymnasium.make(target, max_episode_steps=-1, **kwargs)
    if limit is None:
        registered = gymnasium.spec(target) if isinstance(target, str) else target
        limit = registered.max_episode_steps
    return env if limit is None or limit == -1 else TimeLimit(env, limit)


class TimeLimit(gymnasium.wrappers.TimeLimit[Any, Any]):
    """Gymnasium's step limit, save that an episode ends for one reason: the step on which the
    env ends it itself (``terminated``: answered, solved, lost) is not also ``truncated``,
    even when it is the last step the limit allows. Gymnasium's own sets ``truncated`` on
    that step whatever, so a single-reply env (a limit of one step) said both on every answer
    (``docs/contract.md``, "Ending an episode")."""

    # Gymnasium's counter, None until the first reset; its type is inferred as None alone from
    # the untyped ``self._elapsed_steps = None`` in Gymnasium's __init__.
    _elapsed_steps: int | None  # type: ignore[assignment]

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        steps = self._elapsed_steps = (self._elapsed_steps or 0) + 1
        if steps >= self._max_episode_steps and not terminated:
            truncated = True
        return observation, reward, terminated, truncated, info


def make_multi(id: str, **kwargs: Any) -> Any:
    """Build a multi-agent (PettingZoo) env; AEC envs get PettingZoo's order-enforcing wrapper."""
    found = spec(id)
    if found.kind == "env":
        raise UsageError(f"{id} is a single-agent env; build it with make()")
    env = found.load()(**{**found.kwargs, **kwargs})
    if found.kind == "aec":
        from pettingzoo.utils.wrappers import OrderEnforcingWrapper

        env = OrderEnforcingWrapper(env)
    return env


def list_envs(family: str | None = None, kind: Kind | None = None) -> list[EnvSpec]:
    """Registered specs, sorted by id, optionally of one family or kind."""
    load_families()
    return [
        s
        for _, s in sorted(_registry.items())
        if (family is None or s.family == family) and (kind is None or s.kind == kind)
    ]


def families() -> list[str]:
    """The registered family names."""
    return sorted({s.family for s in list_envs()})
