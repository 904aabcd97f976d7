"""Bad input and bad consoles: every failure ends in a manual entry with a clear reason, the game
is untouched until a result is accepted, and broken profiles are refused with their file."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import pytest
from bridge_support import ScriptedUI, model_battle

from hilbridge.bridge.combat import combat_image
from hilbridge.bridge.consoles import EmulatorConsole, Movie
from hilbridge.bridge.profile import ProfileError, ScreenField, load_profile, profile_for
from hilbridge.bridge.resolver import ConsoleResolver
from hilbridge.capture.stream import CaptureHeader, CaptureItem, CaptureSource, FrameSync, Gap
from hilbridge.game import CHANCE, Action, Game, get_ruleset
from hilbridge.game.core import CombatRequest
from hilbridge.link.adapter import CaptureRecord

R = get_ruleset("conquest")
PROFILE = profile_for(combat_image())
SCREEN_ONLY = PROFILE.without_record()
ATTACKER_DIGIT_POINTERS = {0x16 + 4 * index for index in range(5)}  # characters 1-5, the attacker's units


def duel_game() -> Game:
    """A 2-player game at its first END GAME battle (bob, the lower record, attacks)."""
    game = Game(R, R.default_setup(["ann", "bob"], {"max_rounds": 1}), 4)
    while game.current_players() != (CHANCE,):
        for player in game.current_players():
            moves = game.legal_actions(player)
            game.apply(next((m for m in moves if m.kind == "pass"), moves[0]))
    return game


def typed_by_hand(request: CombatRequest, reason: str) -> dict:
    energy = dict(request.params["energy"])
    energy[request.defender] -= 50
    return {"winner": request.attacker, "energy": energy}


def resolver_for(game: Game, console, profile=PROFILE, ui=None) -> tuple[ConsoleResolver, ScriptedUI]:
    ui = ui or ScriptedUI(manual=typed_by_hand)
    resolver = ConsoleResolver(
        console,
        profile,
        ui,
        validate=lambda result: R.apply(game.state, Action("combat_result", CHANCE, result)),
    )
    return resolver, ui


class Tampered:
    """A console whose capture is changed on the way: `change(item)` returns the items to pass on
    (none: the item is dropped), `stop_after` frames end the capture (a console that stops)."""

    scripted = True
    name = "tampered"

    def __init__(self, change=None, stop_after: int | None = None, gap: bool = False):
        self.inner = EmulatorConsole(combat_image())
        self.cart = self.inner.cart
        self.change = change or (lambda item: [item])
        self.stop_after = stop_after
        self.gap = gap

    def battle(self, movie: Movie, frames: int) -> CaptureSource:
        outer = self

        class Source:
            header = CaptureHeader(source="sim")

            def items(self) -> Iterator[CaptureItem]:
                seen = 0
                for item in outer.inner.battle(movie, frames).items():
                    yield from outer.change(item)
                    seen += isinstance(item, FrameSync)
                    if outer.stop_after is not None and seen >= outer.stop_after:
                        if outer.gap:
                            yield Gap("the adapter stopped sending chunks", chunks=3)
                        return

            def close(self) -> None:
                pass

        return Source()


def garble_digits(item: CaptureItem) -> list[CaptureItem]:
    if isinstance(item, CaptureRecord) and not item.p1 & 0x08 and item.address in ATTACKER_DIGIT_POINTERS:
        return [dataclasses.replace(item, value=(item.value + 3) & 0xFF)]  # three rows into the glyph
    return [item]


def step(game: Game, resolver: ConsoleResolver) -> tuple[dict, dict]:
    before = json.dumps(game.to_json(), sort_keys=True)
    action = game.step_chance(resolver)
    return json.loads(before), dict(action.params)


def test_a_garbled_screen_falls_back_to_manual_with_the_reason():
    game = duel_game()
    resolver, ui = resolver_for(game, Tampered(garble_digits), SCREEN_ONLY)
    _, result = step(game, resolver)
    assert len(ui.reasons) == 1 and "units field for the attacker reads" in ui.reasons[0]
    assert "not a number" in ui.reasons[0] and "▒" in ui.reasons[0]
    assert result["source"].startswith("manual entry: the screen's units field")


def test_the_ram_record_is_read_although_the_screen_is_garbled():
    game = duel_game()
    resolver, ui = resolver_for(game, Tampered(garble_digits))
    _, result = step(game, resolver)
    assert ui.reasons == [] and result["source"] == "console tampered: ram record #1"


def test_an_ambiguous_screen_falls_back_to_manual():
    assert SCREEN_ONLY.screen is not None
    units = dict(SCREEN_ONLY.screen.units)
    defender_cells = units["defender"].cells
    units["attacker"] = ScreenField(units["attacker"].cells, (defender_cells,))
    ambiguous = dataclasses.replace(SCREEN_ONLY, screen=dataclasses.replace(SCREEN_ONLY.screen, units=units))
    game = duel_game()
    resolver, ui = resolver_for(game, Tampered(), ambiguous)
    step(game, resolver)
    assert len(ui.reasons) == 1 and ui.reasons[0].startswith("ambiguous screen: the attacker's units read")


def test_a_damaged_record_is_refused_and_the_screen_read_instead():
    def damage(item: CaptureItem) -> list[CaptureItem]:
        if isinstance(item, CaptureRecord) and item.p1 & 0x08 and item.address == 0x7A:
            return [dataclasses.replace(item, value=item.value ^ 0xFF)]  # the checksum byte
        return [item]

    game = duel_game()
    resolver, ui = resolver_for(game, Tampered(damage))
    _, result = step(game, resolver)
    assert ui.reasons == [] and result["source"] == "console tampered: screen"


@pytest.mark.parametrize("gap", [False, True])
def test_a_console_that_stops_mid_battle_falls_back_to_manual(gap):
    game = duel_game()
    resolver, ui = resolver_for(game, Tampered(stop_after=60, gap=gap))
    before, result = step(game, resolver)
    reason = ui.reasons[0]
    if gap:
        assert reason == "the capture lost data after 60 frames: the adapter stopped sending chunks"
    else:
        assert reason == "the console stopped after 60 frames, before the battle ended"
    assert result["source"] == f"manual entry: {reason}"
    assert before["actions"] == game.to_json()["actions"][:-1]  # only the accepted result was added


def test_a_battle_that_never_ends_times_out():
    game = duel_game()
    hurried = dataclasses.replace(PROFILE, battle_frames=30)  # the fight takes 108 frames
    resolver, ui = resolver_for(game, EmulatorConsole(combat_image()), hurried)
    step(game, resolver)
    assert ui.reasons[0].startswith("the battle did not end within")


def test_units_the_rules_forbid_fall_back_to_manual():
    """A player types one digit too many: the console fights with ten times the units the board gave."""
    assert PROFILE.keys is not None
    steps = list(PROFILE.keys.sequence)
    steps.insert(steps.index("units:attacker") + 1, "0")
    mistyped = dataclasses.replace(PROFILE, keys=dataclasses.replace(PROFILE.keys, sequence=tuple(steps)))
    game = duel_game()
    request = R.chance_node(game.state).combat
    resolver, ui = resolver_for(game, EmulatorConsole(combat_image()), mistyped)
    _, result = step(game, resolver)
    plan, reading = resolver.battles[0]
    assert reading is not None  # the console's result was read, then refused
    winner, left = model_battle({**plan.units, "attacker": 10 * plan.units["attacker"]}, dict(plan.weapons))
    assert (reading.winner, dict(reading.units)) == (winner, left)
    assert ui.reasons[0].startswith("the rules refuse the console's result: ")
    assert "energy must be between 0 and" in ui.reasons[0]
    assert result == {**typed_by_hand(request, ""), "source": "manual entry: " + ui.reasons[0]}


def test_a_correction_by_the_players_becomes_a_manual_entry():
    game = duel_game()
    resolver, ui = resolver_for(game, EmulatorConsole(combat_image()), ui=ScriptedUI(False, typed_by_hand))
    _, result = step(game, resolver)
    assert result["source"] == "manual entry: the players corrected the console's result"
    assert resolver.battles[0][1] is not None
    assert any(message.startswith("The console says: ") for message in ui.messages)


def test_a_manual_entry_the_rules_refuse_is_asked_again():
    answers = iter([{"winner": "nobody"}, None])

    def typed(request: CombatRequest, reason: str) -> dict:
        answer = next(answers)
        return answer if answer is not None else typed_by_hand(request, reason)

    game = duel_game()
    resolver, ui = resolver_for(game, Tampered(stop_after=5), ui=ScriptedUI(manual=typed))
    _, result = step(game, resolver)
    assert len(ui.reasons) == 2 and any(message.startswith("refused: ") for message in ui.messages)
    assert result["winner"] == "bob" or result["winner"] == "ann"


def test_a_profile_that_does_not_parse_or_fit_the_cartridge_is_refused(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "hilbridge-bridge-profile",\n "version": 1,,}')
    with pytest.raises(ProfileError) as error:
        load_profile(broken)
    assert str(error.value).startswith(f"{broken}:2:") and "not valid JSON" in str(error.value)
    other = tmp_path / "other.json"
    data = PROFILE.to_json()
    data["cartridge"]["sha1"] = "0" * 40
    other.write_text(json.dumps(data))
    with pytest.raises(ProfileError, match="is for the cartridge with SHA-1 0000"):
        profile_for(combat_image(), other)
    data["cartridge"]["sha1"] = PROFILE.sha1
    data["screen"]["units"]["attacker"]["cells"] = [[1, 2, 3]]
    other.write_text(json.dumps(data))
    with pytest.raises(ProfileError, match=r"screen\.units\.attacker\.cells\[0\]: must be \[Y, X\]"):
        load_profile(other)
    with pytest.raises(ProfileError, match="is for the cartridge"):
        ConsoleResolver(EmulatorConsole(b"\xff" * 2048), PROFILE, ScriptedUI())


def test_a_saved_profile_loads_back_the_same(tmp_path):
    path = tmp_path / "combat.json"
    PROFILE.save(path)
    assert dataclasses.replace(load_profile(path), origin=PROFILE.origin) == PROFILE
