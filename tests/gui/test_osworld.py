"""The desktop task engine: templates make checked OSWorld task dicts, bad ones are one clear
error, getters read only regular files of the home, metrics score like OSWorld's, the export
writes OSWorld JSON, and every template's oracle (pixel actions only) reaches 1.0."""

import json
import os
import types
from pathlib import Path

import pytest
from sampling import sample

from agentgym.envs.gui import osworld
from agentgym.envs.gui.osworld_metrics import METRICS, find_metric
from agentgym.envs.gui.pixel_actions import PIXEL_ACTIONS
from agentgym.envs.web import actions as web_actions
from agentgym.errors import UsageError

TEMPLATES = osworld.templates()
KEYS = [t.key for t in TEMPLATES]


def minimal(**changes):
    task = {
        "id": "t-0",
        "instruction": "Save it.",
        "config": [{"type": "launch", "parameters": {"command": ["mousepad"]}}],
        "evaluator": {
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "~/a.txt", "dest": "a.txt"},
            "expected": {"type": "cloud_file", "path": "local://gold", "dest": "gold"},
        },
        "agentgym": {"files": {"gold": "x"}, "oracle": ['key("Control+s")']},
    }
    return task | changes


# ---------------------------------------------------------------------- templates


def test_mousepad_has_at_least_ten_templates_over_three_levels():
    mousepad = osworld.templates("mousepad")
    assert len(mousepad) >= 10
    assert {t.level for t in mousepad} == set(osworld.LEVELS)
    assert all(t.summary for t in mousepad)


@pytest.mark.parametrize("key", KEYS)
def test_a_template_makes_checked_tasks_that_depend_on_the_seed(key):
    """Same seed, same task; the oracle's actions parse in the pixel language (no back door);
    another seed's oracle types something else (a replayed oracle must fail)."""
    found = osworld.TEMPLATES[key]
    first, again = osworld.generate(found, 3), osworld.generate(found, 3)
    assert first == again and first["id"] == f"{key}-3"
    for action in first["agentgym"]["oracle"]:
        web_actions.parse(action, tuple(PIXEL_ACTIONS), PIXEL_ACTIONS)
    oracles = {json.dumps(osworld.generate(found, seed)["agentgym"]["oracle"]) for seed in range(8)}
    assert len(oracles) == 8
    assert max(len(o) for o in map(json.loads, oracles)) <= osworld.EPISODE_STEPS[found.app]
    gold = [k for k in first["agentgym"]["files"] if k.startswith("gold")]
    downloaded = [f["path"] for s in first["config"] if s["type"] == "download"
                  for f in s["parameters"]["files"]]  # fmt: skip
    assert not any(path.endswith(tuple(gold)) for path in downloaded), "gold in the home"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"config": [{"type": "teleport", "parameters": {}}]}, "unknown config step 'teleport'"),
        ({"config": ["launch mousepad"]}, "a config step is {type, parameters}"),
        (
            {"evaluator": {"func": "compare_magic", "result": {"type": "rule", "rules": {}}}},
            "unknown metric 'compare_magic'",
        ),
        (
            {"evaluator": {"func": "exact_match", "result": {"type": "vm_screen"}}},
            "unknown getter 'vm_screen'",
        ),
        (
            {"evaluator": {"func": ["exact_match", "is_in_list"], "result": [{"type": "rule"}]}},
            "'result' must be a list as long as 'func'",
        ),
        ({"agentgym": {"files": {}, "oracle": ['key("Control+s")']}}, "local://gold names no"),
        ({"agentgym": {"files": {"gold": ""}, "oracle": ["write_file('a')"]}}, "oracle action"),
        ({"instruction": ""}, "'instruction' must be a sentence"),
    ],
)
def test_a_task_the_engine_cannot_run_is_one_clear_error(change, message):
    with pytest.raises(UsageError, match=message):
        osworld.check_task(minimal(**change))


def test_a_template_of_an_unknown_app_or_level_is_refused():
    with pytest.raises(UsageError, match="unknown desktop app 'gimp'"):
        osworld.template("gimp", level="easy")
    with pytest.raises(UsageError, match="unknown level 'expert'"):
        osworld.template("mousepad", level="expert")


