"""Supremacy (basic game, Rules of Play v3.0): board data, pure rule functions and the `Ruleset`.

The rule register with every rule id, its status and source is docs/rules/supremacy.md.
"""

from hilbridge.game.supremacy.ruleset import RULESET, Supremacy

__all__ = ["RULESET", "Supremacy"]
