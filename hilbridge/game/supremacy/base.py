"""Shared ground of the Supremacy rules: constants, state copying, bookkeeping helpers, the stage
rotation and eliminations.

The rules are one class, `hilbridge.game.supremacy.ruleset.Supremacy`, assembled from mixins by
concern (`economy`, `warfare`, `logistics`) over this base; the mixins call one another through
``self``. Money is in $ millions. Bookkeeping for the conservation invariants: ``bank`` is the bank's
net cash position and ``stock_bank`` its net position in each commodity, so ``sum(cash) + bank == 0``
and, per commodity, ``sum(supplies) + stock_bank == 0`` hold after every move.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib import resources
from operator import itemgetter, methodcaller
from typing import Any

from hilbridge.game.core import (
    CHANCE,
    Action,
    IllegalAction,
    Ruleset,
    State,
    event,
)
from hilbridge.game.supremacy.board import RESOURCES, WEAPONS, Board, load_board

COMMODITIES = (*RESOURCES, *WEAPONS)

ARMY, NAVY = 0, 1  # index into units[zone][player] = [armies, navies]; in a sea "armies" are convoyed


def load_options() -> dict[str, dict[str, Any]]:
    text = resources.files("hilbridge.game.supremacy").joinpath("data", "options.json").read_text("utf-8")
    return json.loads(text)["options"]


OPTIONS = load_options()


COPY_DEPTH: dict[str, str] = {
    # never changed after setup, or replaced rather than changed: shared between states
    **dict.fromkeys(("options", "players", "bank", "cycle", "stage", "phase", "turn", "build_step"), "share"),
    **dict.fromkeys(("interest_paid", "passes", "rotation_player"), "share"),
    "units": "share",  # zone -> player -> [armies, navies]; `_add_units` copies what it changes
    # flat dicts and lists of strings or numbers
    **dict.fromkeys(
        ("cash", "loans", "stock_bank", "cubes", "alive", "cards", "market", "bids", "power"), "flat"
    ),
    **dict.fromkeys(("idle", "clouds", "sequence", "active", "bought", "prospected"), "flat"),
    "supplies": "two levels",  # player -> commodity -> units
}
"""How deep `_clone` copies each state key; any key not listed is deep-copied (the safe default)."""

_copy_of = methodcaller("copy")


def _values_of(keys: tuple[str, ...]) -> Callable[[State], tuple[Any, ...]]:
    """A function giving a state's values of `keys` as a tuple (itemgetter, where it gives one)."""
    if len(keys) >= 2:
        return itemgetter(*keys)
    return lambda state: tuple(state[key] for key in keys)


@lru_cache(maxsize=16)
def _clone_plan(
    keys: tuple[str, ...],
) -> tuple[tuple[str, ...], Callable[[State], tuple[Any, ...]], tuple[str, ...]]:
    """For a state with these keys: its "flat" keys, a function giving their values as a tuple (one C
    call), and the keys copied deep. Every state of a game has the same keys, so this runs once."""
    flat = tuple(key for key in keys if COPY_DEPTH.get(key) == "flat")
    deep = tuple(key for key in keys if key not in COPY_DEPTH and key != "events")
    return flat, _values_of(flat), deep


def _clone(state: State) -> State:
    """A copy for the next state, deep where moves change things in place (keys per `COPY_DEPTH`).

    The copy starts shallow (every key in its place, the "share" keys done); the "flat" keys are
    then copied in one C-level pass, and the keys copied deep that hold something go through one
    marshal round trip together (one call per move, not one per key; states are plain JSON, which
    marshal copies exactly and faster than pickle). Most moves leave those keys None or empty: an
    empty list or dict gets a new empty one, and no round trip is made when nothing is left. `events`
    is not copied at all: the new state starts with none."""
    flat, flat_values, deep_keys = _clone_plan(tuple(state))
    copy = state.copy()
    copy.update(zip(flat, map(_copy_of, flat_values(state)), strict=True))
    supplies = state.get("supplies")
    if supplies is not None:
        copy["supplies"] = {inner: level.copy() for inner, level in supplies.items()}
    deep = {}
    for key in deep_keys:
        value = state[key]
        if value:
            deep[key] = value
        elif type(value) in (list, dict):
            copy[key] = value.copy()
    if deep:
        copy.update(marshal.loads(marshal.dumps(deep)))
    copy["events"] = []
    return copy


