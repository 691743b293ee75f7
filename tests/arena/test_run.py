"""The arena runner: matches into the run directory, ratings, resume, errored matches kept
out of the ratings, agent seats in the ledger, and the CLI."""

import asyncio
import json

import pytest

import agentgym
from agentgym.agents import Agent
from agentgym.arena.replay import replay
from agentgym.arena.run import Arena, read_matches, run_arena
from agentgym.cli import main
from agentgym.errors import ContextLengthError, ModelError, UsageError
from agentgym.eval.engine import EngineLimits
from agentgym.ledger import read_episodes

TICTACTOE = "multiagent/TicTacToe-v0"
CONNECT_FOUR = "multiagent/ConnectFour-v0"


class FirstLegal(Agent):
    """Plays the first legal move it is shown."""

    async def act(self, observation, info):
        return info["admissible_actions"][0]


class Nonsense(Agent):
    """Writes what no game takes: it must lose by forfeit, never error the match."""

    async def act(self, observation, info):
        return "xyzzy"


class Broken(Agent):
    """A model server that fails (a backend raises the typed ModelError): infrastructure."""

    async def act(self, observation, info):
        raise ModelError("the model server went away")


class Overflows(Agent):
    """A prompt that outgrows the model's context: errored, and not retried (as eval)."""

    async def act(self, observation, info):
        raise ContextLengthError("the prompt and the reply do not fit the context")


class FailsOnSecondMove(Agent):
    """An agent with a bug of its own: its second move raises. Tic-tac-toe cannot end in
    fewer than five moves and rock-paper-scissors in fewer than two rounds, so the game is
    still on when it fails, in either seat."""

    def reset(self, context):
        self.moves = 0

    async def act(self, observation, info):
        self.moves += 1
        if self.moves == 2:
            raise ValueError("a bug in the agent")
        return info["admissible_actions"][0]


class SlowOnSecondMove(FailsOnSecondMove):
    """Its second move takes longer than the arena's step timeout."""

    async def act(self, observation, info):
        if self.moves == 1:
            await asyncio.sleep(30)
        return await super().act(observation, info)


class Crasher:
    name = "crasher"

    def act(self, env, agent):
        raise RuntimeError("the engine crashed")

    def close(self):
        pass


def with_crasher(env_id, **kwargs):
    env = agentgym.make_multi(env_id, **kwargs)
    players = env.unwrapped.reference_players()
    env.unwrapped.reference_players = lambda: {**players, "crasher": Crasher}
    return env


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_reference_players_fill_the_run_directory_and_the_records_replay(tmp_path):
    arena = Arena(TICTACTOE, ("solver", "random"), games=6)
    result = run_arena(arena, tmp_path / "run")
    run = tmp_path / "run"
    assert {"manifest.json", "matches.jsonl", "ratings.json"} <= {p.name for p in run.iterdir()}
    assert len(lines(run / "matches.jsonl")) == 6 and not result.errored
    for record in result.records:
        assert record.moves and record.task_id.startswith("test/") and record.seed is not None
        assert replay(record).scores == record.scores
    ratings = json.loads((run / "ratings.json").read_text())
    assert [r["player"] for r in ratings["ratings"]["rows"]] == ["solver", "random"]
    assert {p["player"] for p in ratings["provisional"]} == {"solver", "random"}


def test_resume_plays_only_the_missing_matches(tmp_path):
    arena = Arena(TICTACTOE, ("solver", "random"), games=6)
    first = run_arena(arena, tmp_path)
    kept = (tmp_path / "matches.jsonl").read_text().splitlines()[:4]
    (tmp_path / "matches.jsonl").write_text("\n".join(kept) + "\n")
    played = []
    again = run_arena(arena, tmp_path, resume=True, on_match=played.append)
    assert len(played) == 2 and again.resumed == 4
    assert sorted(r.match_id for r in again.records) == sorted(r.match_id for r in first.records)
    with pytest.raises(UsageError, match="already holds an arena; pass --resume"):
        run_arena(arena, tmp_path)
    with pytest.raises(UsageError, match=r"cannot resume .* another arena"):
        run_arena(Arena(TICTACTOE, ("solver", "random"), games=8), tmp_path, resume=True)
    with pytest.raises(UsageError, match=r"cannot resume .* its agent options are \{\}"):
        run_arena(arena, tmp_path, resume=True, agent_options={"temperature": 0.7})


