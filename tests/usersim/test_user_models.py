"""Models that play the user: an agent as a UserModel, played-back users, and the ledger's
user turns (no domain needed)."""

from __future__ import annotations

import asyncio
import threading

import pytest

import agentgym
from agentgym.agents import Agent, AgentReply, FunctionAgent
from agentgym.agents.users import AgentUser, RecordedUser, user_model
from agentgym.errors import InfrastructureError, UsageError
from agentgym.ledger import EpisodeRecord, EpisodeSpec, TokenRecord, UserTurnRecord


class Echo(Agent):
    """Answers with what it was told, tokens included (a stand-in model: what is measured is
    the bridge between a sync env and an async agent, not a model)."""

    def reset(self, context):
        self.context = context

    async def act(self, observation, info):
        await asyncio.sleep(0)
        return AgentReply(
            action=f"heard: {observation}",
            text=f"heard: {observation}",
            tokens=TokenRecord([1, 2], [3], [-0.5]),
            usage={"prompt_tokens": 2, "completion_tokens": 1},
        )


def test_an_agent_plays_the_user_from_another_thread_and_its_turns_are_kept():
    user = user_model(Echo)
    user.start("You are a customer.", seed=7)
    assert user.agent.context.instructions == "You are a customer."
    assert user.agent.context.seed == 7 and user.agent.context.action_style == "raw"
    assert user.reply("hello") == "heard: hello"
    user.steps = 3
    assert user.reply("more") == "heard: more"
    assert [(t.after_step, t.text) for t in user.turns] == [(0, "heard: hello"), (3, "heard: more")]
    assert user.turns[0].tokens.completion_ids == [3]


def test_a_user_on_a_running_loop_is_answered_by_that_loop():
    async def main():
        loop = asyncio.get_running_loop()
        user = AgentUser(FunctionAgent(lambda obs, info: obs.upper()), loop, timeout=30)
        user.start("", seed=None)
        return await asyncio.to_thread(user.reply, "yes please")

    assert asyncio.run(main()) == "YES PLEASE"


def test_a_user_that_does_not_answer_in_time_is_an_infrastructure_error():
    gate = threading.Event()

    class Stuck(Agent):
        async def act(self, observation, info):
            while not gate.is_set():
                await asyncio.sleep(0.01)
            return "late"

    user = user_model(Stuck)
    user.timeout = 0.2
    user.start("", seed=0)
    with pytest.raises(InfrastructureError, match=r"took over 0\.2 s"):
        user.reply("hello?")
    gate.set()


def test_a_recorded_user_plays_its_turns_back_and_refuses_one_more():
    user = RecordedUser(["hi", "yes"])
    user.start("ignored", seed=1)
    assert [user.reply("a"), user.reply("b")] == ["hi", "yes"]
    with pytest.raises(UsageError, match="holds 2 user turns"):
        user.reply("c")


def test_user_turns_round_trip_through_the_ledger_and_are_left_out_when_absent():
    spec = EpisodeSpec(env_id="usersim/Retail-v2", task_id="test/easy/0", seed=1, agent="a")
    plain = EpisodeRecord(spec=spec, initial_observation="User: hi")
    data = plain.to_dict()
    assert "user_turns" not in data and "user" not in data["spec"]
    spec.user = "smollm2"
    turn = UserTurnRecord(0, "hi", TokenRecord([1], [2, 3], [-0.1, -0.2]), {"prompt_tokens": 1})
    record = EpisodeRecord(spec=spec, initial_observation="User: hi", user_turns=[turn])
    back = EpisodeRecord.from_dict(record.to_dict())
    assert back.spec.user == "smollm2"
    assert back.user_turns == [turn]


class Scripted(Agent):
    """Answers from a list, recording what it was told (a stand-in model: what is measured
    is how the envs drive a model that plays the user)."""

    def __init__(self, replies):
        self.replies, self.heard = list(replies), []

    def reset(self, context):
        self.context = context

    async def act(self, observation, info):
        self.heard.append(observation)
        return self.replies.pop(0) if self.replies else f"You said: {observation}"