def _amounts(available: int) -> list[int]:
    """The unit counts offered as legal moves: one, and all of them."""
    if available < 1:
        return []
    return [1] if available == 1 else [1, available]


def _illegal(message: str) -> IllegalAction:
    return IllegalAction(message)


class SupremacyBase(Ruleset):
    """Helpers every part of the rules uses, the order of stages, and eliminations."""

    def __init__(self, board: Board | None = None):
        self.board = board or load_board()
        self._land = frozenset(name for name, zone in self.board.zones.items() if zone.is_land)
        self._draws = {card: Action("draw", CHANCE, {"card": card}) for card in self.board.cards}
        self._dark = frozenset(name for name, zone in self.board.zones.items() if zone.is_dark_sea)
        self._cards_of: dict[str, tuple[str, ...]] = {}  # resource -> its cards, in deck order
        for card in self.board.cards.values():
            self._cards_of[card.resource] = (*self._cards_of.get(card.resource, ()), card.id)

    def _occupant(self, state: State, zone: str) -> str | None:
        """The player holding a territory or light sea (at most one); None when vacant."""
        for player, force in state["units"].get(zone, {}).items():
            if force[ARMY] or force[NAVY]:
                return player
        return None

    def _force(self, state: State, zone: str, player: str) -> list[int]:
        return state["units"].get(zone, {}).get(player, [0, 0])

    def _add_units(self, state: State, zone: str, player: str, armies: int = 0, navies: int = 0) -> None:
        """The only change ever made to ``units``, and never in place: states share ``units`` (see
        `COPY_DEPTH`), so the map, the zone's entry and the force are copied on the way down (keys
        that stay keep their places, new ones go last, as with ``setdefault``)."""
        units = state["units"] = state["units"].copy()
        forces = units[zone] = units.get(zone, {}).copy()
        force = forces[player] = forces.get(player, [0, 0]).copy()
        force[ARMY] += armies
        force[NAVY] += navies
        if force[ARMY] < 0 or force[NAVY] < 0:
            raise _illegal(f"{player} has too few units in {zone}")
        if force == [0, 0]:
            del forces[player]
            if not forces:
                del units[zone]

    def _units_total(self, state: State, player: str) -> int:
        return sum(
            f[ARMY] + f[NAVY] for zone in state["units"].values() for p, f in zone.items() if p == player
        )

    def _held_cards(self, state: State, player: str) -> list[str]:
        return [c for c, holder in state["cards"].items() if holder == player]

    def _companies(self, state: State, player: str) -> list[str]:
        return [c for c in self._held_cards(state, player) if self.board.cards[c].kind == "company"]

    def _pay(self, state: State, player: str, amount: int, what: str) -> None:
        if amount > state["cash"][player]:
            raise _illegal(f"{player} cannot pay ${amount}M for {what} (has ${state['cash'][player]}M)")
        state["cash"][player] -= amount
        state["bank"] += amount

    def _receive(self, state: State, player: str, amount: int) -> None:
        state["cash"][player] += amount
        state["bank"] -= amount

    def _spend(self, state: State, player: str, costs: Mapping[str, int], what: str) -> None:
        stock = state["supplies"][player]
        for item, amount in costs.items():
            if stock[item] < amount:
                raise _illegal(f"{player} lacks {amount} {item} for {what}")
        for item, amount in costs.items():
            stock[item] -= amount
            state["stock_bank"][item] += amount

    def _cap(self, state: State, item: str) -> int:
        return state["options"]["supply_cap" if item in RESOURCES else "weapon_cap"]

    def _can_spend(self, state: State, player: str, costs: Mapping[str, int]) -> bool:
        stock = state["supplies"][player]
        return all(stock[item] >= n for item, n in costs.items())

    def _home_held(self, state: State, player: str) -> list[str]:
        """S-10.victory, SUP-A13: home territories neither nuked nor occupied by another player."""
        code = state["power"].get(player)
        if code is None:
            return []
        return [
            t
            for t in self.board.homelands[code]
            if t not in state["clouds"] and self._occupant(state, t) in (None, player)
        ]

    def _set_phase(self, state: State, phase: str, turn: str | None = None) -> None:
        state["phase"] = phase
        state["turn"] = turn

    def _capacity(self, state: State) -> int:
        return state["options"]["convoy_capacity"]

    def _start_bid(self, state: State, stage: int) -> None:
        while stage <= 7:
            state["stage"] = stage
            if stage == 4 and state["cycle"] == 1:
                state["events"].append(
                    event("skip", stage=4, reason="S-4.first: no attacks on the first turn")
                )
                stage += 1
                continue
            if any(state["alive"][p] and state["cubes"][p] > 0 for p in state["players"]):
                self._set_phase(state, "bid")
                return
            stage += 1
        self._end_cycle(state)

    def _reveal_bids(self, state: State, bids: Mapping[str, int]) -> None:
        """S-BB: every bid costs its cubes, even if the player then does nothing in the stage."""
        for player, cubes in bids.items():
            state["cubes"][player] -= cubes
        state["bids"] = {p: c for p, c in bids.items() if c}
        state["events"].append(event("bids", stage=state["stage"], bids=dict(bids)))
        players = [p for p in state["players"] if p in state["bids"]]
        if not players:
            self._start_bid(state, state["stage"] + 1)
        elif len(players) == 1:
            self._begin_stage(state, players)
        else:
            state["phase"] = "dps"
            state["dps"] = {"groups": [players], "rolls": {}, "then": "stage"}

    def _begin_stage(self, state: State, sequence: list[str]) -> None:
        """S-DPS: the stage's phases are played in the determined player sequence."""
        state["sequence"] = list(sequence)
        state["events"].append(event("sequence", stage=state["stage"], order=list(sequence)))
        stage = state["stage"]
        first_phase = {3: "sell", 4: "attack", 5: "move", 6: "build", 7: "buy"}[stage]
        state["bought"] = []
        state["prospected"] = []
        self._start_rotation(state, first_phase)

    def _start_rotation(self, state: State, phase: str) -> None:
        state["active"] = [p for p in state["sequence"] if state["alive"][p]]
        state["build_step"] = 0
        state["passes"] = 0
        if phase == "prospect":
            state["active"] = [p for p in state["active"] if self._may_prospect(state, p)]
        if not state["active"]:
            self._after_phase(state, phase)
            return
        self._set_phase(state, phase, state["active"][0])

    def _advance_rotation(self, state: State, player: str, drop: bool) -> None:
        """Rotating phases: the next player in sequence; a pass (``drop``) leaves the rotation (SUP-A5).

        SUP-A9: in Stages 5, 6 and 7 Phase E each player takes his whole turn (``end_turn`` drops him).
        """
        phase = state["phase"]
        active = state["active"]
        index = active.index(player) if player in active else -1
        if drop and player in active:
            active.remove(player)
            index -= 1
        active[:] = [p for p in active if state["alive"][p]]
        if not active:
            self._after_phase(state, phase)
            return
        following = active[(index + 1) % len(active)]
        if phase in ("move", "build", "prospect"):
            state["build_step"] = 0
        self._set_phase(state, phase, following)

    def _after_phase(self, state: State, phase: str) -> None:
        nxt = {
            "sell": "trade",
            "buy": "trade",
            "trade": None,
            "attack": None,
            "move": None,
            "build": None,
            "prospect": None,
        }[phase]
        if phase == "trade" and state["stage"] == 7:
            nxt = "prospect"
        if nxt:
            self._start_rotation(state, nxt)
        else:
            self._start_bid(state, state["stage"] + 1)

    def _end_cycle(self, state: State) -> None:
        """S-7.end: end of cycle, cubes come back, go back to Stage 1."""
        cap = state["options"]["turn_cap"]
        if cap and state["cycle"] >= cap:
            state["events"].append(event("turn_cap", cycle=state["cycle"]))
            state["winners"] = []
            self._set_phase(state, "over")
            return
        state["cycle"] += 1
        state["stage"] = 1
        state["cubes"] = {p: 3 for p in state["players"]}
        state["events"].append(event("cycle", cycle=state["cycle"]))
        first = next(p for p in state["players"] if state["alive"][p])
        self._set_phase(state, "salaries", first)

    def _do_pass(self, state: State, player: str, params: dict[str, Any]) -> None:
        """SUP-A5: a pass leaves the rotation, or (pass_is_final false) the phase ends after a full
        round of consecutive passes."""
        phase = state["phase"]
        state["events"].append(event("pass", player=player, phase=phase))
        if state["options"]["pass_is_final"]:
            self._advance_rotation(state, player, drop=True)
            return
        state["passes"] += 1
        if state["passes"] >= len(state["active"]):
            state["passes"] = 0
            state["active"] = []
            self._after_phase(state, phase)
        else:
            self._advance_rotation(state, player, drop=False)

    def _do_end_turn(self, state: State, player: str, params: dict[str, Any]) -> None:
        if state["phase"] not in ("move", "build", "prospect"):
            raise _illegal(f"no end_turn in phase {state['phase']}")
        self._advance_rotation(state, player, drop=True)

    def _check_eliminations(self, state: State) -> None:
        """S-10.spoils: after a battle and its counterattacks, a player with no home territory left is
        out. Capture if the home territory taken last is still held by its captor, else Destruction."""
        for player in state["players"]:
            if state["alive"][player] and not self._home_held(state, player):
                homes = self.board.homelands[state["power"][player]]
                captors = [
                    captor
                    for zone, captor in state["home_captures"]
                    if zone in homes and zone not in state["clouds"] and self._occupant(state, zone) == captor
                ]
                self._eliminate(state, player, captors[-1] if captors else None)
        state["home_captures"] = []
        self._check_victory(state)

    def _eliminate(self, state: State, player: str, captor: str | None) -> None:
        """S-10.spoils (placeholder): Capture gives the captor the loser's cash, supplies and cards;
        Destruction (or bankruptcy) returns them to the bank and the deck. Loans die with the player."""
        state["alive"][player] = False
        for zone in list(state["units"]):
            force = state["units"][zone].get(player)
            if force:
                self._add_units(state, zone, player, -force[ARMY], -force[NAVY])
        cash = state["cash"][player]
        state["cash"][player] = 0
        if captor:
            state["cash"][captor] += cash
        else:
            state["bank"] += cash
        for item in COMMODITIES:
            units = state["supplies"][player][item]
            state["supplies"][player][item] = 0
            kept = min(units, self._cap(state, item) - state["supplies"][captor][item]) if captor else 0
            if captor:
                state["supplies"][captor][item] += kept
            state["stock_bank"][item] += units - kept
        for card in self._held_cards(state, player):
            if captor:
                state["cards"][card] = captor
            else:
                del state["cards"][card]
        state["idle"] = [c for c in state["idle"] if c in state["cards"]]
        state["loans"][player] = 0
        state["events"].append(
            event("eliminated", player=player, spoils="capture" if captor else "destruction", captor=captor)
        )

    def _check_victory(self, state: State) -> None:
        """S-10.victory: the last superpower standing has conquered the world."""
        alive = [p for p in state["players"] if state["alive"][p]]
        if len(alive) <= 1:
            state["winners"] = alive
            state["events"].append(event("game_over", winners=alive))
            self._set_phase(state, "over")
