"""Conquest of the World (Odyssey² Master Strategy Series): board data and rules 19–22."""

from hilbridge.game.conquest.rules import ConquestRuleset

RULESET = ConquestRuleset()

__all__ = ["RULESET", "ConquestRuleset"]