# ---------------------------------------------------------------------- getters, evaluation


@pytest.fixture
def run(tmp_path):
    home, scratch = tmp_path / "home", tmp_path / "scratch"
    home.mkdir()
    scratch.mkdir()
    desktop = types.SimpleNamespace(home=home, uid=os.getuid())
    return osworld.Run(desktop, {"gold": "a\nb\n"}, scratch)


def test_vm_file_copies_a_regular_file_of_the_home_and_nothing_else(run, tmp_path):
    home = run.desktop.home
    (home / "a.txt").write_text("hello")
    copy = osworld.get_vm_file(run, path="~/a.txt", dest="a.txt")
    assert copy and Path(copy).read_text() == "hello" and not copy.startswith(str(home))
    assert osworld.get_vm_file(run, path="/home/user/a.txt", dest="a.txt") == copy
    assert osworld.get_vm_file(run, path="~/missing.txt", dest="m") is None
    (tmp_path / "secret").write_text("root's")
    (home / "link.txt").symlink_to(tmp_path / "secret")  # an agent's link out of the home
    assert osworld.get_vm_file(run, path="~/link.txt", dest="l") is None
    os.mkfifo(home / "pipe.txt")  # reading it would block forever
    assert osworld.get_vm_file(run, path="~/pipe.txt", dest="p") is None
    with pytest.raises(UsageError, match="not in the home"):
        osworld.get_vm_file(run, path="/etc/passwd", dest="p")


def test_list_directory_and_cloud_file(run):
    (run.desktop.home / "docs").mkdir()
    (run.desktop.home / "docs" / "b").write_text("")
    (run.desktop.home / "docs" / "a").write_text("")
    assert osworld.get_list_directory(run, path="~/docs") == ["a", "b"]
    assert osworld.get_list_directory(run, path="~/nowhere") is None
    gold = osworld.get_cloud_file(run, path="local://gold", dest="gold.txt")
    assert Path(gold).read_text() == "a\nb\n" and not gold.startswith(str(run.desktop.home))


def evaluator(func, conj="and"):
    rules = [{"type": "rule", "rules": {"expected": value}} for value in ("x", "y")]
    return {
        "func": [func, func],
        "result": [{"type": "rule", "rules": "x"}] * 2,
        "expected": rules,
        "options": [{}, {}],
        "conj": conj,
    }


@pytest.mark.parametrize(("conj", "score"), [("and", 0.0), ("or", 1.0)])
def test_conj_joins_the_metrics_like_osworld(run, tmp_path, conj, score):
    """ "x" == "x" passes, "x" == "y" fails: "and" is 0, "or" is 1."""
    task = minimal(evaluator=evaluator("exact_match", conj))
    got, details = osworld.evaluate(run.desktop, task, run.scratch)
    assert got == score and "exact_match 1.00" in details


def test_a_missing_result_file_scores_zero_not_an_error(run):
    task = minimal(agentgym={"files": {"gold": "x"}, "oracle": ['key("a")']})
    assert osworld.evaluate(run.desktop, task, run.scratch)[0] == 0.0
    (run.desktop.home / "a.txt").write_text("x\n")  # a trailing newline does not matter
    assert osworld.evaluate(run.desktop, task, run.scratch)[0] == 1.0


# ---------------------------------------------------------------------- metrics


