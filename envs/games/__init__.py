"""The games family: TextWorld, native text puzzles and BabyAI.

Importing this module registers the ids; nothing heavy is imported until an env is made.
See ``docs/games.md`` and each env's docstring for what the agent sees, does and is scored on.
"""

from agentgym.registry import register

_PUZZLES = {
    # id name: (module, class, max_episode_steps, description)
    "Sokoban": ("sokoban", "SokobanEnv", 200, "push every box onto a goal square"),
    "Game24": ("countdown", "Game24Env", 20, "combine four numbers into 24"),
    "Countdown": ("countdown", "CountdownEnv", 30, "combine numbers into a target"),
    "BlocksWorld": ("blocksworld", "BlocksWorldEnv", 80, "restack blocks into goal towers"),
    "Wordle": ("wordle", "WordleEnv", 30, "find the five-letter word in six guesses"),
    "Minesweeper": ("minesweeper", "MinesweeperEnv", 300, "reveal every safe cell"),
    "Maze": ("maze", "MazeEnv", 200, "walk a grid maze to the exit"),
    "FrozenLake": ("maze", "FrozenLakeEnv", 200, "cross the lake without falling into a hole"),
    "TowerOfHanoi": ("hanoi", "TowerOfHanoiEnv", 300, "move the tower to the target peg"),
    "Sudoku": ("sudoku", "SudokuEnv", 200, "fill the grid so every row, column, box has 1-9"),
}

for _name, (_module, _cls, _steps, _what) in _PUZZLES.items():
    register(
        f"games/{_name}-v0",
        entry_point=f"agentgym.envs.games.puzzles.{_module}:{_cls}",
        max_episode_steps=_steps,
        description=_what,
    )

_TEXTWORLD = {
    "TreasureHunter": "find the treasure the quest names",
    "CoinCollector": "find the coin somewhere in a chain of rooms",
    "Cooking": "gather, process and cook a recipe's ingredients, then eat the meal",
    "Custom": "a generated quest of a given length in a generated world",
}
for _name, _what in _TEXTWORLD.items():
    register(
        f"games/TextWorld{_name}-v0",
        entry_point=f"agentgym.envs.games.textworld:TextWorld{_name}Env",
        max_episode_steps=100,
        extra="textworld",
        description=f"TextWorld: {_what}",
    )

_BABYAI = {
    "GoTo": "go to an object",
    "Pickup": "pick up an object",
    "Open": "open a door",
    "PutNext": "put an object next to another",
    "PickUpSeqGoTo": "pick up an object, then go to another",
}
for _name, _what in _BABYAI.items():
    register(
        f"games/BabyAI{_name}-v0",
        entry_point=f"agentgym.envs.games.babyai:BabyAI{_name}Env",
        max_episode_steps=128,
        extra="babyai",
        description=f"BabyAI: {_what}",
    )
