"""Chess: move parsing, feedback, game ends, Stockfish players and the engines' lifetimes."""

import subprocess
import sys

import chess
import psutil
import pytest

import agentgym
from agentgym.core import DataTaskSet
from agentgym.envs.multiagent.chess import ChessTask, parse_move
from agentgym.envs.multiagent.uci import UciEngine
from agentgym.errors import MissingExtraError
from agentgym.multiagent import play_game
from agentgym.task_env import InvalidAction

MATE_IN_ONE = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"  # Ra8#


def start(task_id="test/standard", **kwargs):
    env = agentgym.make_multi("multiagent/Chess-v0", **kwargs)
    env.reset(seed=0, options={"task_id": task_id})
    return env


def from_fen(fen, **kwargs):
    env = agentgym.make_multi("multiagent/Chess-v0", **kwargs)
    task = ChessTask("test/position", "test", "position", fen=fen)
    env.unwrapped.tasks = DataTaskSet({"train": [], "dev": [], "test": [task]})
    env.reset(seed=0, options={"task_id": "test/position"})
    return env


def stockfish_children():
    return [
        child for child in psutil.Process().children(recursive=True) if "stockfish" in child.name()
    ]


@pytest.mark.parametrize(
    ("fen", "text", "uci"),
    [
        (chess.STARTING_FEN, "Nf3", "g1f3"),
        (chess.STARTING_FEN, "nf3", "g1f3"),
        (chess.STARTING_FEN, "g1f3", "g1f3"),
        (chess.STARTING_FEN, "1. e4!", "e2e4"),
        (chess.STARTING_FEN, "I will play e4.", "e2e4"),
        (chess.STARTING_FEN, "Let me think.\n\n**Move:** `d4`", "d2d4"),
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O", "e1g1"),
        ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0-0", "e1c1"),
        ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "o-o", "e8g8"),
        ("8/4P3/8/8/8/8/k7/7K w - - 0 1", "e8=Q+", "e7e8q"),
        ("8/4P3/8/8/8/8/k7/7K w - - 0 1", "e7e8n", "e7e8n"),
        ("8/4P3/8/8/8/8/k7/7K w - - 0 1", "e8N", "e7e8n"),
        ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "exd5", "e4d5"),
        (MATE_IN_ONE, "Ra8#", "a1a8"),
    ],
)
def test_moves_are_read_in_san_and_uci_with_what_models_add(fen, text, uci):
    assert parse_move(chess.Board(fen), text).uci() == uci


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("banana", "could not read a move from 'banana'"),
        ("", "could not read a move"),
        ("Ke2", "Ke2 is not a legal move here"),
        ("e2e5", "e2e5 is not a legal move here"),
        ("e4 or d4", "names several moves (e4, d4); write one"),
        ("O-O", "O-O is not a legal move here"),
    ],
)
def test_unreadable_illegal_and_double_moves_are_refused_with_the_reason(text, reason):
    with pytest.raises(InvalidAction, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse_move(chess.Board(), text)


def test_an_ambiguous_move_is_refused():
    board = chess.Board("4k3/8/8/8/8/2N1N3/8/4K3 w - - 0 1")  # Nc3 and Ne3 both reach d5
    with pytest.raises(InvalidAction, match="Nd5 is ambiguous"):
        parse_move(board, "Nd5")
    assert parse_move(board, "Ncd5").uci() == "c3d5"


def test_an_illegal_move_is_feedback_with_the_legal_moves_and_three_forfeit():
    env = start()
    env.step("e5")
    assert env.agent_selection == "player_0"
    assert env.infos["player_0"]["invalid_action"] is True
    seen = env.observe("player_0")
    assert seen.startswith("Invalid action: e5 is not a legal move here (2 mistakes left")
    assert "Legal moves: Nh3, Nf3, Nc3, Na3," in seen  # in the feedback
    assert "Legal moves (20): Nh3 Nf3 Nc3 Na3" in seen  # under the board
    assert env.infos["player_0"]["legal_actions"][:2] == ["Nh3", "Nf3"]
    assert env.infos["player_1"]["legal_actions"] == []
    env.step("Qh5")
    env.step("castle")
    assert env.infos["player_0"]["verdict"].score == 0.0
    assert env.infos["player_1"]["verdict"].score == 1.0
    env.close()


def test_the_observation_shows_the_board_fen_turn_and_last_move():
    env = start("train/italian")
    seen = env.observe("player_1")
    assert "FEN: r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3" in seen
    assert "8 r . b q k b n r 8" in seen and "  a b c d e f g h" in seen
    assert "You are Black (player_1). Your turn." in seen
    assert "Last move: Bc4 (White). Ply 0 of at most 200." in seen
    assert env.unwrapped.state_key(env.unwrapped.world) == env.unwrapped.world.board.fen()
    env.close()


def test_the_oracle_mates_in_one():
    env = from_fen(MATE_IN_ONE)
    assert env.unwrapped.oracle_action("player_1") is None  # not its turn
    move = env.unwrapped.oracle_action("player_0")
    assert move == "Ra8#"
    env.step(move)
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert env.infos["player_0"]["verdict"].details == "won"
    assert "checkmate, White wins" in env.observe("player_1")
    env.close()


def test_the_ply_cap_ends_the_game_in_a_draw():
    env = start(max_plies=4)
    for move in ["Nf3", "Nf6", "Ng1", "Ng8"]:
        assert not env.terminations["player_0"]
        env.step(move)
    assert env.terminations == {"player_0": True, "player_1": True}
    assert env.infos["player_0"]["verdict"].score == 0.5
    assert "the 4-ply limit, a draw" in env.observe("player_0")
    env.close()


def test_the_same_seed_gives_the_same_game():
    games = []
    for _ in range(2):
        env = agentgym.make_multi("multiagent/Chess-v0", max_plies=40)
        players = env.unwrapped.reference_players()
        seats = {"player_0": players["random"](), "player_1": players["stockfish-skill-20"]()}
        play_game(env, seats, seed=7, task_id="dev/standard")
        games.append([m.uci() for m in env.unwrapped.world.board.move_stack])
        for seat in seats.values():
            seat.close()
        env.close()
    assert len(games[0]) > 10 and games[0] == games[1]


def oracle(env, agent):
    return env.unwrapped.oracle_action(agent)


def first_listed_move(env, agent):
    seen = env.observe(agent)
    return seen.split("\nLegal moves (")[1].split(": ")[1].split()[0]


@pytest.mark.parametrize("seat", ["player_0", "player_1"])
def test_the_first_listed_move_never_beats_stockfish(seat):
    """No reward without the task: a fixed policy earns no win against the oracle."""
    env = agentgym.make_multi("multiagent/Chess-v0")
    seats = {a: first_listed_move if a == seat else oracle for a in env.possible_agents}
    result = play_game(env, seats, seed=0, task_id="test/standard")
    assert result.outcome[seat] == 0.0, result.verdicts
    env.close()


def test_stockfish_at_its_top_level_beats_random():
    """The issue's >= 95% is measured on 100 games by tests/perf/bench_chess.py; here four
    games, two per colour, must all be won."""
    for game in range(4):
        env = agentgym.make_multi("multiagent/Chess-v0")
        players = env.unwrapped.reference_players()
        engine_seat = ("player_0", "player_1")[game % 2]
        seats = {a: players["random"]() for a in env.possible_agents}
        seats[engine_seat] = players["stockfish-skill-20"]()
        result = play_game(env, seats, seed=game, task_id="test/standard")
        assert result.outcome[engine_seat] == 1.0, (game, result.verdicts)
        for player in seats.values():
            player.close()
        env.close()


def test_every_skill_level_plays_legal_moves_and_no_engine_outlives_close():
    env = start()
    players = env.unwrapped.reference_players()
    assert set(players) == {"random"} | {f"stockfish-skill-{n}" for n in (0, 5, 10, 20)}
    opened = [players[name]() for name in players]
    for player in opened:
        move = player.act(env, env.agent_selection)
        parse_move(env.unwrapped.world.board, move)
    env.unwrapped.oracle_action(env.agent_selection)
    assert len(stockfish_children()) == 5
    for player in opened:
        player.close()
        player.close()
    env.close()
    env.close()
    assert stockfish_children() == []


def test_an_engine_move_depends_on_the_game_alone_not_on_earlier_searches():
    """Every search starts a new game (hash and history cleared): a kept engine that has
    searched other positions moves as a fresh process does."""
    board, positions = chess.Board(), []
    for san in ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6"]:
        board.push_san(san)
        positions.append(board.copy())
    kept = UciEngine(nodes=2_000)
    for position in positions:
        kept.best_move(position)
    again = [kept.best_move(position) for position in positions]
    kept.close()
    fresh = []
    for position in positions:
        engine = UciEngine(nodes=2_000)
        fresh.append(engine.best_move(position))
        engine.close()
    assert again == fresh


def test_an_engine_dropped_without_close_is_stopped():
    engine = UciEngine(nodes=100)
    engine.best_move(chess.Board())
    assert len(stockfish_children()) == 1
    del engine
    assert stockfish_children() == []


def test_an_engine_left_open_at_exit_is_stopped_and_the_interpreter_exits():
    script = (
        "import chess\n"
        "from agentgym.envs.multiagent.uci import UciEngine\n"
        "kept = UciEngine(nodes=100)\n"
        "kept.best_move(chess.Board())\n"
        "print(kept._engine.transport.get_pid())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    pid = int(done.stdout)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_missing_stockfish_is_a_typed_error_naming_the_package(monkeypatch):
    monkeypatch.setattr("agentgym.envs.multiagent.engines.ENGINE_DIRS", ())
    monkeypatch.setenv("PATH", "/nonexistent")
    env = start()
    with pytest.raises(MissingExtraError, match="apt-get install stockfish"):
        env.unwrapped.oracle_action("player_0")
    env.close()


class _Draws:
    """A stand-in for the generator that hands out set values, so the test measures the rule."""

    def __init__(self, values):
        self._values = iter(values)

    def integers(self, high):
        value = next(self._values)
        assert 0 <= value < high
        return value


def test_the_skill_rule_is_stockfishs_push_formula():
    from agentgym.envs.multiagent.chess import pick_weakened

    moves = [chess.Move.from_uci(m) for m in ("e2e4", "d2d4", "g1f3", "a2a3")]
    lines = list(zip(moves, (50, 40, 0, -100), strict=True))
    # No random term: the deterministic push (120 * gap / 128) never lifts a worse move past
    # the best, since it is smaller than the gap.
    assert pick_weakened(lines, 0, _Draws([0, 0, 0, 0])) == moves[0]
    # A large draw for the second move: 40 + (120 * 10 + 34.9 * 119) / 128 = 81.8 > 50.
    assert pick_weakened(lines, 0, _Draws([0, 119, 0, 0])) == moves[1]
    # At level 19 the weakness is 82: the fourth move, 150 centipawns behind, cannot win even
    # with the largest draw, -100 + (82 * 150 + 34.9 * 81) / 128 = 18.2 < 50; at level 0 it can.
    assert pick_weakened(lines, 19, _Draws([0, 0, 0, 81])) == moves[0]
    assert pick_weakened(lines, 0, _Draws([0, 0, 0, 119])) == moves[3]


def test_a_weakened_stockfish_replays_its_game_from_the_seed():
    """Stockfish below level 20 draws from the clock; ours from the seed, so games replay."""
    env = agentgym.make_multi("multiagent/Chess-v0")
    players = env.unwrapped.reference_players()
    try:
        games = []
        for _ in range(2):
            seats = {"player_0": players["stockfish-skill-5"](), "player_1": players["random"]()}
            games.append(play_game(env, seats, seed=11, max_turns=16).moves)
            for seat in seats.values():
                seat.close()
        assert games[0] == games[1] and len(games[0]) == 16
    finally:
        env.close()
