"""The forgery battery: bundles a cheat (or an accident) could send, each refused or marked, and
the reason said. Every forged bundle starts from a real run of a small games benchmark and is
re-packed with correct hashes, as a forger would: only the replay can catch what is left.

The archive-level attacks (bombs, traversal, links, a second copy of a file) are built by hand
with ``tarfile``, since ``pack_bundle`` never writes them.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from agentgym.eval import Benchmark, BenchmarkEnv, evaluate
from agentgym.leaderboard.bundle import (
    BUNDLE_FILES,
    BundleLimits,
    BundleRejected,
    pack_bundle,
    read_bundle,
)
from agentgym.leaderboard.rescore import rescore
from agentgym.leaderboard.submission import SubmissionInfo

BENCHMARK = Benchmark(
    "forgery-test",
    (BenchmarkEnv("games/Maze-v0", tasks=3), BenchmarkEnv("games/Game24-v0", tasks=3)),
    episodes_per_task=2,
)
INFO = SubmissionInfo(agent="forger", model="none")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A real run of the oracle and of the random agent (12 episodes each)."""
    found = {}
    for agent in ("oracle", "random"):
        out = tmp_path_factory.mktemp(agent) / "run"
        evaluate(BENCHMARK, agent, out, num_envs=4)
        found[agent] = out
    return found


def forged(
    run: Path, tmp_path: Path, edit: Callable[[list[dict]], list[dict]], manifest=None
) -> bytes:
    """``run``'s bundle after ``edit`` changed its episode lines, hashes made to match. The
    lines are handed to ``edit`` in the plan's order (a ledger is in the order episodes
    finished), so ``lines[i]`` is the re-score's ``episodes[i]``."""
    copy = tmp_path / "forged"
    shutil.copytree(run, copy)
    lines = [json.loads(line) for line in (copy / "episodes.jsonl").read_text().splitlines()]
    order = [plan.episode_id for plan in BENCHMARK.plan()]
    lines.sort(key=lambda line: order.index(line["episode_id"]))
    (copy / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in edit(lines)))
    if manifest is not None:
        data = json.loads((copy / "manifest.json").read_text())
        manifest(data)
        (copy / "manifest.json").write_text(json.dumps(data))
    return pack_bundle(copy, INFO, tmp_path / "forged.tar.gz").read_bytes()


def scored(data: bytes):
    return rescore(read_bundle(data), BENCHMARK, workers=2)


def archive(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    """A gzipped tar of ``members``: (name, content) pairs or prepared headers."""
    buffer = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buffer, mode="wb") as zipped,
        tarfile.open(fileobj=zipped, mode="w") as tar,
    ):
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                name, content = member
                info = tarfile.TarInfo(name)
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def members_of(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar}


# ----------------------------------------------------------------------------- honest runs


def test_an_honest_run_is_re_scored_to_its_own_numbers(runs, tmp_path):
    for agent, run in runs.items():
        result = scored(pack_bundle(run, INFO, tmp_path / f"{agent}.tar.gz").read_bytes())
        assert result.tier == "re-scored"
        assert all(e.outcome in ("ok", "truncated") for e in result.episodes)
        assert all(e.score == e.claimed_score for e in result.episodes)
        assert len(result.episodes) == len(BENCHMARK.plan())
    oracle = scored(pack_bundle(runs["oracle"], INFO, tmp_path / "o.tar.gz").read_bytes())
    assert all(e.passed for e in oracle.episodes)


def test_packing_is_reproducible(runs, tmp_path):
    first = pack_bundle(runs["random"], INFO, tmp_path / "a.tar.gz").read_bytes()
    second = pack_bundle(runs["random"], INFO, tmp_path / "b.tar.gz").read_bytes()
    assert first == second


def test_a_self_reported_check_reads_the_records_without_replaying(runs, tmp_path):
    def inflate(lines):
        for line in lines:
            line["verdict"] = {**(line["verdict"] or {}), "passed": True, "score": 1.0}
        return lines

    bundle = read_bundle(forged(runs["random"], tmp_path, inflate))
    assert rescore(bundle, BENCHMARK, replay=False).tier == "self-reported"
    assert rescore(bundle, BENCHMARK).tier == "re-scored"


