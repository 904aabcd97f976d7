"""Random playouts per second for each board-game ruleset.

The reference, measured in the same run on the same machine, is the naive way to keep an
immutable game state: a JSON round trip of the ruleset's state per move. The ratio printed is
(time per move of the ruleset) / (time per move of that reference); below 1 means a whole random
move (legal-move generation, choice, apply) costs less than copying the state through JSON once.

    python benchmarks/game_playouts.py [--games 300] [--players 4]
"""

from __future__ import annotations

import argparse
import json
import time

from hilbridge.errors import HilbridgeError
from hilbridge.game import get_ruleset
from hilbridge.game.conformance import random_playout
from hilbridge.game.registry import RULESET_MODULES

# Options per ruleset that keep a random playout finite (a turn cap); add yours here.
PLAYOUT_OPTIONS: dict[str, dict] = {
    "conquest": {"max_rounds": 6},
    "supremacy": {"turn_cap": 2},
}
MAX_STEPS = 20_000


def reference_seconds_per_move(state: dict, moves: int) -> float:
    start = time.perf_counter()
    for _ in range(moves):
        json.loads(json.dumps(state))
    return (time.perf_counter() - start) / moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--players", type=int, default=4)
    arguments = parser.parse_args()
    players = [f"p{index}" for index in range(arguments.players)]
    for name in RULESET_MODULES:
        try:
            ruleset = get_ruleset(name)
            setup = ruleset.default_setup(players, PLAYOUT_OPTIONS.get(name, {}))
        except HilbridgeError as error:
            print(f"{name}: skipped ({error.message})")
            continue
        steps = finished = 0
        start = time.perf_counter()
        for seed in range(arguments.games):
            result = random_playout(ruleset, setup, seed, max_steps=MAX_STEPS, check=False)
            steps += result.steps
            finished += result.terminal
        elapsed = time.perf_counter() - start
        reference = reference_seconds_per_move(ruleset.initial_state(setup, 0), min(steps, 20_000))
        ratio = (elapsed / steps) / reference
        print(
            f"{name}: {arguments.games / elapsed:8.1f} playouts/s, {steps / elapsed:9.0f} moves/s, "
            f"{steps / arguments.games:6.1f} moves/game, {finished}/{arguments.games} finished, "
            f"move/JSON-copy ratio {ratio:.2f}"
        )


if __name__ == "__main__":
    main()
