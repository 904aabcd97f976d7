"""Supremacy's Stage 4: the conventional battle drill, the strategic battle drill and the tactics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hilbridge.game.core import (
    Action,
    State,
    event,
)
from hilbridge.game.supremacy import rules
from hilbridge.game.supremacy.base import ARMY, NAVY, SupremacyBase, _illegal


class WarfareRules(SupremacyBase):
    """Attacks, battles, occupation, reinforcement, counterattacks, nukes and the L-star screen."""

    def _legal_attack(self, state: State, player: str) -> list[Action]:
        actions = [Action.new("pass", player, {})]
        return actions + self._attack_options(state, player)

    def _legal_counter(self, state: State, player: str) -> list[Action]:
        return [Action.new("decline", player, {}), *self._attack_options(state, player)]

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
                            act = Action.new(
                                "attack", player, {"from": zone, "to": target, "units": units, "mode": mode}
                            )
                            if self._attack_problem(state, act) is None:
                                actions.append(act)
            actions += self._airborne_options(state, player)
        if state["supplies"][player]["nuke"]:
            for zone in sorted(state["units"]):
                occupant = self._occupant(state, zone)
                if occupant not in (None, player) and self._nuke_target_ok(state, player, zone):
                    actions.append(Action.new("nuke", player, {"targets": [zone]}))
        return actions

    def _airborne_options(self, state: State, player: str) -> list[Action]:
        """S-4.T.airborne: all the armies of the player's largest army stack, flown at each
        enemy-held territory (other stacks and sizes are legal too, just not listed)."""
        stacks = [
            (f[ARMY], zone)
            for zone, forces in state["units"].items()
            if (f := forces.get(player)) and zone in self._land and f[ARMY]
        ]
        if not stacks:
            return []
        armies, origin = max(stacks, key=lambda stack: (stack[0], stack[1]))
        actions = []
        for zone in sorted(state["units"]):
            if zone in self._land and self._occupant(state, zone) not in (None, player):
                act = Action.new(
                    "attack", player, {"from": origin, "to": zone, "units": armies, "mode": "airborne"}
                )
                if self._attack_problem(state, act) is None:
                    actions.append(act)
        return actions

    def _legal_occupy(self, state: State, player: str) -> list[Action]:
        return [
            Action.new("end_occupy", player, {}),
            *self._move_options(state, player, state["battle"]["occupy"], "occupy"),
        ]

    def _legal_reinforce(self, state: State, player: str) -> list[Action]:
        return [
            Action.new("end_reinforce", player, {}),
            *self._move_options(state, player, None, "reinforce"),
        ]

    def _legal_champions(self, state: State, player: str) -> list[Action]:
        return [
            Action.new("defend", player, {"defend": False}),
            Action.new("defend", player, {"defend": True}),
        ]

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
        if mode not in ("direct", "amphibious", "airborne"):
            return "an attack is direct, amphibious or airborne"
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
        armies_attack = mode != "direct" or a.is_land
        if not defenders and armies_attack != b.is_land:
            return f"{dst} is empty and your {'armies' if armies_attack else 'navies'} could not occupy it"
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
            # Each occupation case names the zone whose resource cards the occupier takes on moving in.
            if defender and defender_left == 0 and attacker_wiped:
                steps.append(["occupy", attacker, [dst, src], dst])  # Mutual destruction
            elif defender and attacker_wiped and defender_left and battle["mode"] == "direct":
                steps.append(["occupy", defender, [src], src])  # Only the attacker is destroyed
            elif defender and defender_left == 0 and can_enter:
                steps.append(["occupy", attacker, [dst], dst])  # Only the defender is destroyed
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
        (SUP-A8: from whoever holds them, also when the zone was empty). Home territories taken are
        remembered, so Spoils of War go to whoever took the *last* home territory."""
        if self.board.zones[zone].home_of is not None:
            state["home_captures"].append([zone, captor])
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
                state["battle"]["capture"] = rest[1] if len(rest) > 1 else None
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
        """S-4.C.conv.D occupation: forces move in at moving cost; the first move into the captured
        zone takes its resource cards (each of the three outcomes names that zone)."""
        self._do_a_move(state, player, params, "occupy")
        battle = state["battle"]
        if battle.get("capture") == params["to"]:
            battle["capture"] = None
            self._capture(state, params["to"], player)

    def _do_reinforce(self, state: State, player: str, params: dict[str, Any]) -> None:
        self._do_a_move(state, player, params, "reinforce")

    def _do_end_occupy(self, state: State, player: str, params: dict[str, Any]) -> None:
        self._next_step(state)

    def _do_end_reinforce(self, state: State, player: str, params: dict[str, Any]) -> None:
        self._next_step(state)

    def _do_counter_decline(self, state: State, player: str, params: dict[str, Any]) -> None:
        state["events"].append(event("no_counterattack", player=player))
        self._next_step(state)

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
        threshold = state["options"]["nuclear_winter_from"]
        if (
            threshold
            and any(self.board.zones[z].is_land for z in alive)
            and len(state["clouds"]) >= threshold
        ):
            self._set_phase(state, "winter")  # S-4.C.winter: a die decides whether the world ends
            return
        self._next_step(state)

    def _chance_winter(self, state: State, action: Action) -> None:
        """S-4.C.winter (placeholder): the game ends with no winner on a 6 at the threshold, on 5-6 one
        cloud later, and so on."""
        value = action.params.get("value") if action.kind == "roll" else None
        if not isinstance(value, int) or not 1 <= value <= 6:
            raise _illegal("a die roll gives a value from 1 to 6")
        ending = 6 - (len(state["clouds"]) - state["options"]["nuclear_winter_from"])
        state["events"].append(event("winter_roll", value=value, ends_on=max(1, ending)))
        if value >= ending:
            state["winners"] = []
            state["events"].append(event("game_over", winners=[], reason="nuclear winter"))
            self._set_phase(state, "over")
            return
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
