"""agentgym eval / report / compare from the command line."""

from agentgym.cli import main


def test_eval_report_and_compare(tmp_path, capsys):
    for agent in ("oracle", "random"):
        args = ["eval", "--env", "games/TowerOfHanoi-v0", "--tasks", "3", "--difficulty", "easy"]
        assert main([*args, "--agent", agent, "--out", str(tmp_path / agent)]) == 0
    out = capsys.readouterr().out
    assert "games/TowerOfHanoi-v0    oracle  100.0% [100.0, 100.0]" in out
    assert main(["report", str(tmp_path / "oracle"), str(tmp_path / "random")]) == 0
    assert "random" in capsys.readouterr().out
    assert main(["compare", str(tmp_path / "oracle"), str(tmp_path / "random")]) == 0
    assert "random - oracle on 3 shared episodes" in capsys.readouterr().out


def test_bad_input_is_a_clear_message(tmp_path, capsys):
    assert main(["eval", "--benchmark", "nope", "--agent", "random"]) == 2
    assert "shipped suites are" in capsys.readouterr().err
    assert main(["report", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
    assert main(["eval", "--env", "games/Maze-v0", "--agent", "random", "--resume"]) == 2
    assert "--resume needs --out" in capsys.readouterr().err
