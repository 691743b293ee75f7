"""The moves of a game's ``random`` reference player, for tests that its stream is its own."""

import agentgym


def random_player_moves(env_id, reply, *, seed=7, draw_first=False, task_id=None, turns=6):
    """The ``random`` player's first ``turns`` moves, every one of them answered by ``reply``
    (a move of the other seat); ``draw_first`` draws from the env's generator after the reset,
    which must change nothing (the player draws from its seed, the reset seed and the seat)."""
    env = agentgym.make_multi(env_id)
    env.reset(seed=seed, options={"task_id": task_id} if task_id else None)
    if draw_first:
        env.unwrapped.np_random.integers(1000, size=5)
    bot = env.unwrapped.reference_players()["random"]()
    made = []
    for _ in range(turns):
        made.append(bot.act(env, env.agent_selection))
        env.step(reply)
    env.close()
    return made
