"""DATC-style rule tests for Supremacy: set up a position, act, assert the exact outcome.

Each test is named after its rule id in docs/rules/supremacy.md (dots and dashes become
underscores). Placeholder rules are tested against the option values, so a corrected figure in
options.json changes the expectation, not the test.
"""

from __future__ import annotations

import pickle

import pytest

from hilbridge.errors import HilbridgeError
from hilbridge.game import CHANCE, Action, Game, IllegalAction
from hilbridge.game.conformance import check_views_hide
from hilbridge.game.supremacy import Supremacy
from hilbridge.game.supremacy.ruleset import OPTIONS

R = Supremacy()
OPT = {key: entry["value"] for key, entry in OPTIONS.items()}
SET = {"grain": 1, "oil": 1, "mineral": 1}


def start(powers: dict[str, str] | None = None, **options) -> dict:
    """A game after setup: the players chose the given superpowers in this order; Stage 1 is next."""
    powers = powers or {"ann": "USA", "bob": "CSA"}
    state = R.initial_state(R.default_setup(list(powers), options), 0)
    state.update(active=list(powers), turn=next(iter(powers)))  # choosing order fixed for the test
    for player, code in powers.items():
        state = R.apply(state, Action("choose", player, {"power": code}))
    return state


def put(state: dict, phase: str, turn: str | None, stage: int, sequence: list[str], cycle: int = 2) -> dict:
    """The same position with the game at `phase` of `stage`, `turn` to move."""
    state = pickle.loads(pickle.dumps(state))
    state.update(
        phase=phase, turn=turn, stage=stage, sequence=list(sequence), active=list(sequence), cycle=cycle
    )
    state["rotation_player"] = turn
    return state


def act(state: dict, player: str, move: str, /, **params) -> dict:
    return R.apply(state, Action(move, player, params))


def attack(state: dict, origin: str, target: str, units: int, mode: str) -> dict:
    """Ann attacks `target` from `origin` (the move most battle tests start with)."""
    return act(state, "ann", "attack", **{"from": origin, "to": target, "units": units, "mode": mode})


def roll(state: dict, **rolls: list[int]) -> dict:
    return R.apply(state, Action("combat_result", CHANCE, {"rolls": rolls}))


def force(state: dict, zone: str, player: str) -> list[int]:
    return state["units"].get(zone, {}).get(player, [0, 0])


def place(state: dict, zone: str, player: str, armies: int = 0, navies: int = 0) -> None:
    state["units"].setdefault(zone, {})[player] = [armies, navies]
    if armies == navies == 0:
        del state["units"][zone][player]


def events(state: dict, kind: str) -> list[dict]:
    return [e for e in state["events"] if e["kind"] == kind]


def battle_position() -> dict:
    """ann (USA) holds Central America with 3 armies; bob (CSA) holds Venezuela with 2. Stage 4."""
    state = start()
    place(state, "Central America", "ann", 3)
    place(state, "Venezuela", "bob", 2)
    return put(state, "attack", "ann", 4, ["ann", "bob"])


# ---------------------------------------------------------------- setting up (S-0)
@pytest.mark.parametrize("seed", range(12))
def test_S_0_choose_highest_roll_chooses_first(seed):
    players = ["ann", "bob", "cid", "dee"]
    state = R.initial_state(R.default_setup(players), seed)
    first_round = {e["player"]: e["value"] for e in events(state, "roll")[: len(players)]}
    order = events(state, "choice_order")[0]["order"]
    assert sorted(order) == sorted(players)
    assert first_round[order[0]] == max(first_round.values())
    assert first_round[order[-1]] == min(first_round.values())
    assert (state["phase"], state["turn"]) == ("choose", order[0])
    with pytest.raises(IllegalAction):
        act(state, order[1], "choose", power="USA")


def test_S_0_choose_unchosen_piles_return_to_the_deck():
    state = start({"ann": "USA", "bob": "CSA"})
    held = {R.board.cards[c].owner for c in state["cards"]}
    assert held == {"USA", "CSA"}
    assert sum(1 for c in state["cards"] if state["cards"][c] == "ann") == 6
    assert all(R.board.cards[c].owner != "LEN" for c in state["cards"])


def test_S_0_armies_one_army_on_each_home_territory_no_navies():
    state = start({"ann": "USSR", "bob": "LEN"})
    for player, code in state["power"].items():
        for territory in R.board.homelands[code]:
            assert force(state, territory, player) == [1, 0]
    assert sum(f[0] + f[1] for zone in state["units"].values() for f in zone.values()) == 6 + 5


def test_S_0_supplies_money_and_market():
    state = start()
    for player in ("ann", "bob"):
        assert state["cash"][player] == 7000
        assert state["supplies"][player] == {"grain": 3, "oil": 3, "mineral": 3, "nuke": 0, "lstar": 0}
    assert {OPT["market_scale"][step] for step in state["market"].values()} == {500}
    assert state["phase"] == "salaries" and state["turn"] == "ann" and state["stage"] == 1


# ---------------------------------------------------------------- Stage 1 and 2
def test_S_1_A_salaries_50_per_company_10_per_unit():
    state = act(start(), "ann", "pay_salaries")
    assert state["cash"]["ann"] == 7000 - (6 * 50 + 4 * 10)
    assert state["turn"] == "bob"


def test_SUP_A19_nuke_and_l_star_cards_draw_no_salary():
    """S-1.A prices "Resource Companies" and "Armies and Navies" only; a nuke or L-star card is a
    resource card but neither a company nor a force on the board, so it costs nothing."""
    state = start()
    weapon_cards = [c for c, card in R.board.cards.items() if card.kind == "weapon"]
    assert {R.board.cards[c].resource for c in weapon_cards} == {"nuke", "lstar"}
    for card in weapon_cards[:2]:
        state["cards"][card] = "ann"
    state = act(state, "ann", "pay_salaries")
    assert state["cash"]["ann"] == 7000 - (6 * 50 + 4 * 10)  # the bill of the six companies and four units


def test_S_1_A_unpaid_companies_do_not_produce_and_disbanded_units_leave():
    state = start()
    card = next(
        c for c, h in state["cards"].items() if h == "ann" and R.board.cards[c].name == "Clark Oil Co."
    )
    state = act(state, "ann", "idle", card=card)
    state = act(state, "ann", "disband", zone="Alaska", kind="army")
    state = act(state, "ann", "pay_salaries")
    assert state["cash"]["ann"] == 7000 - (5 * 50 + 3 * 10)
    assert force(state, "Alaska", "ann") == [0, 0]
    state = act(state, "bob", "pay_salaries")
    produced = {e["card"] for e in events(state, "production") if e["player"] == "ann"}
    assert card not in produced and len(produced) == 5
    assert state["supplies"]["ann"]["oil"] == 3 + 2  # Hurren Oil only; Clark Oil Co. was idle


