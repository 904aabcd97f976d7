"""`ConsoleResolver`: a `CombatResolver` whose battles are fought on the console and read off the bus.

For each `CombatRequest` it tells the players what to enter (the energy units the board gives each
side and, in the END GAME, the weapons they chose), plays those keys when the console is scripted,
watches the capture until the battle is over, decodes winner and units with the cartridge's
profile, shows them and asks for a one-key confirmation. A timeout, an unreadable screen, a result
the rules refuse, a "no" from the players or a confirmation that timed out all end in a manual
entry, with the reason; the result's
``source`` says where it came from, so the action log records it. Nothing reaches the game before
the result is confirmed: the engine applies what `resolve` returns.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from hilbridge.bridge.consoles import BattleConsole, Movie
from hilbridge.bridge.profile import ROLES, KeyScript, Profile
from hilbridge.bridge.watch import BattleNotRead, Reading, watch_battle
from hilbridge.errors import HilbridgeError
from hilbridge.game.conquest.rules import WEAPONS
from hilbridge.game.core import CombatRequest
from hilbridge.machine.console import KEYBOARD
from hilbridge.machine.inputs import NO_INPUT, InputEvent, InputMovie

HUMAN_FRAMES = 60 * 60 * 10  # ten minutes for people to enter and fight a battle


class BridgeUI(Protocol):
    """The players' side of a console battle: messages, the confirmation, and typing a result by hand.

    Every call names the battle, so a UI with several screens (the web table) shows it only to the
    battle's players. Implementations: `hilbridge.cli.game.ClickBridgeUI` (the terminal's one-key
    confirmation) and `hilbridge.table.confirm.WebBridgeUI` (each player's page).
    """

    def tell(self, request: CombatRequest, text: str) -> None: ...

    def confirm(self, request: CombatRequest, result: Mapping[str, Any], text: str) -> str | None:
        """None when the players accept the console's `result` (``text`` says it in words); else
        why not (`CORRECTED`, or a confirmation that timed out), the reason of the manual entry."""
        ...

    def manual(self, request: CombatRequest, reason: str) -> ManualEntry:
        """The result typed from the screen (``winner``, and in the END GAME ``energy``)."""
        ...


CORRECTED = "the players corrected the console's result"


@dataclass(frozen=True, slots=True)
class ManualEntry:
    """A result typed by hand, and who typed and who confirmed it where the UI knows (the web
    table: one battle player enters, the other confirms), so that the log can say so."""

    result: Mapping[str, Any]
    entered_by: str | None = None
    confirmed_by: str | None = None

    def source(self, reason: str) -> str:
        who = f" by {self.entered_by}" if self.entered_by else ""
        if self.confirmed_by:
            who += f", confirmed by {self.confirmed_by}"
        return f"manual entry{who}: {reason}"


@dataclass(frozen=True, slots=True)
class BattlePlan:
    """What each side enters: role -> player, units, weapon (None: the players choose on the console)."""

    players: Mapping[str, str]
    units: Mapping[str, int]
    weapons: Mapping[str, str | None]

    def describe(self) -> str:
        parts = []
        for role in ROLES:
            weapon = self.weapons[role] or "a weapon of their choice"
            parts.append(f"{self.players[role]} ({role}) enters {self.units[role]} units and {weapon}")
        return "; then ".join(parts) + "; the attacker presses ENTER"


def plan_battle(request: CombatRequest, rng: random.Random, scripted: bool) -> BattlePlan:
    """The entries for a request. Campaign battles name no weapons: scripted players draw them
    from the engine's RNG for this step (so a replayed game fights the same battles)."""
    players = {"attacker": request.attacker, "defender": request.defender}
    energy = request.params.get("energy")
    if not isinstance(energy, Mapping) or set(energy) != set(players.values()):
        raise BattleNotRead(f"the {request.kind} request gives no energy units for both sides")
    weapons_given = request.params.get("weapons") or {}
    weapons: dict[str, str | None] = {}
    for role, player in players.items():
        weapon = weapons_given.get(player)
        if weapon is None and scripted:
            weapon = rng.choice(WEAPONS)
        weapons[role] = weapon
    return BattlePlan(players, {role: int(energy[players[role]]) for role in ROLES}, weapons)


def battle_movie(plan: BattlePlan, keys: KeyScript) -> tuple[Movie, int]:
    """The key presses that enter `plan` on a cartridge with this key script, and the frame of
    the last release."""
    names: list[str] = []
    for step in keys.sequence:
        what, _, role = step.partition(":")
        if what == "units":
            names += list(str(plan.units[role]))
        elif what == "weapon":
            weapon = plan.weapons[role]
            if weapon not in keys.weapons:
                raise BattleNotRead(f"the cartridge has no key for the weapon {weapon!r}")
            names.append(keys.weapons[weapon])
        else:
            names.append(step)
    events: list[InputEvent] = []
    frame = keys.boot_frames
    for name in names:
        if name not in KEYBOARD:
            raise HilbridgeError(f"the profile's key script names {name!r}, which is not a console key")
        # A key goes down when frame `frame` ends, i.e. before frame + 1 runs.
        events.append(InputEvent(frame + 1, "press", name))
        events.append(InputEvent(frame + 1 + keys.hold_frames, "release", name))
        frame += 2 * keys.hold_frames
    return InputMovie(tuple(events), "battle keys"), frame


class ConsoleResolver:
    """Battles on `console`, read with `profile`; `validate(result)` raises `IllegalAction` for a
    result the rules refuse (the CLI asks the ruleset, on the game's current state)."""

    def __init__(
        self,
        console: BattleConsole,
        profile: Profile,
        ui: BridgeUI,
        *,
        validate: Callable[[dict[str, Any]], None] | None = None,
        use_record: bool = True,
        region: str = "ntsc",
        human_frames: int = HUMAN_FRAMES,
    ):
        profile.check_cartridge(console.cart)
        self.console = console
        self.profile = profile
        self.ui = ui
        self.validate = validate
        self.use_record = use_record
        self.region = region
        self.human_frames = human_frames
        self.battles: list[tuple[BattlePlan | None, Reading | None]] = []  # per battle: entries, bus reading

    def resolve(self, request: CombatRequest, rng: random.Random) -> dict[str, Any]:
        plan: BattlePlan | None = None
        try:
            plan = plan_battle(request, rng, self.console.scripted)
            self.ui.tell(
                request, f"Battle {request.attacker} vs {request.defender} on the console: {plan.describe()}."
            )
            reading = self._fight(plan)
        except BattleNotRead as error:
            self.battles.append((plan, None))
            return self._manual(request, error.message)
        self.battles.append((plan, reading))
        result = self._result(request, plan, reading)
        problem = self._refused(result)
        if problem:
            return self._manual(request, f"the rules refuse the console's result: {problem}")
        shown = ", ".join(f"{plan.players[role]} {reading.units[role]} units" for role in ROLES)
        question = (
            f"The console says: {result['winner']} wins; left: {shown} (from the {reading.source}). Correct?"
        )
        refused = self.ui.confirm(request, result, question)
        if refused is not None:
            return self._manual(request, refused)
        return result

    def _fight(self, plan: BattlePlan) -> Reading:
        if self.console.scripted:
            if self.profile.keys is None:
                raise BattleNotRead(
                    f"no key script for {self.profile.name}: scripted players cannot enter it"
                )
            most = self.profile.keys.max_units
            for role in ROLES:
                if plan.units[role] > most:
                    raise BattleNotRead(f"{plan.units[role]} units do not fit the cartridge (at most {most})")
            movie, last = battle_movie(plan, self.profile.keys)
            frames = last + self.profile.battle_frames
        else:
            movie, frames = NO_INPUT, self.human_frames
        source = self.console.battle(movie, frames)
        try:
            return watch_battle(source, self.profile, frames, use_record=self.use_record, region=self.region)
        except BattleNotRead:
            raise
        except HilbridgeError as error:  # the device itself (a link, MAME) failed
            raise BattleNotRead(f"the console failed: {error.message}") from None
        finally:
            source.close()

    def _result(self, request: CombatRequest, plan: BattlePlan, reading: Reading) -> dict[str, Any]:
        source = f"console {self.console.name}: {reading.source}"
        if reading.sequence is not None:
            source += f" #{reading.sequence}"
        result: dict[str, Any] = {"winner": plan.players[reading.winner]}
        if request.kind == "end_game_battle":
            result["energy"] = {plan.players[role]: reading.units[role] for role in ROLES}
        result["source"] = source
        return result

    def _refused(self, result: dict[str, Any]) -> str | None:
        if self.validate is None:
            return None
        try:
            self.validate(result)
        except HilbridgeError as error:
            return error.message
        return None

    def _manual(self, request: CombatRequest, reason: str) -> dict[str, Any]:
        self.ui.tell(request, f"Enter the result by hand: {reason}")
        while True:
            entry = self.ui.manual(request, reason)
            result = {**entry.result, "source": entry.source(reason)}
            problem = self._refused(result)
            if problem is None:
                return result
            self.ui.tell(request, f"refused: {problem}")
