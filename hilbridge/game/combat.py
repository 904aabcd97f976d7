"""Who decides a battle: dice, the players typing what the console shows, or a random stand-in.

Every resolver returns a JSON dict; the engine records it in the action log as
``Action("combat_result", CHANCE, result)`` and the ruleset validates it when it is applied, so a
mistyped manual result is rejected with the rule it breaks. The console bridge (a later issue) will
be one more resolver reading the result off the bus.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

from hilbridge.game.core import CombatRequest, Ruleset


class CombatResolver(Protocol):
    def resolve(self, request: CombatRequest, rng: random.Random) -> dict[str, Any]:
        """The result of `request`; `rng` is the engine's seeded RNG for this step."""
        ...


class DiceResolver:
    """Rolls six-sided dice: ``request.params["dice"]`` maps each side to its number of dice.

    The result is ``{"rolls": {side: [die, ...]}}``; the ruleset turns rolls into losses.
    """

    sides = 6

    def resolve(self, request: CombatRequest, rng: random.Random) -> dict[str, Any]:
        dice: dict[str, int] = dict(request.params.get("dice", {}))
        return {
            "rolls": {
                side: [rng.randint(1, self.sides) for _ in range(count)] for side, count in dice.items()
            }
        }


class ManualResolver:
    """Asks a person: `prompt` gets the request and returns the result they typed in."""

    def __init__(self, prompt: Callable[[CombatRequest], dict[str, Any]]):
        self.prompt = prompt

    def resolve(self, request: CombatRequest, rng: random.Random) -> dict[str, Any]:
        return self.prompt(request)


class RandomResolver:
    """Draws a plausible result from the ruleset (for playouts, tests and quick games)."""

    def __init__(self, ruleset: Ruleset):
        self.ruleset = ruleset

    def resolve(self, request: CombatRequest, rng: random.Random) -> dict[str, Any]:
        return self.ruleset.random_combat_result(request, rng)
