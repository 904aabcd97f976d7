"""Conquest of the World, one DATC-style test per rule clause and per ruling (docs/rules/conquest.md).

Each test sets up a position, acts, and asserts the exact outcome. Test names carry the rule id.
Default seating: ann (HOMELAND United States), bob (Soviet Union), cy (West Germany).
"""

from __future__ import annotations

import json

import pytest

from hilbridge.game import CHANCE, Action, Game, IllegalAction, ManualResolver
from hilbridge.game.conquest.rules import (
    ConquestRuleset,
    chips_to_record_halves,
    energy_units,
    leftover_to_record_halves,
    round_to_nearest_500,
)

R = ConquestRuleset()
PLAYERS = ["ann", "bob", "cy"]
WEST_GERMANY_BORDER = ["Czechoslovakia", "East Germany", "France", "Italy", "Scandinavia", "United Kingdom"]


def game_at(players=PLAYERS, options=None, owners=None, allied=None, chips=None, records=None, **top) -> Game:
    """A game whose current position is the default start changed as given (bank keeps chips balanced)."""
    game = Game(R, R.default_setup(players, {"income_per_value": 0, **(options or {})}), seed=0)
    state = json.loads(json.dumps(game.initial))
    for player, countries in (owners or {}).items():
        for country in countries:
            state["owner"][country] = player
    for player, countries in (allied or {}).items():
        for country in countries:
            state["ally_of"][country] = player
    for player, amount in (chips or {}).items():
        state["bank"] -= amount - state["chips"][player]
        state["chips"][player] = amount
    for player, spaces in (records or {}).items():
        state["record"][player] = int(2 * spaces)
    state.update(top)
    game.initial = state
    return game


def act(game: Game, player: str, kind: str, **params) -> None:
    before = game.state
    action = Action(kind, player, params)
    game.apply(action)
    R.check_invariants(before, action, game.state)


def battle(game: Game, winner: str) -> None:
    before = game.state
    game.step_chance(ManualResolver(lambda request: {"winner": winner}))
    R.check_invariants(before, None, game.state)


def duel_battle(game: Game, winner: str, energy: dict[str, int]) -> None:
    before = game.state
    game.step_chance(ManualResolver(lambda request: {"winner": winner, "energy": energy}))
    R.check_invariants(before, None, game.state)


def kinds(game: Game, player: str) -> set[tuple[str, str | None]]:
    return {(a.kind, a.params.get("country")) for a in game.legal_actions(player)}


def end_game(records, alliances=(), options=None, players=PLAYERS) -> Game:
    """A game whose final round ends with the first player passing: the END GAME begins."""
    zero = dict.fromkeys(players, 0)
    game = game_at(
        players,
        options,
        chips=zero,
        records=records,
        alliances=[list(group) for group in alliances],
        final_round=[players[0]],
    )
    act(game, players[0], "pass")
    return game


def weapons(game: Game, **chosen: str) -> None:
    for player, weapon in chosen.items():
        act(game, player, "weapon", weapon=weapon)


# -- rule 19: attacking an enemy HOMELAND ------------------------------------------------------------


def test_C_19_A_homeland_cannot_be_attacked_until_every_bordering_country_is_conquered():
    game = game_at(owners={"ann": WEST_GERMANY_BORDER[:-1]}, chips={"ann": 50_000})
    assert ("attack_homeland", "West Germany") not in kinds(game, "ann")
    game = game_at(owners={"ann": WEST_GERMANY_BORDER}, chips={"ann": 50_000})
    assert ("attack_homeland", "West Germany") in kinds(game, "ann")


def test_C_19_A_homeland_is_never_attacked_as_an_ordinary_occupied_country():
    game = game_at(owners={"ann": ["France"]}, chips={"ann": 50_000})
    assert not {k for k in kinds(game, "ann") if k[1] == "West Germany"}


def test_COTW_A8_siege_by_the_attacker_alone_by_default_or_by_the_alliance():
    owners = {"ann": WEST_GERMANY_BORDER[:-1], "bob": ["United Kingdom"]}
    game = game_at(owners=owners, chips={"ann": 50_000}, alliances=[["ann", "bob"]])
    assert ("attack_homeland", "West Germany") not in kinds(game, "ann")
    game = game_at(
        options={"homeland_siege_by": "alliance"},
        owners=owners,
        chips={"ann": 50_000},
        alliances=[["ann", "bob"]],
    )
    assert ("attack_homeland", "West Germany") in kinds(game, "ann")


