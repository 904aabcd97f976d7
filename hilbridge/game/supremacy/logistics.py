"""Supremacy's Stages 5 and 6: moving forces, building forces and weapons, research."""

from __future__ import annotations

from typing import Any

from hilbridge.game.core import (
    Action,
    State,
    event,
)
from hilbridge.game.supremacy import rules
from hilbridge.game.supremacy.base import ARMY, NAVY, SupremacyBase, _amounts, _illegal
from hilbridge.game.supremacy.board import WEAPONS


class LogisticsRules(SupremacyBase):
    """Moves (also used to occupy and reinforce in Stage 4), builds and research."""

    def _legal_move(self, state: State, player: str) -> list[Action]:
        return [Action.new("end_turn", player, {}), *self._move_options(state, player, None, "move")]

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
                        act = Action.new(
                            kind, player, {"from": zone, "to": target, "units": units, "kind": unit_kind}
                        )
                        if self._move_problem(state, act) is None:
                            actions.append(act)
        return actions

    def _legal_build(self, state: State, player: str) -> list[Action]:
        actions = [Action.new("end_turn", player, {})]
        step = state["build_step"]
        options = state["options"]
        if step == 0:
            deploy = {kind: self._deploy_zones(state, player, kind) for kind in ("army", "navy")}
            for kind, zones in deploy.items():
                for zone in zones:
                    actions.append(Action.new("build", player, {"kind": kind, "zone": zone}))
            actions = [
                a for a in actions if a.kind == "end_turn" or self._build_problem(state, a, deploy) is None
            ]
        if step <= 1:
            for weapon in WEAPONS:
                if self._weapon_build_problem(state, player, weapon) is None:
                    actions.append(Action.new("build_weapon", player, {"weapon": weapon}))
        for weapon in WEAPONS:
            if self._search_problem(state, player, weapon, options["card_flip_cost"]) is None:
                actions.append(Action.new("research", player, {"weapon": weapon}))
        return actions

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
                battle = state["battle"]
                # S-4.C.conv.D note: a defender may reinforce the zone the attacker left empty.
                emptied = battle is not None and battle.get("defender") == player and dst == battle.get("to")
                if purpose == "reinforce" and occupant != player and not (occupant is None and emptied):
                    return "S-4.C.conv.E: reinforce only territories you already occupy"
                own_home = self.board.zones[dst].home_of == state["power"].get(player)
                if (
                    purpose == "move"
                    and occupant is None
                    and not own_home
                    and not state["options"]["move_into_vacant"]
                ):
                    return f"SUP-A17: {dst} is vacant; take it by attack (Militia Rule), not by a move"
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

    def _build_problem(
        self, state: State, action: Action, deploy: dict[str, list[str]] | None = None
    ) -> str | None:
        """Why `action` may not be built, or None. `deploy` (kind -> `_deploy_zones` of this state and
        player) lets a list builder work the zones out once for all its candidates, not once each."""
        kind, zone = action.params.get("kind"), action.params.get("zone")
        if state["build_step"] > 0:
            return "conventional forces are built in Phase C, before weapons and research"
        if kind not in ("army", "navy") or zone not in (
            deploy[kind] if deploy is not None else self._deploy_zones(state, action.player, kind)
        ):
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

    def _do_build_research(self, state: State, player: str, params: dict[str, Any]) -> None:
        """S-6.E (placeholder): turn over cards at $200M each until a card of that weapon appears."""
        weapon = params.get("weapon")
        if weapon not in WEAPONS:
            raise _illegal("research a nuke or an L-star")
        self._start_search(state, player, weapon)
        state["build_step"] = 2
