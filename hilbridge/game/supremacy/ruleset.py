"""Supremacy (basic game, Rules of Play v3.0) as a `Ruleset`: the order of play as a state machine.

The state is plain JSON. ``phase`` names the decision being waited for and `PHASE_MOVES` the moves
it accepts; a move of kind K in phase P is handled by ``_do_P_K`` or ``_do_K``. This module holds
setup, who moves, chance, dispatch, the text board and the invariants; the stages live in the
mixins `economy` (Stages 1-3, 7), `warfare` (Stage 4) and `logistics` (Stages 5-6) over `base`.
Every rule clause carries its rule id (docs/rules/supremacy.md) in a comment or docstring, so
"S-4.C.conv.D" finds both the register entry and the code.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from hilbridge.errors import HilbridgeError
from hilbridge.game.combat import DiceResolver
from hilbridge.game.core import (
    CHANCE,
    Action,
    ChanceNode,
    CombatRequest,
    IllegalAction,
    State,
    event,
)
from hilbridge.game.supremacy.base import COMMODITIES, OPTIONS, _clone, _illegal
from hilbridge.game.supremacy.board import RESOURCES, Board
from hilbridge.game.supremacy.economy import EconomyRules
from hilbridge.game.supremacy.logistics import LogisticsRules
from hilbridge.game.supremacy.warfare import WarfareRules

STAGE_NAMES = {
    1: "Pay Salaries and Loans",
    2: "Transfer Production Units",
    3: "Sell Resources",
    4: "Attack",
    5: "Move Forces",
    6: "Build Forces and Weapons",
    7: "Buy or Prospect for Resources",
}

PHASE_MOVES: dict[str, tuple[str, ...]] = {
    "choose": ("choose",),
    "salaries": ("pay_salaries", "borrow", "disband", "idle"),
    "loans": ("pay_interest", "borrow", "repay", "end_loans", "declare_bankruptcy"),
    "sell": ("sell", "pass"),
    "buy": ("buy", "pass"),
    "trade": ("offer_sell", "offer_buy", "pass"),
    "respond": ("accept", "decline"),
    "attack": ("attack", "nuke", "pass"),
    "counter": ("attack", "nuke", "decline"),
    "occupy": ("occupy", "end_occupy"),
    "reinforce": ("reinforce", "end_reinforce"),
    "move": ("move", "airlift", "end_turn"),
    "build": ("build", "build_weapon", "research", "end_turn"),
    "prospect": ("prospect", "end_turn"),
}
"""The player moves each phase accepts (simultaneous phases ``bid`` and ``champions`` use apply_joint)."""


def checked_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults of options.json overridden by `given`, each checked against its default's type
    (and its listed choices), so a mistyped ``--option`` is a clear error, not a crash mid-game."""
    chosen = {key: entry["value"] for key, entry in OPTIONS.items()}
    for key, value in given.items():
        if key not in chosen:
            raise HilbridgeError(f"unknown Supremacy option {key!r} (known: {', '.join(sorted(chosen))})")
        default = chosen[key]
        if isinstance(default, list):
            good = isinstance(value, list) and len(value) >= 2 and all(type(v) is int for v in value)
            good = good and value == sorted(value)
        elif isinstance(default, bool):
            good = isinstance(value, bool)
        elif isinstance(default, int):
            good = type(value) is int and value >= 0
        else:
            good = value in OPTIONS[key].get("choices", [value]) and isinstance(value, str)
        if not good:
            allowed = OPTIONS[key].get("choices") or type(default).__name__
            raise HilbridgeError(f"Supremacy option {key}={value!r} is not valid (expected {allowed})")
        chosen[key] = value
    if chosen["market_start_step"] >= len(chosen["market_scale"]):
        raise HilbridgeError("market_start_step must be a step of market_scale")
    return chosen


DIE_OUTCOMES = tuple(Action("roll", CHANCE, {"value": value}) for value in range(1, 7))
"""A six-sided die as a chance node's equally likely outcomes."""


