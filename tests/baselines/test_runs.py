"""A run's life: the command line, checkpoints an evaluation can load, resume, LoRA."""

from __future__ import annotations

import json

import pytest
import torch
from training import FAST

from agentgym.cli import main


def _options(**values: object) -> list[str]:
    argv = []
    for name, value in values.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    return argv


def test_train_then_evaluate_the_checkpoint(tmp_path, capsys):
    out = tmp_path / "run"
    # The command line's life, not learning: one group of 2 episodes an iteration.
    fast = {**{k: v for k, v in FAST.items() if k != "env_id"}, "groups": 1, "group_size": 2}
    command = ["train", "grpo", "--env", "games/FrozenLake-v0", "--model", "tiny"]
    status = main([*command, "--iterations", "2", "--out", str(out), *_options(**fast)])
    assert status == 0
    assert "done: 2 iterations" in capsys.readouterr().out
    rows = (out / "metrics.csv").read_text().splitlines()
    assert rows[0].startswith("iteration,rollout/episodes,rollout/dropped_episodes")
    assert len(rows) == 3
    assert list(out.glob("events.out.tfevents.*")), "no TensorBoard events"
    policy = out / "checkpoints" / "iter-1" / "policy"
    saved = json.loads((policy / "agentgym-prompt.json").read_text())
    assert saved["history_window"] == 1
    assert saved["sampling"] == {"temperature": 1.0, "max_tokens": fast.get("max_tokens", 16)}

    # `hf:RUN_DIR` evaluates the latest checkpoint with the prompt it was trained with.
    runs = tmp_path / "eval"
    command = ["eval", "--env", "games/FrozenLake-v0", "--tasks", "2", "--max-steps", "2"]
    status = main([*command, "--agent", f"hf:{out}", "--out", str(runs)])
    assert status == 0, capsys.readouterr().err
    records = [json.loads(line) for line in next(runs.rglob("episodes.jsonl")).open()]
    assert len(records) == 2 and all(r["status"] != "errored" for r in records)
    first = records[0]["steps"][0]
    assert first["tokens"]["completion_ids"], "the checkpoint's episodes carry their tokens"
    # ... and its sampling where the run sets none (the tokens cap is the trained one).
    manifest = json.loads(next(runs.rglob("manifest.json")).read_text())
    assert manifest["agent_prompt"]["default_sampling"] == saved["sampling"]
    assert all(
        len(s["tokens"]["completion_ids"]) <= saved["sampling"]["max_tokens"]
        for r in records
        for s in r["steps"]
    )


def test_the_old_name_of_iterations_still_works_and_says_its_new_name(capsys):
    from agentgym.baselines.cli import parse_args

    assert parse_args("grpo", ["--steps", "7"]).iterations == 7
    assert "--steps is now --iterations" in capsys.readouterr().err
    assert parse_args("grpo", ["--iterations", "8"]).iterations == 8
    assert capsys.readouterr().err == ""


def test_bad_options_name_the_value(capsys):
    assert main(["train", "grpo", "--clip-high", "abc"]) == 2
    assert "--clip-high takes a float, got 'abc'" in capsys.readouterr().err
    assert main(["train", "sarsa"]) == 2
    assert "unknown algorithm 'sarsa'" in capsys.readouterr().err
    assert main(["train", "grpo", "--aggregation", "mean"]) == 2
    assert "--aggregation 'mean': use one of" in capsys.readouterr().err
    assert main(["train", "rloo", "--group-size", "0"]) == 2
    assert "--group-size must be a positive int, got 0" in capsys.readouterr().err
    assert main(["train", "ppo", "--clip-ratio-c", "0.5"]) == 2
    assert "--clip-ratio-c must be > 1 (dual-clip PPO; none: off), got 0.5" in (
        capsys.readouterr().err
    )