def test_a_crashing_player_makes_errored_matches_never_scored_ones(tmp_path):
    arena = Arena(TICTACTOE, ("solver", "random", "crasher"), games=2)
    result = run_arena(arena, tmp_path, make_env=with_crasher, limits=EngineLimits(retries=1))
    assert len(result.records) == 2  # solver against random only
    assert all("crasher" not in r.players for r in result.records)
    errored = lines(tmp_path / "errored.jsonl")
    assert len(errored) == 4 and all("crasher" in e["seats"].values() for e in errored)
    assert all("2 attempt(s) failed; last: RuntimeError: the engine crashed" in e["error"]
               for e in errored)  # fmt: skip
    assert {r.player for r in result.ratings.rows} == {"solver", "random"}
    # a resume does not play errored matches again (as eval's resume does not)
    played = []
    run_arena(arena, tmp_path, make_env=with_crasher, resume=True, on_match=played.append)
    assert played == []


def test_agent_seats_write_episodes_to_the_ledger(tmp_path):
    arena = Arena(TICTACTOE, ("first-legal", "random"), games=4)
    result = run_arena(arena, tmp_path, agents={"first-legal": FirstLegal})
    episodes = list(read_episodes(tmp_path / "episodes.jsonl"))
    assert len(episodes) == 4 and not result.errored
    by_match = {r.match_id: r for r in result.records}
    for episode in episodes:
        match_id, _, seat = episode.episode_id.rpartition("/")
        record = by_match[match_id]
        assert episode.spec.agent == "first-legal" == record.seats[seat]
        assert episode.spec.env_kwargs["seat"] == seat
        assert episode.spec.split == "test"
        assert episode.verdict.score == record.scores[seat] == episode.total_reward
        assert [s.action for s in episode.steps] == [
            turn[seat] for turn in record.moves if seat in turn
        ]
        assert episode.instructions and episode.steps[-1].terminated


def test_an_agent_that_writes_nonsense_loses_and_one_that_fails_errors(tmp_path):
    arena = Arena(TICTACTOE, ("nonsense", "random"), games=2)
    result = run_arena(arena, tmp_path / "a", agents={"nonsense": Nonsense})
    assert not result.errored and len(result.records) == 2
    for record in result.records:
        seat = next(s for s, p in record.seats.items() if p == "nonsense")
        assert record.scores[seat] == 0.0
    broken = Arena(TICTACTOE, ("broken", "random"), games=2)
    result = run_arena(
        broken, tmp_path / "b", agents={"broken": Broken}, limits=EngineLimits(retries=0)
    )
    assert not result.records and len(result.errored) == 2
    assert "ModelError: the model server went away" in result.errored[0]["error"]
    assert not (tmp_path / "b" / "episodes.jsonl").read_text()


def test_an_agent_whose_context_overflows_errors_the_match_without_a_retry(tmp_path):
    arena = Arena(TICTACTOE, ("long", "random"), games=1)
    result = run_arena(arena, tmp_path, agents={"long": Overflows}, limits=EngineLimits())
    assert not result.records and len(result.errored) == 1
    assert "1 attempt(s) failed; last: ContextLengthError" in result.errored[0]["error"]


