"""Which TextArena games the adapter plays, which it leaves out and why, and the ``textarena/``
id resolver. Light on purpose: it imports nothing from ``textarena``, so the family's
registering module can name it at ``import agentgym``.

**Covered** (:data:`COVERED`): every game of ``textarena`` 0.7.4 with two or more players
that runs offline, each with its default number of players. They were found by playing a
game of each with random bracketed moves, offline, under Python 3.11; SPIRAL's three
(``TicTacToe-v0``, ``KuhnPoker-v0``, ``SimpleNegotiation-v0``) are registered ids with legal
moves, an oracle and reference players; the others are reached by name
(``make_multi("textarena/Nim-v0")``) with a ``"random"`` player that guesses among the
bracketed moves its observation names.

**Left out** (:data:`EXCLUDED`, each with its reason; asking for one raises a
:class:`~agentgym.errors.UsageError` that says why):

* network: games judged or hosted by a remote LLM (``Debate``, ``ScenarioPlanning``:
  an OpenRouter jury; ``TwentyQuestions``, ``GuessWho``: an OpenRouter game master), which
  need an API key and the network;
* downloads: games that call ``nltk.download`` when imported (``Hangman``, ``Wordle``,
  ``WordLadder``, ``WordSearch``, ``WordChains``, ``DontSayIt``, ``LetterAuction``,
  ``Codenames``, ``SpellingBee``), which would fetch corpora at import;
* data the 0.7.4 wheel does not ship (``UsedCarNegotiation``: its ``instructions/``;
  ``ScorableGames``: its game configurations);
* code that does not import here (``Chess``, ``Checkers``, ``ReverseTicTacToe``,
  ``IteratedStagHunt``, ``UltimateTexasHoldem``, ``Klondike``: f-strings of Python 3.12, a
  ``SyntaxError`` under 3.11; ``BabyAiText``: needs the ``gym`` package) or fails on its
  first move (``CharacterConclave``: a ``TypeError`` in its own code);
* one-player puzzles (``Sudoku``, ``Minesweeper``, ``TowerOfHanoi``, ...): not multi-agent
  games (the ``games/`` family has its own puzzles).

Variant ids such as ``KuhnPoker-v0-short`` are not ids here (an id is ``Name-vN``); their
settings are constructor arguments: ``make_multi("textarena/KuhnPoker-v0",
game_kwargs={"max_rounds": 5})``.
"""

from __future__ import annotations

import sys

from agentgym.errors import UnknownEnvError, UsageError

__all__ = ["COVERED", "EXCLUDED", "SPIRAL_GAMES", "check_game", "resolve"]

FAMILY = "textarena"
ENTRY_POINT = "agentgym.envs.multiagent.textarena_adapter:TextArenaEnv"

COVERED: dict[str, int] = {
    **dict.fromkeys(
        (
            "Alquerque-v0",
            "Battleship-v0",
            "Breakthrough-v0",
            "Briscola-v0",
            "Chopsticks-v0",
            "ColonelBlotto-v0",
            "ConnectFour-v0",
            "Crusade-v0",
            "GameOfPureStrategy-v0",
            "GermanWhist-v0",
            "Golf-v0",
            "HighSociety-v0",
            "IndianPoker-v0",
            "IteratedMatchingPennies-v0",
            "IteratedPrisonersDilemma-v0",
            "IteratedRockPaperScissors-v0",
            "IteratedTwoThirdsAverage-v0",
            "IteratedUltimatumGame-v0",
            "KuhnPoker-v0",
            "LiarsDice-v0",
            "LinesOfAction-v0",
            "MemoryGame-v0",
            "NewRecruit-v0",
            "Nim-v0",
            "Othello-v0",
            "PigDice-v0",
            "Poker-v0",
            "QuantumTicTacToe-v0",
            "SantoriniBaseFixed-v0",
            "SimpleBlindAuction-v0",
            "SimpleNegotiation-v0",
            "SimpleTak-v0",
            "Snake-v0",
            "SpiteAndMalice-v0",
            "Stratego-v0",
            "Surround-v0",
            "Tak-v0",
            "TicTacToe-v0",
            "TruthAndDeception-v0",
            "TwoDollar-v0",
            "UltimateTicTacToe-v0",
            "WildTicTacToe-v0",
        ),
        2,
    ),
    "MarketEntryGame-v0": 4,
    "PublicGoodsGame-v0": 3,
    "SecretMafia-v0": 6,
    "SettlersOfCatan-v0": 4,
    "Taboo-v0": 4,
    "ThreePlayerGOPS-v0": 3,
    "ThreePlayerIPD-v0": 3,
    "ThreePlayerTicTacToe-v0": 3,
}
"""The games the adapter plays, by TextArena id, each with its default number of players."""