def test_a_training_run_is_a_run_directory_with_its_episodes(tmp_path, capsys):
    import dataclasses

    from training import fast_args

    from agentgym.baselines import grpo
    from agentgym.ledger import read_episodes

    small = {"model": "tiny", "groups": 1, "group_size": 2}
    grpo.train(fast_args("grpo", tmp_path, iterations=2, **small))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["kind"] == "training" and manifest["agent"] == "grpo:tiny"
    records = list(read_episodes(tmp_path / "episodes.jsonl"))
    assert [r.spec.iteration for r in records] == [0, 0, 1, 1]
    assert all(r.steps and r.steps[0].tokens for r in records), "tokens are in the ledger"

    # A third iteration that was played and recorded, then interrupted before its checkpoint:
    # the resume plays it again, and the ledger holds it once.
    with open(tmp_path / "episodes.jsonl", "a") as file:
        for record in records[2:]:
            spec = dataclasses.replace(record.spec, iteration=2)
            file.write(dataclasses.replace(record, spec=spec).to_line() + "\n")
    grpo.train(fast_args("grpo", tmp_path, iterations=3, resume=True, **small))
    records = list(read_episodes(tmp_path / "episodes.jsonl"))
    assert [r.spec.iteration for r in records] == [0, 0, 1, 1, 2, 2]
    assert len({r.spec.agent for r in records}) == 1

    capsys.readouterr()
    assert main(["report", str(tmp_path), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "training curve" in out
    curve = out.split("training curve")[1].splitlines()[2:]
    assert [line.split()[:2] for line in curve[:3]] == [["0", "2"], ["1", "2"], ["2", "2"]]
    assert main(["report", str(tmp_path), "--html", str(tmp_path / "report.html")]) == 0
    assert "Training: success by iteration" in (tmp_path / "report.html").read_text()


def test_an_existing_run_is_not_overwritten(tmp_path):
    from training import fast_args

    from agentgym.baselines import grpo
    from agentgym.errors import UsageError

    grpo.train(fast_args("grpo", tmp_path, model="tiny", iterations=1, groups=1, group_size=2))
    with pytest.raises(UsageError, match="already holds a run; pass --resume"):
        grpo.train(fast_args("grpo", tmp_path, model="tiny", iterations=1))
    with pytest.raises(UsageError, match="arguments differ from the run's"):
        grpo.train(fast_args("grpo", tmp_path, model="tiny", iterations=2, resume=True))
    same = {"model": "tiny", "groups": 1, "group_size": 2, "resume": True}
    with pytest.raises(UsageError, match="has done 1 iterations already; ask for more"):
        grpo.train(fast_args("grpo", tmp_path, iterations=1, **same))


def test_a_run_made_before_an_option_existed_still_resumes(tmp_path):
    import json

    from training import fast_args

    from agentgym.baselines import grpo

    small = {"model": "tiny", "groups": 1, "group_size": 2}
    grpo.train(fast_args("grpo", tmp_path, iterations=1, **small))
    saved = json.loads((tmp_path / "args.json").read_text())
    del saved["vllm_gpu_memory"]  # as an older agentgym wrote it
    (tmp_path / "args.json").write_text(json.dumps(saved))
    run = grpo.train(fast_args("grpo", tmp_path, iterations=2, resume=True, **small))
    assert [r["iteration"] for r in run.metrics()] == [0, 1]


def _weights(run_dir) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    latest = (run_dir / "checkpoints" / "latest").read_text().strip()
    return load_file(str(run_dir / "checkpoints" / latest / "policy" / "model.safetensors"))


@pytest.mark.slow
def test_resume_reproduces_the_continuation(tmp_path, warm_policy):
    from training import fast_args

    from agentgym.baselines import grpo

    # One group of 8 an iteration (what resume restores is the same whatever the batch; that
    # the updates it must reproduce are real is asserted): 4 straight, 2 then resumed to 4.
    common = {"model": str(warm_policy), "groups": 1, "group_size": 8}
    straight = grpo.train(fast_args("grpo", tmp_path / "a", iterations=4, **common))
    grpo.train(fast_args("grpo", tmp_path / "b", iterations=2, **common))
    resumed = grpo.train(fast_args("grpo", tmp_path / "b", iterations=4, resume=True, **common))

    a, b = straight.metrics(), resumed.metrics()
    assert [r["iteration"] for r in b] == [0, 1, 2, 3]
    assert all(r["train/advantage_std"] > 0 and r["train/grad_norm"] > 0 for r in a), a
    for key in ("rollout/success_rate", "rollout/completion_tokens", "train/samples"):
        assert [r[key] for r in a] == [r[key] for r in b], key
    assert [r["train/loss"] for r in a] == pytest.approx([r["train/loss"] for r in b], abs=1e-5)
    wa, wb = _weights(tmp_path / "a"), _weights(tmp_path / "b")
    assert wa.keys() == wb.keys()
    for name in wa:
        torch.testing.assert_close(wa[name], wb[name], atol=1e-5, rtol=0)


def test_lora_trains_only_the_adapters_and_saves_a_plain_model(tmp_path):
    from training import fast_args
    from transformers import AutoModelForCausalLM

    from agentgym.baselines import expert_iteration
    from agentgym.baselines.policy import load_policy

    # Supervised steps on oracle demonstrations: a gradient every step, whatever the reward.
    args = fast_args(
        "expert_iteration",
        tmp_path,
        model="tiny",
        demos="oracle",
        keep="all",
        lora_rank=4,
        iterations=1,
        groups=2,
        group_size=2,
    )
    before = load_policy("tiny", device="cpu", seed=args.seed).model.state_dict()
    run = expert_iteration.train(args)
    saved = AutoModelForCausalLM.from_pretrained(str(run.latest_checkpoint() / "policy"))
    after = saved.state_dict()
    assert not any("lora" in name for name in after), "adapters must be merged on save"
    changed = [n for n in before if not torch.equal(before[n], after[n])]
    # Only weights with adapters moved (the embedding table has none: it is not a Linear).
    assert changed and all("proj" in n for n in changed)
