"""Board-game engine: rulesets (Conquest of the World, Supremacy) over a shared core.

`core` holds the rules-side API (`Ruleset`, `Action`, chance nodes, events), `session` the game in
progress (log, undo, views, saves), `combat` the battle resolvers, `registry` the table of games,
and `conformance` the checks every ruleset must pass (random playouts, save/load, undo, views).
"""

from hilbridge.game.combat import CombatResolver, DiceResolver, ManualResolver, RandomResolver
from hilbridge.game.core import (
    CHANCE,
    Action,
    ChanceNode,
    CombatRequest,
    IllegalAction,
    Ruleset,
    State,
    event,
)
from hilbridge.game.registry import RULESET_MODULES, get_ruleset, register
from hilbridge.game.session import Game, SaveFileError

__all__ = [
    "CHANCE",
    "RULESET_MODULES",
    "Action",
    "ChanceNode",
    "CombatRequest",
    "CombatResolver",
    "DiceResolver",
    "Game",
    "IllegalAction",
    "ManualResolver",
    "RandomResolver",
    "Ruleset",
    "SaveFileError",
    "State",
    "event",
    "get_ruleset",
    "register",
]
