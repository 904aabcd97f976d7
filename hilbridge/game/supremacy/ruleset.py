"""Supremacy (basic game, Rules of Play v3.0) as a `Ruleset`: the order of play as a state machine.

The state is plain JSON. ``phase`` names the decision being waited for; every rule clause that the
code enforces carries its rule id (docs/rules/supremacy.md) in a comment or docstring, so a reader
finds "S-4.C.conv.D" in the register and here with one search. Money is in $ millions.

Bookkeeping for the conservation invariants: ``bank`` is the bank's net cash position and
``stock_bank`` its net position in each commodity, so ``sum(cash) + bank == 0`` and, per commodity,
``sum(supplies) + stock_bank == 0`` hold after every move.
"""

from __future__ import annotations

import json
import pickle
import random
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from hilbridge.errors import HilbridgeError
from hilbridge.game.core import (
    CHANCE,
    Action,
    ChanceNode,
    CombatRequest,
    IllegalAction,
    Ruleset,
    State,
    event,
)
from hilbridge.game.supremacy import rules
from hilbridge.game.supremacy.board import RESOURCES, WEAPONS, Board, load_board

COMMODITIES = (*RESOURCES, *WEAPONS)
STAGE_NAMES = {
    1: "Pay Salaries and Loans",
    2: "Transfer Production Units",
    3: "Sell Resources",
    4: "Attack",
    5: "Move Forces",
    6: "Build Forces and Weapons",
    7: "Buy or Prospect for Resources",
}
ARMY, NAVY = 0, 1  # index into units[zone][player] = [armies, navies]; in a sea "armies" are convoyed
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


def load_options() -> dict[str, dict[str, Any]]:
    text = resources.files("hilbridge.game.supremacy").joinpath("data", "options.json").read_text("utf-8")
    return json.loads(text)["options"]


OPTIONS = load_options()


_SHARED = ("options", "players", "events")
"""State keys never changed after setup (shared between states, not copied), and the events."""


def _clone(state: State) -> State:
    """A deep copy for the next state (pickle is the fastest deep copy of plain JSON data)."""
    body = {key: value for key, value in state.items() if key not in _SHARED}
    copy = pickle.loads(pickle.dumps(body, protocol=pickle.HIGHEST_PROTOCOL))
    copy["options"], copy["players"], copy["events"] = state["options"], state["players"], []
    return copy


def _amounts(available: int) -> list[int]:
    """The unit counts offered as legal moves: one, and all of them."""
    return sorted({1, available}) if available >= 1 else []


def _illegal(message: str) -> IllegalAction:
    return IllegalAction(message)


