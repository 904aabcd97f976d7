"""Every transfer of cards, money and units in Stage 4's occupation cases, one test per clause.

Written from the seed's battle drill, Step D "Occupying a Captured Territory or Sea": the captured
zone's resource cards go to whoever occupies it, in each of the three outcomes (only the defender
destroyed, only the attacker destroyed, mutual destruction). Rule ids as in docs/rules/supremacy.md.
"""

from __future__ import annotations

import pickle

from hilbridge.game import CHANCE, Action
from hilbridge.game.supremacy import Supremacy

R = Supremacy()


def position() -> dict:
    """ann (USA) and bob (CSA) after setup, Stage 4 of cycle 2, ann to attack."""
    state = R.initial_state(R.default_setup(["ann", "bob"]), 0)
    state.update(active=["ann", "bob"], turn="ann")
    for player, code in (("ann", "USA"), ("bob", "CSA")):
        state = R.apply(state, Action("choose", player, {"power": code}))
    state = pickle.loads(pickle.dumps(state))
    state.update(phase="attack", turn="ann", stage=4, sequence=["ann", "bob"], active=["ann", "bob"], cycle=2)
    state["rotation_player"] = "ann"
    return state


def place(state: dict, zone: str, player: str, armies: int) -> None:
    state["units"].setdefault(zone, {})[player] = [armies, 0]
    if not armies:
        del state["units"][zone][player]
        if not state["units"][zone]:
            del state["units"][zone]


def act(state: dict, player: str, kind: str, /, **params) -> dict:
    return R.apply(state, Action(kind, player, params))


def move(origin: str, target: str, units: int = 1) -> dict:
    return {"from": origin, "to": target, "units": units, "kind": "army"}


def roll(state: dict, **rolls: list[int]) -> dict:
    return R.apply(state, Action("combat_result", CHANCE, {"rolls": rolls}))


def held(state: dict, zone: str) -> dict[str, str | None]:
    return {R.board.cards[c].name: state["cards"].get(c) for c in R.board.cards_in(zone)}


def test_S_4_C_conv_D_only_the_attacker_destroyed_defender_takes_the_attackers_cards_on_occupying():
    """Step D, "Only the Attacker is Destroyed": the defender occupies the attacker's front zone,
    "and then takes any of the attacker's resource cards belonging to the captured zone"."""
    state = position()
    place(state, "Western U.S.A.", "ann", 1)
    place(state, "Central America", "bob", 3)
    state = act(state, "ann", "attack", **{"from": "Western U.S.A.", "to": "Central America", "units": 1})
    state = roll(state, attacker=[1], defender=[6, 6, 1])
    assert state["units"].get("Western U.S.A.") is None
    assert (state["phase"], state["turn"], state["battle"]["occupy"]) == ("occupy", "bob", ["Western U.S.A."])
    assert held(state, "Western U.S.A.") == {"Clark Oil Co.": "ann"}  # not before he moves in
    state = act(state, "bob", "occupy", **move("Central America", "Western U.S.A."))
    assert held(state, "Western U.S.A.") == {"Clark Oil Co.": "bob"}
    captured = [e for e in state["events"] if e["kind"] == "card_captured"]
    assert [(e["by"], e["source"]) for e in captured] == [("bob", "ann")]


def test_S_4_C_conv_D_only_the_attacker_destroyed_no_occupation_no_cards():
    """Step D: the defender "may" occupy; if he ends the occupation, the cards stay where they are."""
    state = position()
    place(state, "Western U.S.A.", "ann", 1)
    place(state, "Central America", "bob", 3)
    state = act(state, "ann", "attack", **{"from": "Western U.S.A.", "to": "Central America", "units": 1})
    state = act(roll(state, attacker=[1], defender=[6, 6, 1]), "bob", "end_occupy")
    assert held(state, "Western U.S.A.") == {"Clark Oil Co.": "ann"}


def test_S_4_C_conv_D_mutual_destruction_attacker_takes_the_defenders_cards_on_occupying_the_target():
    """Step D, "Mutual Destruction": the attacker may occupy the zone he attacked; "He takes any of
    the defender's resource cards belonging to the captured territory or sea"."""
    state = position()
    place(state, "Central America", "ann", 1)
    place(state, "Venezuela", "bob", 1)
    place(state, "Midwest U.S.A.", "ann", 2)
    state = act(state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 1})
    state = roll(state, attacker=[6], defender=[3, 1])
    assert state["battle"]["occupy"] == ["Venezuela", "Central America"]
    assert set(held(state, "Venezuela").values()) == {"bob"}
    state = act(state, "ann", "occupy", **move("Midwest U.S.A.", "Central America"))
    assert set(held(state, "Venezuela").values()) == {"bob"}  # his own front zone captures nothing
    state = act(state, "ann", "occupy", **move("Central America", "Venezuela"))
    assert held(state, "Venezuela") == {"Popayan Grains": "ann", "Inca Oil": "ann"}


def test_S_4_C_conv_D_only_the_defender_destroyed_by_an_attack_that_lost_its_units():
    """Step D, "Only the Defender is Destroyed": "If the defender has lost all of his forces at the
    target" the attacker may occupy it "with any number of his forces from one or more zones",
    also when every attacking unit fell (his other forces at the front line are not destroyed)."""
    state = position()
    place(state, "Central America", "ann", 3)
    place(state, "Venezuela", "bob", 1)
    state = act(state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 1})
    state = roll(state, attacker=[6], defender=[3, 1])
    assert state["units"]["Central America"] == {"ann": [2, 0]} and "Venezuela" not in state["units"]
    assert (state["phase"], state["turn"], state["battle"]["occupy"]) == ("occupy", "ann", ["Venezuela"])
    state = act(state, "ann", "occupy", **move("Central America", "Venezuela", 2))
    assert held(state, "Venezuela") == {"Popayan Grains": "ann", "Inca Oil": "ann"}


def test_S_4_C_conv_D_only_the_defender_destroyed_cards_change_hands_as_the_attackers_move_in():
    """Step D, "Only the Defender is Destroyed": the attacker "then takes any of the defender's
    resource cards belonging to the captured zone" (the surviving attackers move in, SUP-A14)."""
    state = position()
    place(state, "Central America", "ann", 3)
    place(state, "Venezuela", "bob", 1)
    state = act(state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 3})
    state = roll(state, attacker=[6, 1], defender=[1, 1])
    assert state["units"]["Venezuela"] == {"ann": [3, 0]}
    assert held(state, "Venezuela") == {"Popayan Grains": "ann", "Inca Oil": "ann"}


def test_S_4_C_conv_D_occupation_moves_pay_the_standard_moving_costs():
    """Step D: the occupier "must pay the standard moving costs" (grain per army moved)."""
    state = position()
    place(state, "Western U.S.A.", "ann", 1)
    place(state, "Central America", "bob", 3)
    state = act(state, "ann", "attack", **{"from": "Western U.S.A.", "to": "Central America", "units": 1})
    state = roll(state, attacker=[1], defender=[6, 6, 1])
    grain = state["supplies"]["bob"]["grain"]
    state = act(state, "bob", "occupy", **move("Central America", "Western U.S.A.", 2))
    cost = state["options"]["army_move_grain"] * 2
    assert state["supplies"]["bob"]["grain"] == grain - cost
    assert sum(state["cash"].values()) + state["bank"] == 0