def test_S_1_A_salaries_cannot_be_paid_with_money_you_do_not_have():
    state = start()
    state["bank"] += state["cash"]["ann"] - 100
    state["cash"]["ann"] = 100
    assert Action("pay_salaries", "ann") not in R.legal_actions(state, "ann")
    with pytest.raises(IllegalAction):
        act(state, "ann", "pay_salaries")


def test_S_1_B_interest_then_principal_in_billion_dollar_amounts():
    state = act(start(), "ann", "borrow")
    assert state["cash"]["ann"] == 7000 + OPT["loan_unit"] and state["loans"]["ann"] == OPT["loan_unit"]
    state = act(state, "ann", "pay_salaries")
    assert state["phase"] == "loans"
    with pytest.raises(IllegalAction):
        act(state, "ann", "repay")  # interest first
    before = state["cash"]["ann"]
    state = act(state, "ann", "pay_interest")
    assert state["cash"]["ann"] == before - OPT["loan_interest_per_unit"]
    state = act(state, "ann", "repay")
    assert (
        state["loans"]["ann"] == 0 and state["cash"]["ann"] == before - OPT["loan_interest_per_unit"] - 1000
    )


def test_S_1_B_borrow_placeholder_loan_limit():
    state = start()
    for _ in range(OPT["loan_limit"] // OPT["loan_unit"]):
        state = act(state, "ann", "borrow")
    with pytest.raises(IllegalAction):
        act(state, "ann", "borrow")


def test_S_2_A_production_moves_meters_and_surplus_is_lost():
    state = start()
    state["supplies"]["ann"]["grain"] = OPT["supply_cap"] - 1
    state["stock_bank"]["grain"] -= OPT["supply_cap"] - 1 - 3
    state = act(act(state, "ann", "pay_salaries"), "bob", "pay_salaries")
    assert state["supplies"]["ann"]["grain"] == OPT["supply_cap"]  # 3 + 2 produced, 4 lost
    assert sum(e["lost"] for e in events(state, "production") if e["player"] == "ann") == 4
    assert state["supplies"]["ann"]["oil"] == 3 + 5 and state["supplies"]["bob"]["mineral"] == 3 + 5
    assert state["phase"] == "bid" and state["stage"] == 3


# ---------------------------------------------------------------- blind bid and player sequence
def test_S_BB_bids_are_secret_until_all_have_bid():
    game = Game(R, R.default_setup(["ann", "bob", "cid"]), 5)
    for player, code in zip(game.state["active"], ("USA", "CSA", "LEN"), strict=True):
        game.apply(Action("choose", player, {"power": code}))
    for player in ("ann", "bob", "cid"):
        game.apply(Action("pay_salaries", player))
    assert game.state["phase"] == "bid" and R.is_simultaneous(game.state)
    game.apply(Action("bid", "ann", {"cubes": 1}))
    check_views_hide(game, lambda state: {})
    for viewer in ("bob", "cid", None):
        assert not [e for e in game.events(viewer) if e["kind"] == "commit"]
        assert game.describe_action(game.actions[-1], viewer) == "ann: committed a secret move"
    assert [e["action"]["params"] for e in game.events("ann") if e["kind"] == "commit"] == [{"cubes": 1}]
    assert game.state["cubes"]["ann"] == 3  # nothing applied before the reveal
    game.apply(Action("bid", "bob", {"cubes": 0}))
    game.apply(Action("bid", "cid", {"cubes": 1}))
    assert game.state["cubes"] == {"ann": 2, "bob": 3, "cid": 2}
    assert game.state["phase"] == "dps"
    revealed = [e for e in game.events("bob") if e["kind"] == "revealed"]
    assert revealed[-1]["moves"]["ann"]["params"] == {"cubes": 1}


def test_S_BB_a_bid_counts_even_if_the_player_then_passes():
    state = put(start(), "bid", None, 3, [])
    state = R.apply_joint(
        state, {"ann": Action("bid", "ann", {"cubes": 1}), "bob": Action("bid", "bob", {"cubes": 0})}
    )
    assert state["phase"] == "sell" and state["turn"] == "ann"
    state = act(state, "ann", "pass")
    assert state["cubes"]["ann"] == 2


def test_S_BB_no_cubes_no_bid_and_cubes_return_next_cycle():
    state = put(start(), "bid", None, 7, [])
    state["cubes"]["ann"] = 0
    assert R.current_players(state) == ("bob",)
    state = R.apply_joint(state, {"bob": Action("bid", "bob", {"cubes": 0})})
    assert state["phase"] == "salaries" and state["cubes"] == {"ann": 3, "bob": 3} and state["cycle"] == 3


def test_S_DPS_rolls_decide_the_sequence_and_ties_roll_again():
    state = put(start({"ann": "USA", "bob": "CSA", "cid": "LEN"}), "bid", None, 3, [])
    state = R.apply_joint(state, {p: Action("bid", p, {"cubes": 1}) for p in ("ann", "bob", "cid")})
    assert R.current_players(state) == (CHANCE,)
    for value in (3, 5, 5):  # ann 3, bob 5, cid 5: bob and cid tie and roll again
        state = R.apply(state, Action("roll", CHANCE, {"value": value}))
    assert state["phase"] == "dps"
    for value in (2, 4):  # bob 2, cid 4
        state = R.apply(state, Action("roll", CHANCE, {"value": value}))
    assert state["sequence"] == ["cid", "bob", "ann"] and (state["phase"], state["turn"]) == ("sell", "cid")


def test_S_DPS_double7_two_cubes_buy_and_prospect_one_cube_either():
    state = put(start(), "bid", None, 7, [])
    bids = {"ann": Action("bid", "ann", {"cubes": 2}), "bob": Action("bid", "bob", {"cubes": 1})}
    assert bids["ann"] in R.legal_actions(state, "ann")
    state = R.apply_joint(state, bids)
    state = R.apply(state, Action("roll", CHANCE, {"value": 6}))
    state = R.apply(state, Action("roll", CHANCE, {"value": 1}))
    state = act(state, "ann", "buy", resource="oil", units=1)
    state = act(state, "bob", "buy", resource="oil", units=1)
    state = act(act(state, "ann", "pass"), "bob", "pass")
    state = act(act(state, "ann", "pass"), "bob", "pass")  # no trades
    assert state["phase"] == "prospect" and state["active"] == ["ann"]  # bob bought with his one cube


# ---------------------------------------------------------------- Stage 3: selling
def test_S_3_C_sale_paid_at_the_pre_sale_price_and_meter_moves_down():
    state = put(start(), "sell", "ann", 3, ["ann", "bob"])
    state["supplies"]["ann"]["oil"] = 6
    state["stock_bank"]["oil"] -= 3
    state = act(state, "ann", "sell", resource="oil", units=2)  # the seed's example
    assert state["cash"]["ann"] == 7000 + 1000
    assert state["supplies"]["ann"]["oil"] == 4
    assert state["market"]["oil"] == OPT["market_start_step"] - 2
    assert state["turn"] == "bob"


def test_SUP_A1_per_unit_pricing_option():
    state = put(start(sale_pricing="per_unit"), "sell", "ann", 3, ["ann", "bob"])
    state = act(state, "ann", "sell", resource="oil", units=2)
    scale, step = OPT["market_scale"], OPT["market_start_step"]
    assert state["cash"]["ann"] == 7000 + scale[step] + scale[step - 1]


def test_S_3_C_bull_pen_is_the_floor():
    state = put(start(), "sell", "ann", 3, ["ann", "bob"])
    state["market"]["grain"] = 1
    state = act(state, "ann", "sell", resource="grain", units=3)
    assert state["market"]["grain"] == 0
    assert state["cash"]["ann"] == 7000 + 3 * OPT["market_scale"][1]


def test_S_3_C_rotating_sales_until_nobody_wishes_to_sell():
    state = put(start(), "sell", "ann", 3, ["ann", "bob"])
    state = act(state, "ann", "sell", resource="grain", units=1)
    state = act(state, "bob", "sell", resource="oil", units=1)
    assert state["turn"] == "ann"  # the first seller gets a second turn
    state = act(state, "ann", "pass")
    assert state["turn"] == "bob"
    state = act(state, "bob", "sell", resource="oil", units=1)
    assert state["turn"] == "bob"  # ann has left the rotation (SUP-A5)
    state = act(state, "bob", "pass")
    assert state["phase"] == "trade"


def test_SUP_A5_pass_not_final_option_ends_after_a_round_of_passes():
    state = put(start(pass_is_final=False), "sell", "ann", 3, ["ann", "bob"])
    state = act(state, "ann", "pass")
    state = act(state, "bob", "sell", resource="oil", units=1)
    state = act(state, "ann", "sell", resource="oil", units=1)  # ann may sell again
    state = act(act(state, "bob", "pass"), "ann", "pass")
    assert state["phase"] == "trade"


def test_S_3_D_sell_to_another_player_any_terms_market_unaffected():
    state = put(start(), "trade", "ann", 3, ["ann"])
    market = dict(state["market"])
    state = act(state, "ann", "offer_sell", **{"with": "bob", "resource": "mineral", "units": 2, "price": 77})
    assert state["phase"] == "respond" and state["turn"] == "bob"
    state = act(state, "bob", "accept")
    assert state["supplies"]["ann"]["mineral"] == 1 and state["supplies"]["bob"]["mineral"] == 5
    assert state["cash"]["ann"] == 7077 and state["cash"]["bob"] == 6923
    assert state["market"] == market


def test_S_3_D_declined_offer_changes_nothing():
    state = put(start(), "trade", "ann", 3, ["ann"])
    after = act(
        act(state, "ann", "offer_sell", **{"with": "bob", "resource": "oil", "units": 1, "price": 5}),
        "bob",
        "decline",
    )
    assert after["supplies"] == state["supplies"] and after["cash"] == state["cash"]


# ---------------------------------------------------------------- Stage 4: conventional battle drill
def test_S_4_first_no_attacks_on_the_first_turn():
    state = put(start(), "bid", None, 3, [], cycle=1)
    state = R.apply_joint(state, {p: Action("bid", p, {"cubes": 0}) for p in ("ann", "bob")})
    assert state["stage"] == 5 and state["phase"] == "bid"
    assert events(state, "skip")[0]["stage"] == 4


def test_S_4_C_conv_use_who_may_attack_what():
    state = battle_position()
    place(state, "Carribean Sea", "ann", 0, 2)
    place(state, "Mid Atlantic", "ann", 0, 1)
    place(state, "Gulf of Panama", "bob", 0, 1)
    legal = {(a.params["from"], a.params["to"]) for a in R.legal_actions(state, "ann") if a.kind == "attack"}
    assert ("Central America", "Venezuela") in legal  # army -> adjacent territory
    assert ("Central America", "Gulf of Panama") in legal  # army -> navy in adjacent light sea
    assert ("Carribean Sea", "Gulf of Panama") in legal  # light sea navy -> adjacent light sea
    assert ("Carribean Sea", "Venezuela") in legal  # light sea navy -> adjacent territory
    assert ("Mid Atlantic", "Venezuela") not in legal  # dark sea navies attack only seas
    place(state, "Mid Atlantic", "bob", 0, 1)
    bob_legal = {
        (a.params["from"], a.params["to"])
        for a in R.legal_actions(put(state, "attack", "bob", 4, ["bob"]), "bob")
        if a.kind == "attack"
    }
    assert ("Gulf of Panama", "Mid Atlantic") not in bob_legal  # light sea may not attack a dark sea


def test_S_4_C_conv_use_dark_sea_navies_fight_in_the_same_sea():
    state = battle_position()
    place(state, "Mid Atlantic", "ann", 0, 2)
    place(state, "Mid Atlantic", "bob", 0, 1)
    state = act(
        state, "ann", "attack", **{"from": "Mid Atlantic", "to": "Mid Atlantic", "units": 2, "mode": "direct"}
    )
    assert state["battle"]["defender"] == "bob" and state["battle"]["dice"] == {"attacker": 2, "defender": 2}


def test_S_4_C_conv_B_both_sides_remove_a_set_of_supplies():
    state = attack(battle_position(), "Central America", "Venezuela", 3, "direct")
    assert state["supplies"]["ann"]["grain"] == 2 and state["supplies"]["bob"]["oil"] == 2
    assert force(state, "Central America", "ann") == [0, 0]  # pushed to the border


def test_S_4_C_conv_B_attacker_without_supplies_cannot_attack():
    state = battle_position()
    state["supplies"]["ann"]["oil"] = 0
    state["stock_bank"]["oil"] += 3
    assert not [a for a in R.legal_actions(state, "ann") if a.kind == "attack"]
    with pytest.raises(IllegalAction):
        attack(state, "Central America", "Venezuela", 3, "direct")


def test_S_4_C_conv_C_defender_without_supplies_gets_one_die():
    state = battle_position()
    state["supplies"]["bob"]["mineral"] = 0
    state["stock_bank"]["mineral"] += 3
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 1, "mode": "direct"}
    )
    assert state["battle"]["dice"] == {"attacker": 1, "defender": 2}  # 1 die + fire power die (2 > 1)


