"""The reasoning-gym datasets agentgym serves, one id each, and why the others are left out.

This module is light on purpose: the family module imports it to register the ids, and it
imports nothing from reasoning-gym. Its tables come from an audit of the installed package
(:mod:`agentgym.envs.reasoning.reasoning_gym_audit`): every dataset at every level of its
curriculum, 10 items of each split generated twice (and once more in processes with other hash
seeds) and scored by its own scorer. Re-run it after upgrading reasoning-gym (about 12 minutes on
2 cores) and update the tables from what it prints::

    python -m agentgym.envs.reasoning.reasoning_gym_audit [--json audit.json]

``tests/reasoning/test_reasoning_gym.py`` checks that the tables cover exactly the datasets the
installed package offers. Of reasoning-gym 0.1.25's 106 datasets, 93 are served; left out:

* ``boxnet``, ``rush_hour``: no gold answer and no reference solution, so no oracle.
* ``codeio``, ``list_functions``: not deterministic (the same item differs between two
  generations); ``codeio`` also ``exec()``s code from its data file in-process.
* ``isomorphic_strings``, ``polynomial_multiplication``, ``ransom_note``: not deterministic
  across processes (they draw from sets, whose order follows Python's per-process hash seed).
* ``composite``: a mixture of other datasets, with no default config.
* ``game_of_life_halting``: its scorer gives 1.0 to any non-empty answer.
* ``propositional_logic``: its scorer takes any valid conclusion, and another item's
  conclusion passes 3 items in 4 (the conformance checker's ``task_blind`` check).
* ``puzzle24``: too few puzzles, and a scorer that does not check the item's numbers: one
  expression passes whole levels (the ``task_blind`` check).
* ``number_sequence``: items can take minutes at any level (a CI run hung on one).
* ``knight_swap``: its curriculum levels fail to build or generate; its default config takes
  0.35-0.45 s per task.

Levels left out of served datasets (slower than 0.2 s per task, failing to generate, or without
an oracle) are in :data:`EXCLUDED_LEVELS`; the reasons in full are in :data:`EXCLUDED` and
``docs/reasoning-gym.md``.
"""

from __future__ import annotations

__all__ = [
    "DATASETS",
    "EXCLUDED",
    "EXCLUDED_LEVELS",
    "EXECUTES_ANSWER",
    "FAMILY",
    "LEVELS",
    "REASONING_GYM_VERSION",
    "SPLIT_SIZES",
    "env_id",
    "register_all",
]

FAMILY = "reasoning-gym"
REASONING_GYM_VERSION = "0.1.25"
"""The reasoning-gym release the tables were audited against."""

DATASETS: tuple[str, ...] = (
    "ab",
    "acre",
    "advanced_geometry",
    "aiw",
    "arc_1d",
    "arc_agi",
    "base_conversion",
    "basic_arithmetic",
    "bf",
    "binary_alternation",
    "binary_matrix",
    "bitwise_arithmetic",
    "caesar_cipher",
    "calendar_arithmetic",
    "chain_sum",
    "circuit_logic",
    "coin_flip",
    "color_cube_rotation",
    "complex_arithmetic",
    "count_bits",
    "count_primes",
    "countdown",
    "course_schedule",
    "cryptarithm",
    "decimal_arithmetic",
    "decimal_chain_sum",
    "dice",
    "emoji_mystery",
    "family_relationships",
    "figlet_font",
    "fraction_simplification",
    "futoshiki",
    "game_of_life",
    "gcd",
    "graph_color",
    "group_anagrams",
    "gsm_symbolic",
    "intermediate_integration",
    "jugs",
    "kakurasu",
    "knights_knaves",
    "largest_island",
    "lcm",
    "leg_counting",
    "letter_counting",
    "letter_jumble",
    "mahjong_puzzle",
    "manipulate_matrix",
    "maze",
    "mini_sudoku",
    "modulo_grid",
    "n_queens",
    "needle_haystack",
    "number_filtering",
    "number_format",
    "number_sorting",
    "palindrome_generation",
    "palindrome_partitioning",
    "path_star",
    "polynomial_equations",
    "pool_matrix",
    "power_function",
    "prime_factorization",
    "products",
    "quantum_lock",
    "rearc",
    "rectangle_count",
    "rotate_matrix",
    "rotten_oranges",
    "rubiks_cube",
    "self_reference",
    "sentence_reordering",
    "shortest_path",
    "simple_equations",
    "simple_geometry",
    "simple_integration",
    "sokoban",
    "spell_backward",
    "spiral_matrix",
    "string_insertion",
    "string_manipulation",
    "string_splitting",
    "string_synthesis",
    "sudoku",
    "survo",
    "syllogism",
    "time_intervals",
    "tower_of_hanoi",
    "tsumego",
    "word_ladder",
    "word_sequence_reversal",
    "word_sorting",
    "zebra_puzzles",
)
"""The datasets registered as ``reasoning-gym/<name>-v1``."""