def test_C_19_B_homeland_attack_pays_full_board_value_times_1000_into_the_warchest():
    game = game_at(owners={"ann": WEST_GERMANY_BORDER}, chips={"ann": 8_500})
    bank = game.state["bank"]
    act(game, "ann", "attack_homeland", country="West Germany")
    assert game.state["chips"]["ann"] == 500
    assert game.state["bank"] == bank + 8_000
    assert game.current_players() == (CHANCE,)


def test_C_19_B_homeland_attack_needs_the_chips():
    game = game_at(owners={"ann": WEST_GERMANY_BORDER}, chips={"ann": 7_999})
    assert ("attack_homeland", "West Germany") not in kinds(game, "ann")


def test_C_19_C_conquered_homeland_eliminates_and_the_victor_takes_everything():
    game = game_at(
        owners={"ann": WEST_GERMANY_BORDER, "cy": ["Libya", "Egypt"]},
        allied={"cy": ["Maghreb"]},
        chips={"ann": 8_000, "cy": 3_750},
        records={"ann": 30, "cy": 12},
    )
    act(game, "ann", "attack_homeland", country="West Germany")
    battle(game, "ann")
    state = game.state
    assert state["active"] == ["ann", "bob"]
    assert [state["owner"][c] for c in ("West Germany", "Libya", "Egypt")] == ["ann"] * 3
    assert state["chips"]["ann"] == 3_750 and state["chips"]["cy"] == 0
    assert state["record"]["ann"] == 2 * (30 + 8 + 2 + 2)  # HOMELAND 8 + Libya 2 + Egypt 2
    assert "Maghreb" not in state["ally_of"] and state["owner"]["Maghreb"] is None
    assert game.current_players() == ("bob",)  # cy is out: the turn passes over him


def test_C_19_C_failed_homeland_attack_changes_nothing_but_the_paid_warchest():
    game = game_at(owners={"ann": WEST_GERMANY_BORDER}, chips={"ann": 9_000})
    act(game, "ann", "attack_homeland", country="West Germany")
    battle(game, "cy")
    assert game.state["active"] == PLAYERS and game.state["owner"]["West Germany"] == "cy"
    assert game.state["chips"]["ann"] == 1_000


def test_C_19_D_booty_is_divided_equally_within_the_alliance():
    players = ["ann", "bob", "cy", "dee"]
    game = game_at(
        players,
        owners={"ann": WEST_GERMANY_BORDER, "cy": ["Libya", "Egypt", "Zaire"]},
        chips={"ann": 8_000, "cy": 3_000},
        records={"ann": 20, "bob": 20},
        alliances=[["ann", "bob"]],
    )
    act(game, "ann", "attack_homeland", country="West Germany")
    battle(game, "ann")
    state = game.state
    # Countries are dealt by value to the member with the smaller share: WG 8 -> ann, then bob
    # takes Egypt 2, Libya 2 and Zaire 1 (5 < 8 throughout).
    assert state["owner"]["West Germany"] == "ann"
    assert [state["owner"][c] for c in ("Egypt", "Libya", "Zaire")] == ["bob"] * 3
    assert state["chips"]["ann"] == 1_500 and state["chips"]["bob"] == 10_000 + 1_500
    assert state["record"]["ann"] == 2 * (20 + 8) and state["record"]["bob"] == 2 * (20 + 5)


@pytest.mark.parametrize(("remainder", "ann_gets", "bank_gets"), [("victor", 2_000, 0), ("bank", 1_500, 500)])
def test_COTW_A6_chips_that_do_not_split_equally(remainder, ann_gets, bank_gets):
    game = game_at(
        options={"booty_remainder": remainder},
        owners={"ann": WEST_GERMANY_BORDER},
        chips={"ann": 8_000, "cy": 3_500, "bob": 0},
        alliances=[["ann", "bob"]],
    )
    act(game, "ann", "attack_homeland", country="West Germany")
    bank = game.state["bank"]
    battle(game, "ann")
    assert game.state["chips"]["bob"] == 1_500
    assert game.state["chips"]["ann"] == ann_gets
    assert game.state["bank"] - bank == bank_gets