def test_S_4_C_conv_C_fire_power_and_l_star_dice():
    state = battle_position()
    state["supplies"]["ann"]["lstar"] = 1
    state["stock_bank"]["lstar"] -= 1
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 3, "mode": "direct"}
    )
    assert state["battle"]["dice"] == {"attacker": 3, "defender": 2}


def test_SUP_A4_ties_give_no_extra_die_or_the_defender_one():
    plain = battle_position()
    tied = act(
        plain, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 2, "mode": "direct"}
    )
    assert tied["battle"]["dice"] == {"attacker": 1, "defender": 2}
    plain["options"]["tie_die"] = "defender"
    tied = act(
        plain, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 2, "mode": "direct"}
    )
    assert tied["battle"]["dice"] == {"attacker": 1, "defender": 4}


def test_S_4_C_conv_D_every_three_points_one_loss_and_only_the_defender_destroyed():
    state = attack(battle_position(), "Central America", "Venezuela", 3, "direct")
    state = roll(state, attacker=[5, 3], defender=[3, 1])  # 8 points: 2 losses; 4 points: 1 loss
    assert force(state, "Venezuela", "bob") == [0, 0]
    assert force(state, "Venezuela", "ann") == [2, 0]
    taken = {
        R.board.cards[c].name
        for c, h in state["cards"].items()
        if h == "ann" and R.board.cards[c].territory == "Venezuela"
    }
    assert taken == {"Popayan Grains", "Inca Oil"}
    assert state["phase"] == "occupy" and state["turn"] == "ann"


