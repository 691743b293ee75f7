"""SPIRAL's three TextArena games end to end through the adapter with SmolLM2 in every seat.

The issue's "Done means": each game is played once with SmolLM2-135M-Instruct (the embedded
model, greedy, ``--max-new-tokens`` per move) prompted with each seat's own observation,
through :func:`agentgym.multiagent.play_game`; it prints each game's moves, outcome, invalid
moves and time. The suite plays the same three games with the product's SmolLM2 agent (8 new
tokens a move; ``test_spirals_games_play_to_the_end_with_smollm2_in_every_seat`` in
tests/multiagent/test_textarena.py); this script is for longer replies and the transcripts.
Figures: docs/envs/multiagent.md, "TextArena".

On a loaded CPU give torch one thread (``OMP_NUM_THREADS=1``, as the suite's workers have):
its default of one per core busy-waits against the other processes and made a move about
eight times slower here.

    OMP_NUM_THREADS=1 .venv/bin/python tests/perf/textarena_smollm2.py [--device cuda] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import agentgym
from agentgym.envs.multiagent.textarena_adapter import observation_seat
from agentgym.multiagent import play_game

GAMES = ("textarena/TicTacToe-v0", "textarena/KuhnPoker-v0", "textarena/SimpleNegotiation-v0")


def smollm2(device: str, max_new_tokens: int) -> Callable[[str], str]:
    """``reply(observation) -> text``: SmolLM2, greedy."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentgym.backends.smollm2 import model_dir

    directory = model_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    model = AutoModelForCausalLM.from_pretrained(str(directory), dtype=torch.float32)
    model = model.to(device).eval()

    def reply(observation: str) -> str:
        prompt = tokenizer.apply_chat_template(
            [{"role": "user", "content": observation}],
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        ).to(device)
        with torch.no_grad():
            out = model.generate(
                **prompt,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=tokenizer.eos_token_id,
            )
        completion = out[0, prompt["input_ids"].shape[1] :]
        return str(tokenizer.decode(completion, skip_special_tokens=True))

    return reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--max-turns", type=int, default=40)
    parser.add_argument("--games", nargs="*", default=list(GAMES))
    args = parser.parse_args()
    started = time.perf_counter()
    seat = observation_seat(smollm2(args.device, args.max_new_tokens))
    print(f"model loaded in {time.perf_counter() - started:.1f} s on {args.device}")
    for env_id in args.games:
        env = agentgym.make_multi(env_id)
        began = time.perf_counter()
        result = play_game(
            env, dict.fromkeys(env.possible_agents, seat), args.seed, max_turns=args.max_turns
        )
        seconds = time.perf_counter() - began
        assert result.finished, f"{env_id}: unfinished after {len(result.moves)} moves"
        print(
            f"{env_id}: {len(result.moves)} moves in {seconds:.1f} s "
            f"({seconds / max(len(result.moves), 1):.2f} s a move); outcome {result.outcome}; "
            f"invalid moves {result.invalid_actions}"
        )
        for turn in result.moves:
            for agent, move in turn.items():
                print(f"    {agent}: {move!r:.70}")
        env.close()


if __name__ == "__main__":
    main()