# -- rule 20: after every country has been occupied -------------------------------------------------


def _all_but_peru_occupied(options=None):
    free = [c for c, owner in Game(R, R.default_setup(PLAYERS), 0).initial["owner"].items() if owner is None]
    owners = {player: free[index::3] for index, player in enumerate(PLAYERS)}
    for player in PLAYERS:
        owners[player] = [c for c in owners[player] if c not in ("Peru", "Venezuela")]
    owners["ann"].append("Venezuela")
    return game_at(options=options, owners=owners, chips={"ann": 20_000, "bob": 20_000, "cy": 20_000})


def test_C_20_A_final_round_starts_when_the_last_country_is_occupied():
    game = _all_but_peru_occupied()
    act(game, "ann", "occupy", country="Peru")
    assert game.state["final_round"] == ["bob", "cy", "ann"]
    assert game.current_players() == ("bob",)
    assert {k for k, _ in kinds(game, "bob")} <= {"pass", "attack"}  # occupied-country attacks only
    assert "propose_alliance" not in {k for k, _ in kinds(game, "bob")}


def test_C_20_A_each_player_gets_exactly_one_more_attack():
    game = _all_but_peru_occupied()
    act(game, "ann", "occupy", country="Peru")
    target = next(c for k, c in kinds(game, "bob") if k == "attack")
    act(game, "bob", "attack", country=target)
    battle(game, "bob")
    act(game, "cy", "pass")
    assert game.current_players() == ("ann",)
    act(game, "ann", "pass")
    assert game.state["ladder"] is not None  # final round over: END GAME


@pytest.mark.parametrize("allowed", [False, True])
def test_COTW_A7_homeland_attacks_in_the_final_round(allowed):
    game = game_at(
        options={"final_round_homeland_attacks": allowed},
        owners={"ann": WEST_GERMANY_BORDER},
        chips={"ann": 9_000},
        final_round=["ann", "bob", "cy"],
    )
    assert (("attack_homeland", "West Germany") in kinds(game, "ann")) is allowed


def test_C_20_B_a_pass_in_the_final_round_is_final():
    game = _all_but_peru_occupied()
    act(game, "ann", "occupy", country="Peru")
    act(game, "bob", "pass")
    assert game.state["final_round"] == ["cy", "ann"]
    assert game.current_players() == ("cy",)
    with pytest.raises(IllegalAction):
        act(game, "bob", "pass")


def test_C_20_B_no_income_in_the_final_round():
    game = _all_but_peru_occupied({"income_per_value": 200})
    act(game, "ann", "occupy", country="Peru")
    assert game.state["chips"]["bob"] == 20_000


@pytest.mark.parametrize(
    ("chips", "halves"),
    [
        (0, 0),
        (1_000, 2),
        (500, 1),
        (5_200, 10),
        (5_300, 11),
        (5_500, 11),
        (5_749, 11),
        (5_751, 12),
        (55_000, 110),
    ],
)
def test_C_20_C_every_1000_pbu_one_space_every_500_half_rounded_to_nearest_500(chips, halves):
    assert chips_to_record_halves(chips) == halves


@pytest.mark.parametrize(
    ("amount", "up", "down", "even"),
    [(250, 500, 0, 0), (750, 1_000, 500, 1_000), (1_250, 1_500, 1_000, 1_000), (1_750, 2_000, 1_500, 2_000)],
)
def test_COTW_A3_rounding_exact_halves(amount, up, down, even):
    assert [round_to_nearest_500(amount, mode) for mode in ("up", "down", "even")] == [up, down, even]


def test_C_20_C_chips_are_converted_after_the_last_round():
    game = game_at(
        chips={"ann": 5_250, "bob": 1_700, "cy": 0},
        records={"ann": 10, "bob": 10, "cy": 30},
        final_round=["ann"],
    )
    bank = game.state["bank"]
    act(game, "ann", "pass")
    state = game.state
    assert state["chips"] == {"ann": 0, "bob": 0, "cy": 0}
    assert state["bank"] == bank + 5_250 + 1_700
    assert state["record"]["ann"] == 2 * 10 + 11  # 5250 -> 5500 (COTW-A3 up) -> 5½ spaces
    assert state["record"]["bob"] == 2 * 10 + 3  # 1700 -> 1500 -> 1½ spaces