def test_S_4_C_conv_D_defender_rolls_even_if_destroyed_and_attacker_destroyed():
    state = battle_position()
    place(state, "Central America", "ann", 1)
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 1, "mode": "direct"}
    )
    state = roll(state, attacker=[2], defender=[6, 6, 1])
    assert force(state, "Venezuela", "bob") == [2, 0] and force(state, "Central America", "ann") == [0, 0]
    assert (
        state["phase"] == "occupy"
        and state["turn"] == "bob"
        and state["battle"]["occupy"] == ["Central America"]
    )
    place(state, "Peru", "bob", 0)
    state = act(
        state, "bob", "occupy", **{"from": "Venezuela", "to": "Central America", "units": 1, "kind": "army"}
    )
    assert force(state, "Central America", "bob") == [1, 0]
    with pytest.raises(IllegalAction):
        act(
            state, "bob", "occupy", **{"from": "Venezuela", "to": "Carribean Sea", "units": 1, "kind": "army"}
        )


def test_S_4_C_conv_D_mutual_destruction_attacker_may_occupy_both_zones():
    state = battle_position()
    place(state, "Central America", "ann", 1)
    place(state, "Venezuela", "bob", 1)
    place(state, "Midwest U.S.A.", "ann", 2)
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 1, "mode": "direct"}
    )
    state = roll(state, attacker=[6], defender=[3, 1])
    assert force(state, "Venezuela", "bob") == [0, 0] and force(state, "Central America", "ann") == [0, 0]
    assert state["phase"] == "occupy" and state["turn"] == "ann"
    assert state["battle"]["occupy"] == ["Venezuela", "Central America"]
    state = act(
        state,
        "ann",
        "occupy",
        **{"from": "Midwest U.S.A.", "to": "Central America", "units": 1, "kind": "army"},
    )
    assert state["supplies"]["ann"]["grain"] == 2 - OPT["army_move_grain"]  # standard moving cost


def test_S_4_C_conv_D_convoy_armies_sink_with_their_navy():
    state = battle_position()
    place(state, "Carribean Sea", "bob", 3, 1)
    place(state, "Gulf of Panama", "ann", 0, 3)
    state = attack(state, "Gulf of Panama", "Carribean Sea", 3, "direct")
    state = roll(state, attacker=[1, 2], defender=[1, 1])
    assert force(state, "Carribean Sea", "bob") == [0, 0]


def test_S_4_C_conv_E_reinforcements_defender_first_then_attacker():
    state = attack(battle_position(), "Central America", "Venezuela", 3, "direct")
    state = roll(state, attacker=[1, 1], defender=[1, 1])  # nobody loses
    assert force(state, "Venezuela", "bob") == [2, 0] and force(state, "Central America", "ann") == [3, 0]
    assert (state["phase"], state["turn"]) == ("reinforce", "bob")
    place(state, "Brazil", "bob", 2)
    state = act(
        state, "bob", "reinforce", **{"from": "Brazil", "to": "Venezuela", "units": 1, "kind": "army"}
    )
    assert force(state, "Venezuela", "bob") == [3, 0]
    with pytest.raises(IllegalAction):  # territories: only those you already occupy
        act(
            state,
            "bob",
            "reinforce",
            **{"from": "Venezuela", "to": "Central America", "units": 1, "kind": "army"},
        )
    state = act(state, "bob", "end_reinforce")
    assert (state["phase"], state["turn"]) == ("reinforce", "ann")


def test_S_4_C_conv_E_light_sea_reinforced_only_if_vacant_or_held():
    state = attack(battle_position(), "Central America", "Venezuela", 3, "direct")
    state = roll(state, attacker=[1, 1], defender=[1, 1])
    place(state, "Mid Atlantic", "bob", 0, 2)
    place(state, "Carribean Sea", "ann", 0, 1)
    with pytest.raises(IllegalAction):
        act(
            state,
            "bob",
            "reinforce",
            **{"from": "Mid Atlantic", "to": "Carribean Sea", "units": 1, "kind": "navy"},
        )
    state = act(
        state, "bob", "reinforce", **{"from": "Mid Atlantic", "to": "Baia Santos", "units": 1, "kind": "navy"}
    )
    assert force(state, "Baia Santos", "bob") == [0, 1]


