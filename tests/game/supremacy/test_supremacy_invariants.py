"""check_invariants, the law the random playouts hold every move to: each broken position names its law."""

from __future__ import annotations

import copy

import pytest
from test_supremacy_rules import start

from hilbridge.game import Action
from hilbridge.game.supremacy import Supremacy

R = Supremacy()
US, CSA = "Western U.S.A.", "Peru"  # one home territory each of ann (USA) and bob (CSA)


def _set(state: dict, path: tuple, value: object) -> None:
    *keys, last = path
    for key in keys:
        state = state[key]
    state[last] = value


def _bank_pays(state: dict, player: str, cash: int) -> None:
    """Give `player` this much cash, the bank paying the difference (money stays conserved)."""
    state["bank"] -= cash - state["cash"][player]
    state["cash"][player] = cash


def _stock(state: dict, player: str, item: str, units: int) -> None:
    """Give `player` this many `item`, the bank's stock paying the difference."""
    state["stock_bank"][item] -= units - state["supplies"][player][item]
    state["supplies"][player][item] = units


def _units(state: dict, zone: str, forces: dict) -> None:
    state["units"] = {**state["units"], zone: forces}


@pytest.mark.parametrize(
    ("change", "action", "problem"),
    [
        (
            lambda s: s["cash"].update(ann=s["cash"]["ann"] + 1),
            None,
            "money created or lost outside the bank",
        ),
        (lambda s: _stock(s, "bob", "oil", -1), None, "oil out of range"),
        (lambda s: _stock(s, "ann", "nuke", s["options"]["weapon_cap"] + 1), None, "nuke out of range"),
        (
            lambda s: _set(s, ("supplies", "ann", "grain"), 0),
            None,
            "supplies created or lost outside the bank",
        ),
        (lambda s: _bank_pays(s, "bob", -1), None, "negative cash"),
        (lambda s: s.update(clouds=[US]), None, f"units on nuked {US}"),
        (lambda s: _units(s, US, {"ann": [1, 0], "bob": [1, 0]}), None, f"{US} held by several players"),
        (lambda s: _units(s, US, {"ann": [0, 0]}), None, f"bad force {US} ann"),
        (lambda s: _units(s, US, {"ann": [2, -1]}), None, f"bad force {US} ann"),
        (lambda s: _units(s, US, {"ann": [1, 1]}), None, f"navy on land or armies adrift: {US}"),
        (lambda s: _units(s, "Lima Bay", {"bob": [4, 1]}), None, "navy on land or armies adrift: Lima Bay"),
        (lambda s: s["alive"].update(bob=False), None, "eliminated bob still has units"),
        (
            lambda s: (
                s["alive"].update(bob=False)
                or s.update(units={z: f for z, f in s["units"].items() if "ann" in f})
            ),
            None,
            "card of a dead player",
        ),
        (
            lambda s: None,
            Action("move", "ann", {"from": US, "to": CSA, "units": 1, "kind": "army"}),
            "not along",
        ),
        (
            lambda s: None,
            Action("attack", "ann", {"from": US, "to": CSA, "units": 1}),
            "attack not along the map",
        ),
        (
            lambda s: None,
            Action("airlift", "ann", {"from": US, "to": CSA, "units": 1}),
            "airlift to a zone not held",
        ),
    ],
)
def test_check_invariants_names_each_broken_law(change, action, problem):
    before = start({"ann": "USA", "bob": "CSA"})
    R.check_invariants(before, None, before)
    after = copy.deepcopy(before)
    change(after)
    with pytest.raises(AssertionError, match=problem):
        R.check_invariants(before, action, after)