# -- rule 21: the END GAME ------------------------------------------------------------------------------


def test_C_21_A_no_new_alliances_in_the_end_game():
    game = end_game({"ann": 10, "bob": 20, "cy": 30})
    for player in game.current_players():
        assert {a.kind for a in game.legal_actions(player)} == {"weapon"}


def test_C_21_B_lowest_record_challenges_the_next_highest():
    game = end_game({"ann": 30, "bob": 12, "cy": 20})
    duel = game.state["ladder"]["duel"]
    assert (duel["attacker"], duel["defender"]) == ("bob", "cy")


def test_C_21_B_two_tied_for_last_play_off():
    game = end_game({"ann": 20, "bob": 30, "cy": 20})
    duel = game.state["ladder"]["duel"]
    assert (duel["attacker"], duel["defender"]) == ("ann", "cy")


def test_COTW_A4_more_than_two_tied_for_last_seating_order_decides():
    players = ["ann", "bob", "cy", "dee"]
    game = end_game({"ann": 40, "bob": 20, "cy": 20, "dee": 20}, players=players)
    duel = game.state["ladder"]["duel"]
    assert (duel["attacker"], duel["defender"]) == ("bob", "cy")
    assert game.state["ladder"]["waiting"] == ["dee", "ann"]


def test_C_21_B_allies_do_not_fight_each_other_skip_ruling():
    game = end_game({"ann": 10, "bob": 20, "cy": 30}, alliances=[["ann", "bob"]])
    duel = game.state["ladder"]["duel"]
    assert (duel["attacker"], duel["defender"]) == ("ann", "cy")
    assert game.state["ladder"]["waiting"] == []  # COTW-A4 "skip": bob is passed over for good


def test_COTW_A4_allies_deferred_ruling_keeps_the_ally_on_the_ladder():
    game = end_game(
        {"ann": 10, "bob": 20, "cy": 30}, alliances=[["ann", "bob"]], options={"ladder_allies": "defer"}
    )
    assert game.state["ladder"]["waiting"] == ["bob"]
    weapons(game, ann="TANK", cy="SUB")
    duel_battle(game, "cy", {"ann": 0, "cy": 3_000})
    # cy now holds the ladder and challenges the deferred bob.
    duel = game.state["ladder"]["duel"]
    assert (duel["attacker"], duel["defender"]) == ("cy", "bob")


def test_C_21_C_energy_units_are_the_record_times_100():
    # Illustration U/V: a POWER BASE RECORD of 55 puts 5500 energy units on the screen.
    assert energy_units(2 * 55) == 5_500
    game = end_game({"ann": 55, "bob": 60, "cy": 70})
    assert game.state["ladder"]["duel"]["energy"] == {"ann": 5_500, "bob": 6_000}


def test_C_21_C_weapon_choice_is_tank_sub_or_plane():
    game = end_game({"ann": 10, "bob": 20, "cy": 30})
    assert {a.params["weapon"] for a in game.legal_actions("ann")} == {"TANK", "SUB", "PLANE"}
    with pytest.raises(IllegalAction):
        act(game, "ann", "weapon", weapon="LASER")


def test_C_H_4_secret_weapon_entry_is_committed_then_revealed():
    game = end_game({"ann": 10, "bob": 20, "cy": 30})
    act(game, "ann", "weapon", weapon="PLANE")
    assert game.current_players() == ("bob",)
    assert not any(e.get("action") for e in game.events("bob"))
    assert game.describe_action(game.actions[-1], "bob") == "ann: committed a secret move"
    act(game, "bob", "weapon", weapon="TANK")
    assert game.state["ladder"]["duel"]["weapons"] == {"ann": "PLANE", "bob": "TANK"}


def test_C_H_4_open_weapon_entry_low_player_first():
    game = end_game({"ann": 10, "bob": 20, "cy": 30}, options={"weapon_entry": "open"})
    assert game.current_players() == ("ann",)
    act(game, "ann", "weapon", weapon="SUB")
    assert game.current_players() == ("bob",)