def test_S_4_C_conv_F_defender_counterattacks_once_then_rotation_continues():
    state = attack(battle_position(), "Central America", "Venezuela", 3, "direct")
    state = roll(state, attacker=[1, 1], defender=[1, 1])
    state = act(act(state, "bob", "end_reinforce"), "ann", "end_reinforce")
    assert (state["phase"], state["turn"]) == ("counter", "bob")
    state = act(
        state, "bob", "attack", **{"from": "Venezuela", "to": "Central America", "units": 2, "mode": "direct"}
    )
    state = roll(state, **{k: [1] * n for k, n in state["battle"]["dice"].items()})
    state = act(act(state, "ann", "end_reinforce"), "bob", "end_reinforce")
    assert (state["phase"], state["turn"]) == ("attack", "bob")  # no counter to a counterattack (SUP-A2)


def test_SUP_A2_counterattack_chain_option():
    state = battle_position()
    state["options"]["counterattack_chain"] = True
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 3, "mode": "direct"}
    )
    state = roll(state, attacker=[1, 1], defender=[1, 1])
    state = act(act(state, "bob", "end_reinforce"), "ann", "end_reinforce")
    state = act(
        state, "bob", "attack", **{"from": "Venezuela", "to": "Central America", "units": 2, "mode": "direct"}
    )
    state = roll(state, **{k: [1] * n for k, n in state["battle"]["dice"].items()})
    state = act(act(state, "ann", "end_reinforce"), "bob", "end_reinforce")
    assert (state["phase"], state["turn"]) == ("counter", "ann")


def test_S_4_C_militia_placeholder_empty_zone_taken_without_battle():
    with pytest.raises(IllegalAction, match="could not occupy"):  # SUP-A3: armies cannot take a sea
        act(
            battle_position(),
            "ann",
            "attack",
            **{"from": "Central America", "to": "Carribean Sea", "units": 3},
        )
    state = battle_position()
    place(state, "Venezuela", "bob", 0)
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 3, "mode": "direct"}
    )
    assert force(state, "Venezuela", "ann") == [3, 0] and state["phase"] == "occupy"
    assert {R.board.cards[c].territory for c, h in state["cards"].items() if h == "ann"} >= {
        "Venezuela"
    }  # SUP-A8


def test_S_4_C_militia_dice_option():
    state = battle_position()
    state["options"]["militia_dice"] = 2
    place(state, "Venezuela", "bob", 0)
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 3, "mode": "direct"}
    )
    assert state["battle"]["dice"] == {"attacker": 0, "militia": 2}
    state = roll(state, attacker=[], militia=[6, 6])
    assert force(state, "Venezuela", "ann") == [0, 0] and force(state, "Central America", "ann") == [0, 0]


def test_S_4_T_amphibious_assault_navies_add_fire_power():
    state = battle_position()
    place(state, "Carribean Sea", "ann", 2, 1)
    state = attack(state, "Carribean Sea", "Venezuela", 2, "amphibious")
    assert state["battle"]["dice"] == {"attacker": 2, "defender": 2}  # 2 armies + 1 navy > 2 armies
    assert state["supplies"]["ann"]["grain"] == 3 - 1 - 2 * OPT["army_move_grain"]
    state = roll(state, attacker=[6, 6], defender=[1, 1])
    assert force(state, "Venezuela", "ann") == [2, 0] and force(state, "Carribean Sea", "ann") == [0, 1]


def test_S_4_T_amphibious_only_from_a_light_blue_sea():
    state = battle_position()
    place(state, "Mid Atlantic", "ann", 2, 1)
    with pytest.raises(IllegalAction):
        attack(state, "Mid Atlantic", "Venezuela", 2, "amphibious")


def test_S_4_T_amphibious_defender_may_remove_the_navies():
    state = battle_position()
    place(state, "Carribean Sea", "ann", 1, 1)
    state = attack(state, "Carribean Sea", "Venezuela", 1, "amphibious")
    state = roll(state, attacker=[1], defender=[6, 6])  # 4 losses: the army and the navy
    assert force(state, "Carribean Sea", "ann") == [0, 0]


def test_SUP_A6_failed_landing_withdraws_or_surrenders():
    for option, expected in (("withdraw", [1, 1]), ("surrender", [0, 1])):
        state = battle_position()
        state["options"]["amphibious_failure"] = option
        place(state, "Carribean Sea", "ann", 1, 1)
        state = attack(state, "Carribean Sea", "Venezuela", 1, "amphibious")
        state = roll(state, attacker=[1], defender=[1, 1])
        assert force(state, "Carribean Sea", "ann") == expected, option


def test_S_4_T_airborne_assault_flies_armies_for_oil():
    state = battle_position()
    place(state, "Alaska", "ann", 2)
    state["supplies"]["ann"]["oil"] = 8
    state["stock_bank"]["oil"] -= 5
    state = act(
        state, "ann", "attack", **{"from": "Alaska", "to": "Venezuela", "units": 2, "mode": "airborne"}
    )
    assert state["supplies"]["ann"]["oil"] == 8 - 1 - 2 * OPT["airlift_oil"]
    state = roll(state, attacker=[6], defender=[1, 1])
    assert force(state, "Venezuela", "ann") == [2, 0]


# ---------------------------------------------------------------- Stage 4: strategic battle drill
def nuke_position(**lstars: int) -> dict:
    state = battle_position()
    state["supplies"]["ann"]["nuke"] = 3
    state["stock_bank"]["nuke"] -= 3
    for player, count in lstars.items():
        state["supplies"][player]["lstar"] = count
        state["stock_bank"]["lstar"] -= count
    return state


def test_S_4_C_strat_A_C_solo_launch_moves_the_nuke_meter():
    state = act(nuke_position(), "ann", "nuke", targets=["Venezuela"])
    assert state["supplies"]["ann"]["nuke"] == 2
    assert events(state, "nuke")[0]["tactic"] == "solo"


def test_S_4_C_strat_effect_everything_destroyed_cloud_on_territory():
    state = act(nuke_position(), "ann", "nuke", targets=["Venezuela"])
    assert force(state, "Venezuela", "bob") == [0, 0] and "Venezuela" in state["clouds"]
    assert not [c for c in state["cards"] if R.board.cards[c].territory == "Venezuela"]  # back in the deck
    assert (state["phase"], state["turn"]) == ("counter", "bob")
    place(state, "Brazil", "bob", 2)
    with pytest.raises(IllegalAction):  # armies may not occupy a nuked territory
        act(
            put(state, "move", "bob", 5, ["bob"]),
            "bob",
            "move",
            **{"from": "Brazil", "to": "Venezuela", "units": 1, "kind": "army"},
        )