_CURRICULUM = ("easy", "medium", "hard")
_FEWER_LEVELS: dict[str, tuple[str, ...]] = {
    "acre": ("default",),  # no curriculum
    "bf": ("easy", "medium"),
    "caesar_cipher": ("easy", "medium"),
    "countdown": ("easy",),
    "futoshiki": ("easy", "medium"),
    "game_of_life": ("easy", "medium"),
    "gsm_symbolic": ("default",),  # no curriculum
    "jugs": ("easy",),
    "letter_jumble": ("easy", "medium"),
    "modulo_grid": ("easy", "hard"),
    "rubiks_cube": ("easy",),
    "sokoban": ("medium",),
}

LEVELS: dict[str, tuple[str, ...]] = {
    name: _FEWER_LEVELS.get(name, _CURRICULUM) for name in DATASETS
}
"""Each registered dataset's difficulties, easiest first.

``easy``, ``medium`` and ``hard`` are levels 0, 1 and 2 of the dataset's reasoning-gym
curriculum; ``default`` is the dataset's default config, for datasets without a curriculum.
Levels that fail the audit are left out (:data:`EXCLUDED_LEVELS`).
"""

EXCLUDED: dict[str, str] = {
    "number_sequence": (
        "items can take minutes at any level: 30 hard ones did not finish in 240 s, and a "
        "conformance run hung on a medium one (it depends on the process's hash seed)"
    ),
    "isomorphic_strings": (
        "not deterministic across processes: it draws letters from a set, whose order changes "
        "with Python's per-process hash seed, so a task id names another question in every "
        "process"
    ),
    "polynomial_multiplication": (
        "not deterministic across processes: it draws monomials from a sympy set, whose "
        "order changes with Python's per-process hash seed, so a task id names another "
        "question in every process"
    ),
    "ransom_note": (
        "not deterministic across processes: it draws letters from a set, whose order changes "
        "with Python's per-process hash seed, so a task id names another question in every "
        "process"
    ),
    "boxnet": (
        "no gold answer and no reference solution in its items (the scorer checks a plan against "
        "the initial state), so there is no oracle"
    ),
    "codeio": (
        "not deterministic: the same item comes out differently when generated twice; it also "
        "exec()s code samples from its data file in-process, and keeps that data in a class "
        "attribute that each new config overwrites"
    ),
    "composite": (
        "a mixture of other datasets with no default config (it needs the list of datasets to "
        "mix); its parts are served on their own"
    ),
    "game_of_life_halting": (
        "its scorer gives 1.0 to any non-empty answer (it compares bool(answer) with bool(gold), "
        "and 'True' and 'False' are both true)"
    ),
    "propositional_logic": (
        "its scorer gives 1.0 to any valid, non-trivial conclusion of the premises, so an answer "
        "that never read the item passes: another item's gold conclusion passed 150 of 197 "
        "items tried (the conformance checker's task_blind check found it)"
    ),
    "puzzle24": (
        "a memorised answer passes without reading the item: its levels hold few puzzles "
        "(medium: 3 number sets in 200 items, 5 5 6 6 in 94 of them; easy: 1 2 3 4 in 36 of "
        "200), and its scorer checks only that four numbers in the level's range make 24, not "
        "that they are the item's (the conformance checker's task_blind check found it)"
    ),
    "knight_swap": (
        "its curriculum levels do not build or generate (min_nodes must be >= 6; no valid puzzle "
        "after trying 100 boards) and its default config takes 0.35-0.45 s per task"
    ),
    "list_functions": (
        "not deterministic: its generators draw from Python's global random module, so the same "
        "item differs between two generations"
    ),
    "rush_hour": (
        "no gold answer: items carry the minimum number of moves but no solution, so there is no "
        "oracle"
    ),
}
"""Datasets not registered, with the reason."""