def test_C_21_D_winner_advances_one_loser_retreats_one():
    game = end_game({"ann": 10, "bob": 20, "cy": 30})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "ann", {"ann": 900, "bob": 1_000})
    assert game.state["record"]["ann"] == 22 and game.state["record"]["bob"] == 38


def test_COTW_A9_a_record_does_not_retreat_below_zero():
    game = end_game({"ann": 0.5, "bob": 20, "cy": 30})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "bob", {"ann": 0, "bob": 2_000})
    assert game.state["record"]["ann"] == 0


def test_C_21_E_attack_and_defence_alternate():
    game = end_game({"ann": 10, "bob": 20, "cy": 30})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "ann", {"ann": 900, "bob": 1_000})
    duel = game.state["ladder"]["duel"]
    assert (duel["attacker"], duel["defender"], duel["number"]) == ("bob", "ann", 2)


def test_C_21_F_a_lost_weapon_cannot_be_used_in_the_next_battle_only():
    game = end_game({"ann": 10, "bob": 20, "cy": 30})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "ann", {"ann": 900, "bob": 1_000})
    assert {a.params["weapon"] for a in game.legal_actions("bob")} == {"TANK", "PLANE"}
    assert {a.params["weapon"] for a in game.legal_actions("ann")} == {"TANK", "SUB", "PLANE"}
    with pytest.raises(IllegalAction):
        act(game, "bob", "weapon", weapon="SUB")
    weapons(game, bob="PLANE", ann="TANK")
    duel_battle(game, "bob", {"ann": 500, "bob": 1_000})
    assert {a.params["weapon"] for a in game.legal_actions("bob")} == {"TANK", "SUB", "PLANE"}
    assert {a.params["weapon"] for a in game.legal_actions("ann")} == {"SUB", "PLANE"}


def test_COTW_A5_lost_weapon_left_to_the_players_when_not_enforced():
    game = end_game({"ann": 10, "bob": 20, "cy": 30}, options={"lost_weapon_enforced": False})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "ann", {"ann": 900, "bob": 1_000})
    assert {a.params["weapon"] for a in game.legal_actions("bob")} == {"TANK", "SUB", "PLANE"}


def test_C_21_G_combat_continues_until_one_side_runs_out_then_leftovers_convert():
    game = end_game({"ann": 10, "bob": 20, "cy": 30})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "bob", {"ann": 400, "bob": 2_000})
    assert game.state["ladder"]["duel"] is not None  # ann still has units: fight on
    weapons(game, bob="TANK", ann="PLANE")
    duel_battle(game, "bob", {"ann": 0, "bob": 1_750})
    # bob: 20 + 1 + 1 battles won, then 1750 -> 2000 (nearest 500, halves up) -> +2 spaces.
    assert game.state["record"]["bob"] == 2 * 24
    assert game.state["record"]["ann"] == 2 * 8


@pytest.mark.parametrize(("units", "literal", "symmetric"), [(5_500, 11, 110), (1_750, 4, 40), (200, 0, 0)])
def test_COTW_A1_leftover_conversion_literal_or_symmetric(units, literal, symmetric):
    assert leftover_to_record_halves(units) == literal
    assert leftover_to_record_halves(units, units_per_space=100) == symmetric


def test_C_21_G_bad_screen_readings_are_rejected():
    game = end_game({"ann": 10, "bob": 20, "cy": 30})
    weapons(game, ann="TANK", bob="SUB")
    for result in (
        {"winner": "cy", "energy": {"ann": 0, "bob": 100}},
        {"winner": "ann", "energy": {"ann": 1_100, "bob": 100}},  # more than ann had
        {"winner": "ann", "energy": {"ann": 500, "bob": 2_000}},  # the loser lost nothing
        {"winner": "ann", "energy": {"ann": 0, "bob": 0}},  # the winner cannot have run out
        {"winner": "ann"},
    ):
        with pytest.raises(IllegalAction):
            game.step_chance(ManualResolver(lambda request, result=result: result))
    assert game.state["phase"] == "duel_battle"