def test_S_4_C_strat_effect_light_sea_has_no_cloud():
    state = nuke_position()
    place(state, "Carribean Sea", "bob", 0, 2)
    state = act(state, "ann", "nuke", targets=["Carribean Sea"])
    assert force(state, "Carribean Sea", "bob") == [0, 0] and state["clouds"] == []
    with pytest.raises(IllegalAction):  # dark blue seas cannot be nuked
        act(nuke_position(), "ann", "nuke", targets=["Mid Atlantic"])


def test_S_4_C_strat_D_defender_screen_hits_on_1_to_5():
    state = act(nuke_position(bob=2), "ann", "nuke", targets=["Venezuela", "Brazil", "Peru"])
    assert events(state, "nuke")[0]["tactic"] == "cluster"
    assert state["battle"]["dice"] == {"defender:bob": 2}
    state = roll(state, **{"defender:bob": [4, 6]})  # the seed's example: one destroyed, two strike
    assert sorted(state["clouds"]) == ["Brazil", "Peru"]
    assert state["supplies"]["bob"]["lstar"] == 2  # L-stars remain in play


def test_S_4_C_strat_C_champions_commit_secretly_and_roll_1_to_3():
    powers = {"ann": "USA", "bob": "CSA", "cid": "LEN"}
    state = start(powers)
    place(state, "Venezuela", "bob", 1)
    state = put(state, "attack", "ann", 4, ["ann"])
    state["supplies"]["ann"]["nuke"] = 1
    state["supplies"]["cid"]["lstar"] = 1
    state["stock_bank"]["nuke"] -= 1
    state["stock_bank"]["lstar"] -= 1
    state = act(state, "ann", "nuke", targets=["Venezuela"])
    assert R.is_simultaneous(state) and R.current_players(state) == ("cid",)
    state = R.apply_joint(state, {"cid": Action("defend", "cid", {"defend": True})})
    assert state["battle"]["dice"] == {"champion:cid": 1}
    missed = roll(state, **{"champion:cid": [4]})
    assert "Venezuela" in missed["clouds"]
    saved = roll(state, **{"champion:cid": [3]})
    assert "Venezuela" not in saved["clouds"] and force(saved, "Venezuela", "bob") == [1, 0]


def test_S_4_C_strat_E_champions_may_not_counterattack():
    powers = {"ann": "USA", "bob": "CSA", "cid": "LEN"}
    state = start(powers)
    state = put(state, "attack", "ann", 4, ["ann"])
    state["supplies"]["ann"]["nuke"] = 1
    state["supplies"]["cid"]["lstar"] = 1
    state["stock_bank"]["nuke"] -= 1
    state["stock_bank"]["lstar"] -= 1
    state = act(state, "ann", "nuke", targets=["Peru"])
    state = R.apply_joint(state, {"cid": Action("defend", "cid", {"defend": True})})
    state = roll(state, **{"champion:cid": [5]})
    assert [(state["phase"], state["turn"])] == [("counter", "bob")]


# ---------------------------------------------------------------- spoils of war, victory, bankruptcy
def test_S_10_spoils_capture_of_the_last_home_territory():
    state = battle_position()
    for territory in ("Brazil", "Peru", "Argentina"):
        place(state, territory, "bob", 0)
        place(state, territory, "ann", 1)
        state["cards"].update({c: "ann" for c in R.board.cards_in(territory)})
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 3, "mode": "direct"}
    )
    state = roll(state, attacker=[6, 6], defender=[1, 1])
    assert state["alive"]["bob"]  # not before his counterattack
    state = act(state, "ann", "end_occupy")
    state = act(act(state, "bob", "end_reinforce"), "ann", "end_reinforce")
    assert (state["phase"], state["turn"]) == ("counter", "bob")
    state = act(state, "bob", "decline")
    assert not state["alive"]["bob"] and state["winners"] == ["ann"] and R.is_terminal(state)
    assert state["cash"]["ann"] == 7000 + 7000 and state["cash"]["bob"] == 0
    assert events(state, "eliminated")[0]["spoils"] == "capture"


def test_S_10_liberate_a_home_territory_in_the_counterattack_stays_in_the_game():
    state = battle_position()
    for territory in ("Brazil", "Peru", "Argentina"):
        place(state, territory, "bob", 0)
        place(state, territory, "ann", 1)
    place(state, "Brazil", "ann", 0)  # Brazil left empty by ann
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 3, "mode": "direct"}
    )
    state = roll(state, attacker=[6, 6], defender=[1, 1])
    state = act(act(act(state, "ann", "end_occupy"), "bob", "end_reinforce"), "ann", "end_reinforce")
    assert state["alive"]["bob"] and not R.is_terminal(state)  # Brazil is still his


def test_S_10_spoils_destruction_by_nuking_the_last_home_territory():
    state = nuke_position()
    for territory in ("Brazil", "Peru", "Argentina"):
        place(state, territory, "bob", 0)
        state["clouds"].append(territory)
    state = act(state, "ann", "nuke", targets=["Venezuela"])
    state = act(state, "bob", "decline")
    assert not state["alive"]["bob"] and state["winners"] == ["ann"]
    assert state["cash"]["ann"] == 7000 and state["bank"] == -7000
    assert events(state, "eliminated")[0]["spoils"] == "destruction"


def test_S_10_bankrupt_when_interest_can_be_neither_paid_nor_borrowed():
    state = start()
    state["loans"]["ann"] = OPT["loan_limit"]
    state["bank"] += state["cash"]["ann"] - 400
    state["cash"]["ann"] = 400
    state = act(state, "ann", "idle", card=next(c for c, h in state["cards"].items() if h == "ann"))
    for card in [c for c, h in state["cards"].items() if h == "ann" and c not in state["idle"]]:
        state = act(state, "ann", "idle", card=card)
    state = act(state, "ann", "pay_salaries")  # 4 armies: $40M
    assert R.legal_actions(state, "ann") == [Action("declare_bankruptcy", "ann")]
    state = act(state, "ann", "declare_bankruptcy")
    assert not state["alive"]["ann"] and state["winners"] == ["bob"]