# ----------------------------------------------------------------------------- edited records


def test_an_edited_verdict_is_ignored_and_flagged(runs, tmp_path):
    def claim_all(lines):
        for line in lines:
            if line["verdict"] is not None:
                line["verdict"].update(passed=True, score=1.0)
        return lines

    honest = scored(pack_bundle(runs["random"], INFO, tmp_path / "h.tar.gz").read_bytes())
    result = scored(forged(runs["random"], tmp_path, claim_all))
    assert [e.passed for e in result.episodes] == [e.passed for e in honest.episodes]
    assert any("claim another score" in flag for flag in result.flags)


def test_an_edited_reward_does_not_replay(runs, tmp_path):
    def reward(lines):
        lines[0]["steps"][0]["reward"] = 1.0 + lines[0]["steps"][0]["reward"]
        return lines

    episode = scored(forged(runs["random"], tmp_path, reward)).episodes[0]
    assert episode.outcome == "mismatch" and "reward" in episode.reason
    assert not episode.passed and episode.score == 0.0


def test_an_edited_action_does_not_replay(runs, tmp_path):
    def action(lines):
        lines[1]["steps"][0]["action"] = "something the agent never said"
        return lines

    episode = scored(forged(runs["oracle"], tmp_path, action)).episodes[1]
    assert episode.outcome == "mismatch" and "observation" in episode.reason


def test_an_edited_observation_does_not_replay(runs, tmp_path):
    def observation(lines):
        lines[2]["initial_observation"] = "a nicer start"
        return lines

    episode = scored(forged(runs["random"], tmp_path, observation)).episodes[2]
    assert episode.outcome == "mismatch" and "initial observation" in episode.reason


def test_a_record_with_both_ending_flags_replays_as_terminated(runs, tmp_path):
    # Before agentgym's TimeLimit, an episode terminated on the step limit's last step was
    # recorded truncated too (every answer of a single-reply env): still the same ending.
    def both(lines):
        lines[0]["steps"][-1]["truncated"] = True
        return lines

    episode = scored(forged(runs["oracle"], tmp_path, both)).episodes[0]
    assert episode.outcome == "ok" and episode.passed


def test_a_record_that_ends_otherwise_does_not_replay(runs, tmp_path):
    def cut_short(lines):
        lines[0]["steps"][-1].update(terminated=False, truncated=True)
        return lines

    episode = scored(forged(runs["oracle"], tmp_path, cut_short)).episodes[0]
    assert episode.outcome == "mismatch" and "end differs" in episode.reason


def test_a_record_cut_before_the_end_does_not_replay(runs, tmp_path):
    def cut(lines):
        lines[0]["steps"] = lines[0]["steps"][:-1]
        return lines

    episode = scored(forged(runs["oracle"], tmp_path, cut)).episodes[0]
    assert episode.outcome == "mismatch" and "stops before" in episode.reason


def test_steps_after_the_end_do_not_replay(runs, tmp_path):
    def extend(lines):
        lines[0]["steps"].append(dict(lines[0]["steps"][-1]))
        return lines

    episode = scored(forged(runs["oracle"], tmp_path, extend)).episodes[0]
    assert episode.outcome == "mismatch" and "after the episode ended" in episode.reason


def test_a_passed_episode_grafted_from_another_run_does_not_replay(runs, tmp_path):
    """The oracle's record of task A put under the random agent's id for task B."""
    text = (runs["oracle"] / "episodes.jsonl").read_text()
    oracle = [json.loads(line) for line in text.splitlines()]

    def graft(lines):
        task = lines[0]["spec"]["task_id"]
        donor = next(r for r in oracle if r["spec"]["task_id"] != task)
        lines[0] = {**donor, "episode_id": lines[0]["episode_id"], "spec": lines[0]["spec"]}
        return lines

    episode = scored(forged(runs["random"], tmp_path, graft)).episodes[0]
    assert episode.outcome == "mismatch" and not episode.passed