def test_C_21_H_the_greater_record_challenges_the_next_highest_until_all_have_competed():
    game = end_game({"ann": 10, "bob": 12, "cy": 30})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "ann", {"ann": 1_000, "bob": 0})
    # ann 10 + 1 + 1 (1000 leftover) = 12; bob 12 - 1 = 11: ann goes on against cy.
    assert game.state["record"] == {"ann": 24, "bob": 22, "cy": 60}
    duel = game.state["ladder"]["duel"]
    assert (duel["attacker"], duel["defender"]) == ("ann", "cy")
    assert duel["energy"] == {"ann": 1_200, "cy": 3_000}
    weapons(game, ann="PLANE", cy="PLANE")
    duel_battle(game, "cy", {"ann": 0, "cy": 2_600})
    assert game.is_terminal()


@pytest.mark.parametrize(("tie", "holder"), [("survivor", "bob"), ("challenger", "ann")])
def test_COTW_A10_equal_records_after_a_confrontation(tie, holder):
    game = end_game({"ann": 10, "bob": 10, "cy": 30}, options={"ladder_tie": tie})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "ann", {"ann": 1_000, "bob": 900})  # ann 11, bob 9
    weapons(game, bob="TANK", ann="PLANE")
    duel_battle(game, "bob", {"ann": 0, "bob": 200})  # ann 10, bob 10; 200 leftover rounds to 0
    assert game.state["record"]["ann"] == game.state["record"]["bob"] == 20
    assert game.state["ladder"]["duel"]["attacker"] == holder


# -- rule 22 and the inferred and house rules -----------------------------------------------------------
def test_C_22_the_strongest_record_at_the_end_wins():
    game = end_game({"ann": 10, "bob": 12, "cy": 30})
    weapons(game, ann="TANK", bob="SUB")
    duel_battle(game, "bob", {"ann": 0, "bob": 1_000})
    weapons(game, bob="TANK", cy="SUB")
    duel_battle(game, "bob", {"bob": 100, "cy": 0})
    # bob 12 + 1 + 1 (1000 leftover) + 1, 100 leftover adds nothing = 15; cy 30 - 1 = 29.
    assert game.is_terminal() and game.state["winners"] == ["cy"]
    assert R.winners(game.state) == ["cy"]


@pytest.mark.parametrize(("tie", "winners"), [("shared", ["ann", "cy"]), ("seat", ["ann"])])
def test_COTW_A11_equal_greatest_records_at_the_end(tie, winners):
    game = end_game({"ann": 20, "bob": 10, "cy": 21}, options={"final_tie": tie})
    weapons(game, bob="TANK", ann="SUB")
    duel_battle(game, "ann", {"bob": 0, "ann": 200})  # ann 21, bob 9; 200 leftover rounds to 0
    weapons(game, ann="TANK", cy="SUB")
    duel_battle(game, "ann", {"ann": 1_000, "cy": 1_000})  # ann 22, cy 20
    weapons(game, cy="PLANE", ann="SUB")
    duel_battle(game, "cy", {"ann": 0, "cy": 200})  # ann 21, cy 21
    assert game.state["record"] == {"ann": 42, "bob": 18, "cy": 42}
    assert game.is_terminal() and game.state["winners"] == winners


def test_C_I_1_setup_needs_distinct_homelands_from_the_board():
    setup = R.default_setup(PLAYERS)
    assert setup["homelands"] == {"ann": "United States", "bob": "Soviet Union", "cy": "West Germany"}
    for homelands in (
        {"ann": "United States", "bob": "United States", "cy": "China"},
        {"ann": "Peru", "bob": "Soviet Union", "cy": "China"},
        {"ann": "United States", "bob": "Soviet Union"},
    ):
        with pytest.raises(IllegalAction):
            R.initial_state({**setup, "homelands": homelands}, 0)
    with pytest.raises(IllegalAction):
        R.initial_state(R.default_setup(["solo"]), 0)
    with pytest.raises(IllegalAction, match="unknown Conquest option"):
        R.initial_state(R.default_setup(PLAYERS, {"dice": 3}), 0)
    with pytest.raises(IllegalAction, match="rounding_halves"):
        R.initial_state(R.default_setup(PLAYERS, {"rounding_halves": "sideways"}), 0)