@pytest.mark.parametrize("env_id", [TICTACTOE, "multiagent/RockPaperScissors-v0"])
def test_an_agent_that_raises_forfeits_its_seat_in_a_scored_match(tmp_path, env_id):
    """Its own bug is a lost match (scored, the moves before it kept, the forfeit named),
    never an errored one left out of the ratings, and it is not played again."""
    arena = Arena(env_id, ("buggy", "random"), games=2)
    played = []
    result = run_arena(arena, tmp_path, agents={"buggy": FailsOnSecondMove}, on_match=played.append)
    assert not result.errored and len(result.records) == 2 == len(played)
    assert [row.player for row in result.ratings.rows] == ["random", "buggy"]
    episodes = {e.episode_id: e for e in read_episodes(tmp_path / "episodes.jsonl")}
    for record in result.records:
        seat = next(s for s, p in record.seats.items() if p == "buggy")
        assert record.forfeit.seat == seat
        assert record.forfeit.reason == "its move raised ValueError: a bug in the agent"
        assert record.scores == {s: float(s != seat) for s in record.seats}
        assert sum(seat in turn for turn in record.moves) == 1  # its first move, then the bug
        assert replay(record) == record
        episode = episodes[f"{record.match_id}/{seat}"]
        assert episode.status == "ok" and episode.verdict.score == 0.0 == episode.total_reward
        assert "forfeited: its move raised ValueError" in episode.verdict.details
        assert len(episode.steps) == 1 and episode.steps[-1].terminated
    assert read_matches(tmp_path)[0] == result.records  # the forfeit reads back


def test_a_slow_agent_forfeits_on_its_move_instead_of_erroring_the_match(tmp_path):
    arena = Arena(TICTACTOE, ("slow", "random"), games=2)
    limits = EngineLimits(step_timeout=0.5, retries=0)
    result = run_arena(arena, tmp_path, agents={"slow": SlowOnSecondMove}, limits=limits)
    assert not result.errored and len(result.records) == 2
    for record in result.records:
        assert record.seats[record.forfeit.seat] == "slow"
        assert record.forfeit.reason == "its move took over the step timeout of 0.5 s"
        assert replay(record) == record


def test_a_resume_after_a_crash_between_episodes_and_record_writes_no_episode_twice(tmp_path):
    """A match's episodes are written before its record: a crash between the two (the
    record's line never written) must not leave the replayed match's episodes twice."""
    arena = Arena(TICTACTOE, ("first-legal", "random"), games=4)
    agents = {"first-legal": FirstLegal}
    run_arena(arena, tmp_path, agents=agents)
    matches = (tmp_path / "matches.jsonl").read_text().splitlines()
    (tmp_path / "matches.jsonl").write_text("\n".join(matches[:-1]) + "\n")  # the crash
    again = run_arena(arena, tmp_path, agents=agents, resume=True)
    assert again.resumed == 3 and len(again.records) == 4
    ids = [e.episode_id for e in read_episodes(tmp_path / "episodes.jsonl")]
    assert len(ids) == len(set(ids)) == 4
    assert sorted(i.rpartition("/")[0] for i in ids) == sorted(r.match_id for r in again.records)


def test_swiss_rounds_play_distinct_pairings(tmp_path):
    arena = Arena(TICTACTOE, ("solver", "random", "first-legal", "nonsense"), 2, "swiss", 3)
    agents = {"first-legal": FirstLegal, "nonsense": Nonsense}
    result = run_arena(arena, tmp_path, agents=agents)
    rounds = {}
    for record in result.records:
        rounds.setdefault(record.match_id.split("/")[0], set()).add(frozenset(record.players))
    assert sorted(rounds) == ["swiss-1", "swiss-2", "swiss-3"]
    every = [pair for pairs in rounds.values() for pair in pairs]
    assert len(every) == 6 == len(set(every))  # three rounds of two pairings, no repeat
    played = []
    run_arena(arena, tmp_path, agents=agents, resume=True, on_match=played.append)
    assert played == []


def test_the_order_of_the_ratings_is_the_same_on_two_seeds(tmp_path):
    """The issue's criterion in miniature (docs/arena.md has the full command and time)."""
    players = ("solver-depth-4", "solver-depth-2", "random")
    orders = []
    for seed in (0, 1):
        result = run_arena(Arena(CONNECT_FOUR, players, 10, seed=seed), tmp_path / str(seed))
        rows = result.ratings.rows
        assert all(row.low <= row.rating <= row.high for row in rows)
        orders.append([row.player for row in rows])
    assert orders[0] == orders[1] == list(players)