# ---------------------------------------------------------------- Stages 5-7
def test_S_5_C_moves_cost_and_follow_the_map():
    state = put(start(), "move", "ann", 5, ["ann"])
    place(state, "Western Canada", "ann", 1)
    state = act(
        state, "ann", "move", **{"from": "Alaska", "to": "Western Canada", "units": 1, "kind": "army"}
    )
    assert force(state, "Western Canada", "ann") == [2, 0]
    assert state["supplies"]["ann"]["grain"] == 3 - OPT["army_move_grain"]
    with pytest.raises(IllegalAction):  # not adjacent
        act(
            state,
            "ann",
            "move",
            **{"from": "Eastern U.S.A.", "to": "Western Canada", "units": 1, "kind": "army"},
        )
    with pytest.raises(IllegalAction):  # held by another player
        act(state, "ann", "move", **{"from": "Western Canada", "to": "Venezuela", "units": 1, "kind": "army"})


def test_S_5_C_convoy_embark_sail_and_land():
    state = put(start(), "move", "ann", 5, ["ann"])
    place(state, "Carribean Sea", "ann", 0, 1)
    place(state, "Central America", "ann", 1)
    state = act(
        state, "ann", "move", **{"from": "Eastern U.S.A.", "to": "Carribean Sea", "units": 1, "kind": "army"}
    )
    state = act(
        state, "ann", "move", **{"from": "Carribean Sea", "to": "Gulf of Panama", "units": 1, "kind": "navy"}
    )
    assert force(state, "Gulf of Panama", "ann") == [1, 1]
    state = act(
        state,
        "ann",
        "move",
        **{"from": "Gulf of Panama", "to": "Central America", "units": 1, "kind": "army"},
    )
    assert force(state, "Central America", "ann") == [2, 0]
    assert state["supplies"]["ann"]["oil"] == 3 - OPT["navy_move_oil"]


def test_S_6_C_build_a_batch_of_armies_or_navies():
    state = put(start(), "build", "ann", 6, ["ann"])
    state = act(state, "ann", "build", kind="army", zone="Alaska")
    assert force(state, "Alaska", "ann") == [1 + OPT["batch_size"], 0]
    assert state["cash"]["ann"] == 7000 - OPT["batch_cost"] and state["supplies"]["ann"]["oil"] == 2
    state = act(state, "ann", "build", kind="navy", zone="Carribean Sea")
    assert force(state, "Carribean Sea", "ann") == [0, OPT["batch_size"]]
    with pytest.raises(IllegalAction):  # not next to a home port
        act(state, "ann", "build", kind="navy", zone="Java Sea")


def test_S_6_D_weapons_need_their_research_card_and_come_after_conventional_builds():
    state = put(start(), "build", "ann", 6, ["ann"])
    with pytest.raises(IllegalAction):
        act(state, "ann", "build_weapon", weapon="nuke")
    state["cards"]["C61"] = "ann"  # Manhattan Project
    state = act(state, "ann", "build_weapon", weapon="nuke")
    assert (
        state["supplies"]["ann"]["nuke"] == 1
        and state["supplies"]["ann"]["mineral"] == 3 - OPT["nuke_minerals"]
    )
    assert state["cash"]["ann"] == 7000 - OPT["nuke_cost"]
    with pytest.raises(IllegalAction):  # Phase C is over
        act(state, "ann", "build", kind="army", zone="Alaska")


def test_S_6_E_research_turns_over_cards_until_the_weapon_appears():
    state = put(start(), "build", "ann", 6, ["ann"])
    state = act(state, "ann", "research", weapon="lstar")
    assert state["phase"] == "search" and state["cash"]["ann"] == 7000 - OPT["card_flip_cost"]
    node = R.chance_node(state)
    assert len(node.outcomes) == 65 - 12  # the deck: everything but the two chosen piles
    state = R.apply(state, Action("draw", CHANCE, {"card": "C61"}))  # a nuke card: not wanted
    assert state["cash"]["ann"] == 7000 - 2 * OPT["card_flip_cost"] and "C61" not in state["cards"]
    state = R.apply(state, Action("draw", CHANCE, {"card": "C64"}))
    assert state["cards"]["C64"] == "ann" and (state["phase"], state["turn"]) == ("build", "ann")


def test_S_7_C_buy_from_the_market_meter_moves_up_to_the_bear_pit():
    state = put(start(), "buy", "ann", 7, ["ann", "bob"])
    top = len(OPT["market_scale"]) - 1
    state["market"]["oil"] = top - 1
    state = act(state, "ann", "buy", resource="oil", units=2)
    assert state["market"]["oil"] == top
    assert state["cash"]["ann"] == 7000 - 2 * OPT["market_scale"][top - 1]
    with pytest.raises(IllegalAction):  # the supply centre cap
        act(put(state, "buy", "bob", 7, ["bob"]), "bob", "buy", resource="grain", units=OPT["supply_cap"])


def test_S_7_D_buy_from_another_player():
    state = put(start(), "trade", "ann", 7, ["ann"])
    state = act(state, "ann", "offer_buy", **{"with": "bob", "resource": "grain", "units": 3, "price": 10})
    state = act(state, "bob", "accept")
    assert state["supplies"]["ann"]["grain"] == 6 and state["cash"]["bob"] == 7010


def test_S_7_E_prospect_keeps_the_first_company_of_that_resource():
    state = put(start(), "prospect", "ann", 7, ["ann"])
    state["bids"] = {"ann": 1}
    state = act(state, "ann", "prospect", resource="oil")
    oil = next(c for c, card in R.board.cards.items() if card.owner == "neutral" and card.resource == "oil")
    grain = next(
        c for c, card in R.board.cards.items() if card.owner == "neutral" and card.resource == "grain"
    )
    state = R.apply(state, Action("draw", CHANCE, {"card": grain}))
    assert state["phase"] == "search"
    state = R.apply(state, Action("draw", CHANCE, {"card": oil}))
    assert state["cards"][oil] == "ann" and grain not in state["cards"]
    assert state["cash"]["ann"] == 7000 - 2 * OPT["card_flip_cost"]
    assert R.legal_actions(state, "ann") == [Action("end_turn", "ann")]


def test_S_7_end_cycle_returns_to_stage_1_with_three_cubes():
    state = put(start(), "prospect", "ann", 7, ["ann"])
    state["cubes"] = {"ann": 0, "bob": 1}
    state = act(state, "ann", "end_turn")
    assert state["stage"] == 1 and state["phase"] == "salaries" and state["cubes"] == {"ann": 3, "bob": 3}