_NETWORK = "network: it is judged or hosted by a remote LLM (OpenRouter), which needs an API key"
_DOWNLOAD = "downloads: it calls nltk.download() when imported, fetching corpora from the network"
_SYNTAX = "its module does not import under Python 3.11 (it uses Python 3.12's f-strings)"
_ONE_PLAYER = "a one-player puzzle, not a multi-agent game (see the games/ family)"

EXCLUDED: dict[str, str] = {
    **dict.fromkeys(("Debate-v0", "ScenarioPlanning-v0"), _NETWORK + " jury"),
    **dict.fromkeys(("TwentyQuestions-v0", "GuessWho-v0"), _NETWORK + " game master"),
    **dict.fromkeys(
        (
            "Codenames-v0",
            "DontSayIt-v0",
            "Hangman-v0",
            "LetterAuction-v0",
            "SpellingBee-v0",
            "WordChains-v0",
            "WordLadder-v0",
            "WordSearch-v0",
            "Wordle-v0",
        ),
        _DOWNLOAD,
    ),
    "UsedCarNegotiation-v0": "data not bundled: textarena 0.7.4's wheel lacks its instructions/",
    "ScorableGames-v0": "data not bundled: textarena 0.7.4's wheel lacks its game configurations",
    "BabyAiText-v0": "it needs the 'gym' package, which agentgym does not install",
    "CharacterConclave-v0": "broken in textarena 0.7.4: its first move raises a TypeError",
    **(
        dict.fromkeys(
            (
                "Checkers-v0",
                "Chess-v0",
                "IteratedStagHunt-v0",
                "Klondike-v0",
                "ReverseTicTacToe-v0",
                "UltimateTexasHoldem-v0",
            ),
            _SYNTAX,
        )
        if sys.version_info < (3, 12)
        else {}
    ),
    **dict.fromkeys(
        (
            "Bandit-v0",
            "Blackjack-v0",
            "Countdown-v0",
            "Crosswords-v0",
            "Cryptarithm-v0",
            "FifteenPuzzle-v0",
            "FrozenLake-v0",
            "GuessTheNumber-v0",
            "LightsOut-v0",
            "LogicPuzzle-v0",
            "Mastermind-v0",
            "Minesweeper-v0",
            "PegJump-v0",
            "RushHour-v0",
            "Secretary-v0",
            "Set-v0",
            "Slitherlink-v0",
            "Sokoban-v0",
            "Sudoku-v0",
            "ThreeCardMonte-v0",
            "TowerOfHanoi-v0",
        ),
        _ONE_PLAYER,
    ),
}
"""TextArena ids the adapter refuses, each with the reason."""

SPIRAL_GAMES = {
    "TicTacToe-v0": "TicTacToe-v0",
    "KuhnPoker-v1": "KuhnPoker-v0",
    "SimpleNegotiation-v1": "SimpleNegotiation-v0",
}
"""SPIRAL's game ids (textarena 0.6.4 and SPIRAL's own registrations) to textarena 0.7.4's."""


def check_game(game: str) -> int:
    """The default number of players of TextArena's ``game``; a clear error if it is left out
    (naming the reason) or unknown to TextArena 0.7.4."""
    if game in COVERED:
        return COVERED[game]
    if game in EXCLUDED:
        raise UsageError(
            f"TextArena's {game} is left out of the adapter: {EXCLUDED[game]}. "
            f"See envs/multiagent/textarena_games.py for the games it plays"
        )
    if game in SPIRAL_GAMES:
        raise UsageError(
            f"{game} is SPIRAL's name (textarena 0.6.4); textarena 0.7.4 calls it "
            f"{SPIRAL_GAMES[game]}: use 'textarena/{SPIRAL_GAMES[game]}'"
        )
    raise UnknownEnvError(
        f"TextArena 0.7.4 has no two-player-or-more game {game!r} the adapter knows; the "
        f"games it plays: {', '.join(sorted(COVERED))}"
    )


def resolve(env_id: str) -> None:
    """The registry's resolver for ``textarena/<Game>-vN`` ids not registered in advance:
    register the id for a covered game, or raise the reason it is not one."""
    from agentgym.registry import register

    game = env_id.split("/", 1)[1]
    players = check_game(game)
    register(
        env_id,
        entry_point=ENTRY_POINT,
        kind="aec",
        extra="multiagent",
        kwargs={"game": game},
        description=f"TextArena's {game} for {players} players, through the adapter",
    )
