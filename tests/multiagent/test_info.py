"""`agentgym info` of a multi-agent game: its seats and the reference players by name, the
names `--opponent` and `agentgym arena --agents` accept."""

from agentgym import cli
from agentgym.registry import make_multi


def players_listed(page):
    """The reference players' lines of an info page: {name: summary}."""
    lines = page.split("reference players (--opponent NAME", 1)[1].splitlines()[1:]
    rows = [line.split(maxsplit=1) for line in lines if line.startswith("  ")]
    return {row[0]: row[1] if len(row) > 1 else "" for row in rows}


def test_info_lists_the_seats_and_every_reference_player(capsys):
    assert cli.main(["info", "multiagent/Taboo-v0"]) == 0
    page = capsys.readouterr().out
    assert "seats            attacker_0, defender_0" in page
    assert "split test       16 tasks, e.g. test/0" in page
    listed = players_listed(page)
    game = make_multi("multiagent/Taboo-v0")
    try:
        assert list(listed) == list(game.unwrapped.reference_players())
    finally:
        game.close()
    assert listed["cautious"] == (
        "Clue-giving attacker; cautious or naive defender (see the module docstring)."
    )


def test_a_player_line_is_the_first_sentence_of_its_docstring_in_plain_text(capsys):
    assert cli.main(["info", "multiagent/Go9x9-v0"]) == 0
    listed = players_listed(capsys.readouterr().out)
    assert list(listed) == ["random", "gnugo-level-1", "gnugo-level-5", "gnugo-level-10"]
    assert listed["gnugo-level-5"] == "GNU Go at level for whichever seat asks."
    assert listed["random"].startswith('The "random" reference player: a uniformly random')
    assert "``" not in listed["random"] and ":meth:" not in listed["random"]
