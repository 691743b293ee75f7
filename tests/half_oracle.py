"""A test agent between the oracle and random: the oracle on episodes with an even seed,
random moves on the others. Its runs have a known, middling rate, so a printer or a board
that confuses two figures (the mean of env means and the pooled rate) shows it."""

from __future__ import annotations

from agentgym.agents import OracleAgent, RandomAgent


class HalfOracle(OracleAgent):
    """The oracle on episodes with an even seed, random moves on the others."""

    name = "half-oracle"

    def reset(self, context):
        super().reset(context)
        self._random = RandomAgent()
        self._random.reset(context)
        self._solve = (context.seed or 0) % 2 == 0

    async def act(self, observation, info):
        if self._solve:
            return await super().act(observation, info)
        return await self._random.act(observation, info)
