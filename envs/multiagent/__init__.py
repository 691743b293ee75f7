"""Multi-agent family: PettingZoo envs with text observations and actions.

Importing this module registers the ids. The family is young: TicTacToe (turn-based, AEC) and
RockPaperScissors (simultaneous, parallel) prove the multi-agent bases and checker; board
games, Werewolf and negotiation come with the multi-agent family's own issue.
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
    kwargs={"game": "kuhn"},
    description="one card each from J, Q, K; one betting round; the higher card wins the pot",
)
register(
    "multiagent/LeducHoldem-v0",
    entry_point="agentgym.envs.multiagent.poker:PokerEnv",
    kind="aec",
    kwargs={"game": "leduc"},
    description="a private card, a public card, two betting rounds; a pair or the high card wins",
)

# Connect four and go 9x9 (OpenSpiel's rules; a solver and GNU Go as reference players).
register(
    "multiagent/ConnectFour-v0",
    entry_point="agentgym.envs.multiagent.connectfour:ConnectFourEnv",
    kind="aec",
    description="two players drop stones into a 6x7 grid; four in a row wins",
)
register(
    "multiagent/Go9x9-v0",
    entry_point="agentgym.envs.multiagent.go:GoEnv",
    kind="aec",
    description="go on a 9x9 board, komi 7.5, area scoring; GNU Go as opponent",
)
register(
    "multiagent/LimitHoldem-v0",
    entry_point="agentgym.envs.multiagent.poker:PokerEnv",
    kind="aec",
    kwargs={"game": "holdem"},
    description="heads-up limit Texas hold'em: two private cards, five public, four rounds",
)

# Language games with rule-based reference bots (envs/multiagent/negotiation.py, taboo.py).
register(
    "multiagent/Negotiation-v0",
    entry_point="agentgym.envs.multiagent.negotiation:NegotiationEnv",
    kind="aec",
    description="divide books, hats and balls whose values are private; deal or no deal",
)
register(
    "multiagent/Taboo-v0",
    entry_point="agentgym.envs.multiagent.taboo:TabooEnv",
    kind="aec",
    description="the attacker steers the defender into saying a hidden word, which it may guess",
)

# Chess over python-chess, with Stockfish reference players (envs/multiagent/chess.py).
register(
    "multiagent/Chess-v0",
    entry_point="agentgym.envs.multiagent.chess:ChessEnv",
    kind="aec",
    extra="multiagent",
    description="chess from the standard start or a named opening; Stockfish as opponent",
)
