"""One END GAME battle with MAME 0.251 as the console: keys through its input ports, the result off
its MOVX writes, the same as on our emulator and as the documented battle rule."""

from __future__ import annotations

import pytest
from bridge_support import ScriptedUI, model_battle
from conftest import require_tool

from hilbridge.bridge.combat import combat_image
from hilbridge.bridge.consoles import EmulatorConsole, MameConsole
from hilbridge.bridge.profile import profile_for
from hilbridge.bridge.resolver import ConsoleResolver
from hilbridge.game import CHANCE, Action, Game, get_ruleset

R = get_ruleset("conquest")


def first_battle() -> Game:
    game = Game(R, R.default_setup(["ann", "bob"], {"max_rounds": 1, "starting_chips": 30_000}), 8)
    while game.current_players() != (CHANCE,):
        for player in game.current_players():
            moves = game.legal_actions(player)
            game.apply(
                next((m for m in moves if m.kind == "pass"), None) or moves[2 if player == "ann" else 0]
            )
    return game


def fight(console) -> tuple[dict, ConsoleResolver]:
    game = first_battle()
    resolver = ConsoleResolver(
        console,
        profile_for(combat_image()),
        ScriptedUI(),
        validate=lambda result: R.apply(game.state, Action("combat_result", CHANCE, result)),
    )
    return dict(game.step_chance(resolver).params), resolver


@pytest.mark.mame
@pytest.mark.slow
def test_a_battle_on_mame_reads_the_same_result_as_on_our_emulator():
    require_tool("mame")
    on_mame, resolver = fight(MameConsole(combat_image()))
    on_emulator, _ = fight(EmulatorConsole(combat_image()))
    assert on_mame["source"] == "console mame: ram record #1"
    assert {k: v for k, v in on_mame.items() if k != "source"} == {
        k: v for k, v in on_emulator.items() if k != "source"
    }
    plan, reading = resolver.battles[0]
    assert plan is not None and reading is not None
    assert (reading.winner, dict(reading.units)) == model_battle(dict(plan.units), dict(plan.weapons))