# ---------------------------------------------------------------- rulings without an option
def test_SUP_A3_armies_that_sink_navies_return_to_their_territory():
    state = battle_position()
    place(state, "Gulf of Panama", "bob", 0, 1)
    state = attack(state, "Central America", "Gulf of Panama", 3, "direct")
    state = roll(state, attacker=[6, 1], defender=[1, 1])
    assert force(state, "Gulf of Panama", "bob") == [0, 0] and force(state, "Gulf of Panama", "ann") == [0, 0]
    assert force(state, "Central America", "ann") == [3, 0]
    assert state["phase"] == "reinforce"  # no occupation step


def test_SUP_A7_screen_shots_follow_the_attackers_order():
    state = act(nuke_position(bob=1), "ann", "nuke", targets=["Brazil", "Venezuela"])
    state = roll(state, **{"defender:bob": [5]})
    assert state["clouds"] == ["Venezuela"]


def test_SUP_A13_an_empty_home_territory_is_still_held():
    state = battle_position()
    for territory in ("Venezuela", "Brazil", "Peru", "Argentina"):
        place(state, territory, "bob", 0)
    place(state, "Brazil", "ann", 1)
    place(state, "Peru", "ann", 1)
    place(state, "Argentina", "ann", 1)
    state = act(state, "ann", "pass")
    assert state["alive"]["bob"]
    assert R._home_held(state, "bob") == ["Venezuela"]


def test_S_4_C_conv_D_note_defender_may_reinforce_the_zone_the_attacker_did_not_occupy():
    state = battle_position()
    place(state, "Central America", "ann", 1)
    place(state, "Venezuela", "bob", 1)
    place(state, "Brazil", "bob", 2)
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 1, "mode": "direct"}
    )
    state = roll(state, attacker=[6], defender=[3, 1])  # mutual destruction
    state = act(state, "ann", "end_occupy")  # the attacker does not occupy Venezuela
    assert (state["phase"], state["turn"]) == ("reinforce", "bob")
    state = act(
        state, "bob", "reinforce", **{"from": "Brazil", "to": "Venezuela", "units": 2, "kind": "army"}
    )
    assert force(state, "Venezuela", "bob") == [2, 0]


def test_S_4_C_conv_F_nuking_the_captured_last_home_territory_denies_the_capture_spoils():
    state = battle_position()
    for territory in ("Brazil", "Peru", "Argentina"):
        place(state, territory, "bob", 0)
        state["clouds"].append(territory)
    state["supplies"]["bob"]["nuke"] = 1
    state["stock_bank"]["nuke"] -= 1
    state = act(
        state, "ann", "attack", **{"from": "Central America", "to": "Venezuela", "units": 3, "mode": "direct"}
    )
    state = roll(state, attacker=[6, 6], defender=[1, 1])
    state = act(act(act(state, "ann", "end_occupy"), "bob", "end_reinforce"), "ann", "end_reinforce")
    state = act(state, "bob", "nuke", targets=["Venezuela"])
    assert not state["alive"]["bob"] and events(state, "eliminated")[0]["spoils"] == "destruction"
    assert state["cash"]["ann"] == 7000


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("tie_die", "maybe"),
        ("turn_cap", "abc"),
        ("turn_cap", -1),
        ("pass_is_final", 1),
        ("nope", 1),
        ("market_scale", [5, 1]),
        ("market_start_step", 40),
    ],
)
def test_options_are_checked_at_setup(option, value):
    with pytest.raises(HilbridgeError, match=option):
        R.default_setup(["ann", "bob"], {option: value})
    with pytest.raises(HilbridgeError, match=option):
        R.initial_state({"players": ["ann", "bob"], "options": {option: value}}, 0)


def test_S_4_C_winter_placeholder_option_ends_the_game_on_a_die():
    state = nuke_position()
    state["options"] = {**state["options"], "nuclear_winter_from": 2}
    state["clouds"].append("Greenland")
    state = act(state, "ann", "nuke", targets=["Venezuela"])  # the second cloud
    assert R.current_players(state) == (CHANCE,) and state["phase"] == "winter"
    survived = R.apply(state, Action("roll", CHANCE, {"value": 5}))
    assert (survived["phase"], survived["turn"]) == ("counter", "bob")
    ended = R.apply(state, Action("roll", CHANCE, {"value": 6}))
    assert R.is_terminal(ended) and ended["winners"] == []
    off = act(nuke_position(), "ann", "nuke", targets=["Venezuela"])
    assert off["phase"] == "counter"  # default: no nuclear winter


def test_SUP_A17_vacant_territories_are_taken_by_attack_not_by_a_move():
    state = put(start(), "move", "ann", 5, ["ann"])
    alaska_to_canada = {"from": "Alaska", "to": "Western Canada", "units": 1, "kind": "army"}
    with pytest.raises(IllegalAction, match="SUP-A17"):
        act(state, "ann", "move", **alaska_to_canada)
    place(state, "Western U.S.A.", "ann", 0)  # an own home territory left empty may be re-entered
    state = act(
        state, "ann", "move", **{"from": "Midwest U.S.A.", "to": "Western U.S.A.", "units": 1, "kind": "army"}
    )
    assert force(state, "Western U.S.A.", "ann") == [1, 0]
    state["options"] = {**state["options"], "move_into_vacant": True}
    assert force(act(state, "ann", "move", **alaska_to_canada), "Western Canada", "ann") == [1, 0]


def test_SUP_A18_capture_spoils_go_to_whoever_took_the_last_home_territory():
    state = start({"ann": "USA", "bob": "CSA", "cid": "LEN"})
    place(state, "Lima Bay", "ann", 3, 1)
    state["supplies"]["ann"]["grain"] = 6
    state["stock_bank"]["grain"] -= 3
    place(state, "Argentina", "bob", 1)
    for territory in ("Brazil", "Peru", "Venezuela"):
        place(state, territory, "bob", 0)
        place(state, territory, "cid", 1)  # taken by cid in earlier cycles
    state = put(state, "attack", "ann", 4, ["ann", "bob", "cid"])
    state = act(
        state, "ann", "attack", **{"from": "Lima Bay", "to": "Argentina", "units": 3, "mode": "amphibious"}
    )
    state = roll(state, attacker=[6, 6], defender=[1, 1])
    state = act(act(act(state, "ann", "end_occupy"), "bob", "end_reinforce"), "ann", "end_reinforce")
    state = act(state, "bob", "decline")
    assert events(state, "eliminated")[0]["captor"] == "ann"
    assert state["cash"]["ann"] == 14000 and state["cash"]["cid"] == 7000
