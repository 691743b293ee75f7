"""Connect four: rules on OpenSpiel, move parsing, the solver's values and strength."""

import concurrent.futures
import logging
import random

import pyspiel
import pytest
from open_spiel.python.algorithms.minimax import alpha_beta_search

import agentgym
from agentgym.envs.multiagent import connectfour_native, connectfour_solver
from agentgym.envs.multiagent.connectfour_native import native
from agentgym.envs.multiagent.connectfour_solver import (
    BOOK_PLIES,
    Position,
    Solver,
    best_move,
    book_move,
    decide,
    opening_book,
)
from agentgym.multiagent import play_game

ENV_ID = "multiagent/ConnectFour-v0"


def fresh(task_id="dev/empty/0", seed=0):
    env = agentgym.make_multi(ENV_ID)
    env.reset(seed=seed, options={"task_id": task_id})
    return env


def play_out(env, seats, seed=0, task_id="dev/empty/0"):
    """Each agent's verdict score after a whole game with ``seats`` moving."""
    return play_game(env, seats, seed, task_id=task_id).outcome


def test_four_up_wins_and_the_board_shows_columns():
    env = fresh()
    for move in ["column 4", "drop in 5", "4", "5", "4", "5", "4"]:
        env.step(move)
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    assert env.infos["player_0"]["verdict"].passed
    assert env.unwrapped.render().splitlines()[0] == " 1 2 3 4 5 6 7"


def test_a_full_column_is_feedback_listing_the_legal_columns():
    env = fresh()
    for _ in range(6):
        env.step("1")
    env.step("column 1")
    assert env.agent_selection == "player_0"
    assert env.observe("player_0").startswith(
        "Invalid action: column 1 is full (2 mistakes left before you forfeit). "
        "Legal moves: column 2, column 3, column 4, column 5, column 6, column 7."
    )


@pytest.mark.parametrize("text", ["column 8", "left", "3 or 4"])
def test_unreadable_moves_are_invalid(text):
    env = fresh()
    env.step(text)
    assert env.infos["player_0"]["invalid_action"] is True
    assert "could not read a column" in env.observe("player_0")


def random_position(rng, plies):
    """A position after ``plies`` random moves, none of them winning, the mover unable to win."""
    while True:
        position, columns = Position(), []
        for _ in range(plies):
            quiet = [
                c for c in range(7) if position.can_play(c) and not position.is_winning_move(c)
            ]
            if not quiet:
                break
            column = rng.choice(quiet)
            position, columns = position.play(column), [*columns, column]
        if len(columns) == plies and not position.can_win_next():
            return columns, position


@pytest.mark.parametrize("seed", range(6))
def test_the_solver_agrees_with_openspiel_minimax(seed):
    """Known values: OpenSpiel's own exhaustive alpha-beta (an independent implementation)
    gives the game-theoretic result of late positions; our score's sign must match it."""
    columns, position = random_position(random.Random(seed), 30)
    state = pyspiel.load_game("connect_four").new_initial_state()
    for column in columns:
        state.apply_action(column)
    value, _ = alpha_beta_search(
        state.get_game(), state, maximizing_player_id=state.current_player()
    )
    score = Solver().solve(position)
    assert (score > 0) - (score < 0) == int(value), "".join(str(c + 1) for c in columns)
    assert native().solve(columns) == score  # the C solver: the same exact score


# Pascal Pons' benchmark positions (Test_L3_R1, end of game, from his "Solving Connect 4" blog,
# http://blog.gamesolver.org/solving-connect-four/02-test-protocol/; these lines as quoted in
# a public test file): the moves (columns 1-7) and the exact score for the player to move.
PONS_TEST_L3_R1 = """\
2252576253462244111563365343671351441 -1
7422341735647741166133573473242566 1
23163416124767223154467471272416755633 0
71255763773133525731261364622167124446454 0
65214673556155731566316327373221417 -1
52677675164321472411331752454 0
3135151421347443544172316522225776773566 0
562154564361751726662253737734213275114 0
233377345754465174223731671122611552 1
6763525635134453444361412671365712 -1
211376455663355325112113664364524722 0
3146762114467714356347741621375222 -1
67152117737262713366376314254 6
2762751722231276466633475674533 5
3642756176227637211322113551637574556 2
22647455554314246733661634615122372377511 0
427566236745127177115664464254 2
7172212567451542223676134464437761515 0
641154574541323641152467137655232232366 0
5775265212657176476365522624313714333 2
3575316255751336464276636772271112 -3"""


