"""Conquest through the generic engine checks: playouts, save/load, undo, views, board files."""

from __future__ import annotations

import json

import pytest

from hilbridge.game import Action, Game, SaveFileError, get_ruleset
from hilbridge.game.conformance import (
    check_json_state,
    check_save_load_continue,
    check_undo_to_start,
    check_views_hide,
    play_random_moves,
    random_playout,
)
from hilbridge.game.conquest.board import BoardError, board_problems, default_board, load_board
from hilbridge.game.conquest.rules import ConquestRuleset

R = get_ruleset("conquest")
PLAYOUTS = 2_000


def _setup(seed: int) -> dict:
    """Setups cycle through 2–6 players, clocks of 2–8 rounds and the non-default rulings."""
    players = [f"p{i}" for i in range(2 + seed % 5)]
    options = {"max_rounds": 2 + seed % 7}
    if seed % 3 == 0:
        options |= {
            "rounding_halves": "even",
            "leftover_units_per_space": 100,
            "homeland_siege_by": "alliance",
            "final_round_homeland_attacks": True,
            "booty_remainder": "bank",
            "ladder_allies": "defer",
            "weapon_entry": "open",
        }
    if seed % 4 == 1:
        options |= {"starting_chips": 40_000, "income_per_value": 1_000}
    return R.default_setup(players, options)


# The sea crossings that join the Americas to the rest of the reconstructed board.
CROSSINGS = [
    ["Argentina", "South Africa"],
    ["Brazil", "Nigeria"],
    ["Canada", "United Kingdom"],
    ["Siberia", "United States"],
]

SETUPS = [_setup(seed) for seed in range(420)]


@pytest.mark.slow
def test_random_playouts_end_with_invariants_holding():
    """Random legal moves and battle results; check_invariants runs after every transition."""
    finished = 0
    for seed in range(PLAYOUTS):
        result = random_playout(R, SETUPS[seed % len(SETUPS)], seed, max_steps=20_000)
        assert result.terminal, f"seed {seed} did not finish in {result.steps} steps"
        finished += 1
        assert result.state["winners"], f"seed {seed} ended without a winner"
    assert finished == PLAYOUTS


def _start_with_p2_in_poland() -> dict:
    """A three-player start (p0 United States, p1 Soviet Union, p2 West Germany) where p2 also holds
    Poland, on the Soviet Union's border."""
    state = R.initial_state(R.default_setup(["p0", "p1", "p2"]), 0)
    state["owner"]["Poland"] = "p2"
    return state


def _move_chips(state: dict, player: str, chips: int) -> None:
    """Give `player` this many chips, the bank paying the difference (chips stay conserved)."""
    state["bank"] -= chips - state["chips"][player]
    state["chips"][player] = chips


def _eliminate_p2(state: dict) -> None:
    state["active"].remove("p2")
    state["owner"]["West Germany"] = state["owner"]["Poland"] = None


def _duel_with_negative_energy(state: dict) -> None:
    duel = {"attacker": "p0", "defender": "p1", "banned": {}, "weapons": {}, "number": 1}
    state["ladder"] = {"holder": "p0", "waiting": [], "duel": {**duel, "energy": {"p0": -100, "p1": 0}}}


@pytest.mark.parametrize(
    ("change", "action", "problem"),
    [
        (lambda s: s["chips"].update(p0=s["chips"]["p0"] + 1), None, "PBU chips not conserved"),
        (lambda s: _move_chips(s, "p1", -1), None, "negative chips"),
        (lambda s: _move_chips(s, "p1", s["bank"] + s["chips"]["p1"] + 500), None, "negative chips"),
        (lambda s: s["record"].update(p2=-1), None, "negative POWER BASE RECORD"),
        (lambda s: s["owner"].update(Peru="p3"), None, "Peru held by an eliminated player"),
        (lambda s: s["ally_of"].update(Poland="p1"), None, "Poland occupied and allied"),
        (lambda s: s["ally_of"].update(Peru="p3"), None, "allied to an eliminated player"),
        (lambda s: s["owner"].update({"United States": "p1"}), None, "p0 lost the HOMELAND but plays on"),
        (_eliminate_p2, None, "eliminated p2 still has chips"),
        (_duel_with_negative_energy, None, "negative energy"),
        (lambda s: None, Action("occupy", "p0", {"country": "Peru"}), "Peru does not border p0"),
        (lambda s: None, Action("attack_homeland", "p2", {"country": "Soviet Union"}), "before its siege"),
    ],
)
def test_check_invariants_names_each_broken_law(change, action, problem):
    before = _start_with_p2_in_poland()
    R.check_invariants(before, None, before)
    after = json.loads(json.dumps(before))
    change(after)
    with pytest.raises(AssertionError, match=problem):
        R.check_invariants(before, action, after)


class SiegeStart(ConquestRuleset):
    """Conquest from a position where p0 besieges p2's HOMELAND and p1 is p0's ally."""

    def initial_state(self, setup, seed):
        state = super().initial_state(setup, seed)
        for country in state["board"]["neighbours"]["West Germany"]:
            state["owner"][country] = "p0"
        state["owner"]["Libya"] = state["owner"]["Egypt"] = "p2"
        state["ally_of"]["Maghreb"] = "p2"
        state["alliances"] = [["p0", "p1"]]
        return state