def test_the_oracles_actions_are_flagged_for_review(runs, tmp_path):
    result = scored(pack_bundle(runs["oracle"], INFO, tmp_path / "o.tar.gz").read_bytes())
    assert any("oracle's actions" in flag for flag in result.flags)
    assert all(e.oracle_like == (e.steps >= 2) for e in result.episodes)
    assert any(e.oracle_like for e in result.episodes)


# ----------------------------------------------------------------------------- the plan


def test_a_missing_episode_counts_as_a_failure(runs, tmp_path):
    result = scored(forged(runs["oracle"], tmp_path, lambda lines: lines[1:]))
    assert result.episodes[0].outcome == "missing" and not result.episodes[0].passed
    assert result.missing == 1


def test_too_many_missing_episodes_refuse_the_bundle(runs, tmp_path):
    with pytest.raises(BundleRejected, match=r"cannot be scored.*'missing': 6"):
        scored(forged(runs["oracle"], tmp_path, lambda lines: lines[6:]))


def test_errored_episodes_fail_and_over_the_cap_refuse_the_bundle(runs, tmp_path):
    def error(count):
        def edit(lines):
            for line in lines[:count]:
                line.update(status="errored", error="the env crashed", verdict=None)
            return lines

        return edit

    result = scored(forged(runs["oracle"], tmp_path, error(1)))
    assert result.episodes[0].outcome == "errored" and result.errored == 1
    with pytest.raises(BundleRejected, match="'errored': 3"):
        scored(forged(runs["oracle"], tmp_path / "more", error(3)))


def test_a_duplicated_episode_refuses_the_bundle(runs, tmp_path):
    with pytest.raises(BundleRejected, match="appears twice"):
        scored(forged(runs["random"], tmp_path, lambda lines: [*lines, lines[0]]))


def test_a_seed_not_in_the_plan_refuses_the_bundle(runs, tmp_path):
    def reseed(lines):
        lines[0]["spec"]["seed"] += 1
        return lines

    with pytest.raises(BundleRejected, match="another seed"):
        scored(forged(runs["oracle"], tmp_path, reseed))


def test_an_episode_outside_the_plan_refuses_the_bundle(runs, tmp_path):
    def extra(lines):
        lines[0]["episode_id"] = "games/Maze-v0|test/999|0"
        return lines

    with pytest.raises(BundleRejected, match="not in the benchmark's plan"):
        scored(forged(runs["oracle"], tmp_path, extra))


def test_a_run_of_another_benchmark_refuses_the_bundle(runs, tmp_path):
    def other(manifest):
        manifest["benchmark_hash"] = "0" * 64

    with pytest.raises(BundleRejected, match="different benchmark"):
        scored(forged(runs["oracle"], tmp_path, lambda lines: lines, manifest=other))


# ----------------------------------------------------------------------------- the archive


def test_a_file_edited_after_packing_fails_its_hash(runs, tmp_path):
    files = members_of(pack_bundle(runs["oracle"], INFO, tmp_path / "o.tar.gz").read_bytes())
    files["episodes.jsonl"] = files["episodes.jsonl"].replace(b'"passed": false', b'"passed": true')
    files["submission.json"] = files["submission.json"].replace(b"forger", b"someone")
    with pytest.raises(BundleRejected, match=r"episodes\.jsonl does not match its sha256"):
        read_bundle(archive(list(files.items())))


def test_a_decompression_bomb_stops_at_the_cap():
    bomb = archive([("episodes.jsonl", b"\0" * (8 << 20))])
    assert len(bomb) < 64 << 10  # 8 MiB of zeros packs to a few KiB
    with pytest.raises(BundleRejected, match="unpacks to more than"):
        read_bundle(bomb, BundleLimits(max_unpacked=1 << 20))


def test_an_oversized_upload_is_refused_before_it_is_opened():
    with pytest.raises(BundleRejected, match="limit is 1,000"):
        read_bundle(b"x" * 1001, BundleLimits(max_bytes=1000))


@pytest.mark.parametrize("name", ["../manifest.json", "/etc/passwd", "sub/episodes.jsonl", "extra"])
def test_a_name_outside_the_four_files_is_refused(name):
    with pytest.raises(BundleRejected, match="a bundle holds only"):
        read_bundle(archive([(name, b"{}")]))


