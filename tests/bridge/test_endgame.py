"""Complete Conquest games against the console running our combat cartridge, keys scripted: every
result comes off the bus, equals the documented battle rule, and the final board equals the one the
same results typed in by hand give."""

from __future__ import annotations

import pytest
from bridge_support import ScriptedUI, model_battle

from hilbridge.bridge.combat import combat_image
from hilbridge.bridge.consoles import EmulatorConsole
from hilbridge.bridge.profile import profile_for
from hilbridge.bridge.resolver import ConsoleResolver
from hilbridge.game import CHANCE, Action, Game, ManualResolver, get_ruleset

R = get_ruleset("conquest")
PROFILE = profile_for(combat_image())


def campaign_move(game: Game, player: str, attack: bool) -> Action:
    """Pass (straight to the END GAME), or attack / occupy where possible; weapons in turn."""
    moves = game.legal_actions(player)
    if moves[0].kind == "weapon":
        return moves[(len(game.entries) + game.setup["players"].index(player)) % len(moves)]
    if attack:
        for kind in ("attack", "occupy"):
            found = [move for move in moves if move.kind == kind]
            if found:
                return found[len(game.entries) % len(found)]
    return next(move for move in moves if move.kind == "pass")


def play(players: list[str], seed: int, options: dict, attack: bool) -> tuple[Game, ConsoleResolver, list]:
    game = Game(R, R.default_setup(players, options), seed)
    ui = ScriptedUI()
    resolver = ConsoleResolver(
        EmulatorConsole(combat_image()),
        PROFILE,
        ui,
        validate=lambda result: R.apply(game.state, Action("combat_result", CHANCE, result)),
    )
    log = []
    while not game.is_terminal():
        waiting = game.current_players()
        if waiting == (CHANCE,):
            log.append(("chance", game.step_chance(resolver)))
            continue
        for player in waiting:
            move = campaign_move(game, player, attack)
            game.apply(move)
            log.append(("move", move))
    assert ui.reasons == []  # nothing fell back to a manual entry
    return game, resolver, log


def by_hand(players: list[str], seed: int, options: dict, log: list) -> Game:
    """The same game with the battle results typed in (without their source)."""
    game = Game(R, R.default_setup(players, options), seed)
    for kind, action in log:
        if kind == "move":
            game.apply(action)
        else:
            typed = {key: value for key, value in action.params.items() if key != "source"}
            game.step_chance(ManualResolver(lambda request, typed=typed: typed))
    return game


def check_every_result_came_off_the_bus(resolver: ConsoleResolver, log: list) -> int:
    results = [action for kind, action in log if kind == "chance"]
    assert len(results) == len(resolver.battles) > 0
    for action, (plan, reading) in zip(results, resolver.battles, strict=True):
        assert plan is not None and reading is not None
        assert action.params["source"].startswith("console sim: ram record #")
        winner, left = model_battle(dict(plan.units), dict(plan.weapons))
        assert reading.winner == winner and dict(reading.units) == left
        assert action.params["winner"] == plan.players[winner]
        if "energy" in action.params:
            assert action.params["energy"] == {plan.players[role]: left[role] for role in left}
    return len(results)


@pytest.mark.slow
@pytest.mark.parametrize("players", [["ann", "bob", "cy"], ["ann", "bob", "cy", "dee"]])
def test_a_conquest_end_game_on_the_console(players):
    options = {"max_rounds": 1, "starting_chips": 40_000}  # records of ~50: duels of several battles
    game, resolver, log = play(players, 5, options, attack=False)
    battles = check_every_result_came_off_the_bus(resolver, log)
    assert battles >= len(players) - 1  # every confrontation has at least one battle
    duels = [item for item in game.events() if item["kind"] == "duel_battle"]
    assert len(duels) == battles
    # 21.G: the units a battle leaves are what each side enters in the next battle of the duel
    requests = [plan.units for plan, _ in resolver.battles]
    carried = 0
    for (_plan, reading), following in zip(resolver.battles, requests[1:], strict=False):
        if min(reading.units.values()) > 0:  # the duel goes on: roles swap (21.E)
            assert following == {"attacker": reading.units["defender"], "defender": reading.units["attacker"]}
            carried += 1
    assert carried > 0
    assert game.is_terminal() and R.winners(game.state)
    manual = by_hand(players, 5, options, log)
    final = {key: value for key, value in game.state.items() if key != "events"}
    assert final == {key: value for key, value in manual.state.items() if key != "events"}


@pytest.mark.slow
def test_campaign_battles_go_through_the_same_resolver():
    options = {"max_rounds": 3, "income_per_value": 600}
    game, resolver, log = play(["ann", "bob", "cy"], 2, options, attack=True)
    check_every_result_came_off_the_bus(resolver, log)
    kinds = [item["kind"] for item in game.events()]
    assert "battle" in kinds and "duel_battle" in kinds
    campaign = [item for item in game.events() if item["kind"] == "battle"]
    assert all(item["source"].startswith("console sim: ram record") for item in campaign)
    manual = by_hand(["ann", "bob", "cy"], 2, options, log)
    assert {k: v for k, v in game.state.items() if k != "events"} == {
        k: v for k, v in manual.state.items() if k != "events"
    }
