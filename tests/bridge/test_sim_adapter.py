"""A battle through the simulated adapter (the adapter protocol's capture of its console, which plays
the keys), and the same capture as a .hbcap file read back by `hilbridge screen` and by the bridge."""

from __future__ import annotations

import pytest
from bridge_support import ScriptedUI, model_battle
from click.testing import CliRunner

from hilbridge.bridge.combat import combat_image
from hilbridge.bridge.consoles import CaptureConsole, open_console
from hilbridge.bridge.profile import profile_for
from hilbridge.bridge.resolver import BattlePlan, ConsoleResolver
from hilbridge.bridge.watch import RECORD, watch_battle
from hilbridge.capture.file import CaptureReader, write_capture
from hilbridge.capture.stream import FrameSync
from hilbridge.cli.main import cli
from hilbridge.game.core import CombatRequest

PROFILE = profile_for(combat_image())
PLAN = BattlePlan(
    {"attacker": "ann", "defender": "bob"},
    {"attacker": 1800, "defender": 2500},
    {"attacker": "SUB", "defender": "PLANE"},
)


class Tee:
    """The console, keeping every item its captures yield."""

    def __init__(self, console: CaptureConsole):
        self.console = console
        self.name, self.cart, self.scripted = console.name, console.cart, console.scripted
        self.kept: list = []
        self.header = None

    def battle(self, movie, frames):
        source = self.console.battle(movie, frames)
        self.header = source.header
        outer = self

        class Kept:
            header = source.header

            def items(self):
                for item in source.items():
                    outer.kept.append(item)
                    yield item

            def close(self):
                source.close()

        return Kept()


@pytest.mark.slow
def test_a_battle_through_the_simulated_adapter_and_its_capture_file(tmp_path):
    console = open_console("sim?serial=SIM-BRIDGE", combat_image())
    assert isinstance(console, CaptureConsole) and console.scripted
    request = CombatRequest(
        "end_game_battle",
        "ann",
        "bob",
        {"energy": {"ann": 1800, "bob": 2500}, "weapons": {"ann": "SUB", "bob": "PLANE"}},
    )
    tee = Tee(console)
    resolver = ConsoleResolver(tee, PROFILE.without_record(), ScriptedUI())  # read off the screen
    result = resolver.resolve(request, None)
    winner, left = model_battle(dict(PLAN.units), dict(PLAN.weapons))
    assert result == {
        "winner": PLAN.players[winner],
        "energy": {"ann": left["attacker"], "bob": left["defender"]},
        "source": "console sim?serial=SIM-BRIDGE: screen",
    }
    # the same capture as a file: the RAM record in it, and the screen command at its last frame
    path = write_capture(tmp_path / "battle.hbcap", tee.header, tee.kept)
    with CaptureReader(str(path)) as reader:
        reading = watch_battle(reader, PROFILE, 10_000)
    assert (reading.source, reading.sequence, reading.winner, dict(reading.units)) == (
        RECORD,
        1,
        winner,
        left,
    )
    last = max(item.frame for item in tee.kept if isinstance(item, FrameSync))
    shown = CliRunner().invoke(cli, ["screen", str(path), "--frame", str(last)])
    assert shown.exit_code == 0, shown.output
    assert shown.output.rstrip("\n") == resolver.battles[0][1].screen
    assert "W I N" in shown.output