EXCLUDED_LEVELS: dict[str, dict[str, str]] = {
    "bf": {
        "hard": "0.47-1.09 s per task, items up to 2.6 s",
    },
    "caesar_cipher": {
        "hard": (
            "does not build: the curriculum asks for rotations its config rejects (rotation must "
            "be in range [1,25])"
        ),
    },
    "countdown": {
        "medium": (
            "0.08-0.41 s per task, and some items fail to generate (no valid expression after 100 "
            "attempts)"
        ),
        "hard": "items fail to generate (no valid expression after 100 attempts)",
    },
    "futoshiki": {
        "hard": "0.13-0.32 s per task (over 0.2 s in one of three audits)",
    },
    "game_of_life": {
        "hard": "0.12-0.32 s per task (over 0.2 s in one of three audits)",
    },
    "jugs": {
        "medium": "some items have no solution: their gold answer '[\"No solution\"]' scores 0",
        "hard": "6-10 s per task",
    },
    "letter_jumble": {
        "hard": "items fail to generate (empty range for randrange())",
    },
    "modulo_grid": {
        "medium": "does not build (max_target must be greater than 0)",
    },
    "rubiks_cube": {
        "medium": "4x4 cubes come with no reference solution, so there is no oracle",
        "hard": "5x5 cubes come with no reference solution, so there is no oracle",
    },
    "sokoban": {
        "easy": "3.7-5.7 s per task (one item took 120 s)",
        "hard": "0.10-0.70 s per task, items up to 2 s",
    },
}
"""Curriculum levels left out of a registered dataset, with the reason."""

EXECUTES_ANSWER: dict[str, str] = {
    "binary_matrix": "python",
    "n_queens": "python",
    "spiral_matrix": "python",
    "string_insertion": "python",
    "countdown": "sympy",
    "intermediate_integration": "sympy",
    "polynomial_multiplication": "sympy",
    "puzzle24": "sympy",
    "simple_integration": "sympy",
}
"""Datasets whose scorer runs the answer as code: ``python`` (``eval``) or ``sympy``
(``sympy.parse_expr``, which also calls ``eval``). The env refuses answers that would run code
there, before the scorer sees them."""

SPLIT_SIZES: dict[str, dict[str, int]] = {
    # acre builds all of a split's questions up front (0.26 ms each): 100,000 would take 26 s.
    "acre": {"train": 5_000, "dev": 1_000, "test": 1_000},
    # word_ladder refuses sizes over 20,000.
    "word_ladder": {"train": 20_000, "dev": 1_000, "test": 1_000},
}
"""Split sizes (tasks per difficulty) of datasets that generate a whole split at construction,
where the default 100,000 train tasks would take too long."""


def env_id(dataset: str) -> str:
    """The agentgym id of a reasoning-gym dataset: ``reasoning-gym/<dataset>-v1``."""
    return f"{FAMILY}/{dataset}-v1"


def register_all() -> None:
    """Register every dataset of :data:`DATASETS`; calling it again does nothing."""
    import gymnasium

    from agentgym.registry import register

    for name in DATASETS:
        if env_id(name) in gymnasium.registry:
            continue
        register(
            env_id(name),
            entry_point="agentgym.envs.reasoning.reasoning_gym:ReasoningGymEnv",
            kwargs={"dataset": name},
            max_episode_steps=1,
            extra="reasoning",
            description=f"reasoning-gym's {name}, scored by its own scorer (single turn)",
        )