def test_text_metrics_score_like_osworlds(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("Hello  World\n")
    b.write_text("hello world")
    compare = find_metric("compare_text_file")
    assert compare(str(a), str(b)) == 0.0
    assert compare(str(a), str(b), ignore_blanks=True, ignore_case=True) == 1.0
    assert compare(None, str(b)) == 0.0
    with pytest.raises(UsageError, match="expected"):
        compare(str(a), None)
    assert METRICS["check_include_exclude"]("a b c", {"include": ["a", "c"], "exclude": ["d"]})
    assert not METRICS["check_include_exclude"]("a b d", {"include": ["a"], "exclude": ["d"]})
    assert METRICS["check_include_exclude"](None, {"include": []}) == 0.0
    assert METRICS["is_in_list"](["x", "y"], {"expected": "y"}) == 1.0
    assert METRICS["match_in_list"]("y", {"expected": ["x", "y"]}) == 1.0
    assert METRICS["exact_match"]("x", {"expected": "x"}) == 1.0
    assert METRICS["literal_match"](["A"], ["a"], type="list", ignore_case=True) == 1.0
    a.write_text("apple 3\nbanana 4\n")
    assert METRICS["check_list"](str(a), {"expect": [r"^apple \d$"], "unexpect": ["cherry"]})
    assert not METRICS["check_list"](str(a), {"expect": ["^cherry"]})
    b.write_text("apple 3\nkiwi 5\n")
    assert METRICS["diff_text_file"](str(a), str(b)) == 0.5  # one line of two in common
    with pytest.raises(UsageError, match="rules must be a mapping"):
        METRICS["exact_match"]("x", "x")


# ---------------------------------------------------------------------- export


def test_export_writes_osworld_json_with_the_files_beside(tmp_path):
    osworld.main(["--export", str(tmp_path), "--app", "mousepad", "--seed", "2"])
    written = sorted(tmp_path.glob("*.json"))
    assert len(written) == len(osworld.templates("mousepad"))
    task = json.loads(written[0].read_text())
    assert {"id", "instruction", "config", "evaluator"} <= set(task)
    assert "files" not in task["agentgym"] and task["agentgym"]["oracle"]
    for key in osworld._local_keys(task):
        assert (tmp_path / task["id"] / key).is_file()


# ---------------------------------------------------------------------- on a desktop


def _desktop_problem():
    try:
        from agentgym.envs.gui.desktop import desktop_problem
    except ImportError as missing:
        return str(missing)
    return desktop_problem()


desktop_only = pytest.mark.skipif(_desktop_problem() is not None, reason="no desktop here")


@desktop_only
@pytest.mark.sampled
@pytest.mark.parametrize("key", sample(KEYS, 2))
def test_every_templates_oracle_reaches_one(key):
    """The oracle of a seed's task, played by the env's own step, scores 1.0 (every template
    under make check, two in the suite)."""
    from agentgym.envs.gui.desktop_env import DesktopTaskEnv

    found = osworld.TEMPLATES[key]
    env = DesktopTaskEnv(found.app)
    try:
        task_id = next(i for i in env.tasks.ids("test", found.level)
                       if env.tasks.get(i).template.key == key)  # fmt: skip
        env.reset(seed=0, options={"task_id": task_id})
        total, terminated = 0.0, False
        while not terminated and (action := env.oracle_action()) is not None:
            _, reward, terminated, _, info = env.step(action)
            total += reward
        assert total == 1.0 and terminated, info["verdict"].details
    finally:
        env.close()


@desktop_only
def test_commands_run_as_the_uid_with_a_deadline_and_a_limit():
    from agentgym.envs.gui.desktop import Desktop

    with Desktop(320, 240) as desktop:
        status, out = desktop.run(["sh", "-c", "id -u; echo $HOME"])
        assert status == 0 and out.decode().split() == [str(desktop.uid), "/home/user"]
        assert desktop.run(["sleep", "5"], timeout=0.3) == (None, b"")
        status, out = desktop.run(["yes"], limit=1000)
        assert status is None and len(out) == 1000
        task = minimal(
            config=[{"type": "execute", "parameters": {"command": ["touch", "~/made"]}}],
            evaluator={
                "func": "check_include_exclude",
                "result": {"type": "vm_command_line", "command": "ls ~"},
                "expected": {"type": "rule", "rules": {"include": ["made"]}},
            },
        )
        osworld.check_task(task)
        osworld.run_config(desktop, task, desktop.root)
        assert osworld.evaluate(desktop, task, desktop.root) == (1.0, "check_include_exclude 1.00")
        failing = minimal(config=[{"type": "execute", "parameters": {"command": ["false"]}}])
        with pytest.raises(UsageError, match="failed"):
            osworld.run_config(desktop, failing, desktop.root)