@pytest.mark.slow
def test_random_playouts_through_homeland_conquests():
    siege = SiegeStart()
    eliminations = 0
    for seed in range(300):
        setup = siege.default_setup(["p0", "p1", "p2", "p3"][: 3 + seed % 2], {"max_rounds": 3 + seed % 4})
        result = random_playout(siege, setup, seed)
        assert result.terminal
        eliminations += "p2" not in result.state["active"]
    assert eliminations > 30


def test_state_is_plain_json_throughout_a_game():
    game = Game(R, SETUPS[1], seed=1)
    while not game.is_terminal():
        play_random_moves(game, 1, policy_seed=1)
        check_json_state(game.state)


@pytest.mark.parametrize("seed", range(12))
def test_save_load_continue_equals_never_saving(seed):
    check_save_load_continue(R, SETUPS[seed], seed, split=5 + seed * 7, total=400)


@pytest.mark.parametrize("seed", range(6))
def test_undo_back_to_the_start_reproduces_every_state(seed):
    assert check_undo_to_start(R, SETUPS[seed], seed, total=400) > 10


def test_secret_weapons_stay_hidden_in_views_and_logs():
    seen_commit = False
    for seed in range(0, 60, 3):
        setup = R.default_setup(["ann", "bob", "cy"], {"max_rounds": 2})
        game = Game(R, setup, seed)
        while not game.is_terminal():
            play_random_moves(game, 1, policy_seed=seed)
            check_views_hide(game, lambda state: {})
            seen_commit |= bool(game.commits)
    assert seen_commit


def test_save_never_overwritten_by_a_failed_load(tmp_path):
    game = Game(R, SETUPS[2], seed=2)
    play_random_moves(game, 30, policy_seed=2)
    path = tmp_path / "game.json"
    game.save(path)
    good = path.read_bytes()
    data = json.loads(good)
    data["snapshot"]["chips"]["p0"] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(SaveFileError):
        Game.load(bad)
    assert path.read_bytes() == good


def test_the_reconstructed_board_is_valid_and_matches_the_manual_counts():
    board = default_board()
    assert board_problems(board) == []
    assert sum(len(zone["countries"]) for zone in board["zones"]) == 43
    assert len(board["zones"]) == 11
    assert board["status"] == "reconstruction"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda b: b["borders"].append(["Canada", "Atlantis"]), "must name two countries"),
        (lambda b: b["borders"].append(["Peru", "Argentina"]), "listed twice"),
        (lambda b: b["borders"].append(["Peru", "Peru"]), "cannot border itself"),
        (lambda b: b["zones"][0]["countries"].append({"name": "Peru", "value": 1}), "listed twice"),
        (lambda b: b["zones"][0]["countries"][0].update(value=0), "positive whole"),
        (lambda b: b["zones"].pop(), "zones"),
        (lambda b: b["homelands"].pop(), "homelands must list 6"),
        (lambda b: b["borders"].append(["United States", "Japan"]), "borders another homeland"),
        (lambda b: b.update(version=2), "format must be"),
        (
            lambda b: b.update(borders=[e for e in b["borders"] if sorted(e) not in CROSSINGS]),
            "not connected",
        ),
    ],
)
def test_board_validator_names_each_problem(change, problem):
    board = default_board()
    change(board)
    assert any(problem in text for text in board_problems(board)), board_problems(board)


def test_a_user_board_file_is_loaded_and_checked(tmp_path):
    path = tmp_path / "board.json"
    board = default_board()
    board["zones"][0]["countries"][0]["value"] = 5
    path.write_text(json.dumps(board))
    assert load_board(path)["zones"][0]["countries"][0]["value"] == 5
    path.write_text(json.dumps(board)[:-10])
    with pytest.raises(BoardError, match="not valid JSON") as caught:
        load_board(path)
    assert caught.value.location.line == 1
    board["zones"][0]["countries"][0]["value"] = -1
    path.write_text(json.dumps(board))
    with pytest.raises(BoardError, match="invalid board"):
        load_board(path)


def test_equal_boards_are_checked_and_compiled_once():
    """Setups for two and for three players carry equal boards (their homeland lists share strings
    with the setup differently): the first game compiles the board, the second reuses it."""
    ruleset = ConquestRuleset()
    two = ruleset.initial_state(ruleset.default_setup(["ann", "bob"]), 0)
    three = ruleset.initial_state(ruleset.default_setup(["ann", "bob", "cy"]), 0)
    assert three["board"] is two["board"]


def test_a_game_keeps_its_board_when_the_board_file_changes(tmp_path):
    board = default_board()
    board["zones"][0]["countries"][0]["value"] = 9  # Canada
    setup = R.default_setup(["ann", "bob"])
    setup["board"] = board
    game = Game(R, setup, seed=0)
    game.save(tmp_path / "g.json")
    assert Game.load(tmp_path / "g.json").state["board"]["values"]["Canada"] == 9