def test_C_I_2_turns_pass_to_the_left_and_rounds_count():
    game = game_at()
    assert game.current_players() == ("ann",)
    act(game, "ann", "pass")
    act(game, "bob", "pass")
    assert game.current_players() == ("cy",) and game.state["round"] == 1
    act(game, "cy", "pass")
    assert game.current_players() == ("ann",) and game.state["round"] == 2


def test_C_I_3_occupying_an_unoccupied_bordering_country():
    game = game_at(chips={"ann": 10_000})
    assert ("occupy", "Canada") in kinds(game, "ann")
    assert ("occupy", "Peru") not in kinds(game, "ann")  # does not border ann's countries
    act(game, "ann", "occupy", country="Canada")
    state = game.state
    assert state["owner"]["Canada"] == "ann"
    assert state["chips"]["ann"] == 10_000 - 4 * 500
    assert state["record"]["ann"] == 2 * (10 + 4)
    assert game.current_players() == ("bob",)  # one action per turn
    with pytest.raises(IllegalAction):
        game.apply(Action("occupy", "bob", {"country": "Canada"}))


def test_C_I_3_occupying_needs_the_chips():
    game = game_at(chips={"ann": 1_999})
    assert ("occupy", "Canada") not in kinds(game, "ann")
    assert ("occupy", "Mexico") in kinds(game, "ann")


def test_C_I_4_attacking_an_occupied_country():
    game = game_at(owners={"bob": ["Canada"]}, chips={"ann": 4_000}, records={"bob": 13})
    act(game, "ann", "attack", country="Canada")
    assert game.state["chips"]["ann"] == 0
    battle(game, "ann")
    assert game.state["owner"]["Canada"] == "ann"
    assert game.state["record"]["ann"] == 2 * (10 + 4)
    assert game.state["record"]["bob"] == 2 * (13 - 4)


def test_C_I_4_a_repelled_attack_keeps_the_country():
    game = game_at(owners={"bob": ["Canada"]}, chips={"ann": 4_000}, records={"bob": 13})
    act(game, "ann", "attack", country="Canada")
    battle(game, "bob")
    assert game.state["owner"]["Canada"] == "bob" and game.state["record"]["bob"] == 26


def test_C_I_8_defender_record_option():
    game = game_at(
        options={"defender_loses_record": False},
        owners={"bob": ["Canada"]},
        chips={"ann": 4_000},
        records={"bob": 13},
    )
    act(game, "ann", "attack", country="Canada")
    battle(game, "ann")
    assert game.state["record"]["bob"] == 26


def test_C_I_4_battle_results_name_one_of_the_two_sides():
    game = game_at(owners={"bob": ["Canada"]}, chips={"ann": 4_000})
    act(game, "ann", "attack", country="Canada")
    with pytest.raises(IllegalAction, match="names the winner"):
        battle(game, "cy")
    assert game.state["phase"] == "battle"


def test_C_I_5_warchest_payments_go_to_the_bank_and_are_conserved():
    game = game_at(chips={"ann": 10_000})
    total = sum(game.state["chips"].values()) + game.state["bank"]
    act(game, "ann", "occupy", country="Mexico")
    assert sum(game.state["chips"].values()) + game.state["bank"] == total
    assert [e["pbu"] for e in game.state["events"] if e["kind"] == "warchest"] == [1_500]


def test_C_I_6_alliance_needs_consent_and_allies_do_not_attack_each_other():
    game = game_at(owners={"bob": ["Canada"]}, chips={"ann": 10_000})
    act(game, "ann", "propose_alliance", to="bob")
    assert game.current_players() == ("bob",)
    assert {a.kind for a in game.legal_actions("bob")} == {"accept_alliance", "decline_alliance"}
    act(game, "bob", "accept_alliance")
    assert game.state["alliances"] == [["ann", "bob"]]
    assert game.current_players() == ("ann",)  # proposing does not end the turn
    assert ("attack", "Canada") not in kinds(game, "ann")
    assert "propose_alliance" not in {k for k, _ in kinds(game, "ann")}


def test_C_I_6_declined_alliance_and_one_proposal_per_turn():
    game = game_at()
    act(game, "ann", "propose_alliance", to="cy")
    act(game, "cy", "decline_alliance")
    assert game.state["alliances"] == [] and game.current_players() == ("ann",)
    assert "propose_alliance" not in {k for k, _ in kinds(game, "ann")}