class Supremacy(EconomyRules, WarfareRules, LogisticsRules):
    """The basic game: setup, who moves, chance, move dispatch, the text board and the invariants."""

    name = "supremacy"
    version = 2  # 2: occupation takes the captured zone's cards in all three outcomes (saves of 1 differ)
    min_players = 2
    max_players = 6

    def __init__(self, board: Board | None = None):
        super().__init__(board)
        self._handler_names: dict[tuple[str, str], str] = {}

    def default_setup(
        self, players: Sequence[str], options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return {"players": list(players), "options": checked_options(options or {})}

    def initial_state(self, setup: Mapping[str, Any], seed: int) -> State:
        players = list(setup["players"])
        if not self.min_players <= len(players) <= self.max_players or len(set(players)) != len(players):
            raise HilbridgeError("Supremacy needs two to six players with distinct names")
        if CHANCE in players:
            raise HilbridgeError(f"{CHANCE!r} cannot be a player's name")
        options = checked_options(setup.get("options", {}))
        start_cash, start_stock = options["start_cash"], options["start_supplies"]
        n = len(players)
        state: State = {
            "options": options,
            "players": players,
            "power": {},
            "cash": {p: start_cash for p in players},  # S-0.money
            "loans": {p: 0 for p in players},
            "supplies": {
                p: {r: (start_stock if r in RESOURCES else 0) for r in COMMODITIES} for p in players
            },
            "bank": -start_cash * n,
            "stock_bank": {r: (-start_stock * n if r in RESOURCES else 0) for r in COMMODITIES},
            "cubes": {p: 3 for p in players},
            "alive": {p: True for p in players},
            "cards": {},  # card id -> holder, for cards out of the deck
            "idle": [],
            "units": {},
            "clouds": [],
            "market": {r: options["market_start_step"] for r in RESOURCES},  # S-0.market
            "cycle": 1,
            "stage": 0,
            "phase": "dps",
            "dps": {"groups": [players], "rolls": {}, "then": "choose"},
            "sequence": [],
            "active": [],
            "bids": {},
            "turn": None,
            "build_step": 0,
            "bought": [],
            "offer": None,
            "battle": None,
            "steps": [],
            "search": None,
            "interest_paid": False,
            "passes": 0,
            "prospected": [],
            "rotation_player": None,
            "home_captures": [],
            "winners": None,
            "events": [event("setup", players=players)],
        }
        # S-0.choose: the players roll for the order of choosing superpowers (seeded setup dice).
        rng = random.Random(f"supremacy-setup:{seed}")
        while state["phase"] == "dps":
            self._chance_dps(state, Action("roll", CHANCE, {"value": rng.randint(1, 6)}))
            self._settle(state)
        return state

    def current_players(self, state: State) -> tuple[str, ...]:
        phase = state["phase"]
        if phase == "over":
            return ()
        if phase in ("dps", "battle_dice", "screen_dice", "search", "winter"):
            return (CHANCE,)
        if phase == "bid":
            return tuple(p for p in state["players"] if state["alive"][p] and state["cubes"][p] > 0)
        if phase == "champions":
            return tuple(state["battle"]["champions"])
        return (state["turn"],)

    def is_simultaneous(self, state: State) -> bool:
        return state["phase"] in ("bid", "champions")

    def is_terminal(self, state: State) -> bool:
        return state["phase"] == "over"

    def winners(self, state: State) -> list[str]:
        return list(state["winners"] or [])

    def view(self, state: State, player: str | None) -> State:
        """Supremacy keeps no secrets in its state: blind bids and champion commitments live in the
        engine's commit buffer until revealed, and the deck is unordered (each draw is a chance move).
        The view gets its own ``units`` (states share theirs), so a caller may change it freely."""
        view = {key: value for key, value in _clone(state).items() if key != "events"}
        view["units"] = {
            zone: {p: f.copy() for p, f in forces.items()} for zone, forces in state["units"].items()
        }
        return view

    def describe(self, view: State) -> str:
        """A text board: stage and phase, each superpower's treasury, the market and the forces."""
        scale = view["options"]["market_scale"]
        stage = view["stage"]
        lines = [
            f"cycle {view['cycle']}, stage {stage} ({STAGE_NAMES.get(stage, 'setup')}), "
            f"phase {view['phase']}",
            "market: " + ", ".join(f"{r} ${scale[step]}M" for r, step in view["market"].items()),
        ]
        for player in view["players"]:
            stock = view["supplies"][player]
            status = "" if view["alive"][player] else " (out)"
            lines.append(
                f"{player} {view['power'].get(player, '?')}{status}: ${view['cash'][player]}M, "
                f"loans ${view['loans'][player]}M, cubes {view['cubes'][player]}, "
                + " ".join(f"{item} {stock[item]}" for item in COMMODITIES)
                + f"; salary bill ${self._salary_bill(view, player)}M"
            )
            cards = [self.board.cards[c] for c in self._held_cards(view, player)]
            if cards:
                lines.append(
                    "  cards: "
                    + ", ".join(
                        f"{c.name} ({c.territory}, {c.units} {c.resource}"
                        + (", idle" if c.id in view["idle"] else "")
                        + ")"
                        if c.kind == "company"
                        else f"{c.name} ({c.resource} research)"
                        for c in cards
                    )
                )
        for zone in sorted(view["units"]):
            forces = "; ".join(
                f"{p} {a} armies {n} navies" if n else f"{p} {a} armies"
                for p, (a, n) in view["units"][zone].items()
            )
            lines.append(f"  {zone}: {forces}")
        if view["clouds"]:
            lines.append("mushroom clouds: " + ", ".join(view["clouds"]))
        battle = view["battle"]
        if battle and "to" in battle:
            lines.append(f"battle: {battle['attacker']} from {battle['from']} against {battle['to']}")
        elif battle:
            lines.append(f"nuclear attack by {battle['attacker']} on {', '.join(battle['targets'])}")
        if view["offer"]:
            offer = view["offer"]
            lines.append(
                f"offer: {offer['seller']} sells {offer['units']} {offer['resource']} to {offer['buyer']} "
                f"for ${offer['price']}M"
            )
        lines.append(self._costs(view["options"]))
        if view["phase"] == "over":
            lines.append(f"Game over. Winner: {', '.join(view['winners'] or []) or 'nobody'}")
        return "\n".join(lines)

    @staticmethod
    def _costs(o: Mapping[str, Any]) -> str:
        """S-4.C.conv.B, S-5.C, S-6.C/D/E: what moves cost (the placeholder figures of options.json)."""
        return (
            f"costs: move {o['army_move_grain']} grain per army, {o['navy_move_oil']} oil per navy; "
            f"airlift {o['airlift_oil']} oil per army; attack 1 grain + 1 oil + 1 mineral; "
            f"{o['batch_size']} armies or navies ${o['batch_cost']}M + 1 grain, oil and mineral; "
            f"nuke ${o['nuke_cost']}M + {o['nuke_minerals']} mineral; "
            f"L-star ${o['lstar_cost']}M + {o['lstar_minerals']} minerals; card ${o['card_flip_cost']}M"
        )

    def chance_node(self, state: State) -> ChanceNode | None:
        phase = state["phase"]
        if phase in ("dps", "winter"):
            return ChanceNode("die", DIE_OUTCOMES)
        if phase == "battle_dice":
            battle = state["battle"]
            return ChanceNode(
                "conventional battle",
                combat=CombatRequest(
                    "dice",
                    battle["attacker"],
                    battle["defender"] or "militia",
                    {"dice": dict(battle["dice"])},
                ),
            )
        if phase == "screen_dice":
            battle = state["battle"]
            defender = battle["defenders"][0] if battle["defenders"] else "none"
            return ChanceNode(
                "L-star screen",
                combat=CombatRequest("dice", battle["attacker"], defender, {"dice": dict(battle["dice"])}),
            )
        if phase == "search":
            held, flipped, draws = state["cards"], set(state["search"]["flipped"]), self._draws
            return ChanceNode("card", tuple([draws[c] for c in draws if c not in held and c not in flipped]))
        return None

    def random_combat_result(self, request: CombatRequest, rng: Any) -> dict[str, Any]:
        """Supremacy battles are plain six-sided dice: the engine's dice resolver draws them."""
        return DiceResolver().resolve(request, rng)

    def is_legal(self, state: State, action: Action) -> bool:
        if action.player not in self.current_players(state) or action.player == CHANCE:
            return False
        if self.is_simultaneous(state):
            return action in self.legal_actions(state, action.player)
        try:
            self.apply(state, action)
        except IllegalAction:
            return False
        return True

    def legal_actions(self, state: State, player: str) -> list[Action]:
        phase = state["phase"]
        if player not in self.current_players(state) or player == CHANCE:
            return []
        method = getattr(self, f"_legal_{phase}")
        return method(state, player)

    def _legal_choose(self, state: State, player: str) -> list[Action]:
        taken = set(state["power"].values())
        return [
            Action.new("choose", player, {"power": code})
            for code in self.board.superpowers
            if code not in taken
        ]

    def _legal_bid(self, state: State, player: str) -> list[Action]:
        top = min(2 if state["stage"] == 7 else 1, state["cubes"][player])
        return [Action.new("bid", player, {"cubes": n}) for n in range(top + 1)]

    def apply(self, state: State, action: Action) -> State:
        new = _clone(state)
        phase = state["phase"]
        players = self.current_players(state)
        if action.player == CHANCE:
            if players != (CHANCE,):
                raise _illegal("it is not chance's turn")
            getattr(self, f"_chance_{phase}")(new, action)
        else:
            if action.player not in players or self.is_simultaneous(state):
                raise _illegal(f"it is not {action.player}'s turn to {action.kind}")
            if action.kind not in PHASE_MOVES.get(phase, ()):
                raise _illegal(f"{action.kind} is not a move in phase {phase}")
            if action.kind != "pass" and phase in ("sell", "buy", "trade", "attack"):
                new["passes"] = 0
            handler = getattr(self, self._handler_name(phase, action.kind))
            try:
                handler(new, action.player, dict(action.params))
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                raise _illegal(f"malformed {action.kind}: {error!r}") from None
        self._settle(new)
        return new

    def _handler_name(self, phase: str, kind: str) -> str:
        """``_do_P_K`` where phase P has its own handler of kind K, else ``_do_K``. Remembered per
        (phase, kind): a failed getattr raises and catches an AttributeError, on every shared move."""
        name = self._handler_names.get((phase, kind))
        if name is None:
            name = f"_do_{phase}_{kind}" if hasattr(self, f"_do_{phase}_{kind}") else f"_do_{kind}"
            self._handler_names[(phase, kind)] = name
        return name

    def apply_joint(self, state: State, moves: Mapping[str, Action]) -> State:
        new = _clone(state)
        for player in self.current_players(state):
            move = moves.get(player)
            if move is None or move not in self.legal_actions(state, player):
                raise _illegal(f"{player} has no legal secret move")
        if state["phase"] == "bid":
            self._reveal_bids(new, {p: int(m.params["cubes"]) for p, m in moves.items()})
        else:
            battle = new["battle"]
            battle["champions"] = [p for p, m in moves.items() if m.params["defend"]]
            new["events"].append(event("champions", defend=battle["champions"]))
            self._start_screen(new)
        self._settle(new)
        return new

    def _chance_dps(self, state: State, action: Action) -> None:
        """S-DPS: the players of a tie group roll one die each; ties roll again among themselves."""
        value = action.params.get("value") if action.kind == "roll" else None
        if not isinstance(value, int):
            raise _illegal("a die roll gives a value")
        if not 1 <= value <= 6:
            raise _illegal(f"a die shows 1 to 6, not {value}")
        dps = state["dps"]
        group = next(g for g in dps["groups"] if len(g) > 1)
        roller = next(p for p in group if p not in dps["rolls"])
        dps["rolls"][roller] = value
        state["events"].append(event("roll", player=roller, value=value))
        if all(p in dps["rolls"] for p in group):
            index = dps["groups"].index(group)
            values = sorted({dps["rolls"][p] for p in group}, reverse=True)
            split = [[p for p in group if dps["rolls"][p] == v] for v in values]
            dps["groups"][index : index + 1] = split
            for p in group:
                del dps["rolls"][p]

    def _do_choose(self, state: State, player: str, params: dict[str, Any]) -> None:
        code = params.get("power")
        if code not in self.board.superpowers or code in state["power"].values():
            raise _illegal(f"{code!r} is not a superpower still free")
        state["power"][player] = code
        state["events"].append(event("chose", player=player, power=code))
        state["active"].remove(player)
        state["turn"] = state["active"][0] if state["active"] else None

    def _settle(self, state: State) -> None:
        """Finish automatic transitions: the end of setup's DPS, and a finished DPS for a stage."""
        if state["phase"] == "dps" and all(len(g) == 1 for g in state["dps"]["groups"]):
            order = [g[0] for g in state["dps"]["groups"]]
            if state["dps"]["then"] == "choose":
                state["events"].append(event("choice_order", order=order))
                state["active"] = order
                self._set_phase(state, "choose", order[0])
            else:
                self._begin_stage(state, order)
        if state["phase"] == "choose" and state["turn"] is None:
            self._deal(state)

    def _deal(self, state: State) -> None:
        """S-0.choose, S-0.armies: each player takes his superpower's six companies and puts one
        army on each home territory (SUP-A12: always); the piles nobody chose go back into the deck."""
        for player, code in state["power"].items():
            for card in self.board.cards.values():
                if card.owner == code:
                    state["cards"][card.id] = player
            for territory in self.board.homelands[code]:
                self._add_units(state, territory, player, 1, 0)
        state["stage"] = 1
        self._set_phase(state, "salaries", state["players"][0])

    def check_invariants(self, before: State, action: Action | None, after: State) -> None:
        """Conservation laws and board legality, checked after every move of a random playout."""
        assert sum(after["cash"].values()) + after["bank"] == 0, "money created or lost outside the bank"
        caps = [self._cap(after, item) for item in COMMODITIES]
        totals = [after["stock_bank"][item] for item in COMMODITIES]
        for stock in after["supplies"].values():
            for index, item in enumerate(COMMODITIES):
                amount = stock[item]
                assert 0 <= amount <= caps[index], f"{COMMODITIES[index]} out of range"
                totals[index] += amount
        assert totals == [0] * len(COMMODITIES), "supplies created or lost outside the bank"
        assert all(cash >= 0 for cash in after["cash"].values()), "negative cash"
        capacity = self._capacity(after)
        clouds = after["clouds"]
        alive = after["alive"]
        for zone, forces in after["units"].items():
            assert zone not in clouds, f"units on nuked {zone}"
            assert len(forces) <= 1 or zone in self._dark, f"{zone} held by several players"
            land = zone in self._land
            for p, (armies, navies) in forces.items():
                assert armies >= 0 and navies >= 0 and armies + navies > 0, f"bad force {zone} {p}"
                assert alive[p], f"eliminated {p} still has units"
                assert navies == 0 if land else armies <= navies * capacity, (
                    f"navy on land or armies adrift: {zone}"
                )
        assert all(alive[holder] for holder in set(after["cards"].values())), "card of a dead player"
        if action is not None and action.kind in ("move", "occupy", "reinforce"):
            assert self.board.adjacent(action.params["from"], action.params["to"]), "move not along the map"
        if action is not None and action.kind == "attack" and action.params.get("mode") != "airborne":
            src, dst = action.params["from"], action.params["to"]
            assert self.board.adjacent(src, dst) or (src == dst and src in self._dark), (
                "attack not along the map"
            )
        if action is not None and action.kind == "airlift":
            assert self._occupant(after, action.params["to"]) == action.player, "airlift to a zone not held"


RULESET = Supremacy()
