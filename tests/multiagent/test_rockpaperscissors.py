"""Rock-paper-scissors: simultaneous rounds, void throws, match verdicts."""

import agentgym


def test_a_round_is_resolved_from_both_throws():
    env = agentgym.make_multi("multiagent/RockPaperScissors-v0")
    env.reset(seed=0, options={"task_id": "dev/best_of_3/0"})
    _, rewards, terminations, _, _ = env.step({"player_0": "rock", "player_1": "scissors"})
    assert rewards == {"player_0": 1.0, "player_1": -1.0}
    assert terminations == {"player_0": False, "player_1": False}


def test_an_unreadable_throw_is_void_and_loses_the_round():
    env = agentgym.make_multi("multiagent/RockPaperScissors-v0")
    env.reset(seed=0, options={"task_id": "dev/best_of_3/0"})
    observations, rewards, _, _, infos = env.step({"player_0": "lizard", "player_1": "paper"})
    assert infos["player_0"]["invalid_action"] and not infos["player_1"]["invalid_action"]
    assert rewards["player_1"] == 1.0
    assert observations["player_0"].startswith("Invalid action: could not read one throw")


def test_a_majority_ends_the_match_with_verdicts():
    env = agentgym.make_multi("multiagent/RockPaperScissors-v0")
    env.reset(seed=0, options={"task_id": "dev/best_of_3/0"})
    env.step({"player_0": "paper", "player_1": "rock"})
    *_, terminations, _, infos = env.step({"player_0": "p", "player_1": "r"})
    assert all(terminations.values()) and env.agents == []
    assert infos["player_0"]["verdict"].passed and infos["player_1"]["verdict"].score == 0.0


def test_the_oracle_exploits_a_predictable_opponent():
    env = agentgym.make_multi("multiagent/RockPaperScissors-v0")
    env.reset(seed=0, options={"task_id": "dev/best_of_9/0"})
    infos = {}
    while env.agents:
        *_, infos = env.step({"player_0": env.oracle_action("player_0"), "player_1": "rock"})
    assert infos["player_0"]["verdict"].passed