class Supremacy(Ruleset):
    name = "supremacy"
    version = 1
    min_players = 2
    max_players = 6

    def __init__(self, board: Board | None = None):
        self.board = board or load_board()
        self._land = frozenset(name for name, zone in self.board.zones.items() if zone.is_land)
        self._dark = frozenset(name for name, zone in self.board.zones.items() if zone.is_dark_sea)

    # ---------------------------------------------------------------- setup
    def default_setup(
        self, players: Sequence[str], options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        chosen = {key: entry["value"] for key, entry in OPTIONS.items()}
        for key, value in (options or {}).items():
            if key not in chosen:
                raise HilbridgeError(f"unknown Supremacy option {key!r} (known: {', '.join(sorted(chosen))})")
            chosen[key] = value
        return {"players": list(players), "options": chosen}

    def initial_state(self, setup: Mapping[str, Any], seed: int) -> State:
        players = list(setup["players"])
        if not self.min_players <= len(players) <= self.max_players or len(set(players)) != len(players):
            raise HilbridgeError("Supremacy needs two to six players with distinct names")
        if CHANCE in players:
            raise HilbridgeError(f"{CHANCE!r} cannot be a player's name")
        options = {key: entry["value"] for key, entry in OPTIONS.items()}
        options.update(setup.get("options", {}))
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
            "winners": None,
            "events": [event("setup", players=players)],
        }
        # S-0.choose: the players roll for the order of choosing superpowers (seeded setup dice).
        rng = random.Random(f"supremacy-setup:{seed}")
        while state["phase"] == "dps":
            self._chance_dps(state, Action("roll", CHANCE, {"value": rng.randint(1, 6)}))
            self._settle(state)
        return state

    # ---------------------------------------------------------------- who moves
    def current_players(self, state: State) -> tuple[str, ...]:
        phase = state["phase"]
        if phase == "over":
            return ()
        if phase in ("dps", "battle_dice", "screen_dice", "search"):
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
        engine's commit buffer until revealed, and the deck is unordered (each draw is a chance move)."""
        return {key: value for key, value in _clone(state).items() if key != "events"}

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
            )
        for zone in sorted(view["units"]):
            forces = "; ".join(
                f"{p} {a} armies {n} navies" if n else f"{p} {a} armies"
                for p, (a, n) in view["units"][zone].items()
            )
            lines.append(f"  {zone}: {forces}")
        if view["clouds"]:
            lines.append("mushroom clouds: " + ", ".join(view["clouds"]))
        return "\n".join(lines)

    # ---------------------------------------------------------------- chance
    def chance_node(self, state: State) -> ChanceNode | None:
        phase = state["phase"]
        if phase == "dps":
            return ChanceNode("die", tuple(Action("roll", CHANCE, {"value": v}) for v in range(1, 7)))
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
            flipped = state["search"]["flipped"]
            deck = [c for c in self.board.cards if c not in state["cards"] and c not in flipped]
            return ChanceNode("card", tuple(Action("draw", CHANCE, {"card": c}) for c in deck))
        return None

    def random_combat_result(self, request: CombatRequest, rng: Any) -> dict[str, Any]:
        dice = dict(request.params.get("dice", {}))
        return {"rolls": {side: [rng.randint(1, 6) for _ in range(count)] for side, count in dice.items()}}

    # ---------------------------------------------------------------- helpers
    def _occupant(self, state: State, zone: str) -> str | None:
        """The player holding a territory or light sea (at most one); None when vacant."""
        holders = [p for p, force in state["units"].get(zone, {}).items() if force[ARMY] or force[NAVY]]
        return holders[0] if holders else None

    def _force(self, state: State, zone: str, player: str) -> list[int]:
        return state["units"].get(zone, {}).get(player, [0, 0])

    def _add_units(self, state: State, zone: str, player: str, armies: int = 0, navies: int = 0) -> None:
        force = state["units"].setdefault(zone, {}).setdefault(player, [0, 0])
        force[ARMY] += armies
        force[NAVY] += navies
        if force[ARMY] < 0 or force[NAVY] < 0:
            raise _illegal(f"{player} has too few units in {zone}")
        if force == [0, 0]:
            del state["units"][zone][player]
            if not state["units"][zone]:
                del state["units"][zone]

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
        return all(state["supplies"][player][item] >= n for item, n in costs.items())

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

    # ---------------------------------------------------------------- legality
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
            Action("choose", player, {"power": code}) for code in self.board.superpowers if code not in taken
        ]

    def _legal_salaries(self, state: State, player: str) -> list[Action]:
        """Paying, borrowing, and, when the bill is more than the cash, the cuts that make it payable.

        Leaving a company idle or disbanding a unit while the bill is payable stays legal
        (`is_legal` accepts it) but is not offered: nobody needs it, and it floods random play.
        """
        actions = []
        if self._salary_bill(state, player) <= state["cash"][player]:
            actions.append(Action("pay_salaries", player))
        if state["loans"][player] + state["options"]["loan_unit"] <= state["options"]["loan_limit"]:
            actions.append(Action("borrow", player))
        if actions and actions[0].kind == "pay_salaries":
            return actions
        for zone, forces in sorted(state["units"].items()):
            force = forces.get(player)
            if force:
                for kind, index in (("army", ARMY), ("navy", NAVY)):
                    if force[index] and not (
                        kind == "navy" and force[ARMY] > (force[NAVY] - 1) * self._capacity(state)
                    ):
                        actions.append(Action("disband", player, {"zone": zone, "kind": kind}))
        actions += [
            Action("idle", player, {"card": c})
            for c in self._companies(state, player)
            if c not in state["idle"]
        ]
        return actions

    def _legal_loans(self, state: State, player: str) -> list[Action]:
        options = state["options"]
        due = rules.interest_due(
            state["loans"][player], options["loan_unit"], options["loan_interest_per_unit"]
        )
        actions = []
        if not state["interest_paid"]:
            if due <= state["cash"][player]:
                actions.append(Action("pay_interest", player))
            if state["loans"][player] + options["loan_unit"] <= options["loan_limit"]:
                actions.append(Action("borrow", player))
            if not actions:
                actions.append(Action("declare_bankruptcy", player))
            return actions
        if state["loans"][player] and state["cash"][player] >= options["loan_unit"]:
            actions.append(Action("repay", player))
        actions.append(Action("end_loans", player))
        return actions

    def _legal_bid(self, state: State, player: str) -> list[Action]:
        top = min(2 if state["stage"] == 7 else 1, state["cubes"][player])
        return [Action("bid", player, {"cubes": n}) for n in range(top + 1)]

    def _legal_sell(self, state: State, player: str) -> list[Action]:
        actions = [Action("pass", player)]
        for r in RESOURCES:
            have = state["supplies"][player][r]
            for units in _amounts(have):
                actions.append(Action("sell", player, {"resource": r, "units": units}))
        return actions

    def _legal_buy(self, state: State, player: str) -> list[Action]:
        actions = [Action("pass", player)]
        scale = state["options"]["market_scale"]
        for r in RESOURCES:
            if state["supplies"][player][r] < self._cap(state, r):
                cost, _ = rules.buy_from_market(
                    scale, state["market"][r], 1, state["options"]["sale_pricing"]
                )
                if cost <= state["cash"][player]:
                    actions.append(Action("buy", player, {"resource": r, "units": 1}))
        return actions

    def _legal_trade(self, state: State, player: str) -> list[Action]:
        """Representative offers: to each other player, one unit of the resource the seller holds most
        of, at the market price. Any other terms are legal too (`is_legal` checks them)."""
        actions = [Action("pass", player)]
        kind = "offer_sell" if state["stage"] == 3 else "offer_buy"
        for other in state["players"]:
            if other == player or not state["alive"][other]:
                continue
            seller, buyer = (player, other) if kind == "offer_sell" else (other, player)
            stock = state["supplies"][seller]
            for r in (max(RESOURCES, key=lambda item: stock[item]),):
                price = rules.market_price(state["options"]["market_scale"], state["market"][r])
                params = {"with": other, "resource": r, "units": 1, "price": price}
                if self._trade_problem(state, seller, buyer, r, 1, price) is None:
                    actions.append(Action(kind, player, params))
        return actions

    def _legal_respond(self, state: State, player: str) -> list[Action]:
        offer = state["offer"]
        actions = [Action("decline", player)]
        if (
            self._trade_problem(
                state, offer["seller"], offer["buyer"], offer["resource"], offer["units"], offer["price"]
            )
            is None
        ):
            actions.append(Action("accept", player))
        return actions

    def _legal_attack(self, state: State, player: str) -> list[Action]:
        actions = [Action("pass", player)]
        return actions + self._attack_options(state, player)

    def _legal_counter(self, state: State, player: str) -> list[Action]:
        return [Action("decline", player), *self._attack_options(state, player)]

    def _attack_options(self, state: State, player: str) -> list[Action]:
        actions = []
        if self._can_spend(state, player, rules.SET_OF_SUPPLIES):
            for zone, forces in sorted(state["units"].items()):
                force = forces.get(player)
                if not force:
                    continue
                same = [zone] if self.board.zones[zone].is_dark_sea else []
                if self.board.zones[zone].is_land:
                    sizes = (("direct", force[ARMY]),)
                else:  # navies convoying armies stay with them
                    free = force[NAVY] - -(-force[ARMY] // self._capacity(state))
                    sizes = (("direct", free), ("amphibious", force[ARMY]))
                for target in (*self.board.zones[zone].adjacent, *same):
                    for mode, units in sizes:
                        if units:
                            act = Action(
                                "attack", player, {"from": zone, "to": target, "units": units, "mode": mode}
                            )
                            if self._attack_problem(state, act) is None:
                                actions.append(act)
        if state["supplies"][player]["nuke"]:
            for zone in sorted(state["units"]):
                occupant = self._occupant(state, zone)
                if occupant not in (None, player) and self._nuke_target_ok(state, player, zone):
                    actions.append(Action("nuke", player, {"targets": [zone]}))
        return actions

    def _legal_occupy(self, state: State, player: str) -> list[Action]:
        return [
            Action("end_occupy", player),
            *self._move_options(state, player, state["battle"]["occupy"], "occupy"),
        ]

    def _legal_reinforce(self, state: State, player: str) -> list[Action]:
        return [Action("end_reinforce", player), *self._move_options(state, player, None, "reinforce")]

    def _legal_move(self, state: State, player: str) -> list[Action]:
        return [Action("end_turn", player), *self._move_options(state, player, None, "move")]

    def _move_options(self, state: State, player: str, targets: list[str] | None, kind: str) -> list[Action]:
        actions = []
        for zone, forces in sorted(state["units"].items()):
            force = forces.get(player)
            if not force:
                continue
            for target in self.board.zones[zone].adjacent:
                if targets is not None and target not in targets:
                    continue
                for unit_kind, index in (("army", ARMY), ("navy", NAVY)):
                    for units in _amounts(force[index]):
                        act = Action(
                            kind, player, {"from": zone, "to": target, "units": units, "kind": unit_kind}
                        )
                        if self._move_problem(state, act) is None:
                            actions.append(act)
        return actions

    def _legal_build(self, state: State, player: str) -> list[Action]:
        actions = [Action("end_turn", player)]
        step = state["build_step"]
        options = state["options"]
        if step == 0:
            for kind in ("army", "navy"):
                for zone in self._deploy_zones(state, player, kind):
                    actions.append(Action("build", player, {"kind": kind, "zone": zone}))
            actions = [a for a in actions if a.kind == "end_turn" or self._build_problem(state, a) is None]
        if step <= 1:
            for weapon in WEAPONS:
                if self._weapon_build_problem(state, player, weapon) is None:
                    actions.append(Action("build_weapon", player, {"weapon": weapon}))
        for weapon in WEAPONS:
            if self._search_problem(state, player, weapon, options["card_flip_cost"]) is None:
                actions.append(Action("research", player, {"weapon": weapon}))
        return actions

    def _legal_prospect(self, state: State, player: str) -> list[Action]:
        actions = [Action("end_turn", player)]
        if self._may_prospect(state, player):
            for r in RESOURCES:
                if self._search_problem(state, player, r, state["options"]["card_flip_cost"]) is None:
                    actions.append(Action("prospect", player, {"resource": r}))
        return actions

    # ---------------------------------------------------------------- apply
    def apply(self, state: State, action: Action) -> State:
        new = _clone(state)
        phase = state["phase"]
        if action.player == CHANCE:
            if self.current_players(state) != (CHANCE,):
                raise _illegal("it is not chance's turn")
            getattr(self, f"_chance_{phase}")(new, action)
        else:
            if action.player not in self.current_players(state) or self.is_simultaneous(state):
                raise _illegal(f"it is not {action.player}'s turn to {action.kind}")
            if action.kind not in PHASE_MOVES.get(phase, ()):
                raise _illegal(f"{action.kind} is not a move in phase {phase}")
            if action.kind != "pass" and phase in ("sell", "buy", "trade", "attack"):
                new["passes"] = 0
            handler = getattr(self, f"_do_{phase}_{action.kind}", None) or getattr(self, f"_do_{action.kind}")
            try:
                handler(new, action.player, dict(action.params))
            except (KeyError, TypeError, ValueError, AttributeError) as error:
                raise _illegal(f"malformed {action.kind}: {error!r}") from None
        self._settle(new)
        return new

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

    # ----- DPS (S-DPS) and choosing superpowers (S-0.choose)
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

    # ----- Stage 1 (S-1.A salaries, S-1.B loans)
    def _salary_bill(self, state: State, player: str) -> int:
        options = state["options"]
        companies = [c for c in self._companies(state, player) if c not in state["idle"]]
        return rules.salary_bill(
            len(companies),
            self._units_total(state, player),
            options["company_salary"],
            options["unit_salary"],
        )

    def _capacity(self, state: State) -> int:
        return state["options"]["convoy_capacity"]

    def _do_borrow(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-1.B (placeholder): take a loan of one loan unit from the bank, up to the loan limit."""
        if state["phase"] not in ("salaries", "loans"):
            raise _illegal("loans are taken in Stage 1")
        options = state["options"]
        if state["loans"][player] + options["loan_unit"] > options["loan_limit"]:
            raise _illegal(f"{player} would owe more than the loan limit ${options['loan_limit']}M")
        state["loans"][player] += options["loan_unit"]
        self._receive(state, player, options["loan_unit"])
        state["events"].append(event("borrow", player=player, amount=options["loan_unit"]))

    def _do_disband(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-1.A: unpaid military forces are removed from the board (the player picks which)."""
        if state["phase"] != "salaries":
            raise _illegal("units are disbanded when salaries are due")
        zone, kind = params.get("zone"), params.get("kind")
        index = {"army": ARMY, "navy": NAVY}.get(kind)
        if index is None or self._force(state, zone, player)[index] < 1:
            raise _illegal(f"{player} has no {kind} in {zone}")
        force = self._force(state, zone, player)
        if kind == "navy" and force[ARMY] > (force[NAVY] - 1) * self._capacity(state):
            raise _illegal("that navy is convoying armies")
        self._add_units(state, zone, player, -(index == ARMY), -(index == NAVY))
        state["events"].append(event("disband", player=player, zone=zone, unit=kind))

    def _do_idle(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-1.A: a company whose salary is not paid produces nothing in Stage 2."""
        card = params.get("card")
        if (
            state["phase"] != "salaries"
            or card not in self._companies(state, player)
            or card in state["idle"]
        ):
            raise _illegal(f"{card!r} is not one of {player}'s paid companies")
        state["idle"].append(card)
        state["events"].append(event("idle", player=player, card=card))

    def _do_pay_salaries(self, state: State, player: str, params: dict[str, Any]) -> None:
        bill = self._salary_bill(state, player)
        self._pay(state, player, bill, "salaries")
        state["events"].append(event("salaries", player=player, amount=bill))
        state["interest_paid"] = False
        if state["loans"][player]:
            self._set_phase(state, "loans", player)
        else:
            self._next_in_stage1(state)

    def _do_pay_interest(self, state: State, player: str, params: dict[str, Any]) -> None:
        options = state["options"]
        if state["phase"] != "loans" or state["interest_paid"]:
            raise _illegal("interest is paid once, in Stage 1 Phase B")
        due = rules.interest_due(
            state["loans"][player], options["loan_unit"], options["loan_interest_per_unit"]
        )
        self._pay(state, player, due, "interest")
        state["interest_paid"] = True
        state["events"].append(event("interest", player=player, amount=due))

    def _do_repay(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-1.B: principal is paid back in billion-dollar amounts."""
        unit = state["options"]["loan_unit"]
        if state["phase"] != "loans" or not state["interest_paid"] or state["loans"][player] < unit:
            raise _illegal("principal is repaid after the interest, in $1B amounts")
        self._pay(state, player, unit, "loan principal")
        state["loans"][player] -= unit
        state["events"].append(event("repay", player=player, amount=unit))

    def _do_end_loans(self, state: State, player: str, params: dict[str, Any]) -> None:
        if state["phase"] != "loans" or not state["interest_paid"]:
            raise _illegal("the interest must be paid first")
        self._next_in_stage1(state)

    def _do_declare_bankruptcy(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-10.bankrupt (placeholder): a player who can neither pay his interest nor borrow is out."""
        if state["phase"] != "loans" or self._legal_loans(state, player) != [
            Action("declare_bankruptcy", player)
        ]:
            raise _illegal("bankruptcy is declared only when the interest cannot be paid or borrowed")
        state["events"].append(event("bankrupt", player=player))
        self._eliminate(state, player, captor=None)
        self._check_victory(state)
        if state["phase"] != "over":
            self._next_in_stage1(state)

    def _next_in_stage1(self, state: State) -> None:
        order = [p for p in state["players"] if state["alive"][p]]
        current = state["turn"]
        later = (
            order[order.index(current) + 1 :]
            if current in order
            else [p for p in order if state["players"].index(p) > state["players"].index(current)]
        )
        if later:
            self._set_phase(state, "salaries", later[0])
        else:
            self._production(state)
            self._start_bid(state, 3)

    def _production(self, state: State) -> None:
        """S-2.A: each paid company's units go to the supply centre; units over the cap are lost."""
        state["stage"] = 2
        cap = state["options"]["supply_cap"]
        for card_id, holder in state["cards"].items():
            card = self.board.cards[card_id]
            if holder is None or card.kind != "company" or card_id in state["idle"]:
                continue
            stock = state["supplies"][holder][card.resource]
            new_stock, lost = rules.store_production(stock, card.units, cap)
            state["supplies"][holder][card.resource] = new_stock
            state["stock_bank"][card.resource] -= new_stock - stock
            state["events"].append(
                event("production", player=holder, card=card_id, stored=new_stock - stock, lost=lost)
            )
        state["idle"] = []

    # ----- Blind bid (S-BB) and stage dispatch
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

    # ----- Stage 3 and 7: market (S-3.C, S-7.C) and trades (S-3.D, S-7.D)
    def _do_sell_sell(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-3.C: sell any number of one resource; paid by the bank, the market meter moves down."""
        resource, units = params.get("resource"), params.get("units")
        if resource not in RESOURCES or not isinstance(units, int) or units < 1:
            raise _illegal("a sale names a resource and a positive number of units")
        if state["supplies"][player][resource] < units:
            raise _illegal(f"{player} has only {state['supplies'][player][resource]} {resource}")
        options = state["options"]
        proceeds, step = rules.sell_to_market(
            options["market_scale"], state["market"][resource], units, options["sale_pricing"]
        )
        state["supplies"][player][resource] -= units
        state["stock_bank"][resource] += units
        state["market"][resource] = step
        self._receive(state, player, proceeds)
        state["events"].append(
            event("sell", player=player, resource=resource, units=units, proceeds=proceeds)
        )
        self._advance_rotation(state, player, drop=False)

    def _do_buy_buy(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-7.C: buy from the market; the meter moves up one step per unit, to the Bear Pit."""
        resource, units = params.get("resource"), params.get("units")
        if resource not in RESOURCES or not isinstance(units, int) or units < 1:
            raise _illegal("a purchase names a resource and a positive number of units")
        if state["supplies"][player][resource] + units > self._cap(state, resource):
            raise _illegal(f"{player}'s supply centre holds at most {self._cap(state, resource)} {resource}")
        options = state["options"]
        cost, step = rules.buy_from_market(
            options["market_scale"], state["market"][resource], units, options["sale_pricing"]
        )
        self._pay(state, player, cost, f"{units} {resource}")
        state["supplies"][player][resource] += units
        state["stock_bank"][resource] -= units
        state["market"][resource] = step
        state["bought"].append(player)
        state["events"].append(event("buy", player=player, resource=resource, units=units, cost=cost))
        self._advance_rotation(state, player, drop=False)

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

    def _trade_problem(
        self, state: State, seller: str, buyer: str, resource: str, units: int, price: int
    ) -> str | None:
        if not isinstance(buyer, str) or not isinstance(seller, str):
            return "name the other player"
        if (
            seller == buyer
            or buyer not in state["alive"]
            or not state["alive"].get(buyer)
            or not state["alive"].get(seller)
        ):
            return "a trade needs two different players in the game"
        if resource not in RESOURCES or not isinstance(units, int) or units < 1:
            return "a trade names a resource and a positive number of units"
        if not isinstance(price, int) or price < 0:
            return "the price is a whole number of $M, zero or more"
        if state["supplies"][seller][resource] < units:
            return f"{seller} has too few {resource}"
        if state["supplies"][buyer][resource] + units > self._cap(state, resource):
            return f"{buyer}'s supply centre is too full"
        if state["cash"][buyer] < price:
            return f"{buyer} cannot pay ${price}M"
        return None

    def _make_offer(self, state: State, player: str, params: dict[str, Any], selling: bool) -> None:
        if state["phase"] != "trade" or selling != (state["stage"] == 3):
            raise _illegal("players sell to each other in Stage 3 Phase D and buy in Stage 7 Phase D")
        other = params.get("with")
        seller, buyer = (player, other) if selling else (other, player)
        problem = self._trade_problem(
            state, seller, buyer, params.get("resource"), params.get("units"), params.get("price")
        )
        if problem:
            raise _illegal(problem)
        state["offer"] = {
            "from": player,
            "seller": seller,
            "buyer": buyer,
            "resource": params["resource"],
            "units": params["units"],
            "price": params["price"],
        }
        state["events"].append(event("offer", **state["offer"]))
        self._set_phase(state, "respond", other)

    def _do_offer_sell(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-3.D: sell to another player on any terms; the market price is not affected."""
        self._make_offer(state, player, params, selling=True)

    def _do_offer_buy(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-7.D: buy from another player on any terms."""
        self._make_offer(state, player, params, selling=False)

    def _do_respond_accept(self, state: State, player: str, params: dict[str, Any]) -> None:
        offer = state["offer"]
        problem = self._trade_problem(
            state, offer["seller"], offer["buyer"], offer["resource"], offer["units"], offer["price"]
        )
        if problem:
            raise _illegal(problem)
        state["supplies"][offer["seller"]][offer["resource"]] -= offer["units"]
        state["supplies"][offer["buyer"]][offer["resource"]] += offer["units"]
        state["cash"][offer["buyer"]] -= offer["price"]
        state["cash"][offer["seller"]] += offer["price"]
        if state["stage"] == 7:
            state["bought"].append(offer["buyer"])
        state["events"].append(event("trade", **offer))
        self._close_offer(state)

    def _do_respond_decline(self, state: State, player: str, params: dict[str, Any]) -> None:
        state["events"].append(event("declined", player=player))
        self._close_offer(state)

    def _close_offer(self, state: State) -> None:
        proposer = state["offer"]["from"]
        state["offer"] = None
        state["phase"] = "trade"
        self._advance_rotation(state, proposer, drop=False)

    # ----- Stage 4: conventional battle drill (S-4.C.conv.*) and tactics
    def _attack_problem(self, state: State, action: Action) -> str | None:
        player, params = action.player, action.params
        src, dst, units, mode = (
            params.get("from"),
            params.get("to"),
            params.get("units"),
            params.get("mode", "direct"),
        )
        zones = self.board.zones
        if src not in zones or dst not in zones:
            return "unknown zone"
        if not isinstance(units, int) or units < 1:
            return "attack with at least one unit"
        force = self._force(state, src, player)
        a, b = zones[src], zones[dst]
        if dst in state["clouds"]:
            return f"{dst} is nuked and out of play"
        defenders = [p for p in state["units"].get(dst, {}) if p != player]
        if mode == "airborne":
            if not (a.is_land and b.is_land) or force[ARMY] < units:
                return "an airborne assault flies armies from a territory to a territory"
            if not self._can_spend(
                state, player, {**rules.SET_OF_SUPPLIES, "oil": 1 + units * state["options"]["airlift_oil"]}
            ):
                return "not enough oil for a set of supplies and the flight"
        elif not self.board.adjacent(src, dst) and not (a.is_dark_sea and src == dst):
            return f"{dst} is not adjacent to {src}"
        elif mode == "amphibious":
            # S-4.T.amphibious: armies convoyed from a light blue sea onto the target territory.
            if not (a.is_light_sea and b.is_land) or force[ARMY] < units:
                return "an amphibious assault lands convoyed armies from a light blue sea"
            landing = {**rules.SET_OF_SUPPLIES, "grain": 1 + units * state["options"]["army_move_grain"]}
            if not self._can_spend(state, player, landing):
                return "not enough grain for a set of supplies and the landing"
        elif a.is_land:
            # S-4.C.conv.use: armies attack an adjacent territory or navies in an adjacent light sea.
            if force[ARMY] < units or not (b.is_land or b.is_light_sea):
                return "armies attack an adjacent territory or light blue sea"
        elif force[ARMY] > (force[NAVY] - units) * self._capacity(state):
            return "navies convoying armies cannot leave them adrift"
        elif a.is_light_sea:
            # navies in a light sea attack navies in adjacent light seas or armies in adjacent territories.
            if force[NAVY] < units or b.is_dark_sea:
                return "navies in a light blue sea may not attack a dark blue sea"
        else:
            # navies in a dark sea attack navies in the same dark sea or an adjacent light sea.
            if force[NAVY] < units or not (b.is_light_sea or src == dst):
                return "navies in a dark blue sea attack the same sea or an adjacent light blue sea"
        if b.is_dark_sea and not defenders:
            return "nobody to attack in that dark blue sea"
        if not b.is_dark_sea and self._occupant(state, dst) == player:
            return "you cannot attack your own zone"
        if not self._can_spend(state, player, rules.SET_OF_SUPPLIES):
            return "an attack costs one set of supplies (grain, oil, mineral)"
        return None

    def _do_attack(self, state: State, player: str, params: dict[str, Any]) -> None:
        if state["phase"] not in ("attack", "counter"):
            raise _illegal("attacks are made in Stage 4")
        problem = self._attack_problem(state, Action("attack", player, params))
        if problem:
            raise _illegal(problem)
        src, dst, units, mode = params["from"], params["to"], params["units"], params.get("mode", "direct")
        counter = state["phase"] == "counter"
        if not counter:
            state["rotation_player"] = player
        options = state["options"]
        defenders = [p for p in state["units"].get(dst, {}) if p != player]
        defender = defenders[0] if defenders else None
        if self.board.zones[dst].is_dark_sea and "defender" in params:
            defender = params["defender"] if params["defender"] in defenders else defender
        # Step B: supplies, then the attacking forces move to the border.
        self._spend(state, player, rules.SET_OF_SUPPLIES, "the attack")
        index = NAVY if (not self.board.zones[src].is_land and mode == "direct") else ARMY
        support = 0
        if mode == "airborne":
            self._spend(state, player, {"oil": units * options["airlift_oil"]}, "the airlift")
        if mode == "amphibious":
            self._spend(state, player, {"grain": units * options["army_move_grain"]}, "the landing")
            support = self._force(state, src, player)[NAVY]  # S-4.T.amphibious: navies add fire power
        self._add_units(state, src, player, -units if index == ARMY else 0, -units if index == NAVY else 0)
        paid = False
        if defender is not None and self._can_spend(state, defender, rules.SET_OF_SUPPLIES):
            self._spend(
                state, defender, rules.SET_OF_SUPPLIES, "the defence"
            )  # S-4.C.conv.B: he must, if he can
            paid = True
        battle = {
            "attacker": player,
            "defender": defender,
            "from": src,
            "to": dst,
            "mode": mode,
            "units": units,
            "unit": "army" if index == ARMY else "navy",
            "support": support,
            "counter": counter,
            "defender_paid": paid,
        }
        state["battle"] = battle
        state["events"].append(
            event("attack", **{k: v for k, v in battle.items() if k != "counter"}, counter=counter)
        )
        if defender is None:
            militia = options["militia_dice"]
            if militia:
                battle["dice"] = {"attacker": 0, "militia": militia}
                self._set_phase(state, "battle_dice")
            else:
                self._resolve_conventional(state, {"attacker": [], "defender": []})
            return
        d_index = ARMY if self.board.zones[dst].is_land else NAVY
        defence = self._force(state, dst, defender)[d_index]
        lstars = {p: state["supplies"][p]["lstar"] for p in (player, defender)}
        att, dfn = rules.conventional_dice(
            units + support, defence, lstars[player], lstars[defender], paid, options["tie_die"]
        )
        battle["dice"] = {"attacker": att, "defender": dfn}
        self._set_phase(state, "battle_dice")

    def _chance_battle_dice(self, state: State, action: Action) -> None:
        rolls = self._checked_rolls(state, action)
        self._resolve_conventional(state, rolls)

    def _checked_rolls(self, state: State, action: Action) -> dict[str, list[int]]:
        expected = state["battle"]["dice"]
        rolls = action.params.get("rolls") if action.kind == "combat_result" else None
        if not isinstance(rolls, dict) or set(rolls) != set(expected):
            raise _illegal(f"the result must give rolls for {sorted(expected)}")
        for side, count in expected.items():
            values = rolls[side]
            if (
                not isinstance(values, list)
                or len(values) != count
                or not all(isinstance(v, int) and 1 <= v <= 6 for v in values)
            ):
                raise _illegal(f"{side} rolls {count} dice, each 1 to 6 (got {values!r})")
        return rolls

    def _resolve_conventional(self, state: State, rolls: Mapping[str, list[int]]) -> None:
        """S-4.C.conv.D: every three points remove one enemy unit; then the occupation cases."""
        battle = state["battle"]
        attacker, defender, dst, src = battle["attacker"], battle["defender"], battle["to"], battle["from"]
        d_index = ARMY if self.board.zones[dst].is_land else NAVY
        defence = self._force(state, dst, defender)[d_index] if defender else 0
        hits_on_defender = min(defence, rules.kills(rolls.get("attacker", [])))
        hits_on_attacker = rules.kills(rolls.get("defender", []) + rolls.get("militia", []))
        if defender:
            self._add_units(
                state, dst, defender, *([-hits_on_defender, 0] if d_index == ARMY else [0, -hits_on_defender])
            )
            if d_index == NAVY:
                self._sink_convoyed(state, dst, defender)
        attacking = battle["units"]
        lost = min(attacking, hits_on_attacker)
        battle["survivors"] = attacking - lost
        if battle["mode"] == "amphibious" and hits_on_attacker > attacking:
            # S-4.T.amphibious: the defender may also remove the navies used in the battle.
            navies_lost = min(battle["support"], hits_on_attacker - attacking)
            self._add_units(state, src, attacker, 0, -navies_lost)
            self._sink_convoyed(state, src, attacker)
        state["events"].append(
            event("battle", rolls=dict(rolls), defender_losses=hits_on_defender, attacker_losses=lost)
        )
        defender_left = self._force(state, dst, defender)[d_index] if defender else 0
        survivors, kind = battle["survivors"], battle["unit"]
        can_enter = (kind == "army") == self.board.zones[dst].is_land
        steps: list[list[Any]] = []
        if defender_left == 0 and survivors and can_enter:
            # Only the defender is destroyed: the attacking forces move in, more may follow.
            self._add_units(
                state, dst, attacker, survivors if kind == "army" else 0, survivors if kind == "navy" else 0
            )
            self._capture(state, dst, attacker)
            steps.append(["occupy", attacker, [dst]])
        else:
            if survivors and battle["mode"] == "amphibious":
                # SUP-A6: landed armies that did not capture withdraw to their navies (the rest surrender).
                force = self._force(state, src, attacker)
                room = force[NAVY] * self._capacity(state) - force[ARMY]
                if state["options"]["amphibious_failure"] == "withdraw":
                    self._add_units(state, src, attacker, min(room, survivors), 0)
            elif survivors:
                # Attackers that cannot move in (or did not win) return to the zone they attacked from.
                self._add_units(
                    state,
                    src,
                    attacker,
                    survivors if kind == "army" else 0,
                    survivors if kind == "navy" else 0,
                )
            src_index = ARMY if self.board.zones[src].is_land else NAVY
            attacker_wiped = self._force(state, src, attacker)[src_index] == 0
            if defender and defender_left == 0 and attacker_wiped:
                steps.append(["occupy", attacker, [dst, src]])  # Mutual destruction
            elif defender and attacker_wiped and defender_left and battle["mode"] == "direct":
                steps.append(["occupy", defender, [src]])  # Only the attacker is destroyed
        if defender:
            steps += [["reinforce", defender], ["reinforce", attacker]]
            if not battle["counter"] or state["options"]["counterattack_chain"]:
                steps.append(["counter", defender])
        state["steps"] = steps + state["steps"]
        self._next_step(state)

    def _sink_convoyed(self, state: State, zone: str, player: str) -> None:
        """S-4.C.conv.D: "If a navy is sunk while convoying armies, the armies are lost as well"."""
        force = self._force(state, zone, player)
        excess = force[ARMY] - force[NAVY] * self._capacity(state)
        if excess > 0:
            self._add_units(state, zone, player, -excess, 0)

    def _capture(self, state: State, zone: str, captor: str) -> None:
        """S-4.C.conv.D occupation: the captor takes the resource cards of the captured zone
        (SUP-A8: from whoever holds them, also when the zone was empty)."""
        for card in self.board.cards_in(zone):
            if state["cards"].get(card) not in (None, captor):
                loser = state["cards"][card]
                state["cards"][card] = captor
                state["events"].append(event("card_captured", card=card, by=captor, source=loser))

    def _next_step(self, state: State) -> None:
        """Run the pending battle steps (occupy, reinforce, counterattack), then back to the rotation."""
        while state["steps"]:
            kind, player, *rest = state["steps"].pop(0)
            if not state["alive"].get(player):
                continue
            if kind == "occupy":
                state["battle"]["occupy"] = rest[0]
            self._set_phase(state, kind, player)
            return
        state["battle"] = None
        self._check_eliminations(state)
        if state["phase"] == "over":
            return
        self._advance_rotation_after_battle(state)

    def _advance_rotation_after_battle(self, state: State) -> None:
        attacker = state.get("rotation_player")
        state["phase"] = "attack"
        self._advance_rotation(state, attacker, drop=False)

    def _do_occupy(self, state: State, player: str, params: dict[str, Any]) -> None:
        self._do_a_move(state, player, params, "occupy")

    def _do_reinforce(self, state: State, player: str, params: dict[str, Any]) -> None:
        self._do_a_move(state, player, params, "reinforce")

    def _do_end_occupy(self, state: State, player: str, params: dict[str, Any]) -> None:
        self._next_step(state)

    def _do_end_reinforce(self, state: State, player: str, params: dict[str, Any]) -> None:
        self._next_step(state)

    def _do_counter_decline(self, state: State, player: str, params: dict[str, Any]) -> None:
        state["events"].append(event("no_counterattack", player=player))
        self._next_step(state)

    # ----- Stage 4: strategic battle drill (S-4.C.strat.*)
    def _nuke_target_ok(self, state: State, player: str, zone: str) -> bool:
        target = self.board.zones.get(zone)
        return (
            target is not None
            and (target.is_land or target.is_light_sea)
            and zone not in state["clouds"]
            and self._occupant(state, zone) != player
        )

    def _do_nuke(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-4.C.strat.A-C: name ground zero(s), solo or cluster, launch (nuke meter moves left)."""
        if state["phase"] not in ("attack", "counter"):
            raise _illegal("nukes are fired in Stage 4")
        if state["phase"] == "attack":
            state["rotation_player"] = player
        targets = params.get("targets")
        if not isinstance(targets, list) or not targets:
            raise _illegal("name one or more targets")
        for zone in targets:
            if not self._nuke_target_ok(state, player, zone):
                raise _illegal(
                    f"{zone!r} cannot be nuked (a territory or light blue sea, not nuked, not yours)"
                )
        if state["supplies"][player]["nuke"] < len(targets):
            raise _illegal(f"{player} has only {state['supplies'][player]['nuke']} nukes")
        self._spend(state, player, {"nuke": len(targets)}, "the launch")
        defenders = []
        for zone in targets:
            occupant = self._occupant(state, zone)
            if occupant and occupant not in defenders:
                defenders.append(occupant)
        champions = [
            p
            for p in state["players"]
            if state["alive"][p] and p != player and p not in defenders and state["supplies"][p]["lstar"] > 0
        ]
        state["battle"] = {
            "attacker": player,
            "targets": list(targets),
            "defenders": defenders,
            "champions": champions,
            "counter": state["phase"] == "counter",
            "tactic": "solo" if len(targets) == 1 else "cluster",
        }
        state["events"].append(
            event("nuke", attacker=player, targets=list(targets), tactic=state["battle"]["tactic"])
        )
        if champions:
            self._set_phase(state, "champions")  # S-4.C.strat.C: champions commit (secretly, together)
        else:
            self._start_screen(state)

    def _legal_champions(self, state: State, player: str) -> list[Action]:
        return [Action("defend", player, {"defend": False}), Action("defend", player, {"defend": True})]

    def _start_screen(self, state: State) -> None:
        battle = state["battle"]
        dice = {
            f"defender:{p}": state["supplies"][p]["lstar"]
            for p in battle["defenders"]
            if state["supplies"][p]["lstar"]
        }
        dice.update({f"champion:{p}": state["supplies"][p]["lstar"] for p in battle["champions"]})
        battle["dice"] = dice
        if dice:
            self._set_phase(state, "screen_dice")
        else:
            self._strike(state, {})

    def _chance_screen_dice(self, state: State, action: Action) -> None:
        self._strike(state, self._checked_rolls(state, action))

    def _strike(self, state: State, rolls: Mapping[str, list[int]]) -> None:
        """S-4.C.strat.D: the defender's L-stars hit on 1-5, champions' on 1-3; the rest strike.

        SUP-A7: each defender's shots go at the nukes aimed at his own zones, in the attacker's order;
        champions' shots then go at the surviving nukes in order.
        """
        battle = state["battle"]
        alive = list(battle["targets"])
        destroyed = []
        for side, values in rolls.items():
            role, player = side.split(":", 1)
            if role != "defender":
                continue
            hits = rules.screen_hits(values, champion=False)
            for zone in list(alive):
                if hits and self._occupant(state, zone) == player:
                    alive.remove(zone)
                    destroyed.append(zone)
                    hits -= 1
        for side, values in rolls.items():
            if side.startswith("champion:"):
                hits = rules.screen_hits(values, champion=True)
                while hits and alive:
                    destroyed.append(alive.pop(0))
                    hits -= 1
        state["events"].append(event("screen", rolls=dict(rolls), shot_down=destroyed, strike=alive))
        for zone in alive:
            self._detonate(state, zone)
        steps: list[list[Any]] = []
        if not battle["counter"] or state["options"]["counterattack_chain"]:
            steps = [["counter", p] for p in battle["defenders"]]  # champions may not counterattack
        state["steps"] = steps + state["steps"]
        self._next_step(state)

    def _detonate(self, state: State, zone: str) -> None:
        """S-4.C.strat.effect: everything in the zone is destroyed; companies return to the deck;
        a territory gets a mushroom cloud and leaves play, a light blue sea stays in play."""
        for player, force in list(state["units"].get(zone, {}).items()):
            self._add_units(state, zone, player, -force[ARMY], -force[NAVY])
        for card in self.board.cards_in(zone):
            if card in state["cards"]:
                del state["cards"][card]
                if card in state["idle"]:
                    state["idle"].remove(card)
        if self.board.zones[zone].is_land and zone not in state["clouds"]:
            state["clouds"].append(zone)
        state["events"].append(event("detonation", zone=zone, cloud=self.board.zones[zone].is_land))

    # ----- eliminations: spoils of war, bankruptcy, victory (S-10.*)
    def _check_eliminations(self, state: State) -> None:
        for player in state["players"]:
            if state["alive"][player] and not self._home_held(state, player):
                code = state["power"][player]
                captors = [
                    self._occupant(state, t)
                    for t in self.board.homelands[code]
                    if t not in state["clouds"] and self._occupant(state, t) not in (None, player)
                ]
                self._eliminate(state, player, captors[-1] if captors else None)
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

    # ----- Stage 5: moving (S-5.C) and the moves used in Stage 4 (S-4.C.conv.D, S-4.C.conv.E)
    def _move_problem(self, state: State, action: Action) -> str | None:
        player, params, purpose = action.player, action.params, action.kind
        src, dst, units, kind = params.get("from"), params.get("to"), params.get("units"), params.get("kind")
        zones = self.board.zones
        if src not in zones or dst not in zones or kind not in ("army", "navy"):
            return "a move names from, to and kind (army or navy)"
        if not isinstance(units, int) or units < 1:
            return "move at least one unit"
        if not self.board.adjacent(src, dst):
            return f"{dst} is not adjacent to {src}"
        a, b = zones[src], zones[dst]
        force = self._force(state, src, player)
        if dst in state["clouds"]:
            return "armies may not travel through or occupy a nuked territory"
        options = state["options"]
        occupant = self._occupant(state, dst)
        if purpose == "occupy" and dst not in state["battle"]["occupy"]:
            return f"{player} may occupy only {state['battle']['occupy']}"
        if kind == "army":
            if force[ARMY] < units:
                return f"{player} has fewer than {units} armies in {src}"
            if b.is_land:
                if occupant not in (None, player):
                    return f"{dst} is held by {occupant}"
                if purpose == "reinforce" and occupant != player:
                    return "S-4.C.conv.E: reinforce only territories you already occupy"
            else:  # embark onto own navies
                if not a.is_land:
                    return "armies at sea move with their navies"
                room = (
                    self._force(state, dst, player)[NAVY] * self._capacity(state)
                    - self._force(state, dst, player)[ARMY]
                )
                if room < units:
                    return f"not enough of {player}'s navies in {dst} to convoy {units} armies"
            if src in state["clouds"]:
                return "nuked territory"
            if not self._can_spend(state, player, {"grain": units * options["army_move_grain"]}):
                return "not enough grain"
        else:
            if a.is_land or b.is_land:
                return "navies move from sea to sea"
            if force[NAVY] < units:
                return f"{player} has fewer than {units} navies in {src}"
            if b.is_light_sea and occupant not in (None, player):
                return f"{dst} is a light blue sea held by {occupant}"
            left = (force[NAVY] - units) * self._capacity(state)
            if force[ARMY] > left + units * self._capacity(state):
                return "too many convoyed armies"
            if not self._can_spend(state, player, {"oil": units * options["navy_move_oil"]}):
                return "not enough oil"
        return None

    def _do_a_move(self, state: State, player: str, params: dict[str, Any], purpose: str) -> None:
        problem = self._move_problem(state, Action(purpose, player, params))
        if problem:
            raise _illegal(problem)
        src, dst, units, kind = params["from"], params["to"], params["units"], params["kind"]
        options = state["options"]
        if kind == "army":
            self._spend(state, player, {"grain": units * options["army_move_grain"]}, "the move")
            self._add_units(state, src, player, -units, 0)
            self._add_units(state, dst, player, units, 0)
        else:
            self._spend(state, player, {"oil": units * options["navy_move_oil"]}, "the move")
            force = self._force(state, src, player)
            carried = max(0, force[ARMY] - (force[NAVY] - units) * self._capacity(state))
            self._add_units(state, src, player, -carried, -units)
            self._add_units(state, dst, player, carried, units)
        state["events"].append(
            event(
                purpose, player=player, unit=params["kind"], **{k: params[k] for k in ("from", "to", "units")}
            )
        )

    def _do_move_move(self, state: State, player: str, params: dict[str, Any]) -> None:
        self._do_a_move(state, player, params, "move")

    def _do_move_airlift(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-5.C (placeholder cost): fly armies to any territory you already hold."""
        src, dst, units = params.get("from"), params.get("to"), params.get("units")
        zones = self.board.zones
        if src not in zones or dst not in zones or not (zones[src].is_land and zones[dst].is_land):
            raise _illegal("an airlift flies armies from a territory to a territory")
        if not isinstance(units, int) or units < 1 or self._force(state, src, player)[ARMY] < units:
            raise _illegal("too few armies")
        if dst in state["clouds"] or self._occupant(state, dst) != player:
            raise _illegal("armies fly only to a territory you hold")
        self._spend(state, player, {"oil": units * state["options"]["airlift_oil"]}, "the airlift")
        self._add_units(state, src, player, -units, 0)
        self._add_units(state, dst, player, units, 0)
        state["events"].append(event("airlift", player=player, **{"from": src, "to": dst, "units": units}))

    # ----- Stage 6: building (S-6.C, S-6.D), research (S-6.E)
    def _deploy_zones(self, state: State, player: str, kind: str) -> list[str]:
        """S-6.C (placeholder): armies on a home territory you hold; navies in a sea next to one of
        your home ports (a light sea must be vacant or yours)."""
        homes = self._home_held(state, player)
        if kind == "army":
            return homes
        seas = []
        for home in homes:
            if not self.board.zones[home].port:
                continue
            for zone in self.board.zones[home].adjacent:
                sea = self.board.zones[zone]
                if (
                    sea.kind == "sea"
                    and zone not in seas
                    and (sea.is_dark_sea or self._occupant(state, zone) in (None, player))
                ):
                    seas.append(zone)
        return sorted(seas)

    def _build_problem(self, state: State, action: Action) -> str | None:
        kind, zone = action.params.get("kind"), action.params.get("zone")
        if state["build_step"] > 0:
            return "conventional forces are built in Phase C, before weapons and research"
        if kind not in ("army", "navy") or zone not in self._deploy_zones(state, action.player, kind):
            return f"{zone!r} is not a place to deploy a new {kind}"
        if state["cash"][action.player] < state["options"]["batch_cost"]:
            return "not enough money"
        if not self._can_spend(state, action.player, rules.SET_OF_SUPPLIES):
            return "a batch needs one set of supplies"
        return None

    def _do_build_build(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-6.C (placeholder cost): a batch of units for $300M and one set of supplies."""
        problem = self._build_problem(state, Action("build", player, params))
        if problem:
            raise _illegal(problem)
        options = state["options"]
        self._pay(state, player, options["batch_cost"], "new forces")
        self._spend(state, player, rules.SET_OF_SUPPLIES, "new forces")
        n = options["batch_size"]
        self._add_units(
            state,
            params["zone"],
            player,
            n if params["kind"] == "army" else 0,
            n if params["kind"] == "navy" else 0,
        )
        state["events"].append(
            event("build", player=player, unit=params["kind"], zone=params["zone"], units=n)
        )

    def _weapon_build_problem(self, state: State, player: str, weapon: str) -> str | None:
        options = state["options"]
        if weapon not in WEAPONS:
            return "build a nuke or an L-star"
        if state["build_step"] > 1:
            return "strategic weapons are built in Phase D, before research"
        if not any(self.board.cards[c].resource == weapon for c in self._held_cards(state, player)):
            return f"{player} has no {weapon} research card"
        if state["supplies"][player][weapon] >= self._cap(state, weapon):
            return "the supply centre is full"
        if state["cash"][player] < options[f"{weapon}_cost"]:
            return "not enough money"
        if state["supplies"][player]["mineral"] < options[f"{weapon}_minerals"]:
            return "not enough minerals"
        return None

    def _do_build_build_weapon(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-6.D (placeholder cost): a nuke or L-star, once its research card is held."""
        weapon = params.get("weapon")
        problem = self._weapon_build_problem(state, player, weapon)
        if problem:
            raise _illegal(problem)
        options = state["options"]
        self._pay(state, player, options[f"{weapon}_cost"], weapon)
        self._spend(state, player, {"mineral": options[f"{weapon}_minerals"]}, weapon)
        state["supplies"][player][weapon] += 1
        state["stock_bank"][weapon] -= 1
        state["build_step"] = 1
        state["events"].append(event("build_weapon", player=player, weapon=weapon))

    def _search_problem(self, state: State, player: str, wanted: str, cost: int) -> str | None:
        if state["cash"][player] < cost:
            return "not enough money to turn over a card"
        deck = [c for c in self.board.cards if c not in state["cards"]]
        if not any(self._search_match(state, player, c, wanted) for c in deck):
            return f"no {wanted} card that you could keep is left in the deck"
        return None

    def _search_match(self, state: State, player: str, card_id: str, wanted: str) -> bool:
        card = self.board.cards[card_id]
        if card.resource != wanted:
            return False
        if card.kind == "weapon":
            return True
        return card.territory not in state["clouds"] and self._occupant(state, card.territory) in (
            None,
            player,
        )

    def _do_build_research(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-6.E (placeholder): turn over cards at $200M each until a card of that weapon appears."""
        weapon = params.get("weapon")
        if weapon not in WEAPONS:
            raise _illegal("research a nuke or an L-star")
        self._start_search(state, player, weapon)
        state["build_step"] = 2

    def _do_prospect_prospect(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-7.E (placeholder): turn over cards at $200M each; keep the first company of that resource
        whose territory is not nuked and not held by another player."""
        resource = params.get("resource")
        if resource not in RESOURCES or not self._may_prospect(state, player):
            raise _illegal("prospect for grain, oil or mineral, once per Stage 7")
        self._start_search(state, player, resource)
        state["prospected"].append(player)

    def _may_prospect(self, state: State, player: str) -> bool:
        """S-DPS.double7: with one cube a player buys or prospects; with two (double seven) both."""
        if player in state["prospected"]:
            return False
        return state["bids"].get(player, 0) >= 2 or player not in state["bought"]

    def _start_search(self, state: State, player: str, wanted: str) -> None:
        cost = state["options"]["card_flip_cost"]
        problem = self._search_problem(state, player, wanted, cost)
        if problem:
            raise _illegal(problem)
        state["search"] = {"player": player, "wanted": wanted, "flipped": [], "return_to": state["phase"]}
        self._pay(state, player, cost, "turning over a card")
        state["phase"] = "search"

    def _chance_search(self, state: State, action: Action) -> None:
        search = state["search"]
        card = action.params.get("card")
        if (
            action.kind != "draw"
            or card not in self.board.cards
            or card in state["cards"]
            or card in search["flipped"]
        ):
            raise _illegal(f"{card!r} is not in the deck")
        player, wanted = search["player"], search["wanted"]
        state["events"].append(event("flip", player=player, card=card))
        cost = state["options"]["card_flip_cost"]
        if self._search_match(state, player, card, wanted):
            state["cards"][card] = player
            state["events"].append(event("found", player=player, card=card))
        else:
            search["flipped"].append(card)
            deck = [c for c in self.board.cards if c not in state["cards"] and c not in search["flipped"]]
            if state["cash"][player] >= cost and any(
                self._search_match(state, player, c, wanted) for c in deck
            ):
                self._pay(state, player, cost, "turning over a card")
                return
            state["events"].append(event("search_ends", player=player, found=False))
        state["phase"] = search["return_to"]
        state["turn"] = player
        state["search"] = None

    # ----- after every move
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

    # ---------------------------------------------------------------- invariants
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


RULESET = Supremacy()