@pytest.mark.parametrize("line", PONS_TEST_L3_R1.splitlines())
def test_the_solvers_give_pons_published_scores(line):
    moves, score = line.split()
    columns = [int(c) - 1 for c in moves]
    assert native().solve(columns) == int(score)
    assert Solver().solve(Position.from_columns(columns)) == int(score)


def test_the_c_solver_stops_at_its_budget_and_says_so():
    solver = native()
    assert solver.best_move([3, 3], budget=1_000) is None  # ply 2 needs millions
    assert 1_000 < solver.visited <= 1_001
    with pytest.raises(ValueError, match="not a connect-four game in progress"):
        solver.solve([0] * 7)  # a seventh stone in a full column


def test_threads_share_the_c_solver_safely():
    """ctypes lets threads into the C code at once; a budget one search runs out of must not
    stop another's (its globals are behind a lock)."""
    columns, _ = random_position(random.Random(5), 12)  # about 250,000 positions
    score = native().solve(columns)

    def exact(_):
        return native().solve(columns) == score

    def over_budget(_):
        return native().best_move([3, 3], budget=2_000) is None

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        jobs = [pool.submit(exact, None) for _ in range(4)]
        jobs += [pool.submit(over_budget, None) for _ in range(40)]
        assert all(job.result() for job in jobs)


def test_a_move_past_the_budget_is_searched_and_says_it_is_not_exact():
    columns, _ = random_position(random.Random(1), 8)  # off the book's lines
    assert book_move(columns) is None
    decision = decide(columns, native_budget=1_000)
    assert decision.how == "search" and not decision.exact
    assert decide(columns, native_budget=1_000) == decision  # the same on every call
    late, _ = random_position(random.Random(3), 24)
    assert decide(late).how == "proof"


def book_positions(plies=BOOK_PLIES):
    """Every position where a book player is to move, in either seat, within ``plies``
    stones: the book's move, then each reply that does not win at once."""
    level, found = [(), *((c,) for c in range(7))], []
    while level:
        found += level
        following = []
        for columns in level:
            column = book_move(columns)
            assert column is not None, f"the book has no move after {columns}"
            position = Position.from_columns(columns)
            if position.is_winning_move(column) or len(columns) + 2 > plies:
                continue
            after = position.play(column)
            following += [
                (*columns, column, reply)
                for reply in range(7)
                if after.can_play(reply) and not after.is_winning_move(reply)
            ]
        level = following
    return found


def test_the_book_covers_every_position_either_seat_meets():
    """From the empty board, as X or as O, against any replies (mirrors looked up)."""
    assert book_move([]) == 3  # the one winning first move (Allis 1988)
    positions = book_positions()
    assert max(len(p) for p in positions) == BOOK_PLIES
    assert book_move([3, 5]) == 6 - book_move([3, 1])  # 46 is the mirror of 42
    assert decide([3, 5]).how == "book" and decide([2]).how == "book"


@pytest.mark.parametrize("index", range(2))
def test_a_sample_of_the_book_keeps_each_positions_value(index):
    """The book's column keeps a won position won and a drawn one drawn (a weak proof of
    the position and of the child; in a lost position every column loses)."""
    deep = sorted(moves for moves in opening_book() if len(moves) == BOOK_PLIES)
    moves = random.Random(index).choice(deep)
    columns = [int(c) - 1 for c in moves]
    position, column = Position.from_columns(columns), book_move(columns)
    value = native().best_move(columns, weak=True)[1]
    if position.is_winning_move(column):
        assert value == 1
    elif value >= 0:
        child = [*columns, column]
        assert -native().best_move(child, weak=True)[1] == value


