"""Multi-agent family: PettingZoo envs with text observations and actions.

Importing this module registers the ids: classic games over maintained rules (python-chess,
OpenSpiel) with real engines and solvers as reference players (Stockfish, GNU Go, CFR policies,
a connect-four solver), language games with rule-based bots (negotiation, adversarial taboo,
werewolf), and the two small games that first proved the bases (tic-tac-toe,
rock-paper-scissors). Each game's page section is in docs/envs/multiagent.md.
"""

from agentgym.registry import register

register(
    "multiagent/TicTacToe-v0",
    entry_point="agentgym.envs.multiagent.tictactoe:TicTacToeEnv",
    kind="aec",
    description="two players take turns marking a 3x3 grid; three in a row wins",
)
register(
    "multiagent/RockPaperScissors-v0",
    entry_point="agentgym.envs.multiagent.rockpaperscissors:RockPaperScissorsEnv",
    kind="parallel",
    description="two players throw at once; first to win a majority of rounds",
)

# Poker over OpenSpiel's games, with CFR+ reference policies (envs/multiagent/poker.py).
register(
    "multiagent/KuhnPoker-v0",
    entry_point="agentgym.envs.multiagent.poker:PokerEnv",
    kind="aec",
    extra="multiagent",
    kwargs={"game": "kuhn"},
    description="one card each from J, Q, K; one betting round; the higher card wins the pot",
)
register(
    "multiagent/LeducHoldem-v0",
    entry_point="agentgym.envs.multiagent.poker:PokerEnv",
    kind="aec",
    extra="multiagent",
    kwargs={"game": "leduc"},
    description="a private card, a public card, two betting rounds; a pair or the high card wins",
)
register(
    "multiagent/LimitHoldem-v0",
    entry_point="agentgym.envs.multiagent.poker:PokerEnv",
    kind="aec",
    extra="multiagent",
    kwargs={"game": "holdem"},
    description="heads-up limit Texas hold'em: two private cards, five public, four rounds",
)

# Connect four and go 9x9 (OpenSpiel's rules; a solver and GNU Go as reference players).
register(
    "multiagent/ConnectFour-v0",
    entry_point="agentgym.envs.multiagent.connectfour:ConnectFourEnv",
    kind="aec",
    extra="multiagent",
    description="two players drop stones into a 6x7 grid; four in a row wins",
)
register(
    "multiagent/Go9x9-v0",
    entry_point="agentgym.envs.multiagent.go:GoEnv",
    kind="aec",
    extra="multiagent",
    description="go on a 9x9 board, komi 7.5, area scoring; GNU Go as opponent",
)

# Language games with rule-based reference bots (envs/multiagent/negotiation.py, taboo.py).
register(
    "multiagent/Negotiation-v2",
    entry_point="agentgym.envs.multiagent.negotiation:NegotiationEnv",
    kind="aec",
    description="divide books, hats and balls whose values are private; scored by what is won",
)
register(  # deprecated: its utility score pays blind acceptance; kept to re-read v1 results
    "multiagent/Negotiation-v1",
    entry_point="agentgym.envs.multiagent.negotiation:UtilityNegotiationEnv",
    kind="aec",
    description="deprecated (use Negotiation-v2): the same game scored by the deal's utility",
)
register(
    "multiagent/Taboo-v0",
    entry_point="agentgym.envs.multiagent.taboo:TabooEnv",
    kind="aec",
    description="the attacker steers the defender into saying a hidden word, which it may guess",
)

# Werewolf, 5 to 8 players (players=N; 7 by default), with rule-based bots (werewolf.py).
register(
    "multiagent/Werewolf-v0",
    entry_point="agentgym.envs.multiagent.werewolf:WerewolfEnv",
    kind="aec",
    description="werewolves, a seer, a doctor and villagers: night kills, talk, votes",
)

# Chess over python-chess, with Stockfish reference players (envs/multiagent/chess.py).
register(
    "multiagent/Chess-v0",
    entry_point="agentgym.envs.multiagent.chess:ChessEnv",
    kind="aec",
    extra="multiagent",
    description="chess from the standard start or a named opening; Stockfish as opponent",
)

# TextArena's games through one adapter (envs/multiagent/textarena_adapter.py): SPIRAL's three
# games as ids, and any other offline game by name (textarena/<Game>-v0, resolved on demand).
from agentgym.envs.multiagent.textarena_games import resolve as _resolve_textarena  # noqa: E402
from agentgym.registry import register_resolver  # noqa: E402

for _game, _description in (
    ("TicTacToe-v0", "SPIRAL's tic-tac-toe: cells 0-8, player 0 is O and moves first"),
    ("KuhnPoker-v0", "SPIRAL's Kuhn poker: J, Q, K; three rounds; the most chips wins"),
    ("SimpleNegotiation-v0", "SPIRAL's negotiation: trade goods of private value for 10 turns"),
):
    register(
        f"textarena/{_game}",
        entry_point="agentgym.envs.multiagent.textarena_adapter:TextArenaEnv",
        kind="aec",
        extra="multiagent",
        kwargs={"game": _game},
        description=_description,
    )
register_resolver("textarena", _resolve_textarena)