def test_the_command_prints_the_ratings_with_intervals(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["arena", "--env", TICTACTOE, "--agents", "solver", "random", "--games", "2"]
    assert main([*argv, "--out", str(out), "--num-matches", "2"]) == 0
    printed = capsys.readouterr().out
    assert "RANK  PLAYER" in printed and "95% INTERVAL" in printed and "tie groups" in printed
    assert "2 matches scored, 0 errored" in printed and "forfeit" not in printed
    assert len(read_matches(out)[0]) == 2
    assert main([*argv, "--out", str(out), "--resume"]) == 0
    assert "(2 already done)" in capsys.readouterr().out
    assert main(["arena", "--env", TICTACTOE, "--agents", "solver", "no-such:thing", "--games", "2",
                 "--out", str(tmp_path / "x")]) == 2  # fmt: skip
    assert "'no-such:thing' is not a reference player of this game" in capsys.readouterr().err


class Talker(Agent):
    """Takes the first legal move where the game lists them, else says one sentence."""

    async def act(self, observation, info):
        legal = info.get("admissible_actions")
        return legal[0] if legal else "I suspect nobody."


def test_a_game_of_seven_seats_rotates_one_table_and_rates_by_plackett_luce(tmp_path):
    talkers = [f"talker-{i}" for i in range(5)]
    arena = Arena("multiagent/Werewolf-v0", ("random", "heuristic", *talkers), games=7)
    result = run_arena(arena, tmp_path, agents=dict.fromkeys(talkers, Talker))
    assert len(result.records) == 7 and not result.errored
    assert len({r.group for r in result.records}) == 1  # one block: every seat, one seed
    for seat in result.records[0].seats:
        assert sorted(r.seats[seat] for r in result.records) == sorted(arena.players)
    assert result.ratings.method == "plackett-luce"
    episodes = list(read_episodes(tmp_path / "episodes.jsonl"))
    # one episode per agent seat that had a turn (a player killed before it spoke has none)
    assert 7 * 4 < len(episodes) <= 7 * 5 and all(e.steps for e in episodes)


def test_the_command_with_every_match_errored_says_so_and_writes_no_report(tmp_path, capsys):
    broken = "tests.arena.test_run:Broken"  # an agent spec: found from the checkout's root
    argv = ["arena", "--env", TICTACTOE, "--agents", broken, "random", "--games", "2"]
    assert main([*argv, "--out", str(tmp_path), "--retries", "0"]) == 0
    printed = capsys.readouterr().out
    assert "no match was scored" in printed and "0 matches scored, 2 errored" in printed
    assert not (tmp_path / "report.html").exists()


def test_the_command_counts_forfeits_per_player(tmp_path, capsys):
    buggy = "tests.arena.test_run:FailsOnSecondMove"
    argv = ["arena", "--env", TICTACTOE, "--agents", buggy, "random", "--games", "2"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "2 matches scored, 0 errored (0 already done)" in printed
    assert f"forfeits: {buggy} 2" in printed


@pytest.mark.parametrize(
    ("players", "seats", "schedule", "rounds"),
    [
        (("a", "b", "c", "d"), ("p1", "p2"), "round-robin", None),
        (("a", "b", "c", "d", "e"), ("p1", "p2", "p3"), "round-robin", None),
        (("a", "b", "c", "d", "e"), ("p1", "p2"), "swiss", None),
        (("a", "b", "c", "d"), ("p1", "p2"), "swiss", 2),
    ],
)
def test_match_count_is_the_schedules_length(players, seats, schedule, rounds):
    """The leaderboard bounds an upload by match_count before scheduling: it must be the
    number of matches batches() yields, for either schedule."""
    arena = Arena("any", players, games=3, schedule=schedule, rounds=rounds)
    scheduled = sum(len(batch) for batch in arena.batches(seats, lambda: []))
    assert arena.match_count(len(seats)) == scheduled
