"""Shared by the bridge tests: an independent model of the combat cartridge's battle rule (written
from docs/bridge.md, not from the cartridge's code), and a players' side that answers from a script."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hilbridge.bridge.resolver import CORRECTED, ManualEntry
from hilbridge.game.core import CombatRequest

BEATS = {"PLANE": "TANK", "TANK": "SUB", "SUB": "PLANE"}  # docs/bridge.md: the weapon triangle
OTHER = {"attacker": "defender", "defender": "attacker"}


def model_battle(units: dict[str, int], weapons: dict[str, str]) -> tuple[str, dict[str, int]]:
    """docs/bridge.md, "The battle": the winner and the units left."""
    left = dict(units)
    if left["attacker"] == 0:
        return "defender", left
    if left["defender"] == 0:
        return "attacker", left
    if BEATS[weapons["defender"]] == weapons["attacker"]:
        strikes = [("defender", 300), ("attacker", 100)]
    elif BEATS[weapons["attacker"]] == weapons["defender"]:
        strikes = [("attacker", 300), ("defender", 100)]
    else:
        strikes = [("attacker", 200), ("defender", 200)]
    for _round in range(9):
        for striker, hit in strikes:
            target = OTHER[striker]
            left[target] = max(0, left[target] - hit)
            if left[target] == 0:
                return striker, left
    return ("attacker" if left["attacker"] > left["defender"] else "defender"), left


class ScriptedUI:
    """Confirms (or not), and types manual results from `manual`; keeps every message."""

    def __init__(
        self, confirm: bool = True, manual: Callable[[CombatRequest, str], dict[str, Any]] | None = None
    ):
        self.answer = confirm
        self.typed = manual
        self.messages: list[str] = []
        self.reasons: list[str] = []

    def tell(self, request: CombatRequest, text: str) -> None:
        self.messages.append(text)

    def confirm(self, request: CombatRequest, result: Mapping[str, Any], text: str) -> str | None:
        self.messages.append(text)
        return None if self.answer else CORRECTED

    def manual(self, request: CombatRequest, reason: str) -> ManualEntry:
        self.reasons.append(reason)
        if self.typed is None:
            raise AssertionError(f"unexpected manual entry: {reason}")
        return ManualEntry(self.typed(request, reason))
