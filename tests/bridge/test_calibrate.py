"""Calibration learns our cartridge's screen profile from the screen alone (its RAM record unused),
then reads battles right; wrong answers and too few battles are reported, not hidden."""

from __future__ import annotations

import random
import threading

import click
import pytest
from bridge_support import model_battle
from click.testing import CliRunner

from hilbridge.bridge.calibrate import learn_profile, practice_battle
from hilbridge.bridge.combat import combat_image, combat_sha1
from hilbridge.bridge.consoles import EmulatorConsole
from hilbridge.bridge.profile import ROLES, load_profile, profile_for
from hilbridge.bridge.resolver import BattlePlan, battle_movie
from hilbridge.bridge.screen import BusReplay
from hilbridge.bridge.watch import SCREEN, watch_battle
from hilbridge.cli.main import cli
from hilbridge.errors import HilbridgeError
from hilbridge.game.conquest.rules import WEAPONS

SHIPPED = profile_for(combat_image())
PLAYERS = dict.fromkeys(ROLES, "")


def random_plan(rng: random.Random) -> BattlePlan:
    units = {role: rng.randrange(1, 400) * 50 for role in ROLES}
    return BattlePlan(PLAYERS, units, {role: rng.choice(WEAPONS) for role in ROLES})


def final_screen(console: EmulatorConsole, plan: BattlePlan) -> bytes:
    movie, last = battle_movie(plan, SHIPPED.keys)
    replay = BusReplay()
    for item in console.battle(movie, last + 200).items():
        replay.feed(item)
    return bytes(replay.registers)


def practice(count: int, seed: int):
    console = EmulatorConsole(combat_image())
    rng = random.Random(seed)
    battles = []
    for _ in range(count):
        plan = random_plan(rng)
        winner, left = model_battle(dict(plan.units), dict(plan.weapons))  # what the players read
        battles.append(practice_battle(final_screen(console, plan), winner, left))
    return battles


@pytest.mark.slow
def test_calibration_learns_the_screen_fields_and_then_reads_20_battles_right():
    learned, report = learn_profile(practice(10, seed=7), "combat", combat_sha1())
    assert report.sure and report.agreeing == {"winner": 10, "units.attacker": 10, "units.defender": 10}
    assert learned.record is None  # learned from the screen alone
    assert learned.screen is not None and SHIPPED.screen is not None
    assert learned.screen.winner.cells == SHIPPED.screen.winner.cells
    assert dict(learned.screen.labels) == {"ATK": "attacker", "DEF": "defender"}
    for role in ROLES:
        assert learned.screen.units[role] == SHIPPED.screen.units[role]
    console = EmulatorConsole(combat_image())
    rng = random.Random(99)
    for _ in range(20):
        plan = random_plan(rng)
        movie, last = battle_movie(plan, SHIPPED.keys)
        reading = watch_battle(console.battle(movie, last + 400), learned, last + 400)
        assert reading.source == SCREEN
        assert (reading.winner, dict(reading.units)) == model_battle(dict(plan.units), dict(plan.weapons))


def test_a_wrong_answer_and_one_sided_practice_are_reported():
    battles = practice(4, seed=3)
    first = battles[0]
    mistyped = type(first)(
        first.screen, first.winner, {**first.units, "attacker": first.units["attacker"] + 1}
    )
    _, report = learn_profile([mistyped, *battles[1:]], "combat", combat_sha1())
    assert report.agreeing["units.attacker"] == 3 and not report.sure
    assert "units.attacker: 3 of 4 battles agree" in report.describe()
    one_sided = [battle for battle in battles if battle.winner == battles[0].winner]
    with pytest.raises(HilbridgeError, match="wins by the attacker and by the defender"):
        learn_profile(one_sided * 2, "combat", combat_sha1())


@pytest.mark.slow
def test_calibrate_command_writes_the_profile_from_typed_answers(tmp_path):
    rng = random.Random(1)  # the command's --seed 1 draws the same entries
    answers = []
    for _ in range(6):
        units = {role: rng.randrange(1, 60) * 100 for role in ROLES}
        weapons = {role: rng.choice(WEAPONS) for role in ROLES}
        winner, left = model_battle(units, weapons)
        answers += [winner, str(left["attacker"]), str(left["defender"])]
    output = tmp_path / "learned.json"
    result = CliRunner().invoke(
        cli,
        ["bridge", "calibrate", "-d", "sim", "--battles", "6", "-o", str(output)],
        input="\n".join(answers) + "\n",
    )
    assert result.exit_code == 0, result.output
    assert "W I N" in result.output and "sure: every battle agrees" in result.output
    learned = load_profile(output)
    assert learned.sha1 == combat_sha1() and learned.screen is not None
    assert learned.screen.units == SHIPPED.screen.units


class RecordedConsole:
    """A console people play (not scripted), standing in for an adapter: each battle is a capture
    recorded beforehand on our emulator."""

    scripted = False
    name = "recorded"

    def __init__(self, captures: list[list]):
        self.cart = combat_image()
        self.captures = list(captures)
        self.shown = threading.Event()  # the battle's result is on screen

    def battle(self, movie, frames):
        assert movie == ()
        items = self.captures.pop(0)
        shown = self.shown
        shown.clear()

        class Source:
            header = None

            def items(self):
                yield from items
                shown.set()

            def close(self):
                pass

        return Source()


@pytest.mark.slow
def test_calibrate_with_people_at_a_console_reads_the_screen_when_they_press_enter(tmp_path, monkeypatch):
    console = EmulatorConsole(combat_image())
    rng = random.Random(5)
    captures, answers = [], []
    for _ in range(6):
        plan = random_plan(rng)
        movie, last = battle_movie(plan, SHIPPED.keys)
        captures.append(list(console.battle(movie, last + 200).items()))
        winner, left = model_battle(dict(plan.units), dict(plan.weapons))
        answers += ["", winner, str(left["attacker"]), str(left["defender"])]  # Enter, then the answers
    recorded = RecordedConsole(captures)
    monkeypatch.setattr("hilbridge.cli.bridge.open_console", lambda device, image, region: recorded)
    prompt = click.prompt

    def people(text, *args, **kwargs):
        if text.startswith("fight the battle"):
            assert recorded.shown.wait(10)  # they press Enter once the result is on screen
        return prompt(text, *args, **kwargs)

    monkeypatch.setattr(click, "prompt", people)
    output = tmp_path / "people.json"
    result = CliRunner().invoke(
        cli,
        ["bridge", "calibrate", "-d", "usb", "--battles", "6", "-o", str(output)],
        input="\n".join(answers) + "\n",
    )
    assert result.exit_code == 0, result.output
    assert (
        "practice battle 6 of 6" in result.output
        and "press Enter when its result is on screen" in result.output
    )
    learned = load_profile(output)
    assert learned.screen.winner.cells == SHIPPED.screen.winner.cells