def test_the_python_search_stands_in_without_a_compiler(monkeypatch, tmp_path, caplog):
    late, _ = random_position(random.Random(3), 24)
    proved_in_c = decide(late)
    monkeypatch.setenv("AGENTGYM_CACHE", str(tmp_path))
    monkeypatch.setattr(connectfour_native.shutil, "which", lambda name: None)
    connectfour_native.native.cache_clear()
    connectfour_solver._decide.cache_clear()
    try:
        with caplog.at_level(logging.WARNING):
            assert connectfour_native.native() is None
        assert "C solver is unavailable" in caplog.text and "no C compiler" in caplog.text
        assert decide(late) == proved_in_c  # Python proves the same move
    finally:
        connectfour_native.native.cache_clear()
        connectfour_solver._decide.cache_clear()


def test_the_solver_takes_a_win_blocks_a_threat_and_makes_a_double_threat():
    assert best_move([3, 0, 3, 0, 3, 1]) == 3  # X completes four up column 4
    assert best_move([0, 6, 1, 6, 2]) == 3  # O must block X's three across columns 1-3
    # X holds columns 2-3 on the bottom row: column 4 makes two threats (1 and 5) at once
    position = Position.from_columns([1, 6, 2, 6])
    assert Solver().solve(position) == (42 + 1 - 6) // 2  # Pons: X wins with its 4th stone
    assert best_move([1, 6, 2, 6]) == 3


def test_the_solver_wins_from_a_won_position():
    """A position the solver proves won is converted against a random defender."""
    rng = random.Random(11)
    columns, position = random_position(rng, 20)
    while Solver().solve(position) <= 0:
        columns, position = random_position(rng, 20)
    env = agentgym.make_multi(ENV_ID)
    env.reset(seed=0, options={"task_id": "dev/empty/0"})
    for column in columns:
        env.step(str(column + 1))
    mover = env.agent_selection
    other = "player_1" if mover == "player_0" else "player_0"
    players = env.unwrapped.reference_players()
    seats = {mover: players["solver"](), other: players["random"]()}
    scores = {}
    for agent in env.agent_iter():  # on from the won position (play_game would reset)
        _, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            scores[agent] = info["verdict"].score
        env.step(None if terminated or truncated else seats[agent].act(env, agent))
    assert scores == {mover: 1.0, other: 0.0}


@pytest.mark.parametrize("seed", range(3))
def test_the_solver_never_loses_to_random(seed):
    env = fresh(task_id=f"dev/midgame/{seed}", seed=seed)
    players = env.unwrapped.reference_players()
    solver_seat = ("player_0", "player_1")[seed % 2]
    other = "player_1" if solver_seat == "player_0" else "player_0"
    seats = {solver_seat: players["solver"](), other: players["random"]()}
    outcome = play_out(env, seats, seed=seed, task_id=f"dev/midgame/{seed}")
    assert outcome[solver_seat] == 1.0


def always_column_1(env, agent):
    return "column 1"


def first_legal_column(env, agent):
    return env.unwrapped.legal_actions(env.unwrapped.world, agent)[0]


@pytest.mark.parametrize("policy", [always_column_1, first_legal_column])
@pytest.mark.parametrize("seat", ["player_0", "player_1"])
def test_a_fixed_policy_earns_nothing_against_the_solver(seat, policy):
    env = fresh()
    other = "player_1" if seat == "player_0" else "player_0"
    solver = env.unwrapped.reference_players()["solver"]()
    outcome = play_out(env, {seat: policy, other: solver})
    assert outcome[seat] == 0.0


def test_reference_players_include_random_solver_and_graded_depths():
    env = fresh()
    assert set(env.unwrapped.reference_players()) == {
        "random",
        "solver",
        "solver-depth-2",
        "solver-depth-4",
        "solver-depth-6",
    }
    assert env.unwrapped.oracle_action("player_0") == "column 4"  # the book's opening
