"""The arena's HTML report: the rating table with intervals and tie groups, openskill's
provisional number labelled beside it, the head-to-head matrix, and a game viewer that
replays each match to show its positions; a match that does not replay says so."""

import dataclasses
import json
import re

import pytest
from arena_matches import TICTACTOE, forfeited, solver_vs_random  # tests/: real matches

import agentgym
from agentgym.arena import PROVISIONAL, rate
from agentgym.arena.report import read_matches, write_report


def arena_run(folder, games=3, tamper=False):
    """A small run directory: the solver against random, seats swapped on shared seeds."""
    records = solver_vs_random(games)
    if tamper:
        first = records[0]
        records[0] = dataclasses.replace(
            first, scores={seat: 1 - score for seat, score in first.scores.items()}
        )
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(record.to_dict()) for record in records]
    (folder / "matches.jsonl").write_text("\n".join(lines) + "\n")
    return folder, records


def test_the_report_shows_ratings_with_intervals_head_to_head_and_the_games(tmp_path):
    run_dir, records = arena_run(tmp_path / "run")
    page = write_report(run_dir).read_text()
    assert (run_dir / "report.html").is_file()
    for row in rate(records).rows:
        assert f"<td>{row.player}</td><td>{row.rating:.1f}</td>" in page
        assert f"[{row.low:.1f}, {row.high:.1f}]" in page
    assert "tie group" in page and PROVISIONAL in page
    outcomes = [_outcome(r, "solver") for r in records]
    wins, draws, losses = (outcomes.count(o) for o in (1.0, 0.5, 0.0))
    score = (wins + draws / 2) / len(records)
    assert f"<td>solver</td><td>{wins}-{draws}-{losses} ({score:.2f})</td><td>-</td>" in page
    assert page.count('<details class="episode">') == len(records)
    first = records[0]
    seat, action = next(iter(first.moves[0].items()))
    assert f"{seat} ({first.seats[seat]}): {action}" in page
    assert "final position, as multiagent/TicTacToe-v0 shows it to player_0" in page
    assert "does not replay" not in page


def _outcome(record, player):
    """The player's score in a two-seat match: 1, 0.5 or 0."""
    (seat,) = (s for s, p in record.seats.items() if p == player)
    return record.scores[seat]


def test_a_match_that_does_not_replay_says_why_in_the_viewer(tmp_path):
    run_dir, _ = arena_run(tmp_path / "run", games=1, tamper=True)
    page = write_report(run_dir).read_text()
    assert page.count("does not replay") == 1
    assert "the record claims" in page


def test_names_from_the_records_are_escaped(tmp_path):
    run_dir, records = arena_run(tmp_path / "run", games=1)
    renamed = [
        dataclasses.replace(r, seats={s: p.replace("random", "<script>x</script>")
                                      for s, p in r.seats.items()})
        for r in records
    ]  # fmt: skip
    (run_dir / "matches.jsonl").write_text("".join(json.dumps(r.to_dict()) + "\n" for r in renamed))
    page = write_report(run_dir).read_text()
    assert "<script>x" not in page and "&lt;script&gt;x" in page


def test_a_folder_without_matches_is_refused_in_one_line(tmp_path):
    with pytest.raises(agentgym.errors.UsageError, match="not an arena run directory"):
        read_matches(tmp_path)
    (tmp_path / "matches.jsonl").write_text('{"match_id": "m"}\n')
    with pytest.raises(agentgym.errors.UsageError, match="line 1 is not a match record"):
        read_matches(tmp_path)


def test_agentgym_report_reads_an_arena_run_directory(tmp_path, capsys):
    from agentgym.cli import main

    run_dir, records = arena_run(tmp_path / "run", games=1)
    target = tmp_path / "page" / "arena.html"
    assert main(["report", str(run_dir), "--html", str(target)]) == 0
    out = capsys.readouterr().out
    assert TICTACTOE in out and "tie groups" in out
    for row in rate(records).rows:
        assert f"[{row.low:.1f}, {row.high:.1f}]" in out
    assert f"report: {target}" in out and "Head to head" in target.read_text()
    assert main(["report", str(run_dir), "--episode", "x"]) == 2
    assert "arena run" in capsys.readouterr().err


def test_forfeits_are_counted_per_player_and_shown_in_their_game(tmp_path, capsys):
    from agentgym.cli import main

    run_dir, _ = arena_run(tmp_path / "run", games=1)
    record = forfeited(3)
    with (run_dir / "matches.jsonl").open("a") as matches:
        matches.write(json.dumps(record.to_dict()) + "\n")
    page = write_report(run_dir).read_text()
    loser = record.seats[record.forfeit.seat]
    (winner,) = set(record.players) - {loser}
    row = "<td>{}</td>" + "<td>[^<]*</td>" * 3 + "<td>{}</td><td>{}</td>"  # matches, forfeits
    assert re.search(row.format(loser, 1, 1), page) and re.search(row.format(winner, 1, 0), page)
    assert re.search(row.format("solver", 2, 0), page)
    assert "<td>forfeited</td><td>1</td>" in page
    assert f"{loser} forfeited" in page
    assert f"{record.forfeit.seat} ({loser}) forfeited: {record.forfeit.reason}" in page
    assert "does not replay" not in page
    assert main(["report", str(run_dir), "--no-html"]) == 0
    assert f"forfeits: {loser} 1" in capsys.readouterr().out
