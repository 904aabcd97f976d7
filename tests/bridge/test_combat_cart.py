"""Our combat cartridge: rebuilt from its source byte for byte, and every battle it fights equals the
documented battle rule (an independent model), read both from its RAM record and from its screen."""

from __future__ import annotations

import pytest
from bridge_support import model_battle

from hilbridge.bridge.combat import build_combat_image, combat_image, combat_sha1
from hilbridge.bridge.consoles import EmulatorConsole
from hilbridge.bridge.profile import profile_for
from hilbridge.bridge.resolver import BattlePlan, battle_movie
from hilbridge.bridge.watch import RECORD, SCREEN, decode_record, watch_battle

PROFILE = profile_for(combat_image())
PLAYERS = {"attacker": "a", "defender": "d"}
WEAPON_CODE = {"TANK": 1, "SUB": 2, "PLANE": 3}


def fight(console: EmulatorConsole, units: dict[str, int], weapons: dict[str, str], *, use_record: bool):
    assert PROFILE.keys is not None
    movie, last = battle_movie(BattlePlan(PLAYERS, units, weapons), PROFILE.keys)
    frames = last + PROFILE.battle_frames
    return watch_battle(console.battle(movie, frames), PROFILE, frames, use_record=use_record)


def test_the_shipped_image_is_what_our_assembler_makes_of_the_shipped_source():
    assert build_combat_image() == combat_image()
    assert len(combat_image()) == 2048
    assert PROFILE.sha1 == combat_sha1()


BATTLES = [
    ({"attacker": 5500, "defender": 3000}, {"attacker": "TANK", "defender": "PLANE"}),
    ({"attacker": 1000, "defender": 1200}, {"attacker": "TANK", "defender": "SUB"}),
    ({"attacker": 700, "defender": 4000}, {"attacker": "SUB", "defender": "PLANE"}),
    ({"attacker": 2000, "defender": 2000}, {"attacker": "PLANE", "defender": "PLANE"}),  # equal: defender
    ({"attacker": 350, "defender": 99999}, {"attacker": "PLANE", "defender": "TANK"}),
    ({"attacker": 0, "defender": 50}, {"attacker": "SUB", "defender": "SUB"}),  # no units: no fight
    ({"attacker": 150, "defender": 0}, {"attacker": "SUB", "defender": "TANK"}),
    ({"attacker": 12345, "defender": 150}, {"attacker": "SUB", "defender": "SUB"}),
    ({"attacker": 100, "defender": 250}, {"attacker": "TANK", "defender": "TANK"}),
]


@pytest.mark.slow
def test_battles_follow_the_documented_rule_on_record_and_screen():
    console = EmulatorConsole(combat_image())
    for number, (units, weapons) in enumerate(BATTLES):
        winner, left = model_battle(units, weapons)
        from_record = fight(console, units, weapons, use_record=True)
        assert (from_record.source, from_record.sequence) == (RECORD, 2 * number + 1)  # two battles each
        assert (from_record.winner, dict(from_record.units)) == (winner, left), (units, weapons)
        ram = console.console.ram
        assert (
            ram[0x70] == 0xCB
            and ram[0x79] == WEAPON_CODE[weapons["attacker"]] * 16 + WEAPON_CODE[weapons["defender"]]
        )
        assert decode_record(ram, PROFILE.record)[0] == winner
        from_screen = fight(console, units, weapons, use_record=False)
        assert from_screen.source == SCREEN
        assert (from_screen.winner, dict(from_screen.units)) == (winner, left)
        label = "ATK" if winner == "attacker" else "DEF"
        assert "W I N" in from_screen.screen and label[0] + " " + label[1] in from_screen.screen