def test_a_link_is_refused():
    link = tarfile.TarInfo("manifest.json")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    with pytest.raises(BundleRejected, match="not a regular file"):
        read_bundle(archive([link]))


def test_a_second_copy_of_a_file_is_refused(runs, tmp_path):
    files = members_of(pack_bundle(runs["oracle"], INFO, tmp_path / "o.tar.gz").read_bytes())
    with pytest.raises(BundleRejected, match="twice"):
        read_bundle(archive([*files.items(), ("manifest.json", b"{}")]))


def test_malformed_json_is_refused_with_its_line(runs, tmp_path):
    files = members_of(pack_bundle(runs["oracle"], INFO, tmp_path / "o.tar.gz").read_bytes())
    files["episodes.jsonl"] += b'{"episode_id": \n'
    with pytest.raises(BundleRejected, match=r"episodes.jsonl line 13 is not valid JSON"):
        read_bundle(_repacked(files))


def test_nan_is_not_a_json_number(runs, tmp_path):
    files = members_of(pack_bundle(runs["oracle"], INFO, tmp_path / "o.tar.gz").read_bytes())
    files["episodes.jsonl"] = files["episodes.jsonl"].replace(b'"reward": 1.0', b'"reward": NaN', 1)
    with pytest.raises(BundleRejected, match="NaN is not a JSON number"):
        read_bundle(_repacked(files))


def test_something_that_is_not_an_archive_is_refused():
    with pytest.raises(BundleRejected, match="not a gzipped tar"):
        read_bundle(b"PK\x03\x04 a zip, say")


def test_submission_text_is_checked(runs, tmp_path):
    files = members_of(pack_bundle(runs["oracle"], INFO, tmp_path / "o.tar.gz").read_bytes())
    files["submission.json"] = json.dumps({"agent": "x", "model": "y" * 500}).encode()
    with pytest.raises(BundleRejected, match="model is 500 characters"):
        read_bundle(_repacked(files))
    files["submission.json"] = json.dumps({"agent": "x", "score": 1.0}).encode()
    with pytest.raises(BundleRejected, match="unknown keys"):
        read_bundle(_repacked(files))


def _repacked(files: dict[str, bytes]) -> bytes:
    """``files`` in a bundle whose index matches them (a forger's re-hash)."""
    import hashlib

    index = json.loads(files["bundle.json"])
    index["files"] = {n: hashlib.sha256(files[n]).hexdigest() for n in index["files"]}
    files = {**files, "bundle.json": json.dumps(index).encode()}
    return archive([(name, files[name]) for name in BUNDLE_FILES])


# ------------------------------------------------------------------------ timing-dependent envs


@pytest.fixture
def maze_replays_by_verdict(monkeypatch):
    """Maze declared timing-dependent (``replay: verdict``), as MiniWoB++'s pages are, so the
    tolerant replay is tested without a browser."""
    from agentgym.envs.games.puzzles.maze import MazeEnv
    from agentgym.leaderboard import rescore as module

    monkeypatch.setitem(MazeEnv.metadata, "replay", "verdict")
    module._exact.cache_clear()
    yield
    module._exact.cache_clear()


def test_a_timing_dependent_env_is_scored_by_the_replays_verdict(
    runs, tmp_path, maze_replays_by_verdict
):
    def observation(lines):
        lines[0]["steps"][0]["observation"] = "the page had not finished loading"
        lines[1]["steps"][0]["reward"] = 0.5
        return lines

    result = scored(forged(runs["oracle"], tmp_path, observation))
    first, second = result.episodes[:2]
    assert first.env_id == second.env_id == "games/Maze-v0"
    assert (first.outcome, first.passed) == ("ok", True) and "differed" in first.reason
    assert (second.outcome, second.passed) == ("ok", True)
    assert any("saw other observations" in flag for flag in result.flags)


def test_a_timing_dependent_env_still_needs_the_record_to_end_where_the_replay_does(
    runs, tmp_path, maze_replays_by_verdict
):
    def cut(lines):
        lines[0]["steps"] = lines[0]["steps"][:-1]
        return lines

    episode = scored(forged(runs["oracle"], tmp_path, cut)).episodes[0]
    assert episode.outcome == "mismatch" and not episode.passed