def test_C_I_7_allied_country_counts_as_held_but_not_on_the_record():
    game = game_at(chips={"ann": 10_000})
    act(game, "ann", "ally", country="Canada")
    state = game.state
    assert state["ally_of"]["Canada"] == "ann" and state["owner"]["Canada"] is None
    assert state["chips"]["ann"] == 10_000 - 4 * 250 and state["record"]["ann"] == 20
    assert "Canada" not in R.unoccupied(state)
    assert "United Kingdom" in R.reachable(state, "ann")  # an allied country extends ann's borders


def test_C_I_7_allied_country_can_be_attacked_as_occupied():
    game = game_at(allied={"ann": ["Canada"]}, owners={"cy": ["United Kingdom"]}, chips={"cy": 5_000})
    act(game, "ann", "pass")
    act(game, "bob", "pass")
    act(game, "cy", "attack", country="Canada")
    battle(game, "cy")
    assert game.state["owner"]["Canada"] == "cy" and "Canada" not in game.state["ally_of"]
    assert game.state["record"]["ann"] == 20  # ann never had it on her record


def test_C_I_8_record_starts_at_the_homeland_value():
    state = R.initial_state(R.default_setup(PLAYERS), 0)
    assert state["record"] == {"ann": 20, "bob": 18, "cy": 16}


def test_C_H_1_income_per_value_held_at_each_campaign_turn():
    game = game_at(options={"income_per_value": 200}, owners={"bob": ["Poland"]}, chips={"bob": 0})
    bank = game.state["bank"]
    act(game, "ann", "pass")
    assert game.state["chips"]["bob"] == (9 + 3) * 200
    assert game.state["bank"] == bank - (9 + 3) * 200


def test_C_H_2_starting_chips_and_bank():
    state = R.initial_state(R.default_setup(PLAYERS, {"starting_chips": 3_000, "income_per_value": 0}), 0)
    assert state["chips"] == {"ann": 3_000, "bob": 3_000, "cy": 3_000}
    assert state["bank"] == 500_000


def test_C_H_3_the_clock_starts_the_final_round():
    game = game_at(options={"max_rounds": 1})
    act(game, "ann", "pass")
    act(game, "bob", "pass")
    act(game, "cy", "pass")
    assert game.state["final_round"] == ["ann", "bob", "cy"]


def test_C_19_C_last_player_standing_goes_straight_to_the_end():
    soviet_border = ["Balkans", "Czechoslovakia", "Iran", "Poland", "Scandinavia", "Siberia"]
    game = game_at(
        players=["ann", "bob"],
        owners={"ann": [*soviet_border, "Soviet Central Asia", "Turkey"]},
        chips={"ann": 9_000, "bob": 1_000},
        records={"ann": 20, "bob": 8},
    )
    act(game, "ann", "attack_homeland", country="Soviet Union")
    battle(game, "ann")
    assert game.is_terminal() and game.state["winners"] == ["ann"]
    # 20 + 9 (HOMELAND) + 1 (bob's 1000 chips, converted at the end)
    assert game.state["record"]["ann"] == 2 * 30


def test_COTW_A13_a_side_with_no_units_has_run_out_without_a_battle():
    game = end_game({"ann": 0, "bob": 20, "cy": 30})
    # ann (0 units) challenges bob: no battle; bob's whole 2000-unit entry comes back as +2 spaces.
    assert game.state["record"]["bob"] == 2 * 22
    duel = game.state["ladder"]["duel"]
    assert (duel["attacker"], duel["defender"]) == ("bob", "cy")


def test_COTW_A14_countries_freed_in_the_final_round_stay_unoccupied():
    game = game_at(
        options={"final_round_homeland_attacks": True},
        owners={"ann": WEST_GERMANY_BORDER},
        allied={"cy": ["Maghreb"]},
        chips={"ann": 8_000},
        final_round=["ann", "bob", "cy"],
    )
    act(game, "ann", "attack_homeland", country="West Germany")
    battle(game, "ann")
    assert game.state["owner"]["Maghreb"] is None and "Maghreb" not in game.state["ally_of"]
    assert game.state["final_round"] == ["bob"]
    assert ("occupy", "Maghreb") not in kinds(game, "bob")
