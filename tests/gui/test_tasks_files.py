"""The file manager tasks (envs/gui/tasks/files.py) and the metrics of osworld_files.py.

Without a desktop: every template makes checked tasks whose oracles differ from seed to seed,
and ``compare_archive`` judges archives in memory. With one: a sample of templates is played
through ``DesktopTaskEnv`` (every template under ``make check``): the initial state fails, the
oracle passes, another seed's oracle replayed fails, and so does throwing everything away."""

import io
import json
import tarfile
import zipfile

import pytest
from sampling import sample

from agentgym.envs.gui import osworld
from agentgym.envs.gui.osworld_files import ARCHIVE_LIMIT, compare_archive
from agentgym.errors import UsageError

SEEDS = range(40)


def tar_bytes(files, mode="w:gz", prefix=""):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode=mode) as archive:
        for path, data in files.items():
            info = tarfile.TarInfo(prefix + path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def zip_bytes(files):
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return raw.getvalue()


@pytest.fixture
def archives(tmp_path):
    """Write bytes to a file under tmp_path and return its path."""

    def write(name, data):
        path = tmp_path / name
        path.write_bytes(data)
        return str(path)

    return write


FILES = {"box/a.txt": b"alpha\n", "box/sub/b.txt": b"beta\n"}


def test_compare_archive_matches_the_same_files_whatever_the_kind(archives):
    gold = archives("gold.tar.gz", tar_bytes(FILES))
    assert compare_archive(archives("made.tar.gz", tar_bytes(FILES, prefix="./")), gold) == 1.0
    assert compare_archive(archives("made.tar", tar_bytes(FILES, mode="w")), gold) == 1.0
    assert compare_archive(archives("made.zip", zip_bytes(FILES)), gold) == 1.0


def test_compare_archive_fails_a_missing_extra_or_changed_file(archives):
    gold = archives("gold.tar.gz", tar_bytes(FILES))
    changed = {**FILES, "box/a.txt": b"ALPHA\n"}
    extra = {**FILES, "box/c.txt": b""}
    for files in ({"box/a.txt": b"alpha\n"}, changed, extra, {"a.txt": b"alpha\n"}):
        assert compare_archive(archives("made.tar.gz", tar_bytes(files)), gold) == 0.0


def test_compare_archive_scores_no_archive_as_a_failure_and_a_bad_gold_as_a_bug(archives):
    gold = archives("gold.tar.gz", tar_bytes(FILES))
    assert compare_archive(None, gold) == 0.0
    assert compare_archive(archives("made.tar.gz", b"not an archive"), gold) == 0.0
    with pytest.raises(UsageError, match="expected archive"):
        compare_archive(gold, archives("broken.tar.gz", b"\x1f\x8b garbage"))


def test_compare_archive_reads_a_bomb_as_a_failure_and_never_unpacks(archives, tmp_path):
    gold = archives("gold.tar.gz", tar_bytes(FILES))
    bomb = {**FILES, "../escape.txt": b"x", "box/big": bytes(ARCHIVE_LIMIT + 1)}
    assert compare_archive(archives("bomb.tar.gz", tar_bytes(bomb)), gold) == 0.0
    assert not (tmp_path.parent / "escape.txt").exists()


def test_compare_archive_file_path_compares_one_folder(archives):
    gold = archives("gold.tar.gz", tar_bytes({"top/box/a.txt": b"alpha\n", "top/x.txt": b""}))
    made = archives("made.zip", zip_bytes({"top/box/a.txt": b"alpha\n", "top/y.txt": b""}))
    assert compare_archive(made, gold, file_path="top/box") == 1.0
    assert compare_archive(made, gold) == 0.0
    with pytest.raises(UsageError, match="no files under 'elsewhere'"):
        compare_archive(made, gold, file_path="elsewhere")


def oracles(app):
    return {
        t.key: [osworld.generate(t, seed)["agentgym"]["oracle"] for seed in SEEDS]
        for t in osworld.templates(app)
    }


def check_templates(app, minimum):
    """Every template of ``app`` makes checked tasks whose gold files stay out of the home,
    whose oracles fit an episode with 4 steps to spare and differ from seed to seed (all but
    a chance few); all three levels are there."""
    found = osworld.templates(app)
    assert len(found) >= minimum
    assert {t.level for t in found} == set(osworld.LEVELS)
    for each in found:
        tasks = [osworld.generate(each, seed) for seed in SEEDS]
        plans = [json.dumps(t["agentgym"]["oracle"]) for t in tasks]
        assert len(set(plans)) >= 0.9 * len(plans), f"{each.key}: seeds share oracles"
        for task in tasks:
            downloaded = {
                f["url"]
                for step in task["config"]
                if step["type"] == "download"
                for f in step["parameters"]["files"]
            }
            assert not any("gold" in url for url in downloaded), task["id"]
            assert task["agentgym"]["oracle"][-1] == "wait()", task["id"]
            assert len(task["agentgym"]["oracle"]) <= osworld.EPISODE_STEPS[app] - 4, task["id"]


def test_file_manager_templates_make_checked_tasks_with_seeded_oracles():
    check_templates("pcmanfm", minimum=10)


# ---------------------------------------------------------------------- on a desktop


def task_ids(env, app):
    """One dev task id per template of ``app``."""
    found = {}
    for level in env.tasks.difficulties:
        for task_id in env.tasks.ids("dev", level):
            found.setdefault(env.tasks.get(task_id).template.key, task_id)
    assert set(found) == {t.key for t in osworld.templates(app)}
    return found


def play(env, task_id, actions):
    """The rewards of ``actions`` played from a reset to ``task_id``, and whether the initial
    state already passed."""
    env.reset(options={"task_id": task_id})
    inner = env.unwrapped
    initially = inner._task.validate(inner._world).passed
    rewards = []
    for action in actions:
        _, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        if terminated or truncated:
            break
    return initially, rewards


def check_played(app, key, attacks=()):
    """The oracle of ``key``'s task passes; the start, another seed's oracle and each generic
    action list of ``attacks`` do not."""
    from agentgym.envs.gui.desktop import desktop_problem
    from agentgym.envs.gui.desktop_env import DesktopTaskEnv

    if desktop_problem():
        pytest.skip(desktop_problem())
    env = DesktopTaskEnv(app=app)
    try:
        task_id = task_ids(env, app)[key]
        task = env.tasks.get(task_id)
        other = osworld.generate(task.template, task.seed + 1)
        initially, rewards = play(env, task_id, other["agentgym"]["oracle"])
        assert not initially, f"{task_id}: the initial state passes"
        assert max(rewards) == 0.0, f"{task_id}: another seed's oracle passes"
        for actions in attacks:
            _, rewards = play(env, task_id, [*actions, "wait()"])
            assert max(rewards) == 0.0, f"{task_id}: {actions} passes"
        _, rewards = play(env, task_id, task.plan())
        assert rewards[-1] == 1.0, f"{task_id}: the oracle scores {rewards}"
    finally:
        env.close()


EVERYTHING_AWAY = ['key("Control+a")', 'key("Delete")', 'key("Enter")']
"""Select every item and move it to the trash."""


@pytest.mark.sampled
@pytest.mark.parametrize("key", sample([t.key for t in osworld.templates("pcmanfm")], 1))
def test_file_manager_oracle_passes_and_blind_replay_fails(key):
    check_played("pcmanfm", key, attacks=[EVERYTHING_AWAY])