def test_a_model_plays_the_customer_from_the_greeting_on():
    agent = Scripted([])
    env = agentgym.make("usersim/Retail-v2", user=user_model(lambda: agent))
    observation, _ = env.reset(seed=0, options={"task_id": "test/easy/0"})
    assert observation == "User: You said: Hi! How can I help you today?"
    persona = env.unwrapped.task.draft.scenario.persona
    assert agent.context.instructions.startswith(persona)
    assert "###STOP###" in agent.context.instructions
    assert env.step("Hello there")[0] == "User: You said: Hello there"
    with pytest.raises(UsageError, match="snapshots need the scripted user"):
        env.unwrapped.get_state()
    env.close()


def test_a_model_playing_a_dual_control_user_calls_its_phone_tools_first():
    agent = Scripted(["Hi, my data is broken.", '{"name": "check_status_bar", "arguments": {}}'])
    env = agentgym.make("usersim/Telecom-v2", user=user_model(lambda: agent))
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    assert "check_status_bar" in agent.context.instructions
    observation = env.step("Please check your status bar.")[0]
    # The tool's result went back to the model, whose next message reached the agent.
    assert agent.heard[-1].startswith("{") and "signal" in agent.heard[-1]
    assert observation == f"User: You said: {agent.heard[-1]}"
    roles = [role for role, _ in env.unwrapped._world.transcript]
    assert roles.count("user_tool_call") == 1
    env.close()


def test_a_model_user_call_in_a_fence_with_any_lowercase_tag_is_a_call():
    fenced = '```python\n{"name": "check_status_bar", "arguments": {}}\n```'
    agent = Scripted(["Hi, my data is broken.", fenced])
    env = agentgym.make("usersim/Telecom-v2", user=user_model(lambda: agent))
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    env.step("Please check your status bar.")
    roles = [role for role, _ in env.unwrapped._world.transcript]
    assert roles.count("user_tool_call") == 1
    env.close()


def test_a_model_plays_the_patient_and_the_questions_count_as_before():
    agent = Scripted(["A little, yes."])
    env = agentgym.make("usersim/Diagnosis-v0", user=user_model(lambda: agent))
    env.reset(seed=0, options={"task_id": "test/easy/0"})
    patient = env.unwrapped.task.patient
    assert agent.context.instructions.startswith(f"You are {patient.name}")
    observation, _, _, _, info = env.step("Have you had a fever?")
    assert observation.startswith(f'{patient.name.split()[0]}: "A little, yes."')
    assert info["verdict"].components["questions"] == 1.0
    env.close()


def test_an_env_without_a_simulated_user_refuses_one_for_the_evaluator(tmp_path):
    from agentgym.eval.plan import Benchmark
    from agentgym.eval.run import evaluate

    suite = Benchmark.from_dict(
        {"name": "no-user", "envs": [{"id": "games/Maze-v0", "split": "test", "tasks": 1}]}
    )
    with pytest.raises(UsageError, match="games/Maze-v0 has no simulated user"):
        evaluate(suite, "random", tmp_path / "run", user="random")
    assert not (tmp_path / "run").exists()


def test_the_evaluator_records_the_users_turns_and_a_replay_plays_them_back(tmp_path):
    from agentgym.eval.plan import Benchmark
    from agentgym.eval.run import evaluate
    from agentgym.leaderboard.rescore import replay_episode

    suite = Benchmark.from_dict(
        {
            "name": "stand-in-user",
            "seed": 1,
            "envs": [{"id": "usersim/Retail-v2", "split": "test", "tasks": 2, "max_steps": 5}],
        }
    )
    result = evaluate(suite, "oracle", tmp_path, user=lambda: Scripted([]))
    for plan, record in zip(suite.plan(), result.records, strict=True):
        assert record.status == "truncated" and record.spec.user
        said = [step.action for step in record.steps if isinstance(step.action, str)]
        assert [t.text for t in record.user_turns[1:]] == [f"You said: {s}" for s in said]
        spoken = [i + 1 for i, step in enumerate(record.steps) if isinstance(step.action, str)]
        assert [t.after_step for t in record.user_turns] == [0, *spoken]
        assert not isinstance(replay_episode(plan, record), str)
        # A record whose user said something else does not replay.
        record.user_turns[-1].text = "something else"
        assert isinstance(replay_episode(plan, record), str)
