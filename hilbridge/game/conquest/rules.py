"""Conquest of the World: rules 19–22 as written, and our rulings for what rules 1–18 must say.

Every rule is named by its id in docs/rules/conquest.md (``C-19.B``, ``C-I.4``, ``C-H.1``,
ambiguities ``COTW-A3`` …): search for the id to find the code. Where the text is ambiguous the
choice is an option in the setup (`OPTIONS`), defaulting to our ruling.

Units: PBU chips are counted in PBU (a 1000-PBU chip is 1000). The POWER BASE RECORD moves in half
spaces (C-20.C), so records are kept as whole *half spaces* (``record_halves``; 55 spaces = 110).
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hilbridge.game.conquest.board import compile_board, default_board, validate_board
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

WEAPONS = ("TANK", "SUB", "PLANE")  # C-21.C
HOMELAND_ATTACK_PBU_PER_VALUE = 1000  # C-19.B: "Full PBU board value x 1000"
PBU_PER_SPACE = 1000  # C-20.C: every 1000 PBU in chips advances one space
ROUNDING_STEP = 500  # C-20.C, C-21.G: rounded off to the nearest 500
ENERGY_PER_SPACE = 100  # C-21.C: POWER BASE RECORD x 100 (illustration V: 55 x 100)
BOARD_KEY_FORMAT = 2  # marshal format of the board cache keys (`_compiled_board`)


@dataclass(frozen=True, slots=True)
class Option:
    default: Any
    choices: tuple[Any, ...] | None  # None: any whole number >= 0
    rule: str
    meaning: str


OPTIONS: dict[str, Option] = {
    "rounding_halves": Option(
        "up", ("up", "down", "even"), "COTW-A3", "exact halves (250, 750 …) when rounding to the nearest 500"
    ),
    "leftover_units_per_space": Option(
        1000, (1000, 100), "COTW-A1", "screen units per POWER BASE RECORD space when leftovers return (21.G)"
    ),
    "homeland_siege_by": Option(
        "attacker", ("attacker", "alliance"), "COTW-A8", "who must occupy every country bordering a HOMELAND"
    ),
    "final_round_homeland_attacks": Option(
        False, (False, True), "COTW-A7", "may a HOMELAND be attacked during the final round (20.A)"
    ),
    "booty_remainder": Option(
        "victor", ("victor", "bank"), "COTW-A6", "who keeps chips that do not split equally among allies"
    ),
    "ladder_allies": Option(
        "skip",
        ("skip", "defer"),
        "COTW-A4",
        "an ally next on the end-game ladder: passed over for good, or kept",
    ),
    "ladder_tie": Option(
        "survivor", ("survivor", "challenger"), "COTW-A10", "equal records after a confrontation (21.H)"
    ),
    "lost_weapon_enforced": Option(
        True, (True, False), "COTW-A5", "the engine refuses the weapon a player lost with (21.F)"
    ),
    "record_floor_zero": Option(True, (True, False), "COTW-A9", "a POWER BASE RECORD marker stops at 0"),
    "final_tie": Option("shared", ("shared", "seat"), "COTW-A11", "equal greatest records at the end (22)"),
    "weapon_entry": Option(
        "secret", ("secret", "open"), "C-H.4", "end-game weapons chosen secretly (commit, reveal) or in turn"
    ),
    "defender_loses_record": Option(
        True, (True, False), "C-I.8", "the defender's marker retreats by a country lost in battle"
    ),
    "starting_chips": Option(10_000, None, "C-H.2", "PBU chips each player starts with"),
    "bank_chips": Option(500_000, None, "C-H.2", "PBU chips in the bank at the start"),
    "income_per_value": Option(
        200, None, "C-H.1", "PBU paid per power-base value held, at each campaign turn"
    ),
    "unoccupied_cost_per_value": Option(500, None, "C-I.3", "PBU per value to occupy an unoccupied country"),
    "ally_cost_per_value": Option(250, None, "C-I.7", "PBU per value to ally with an unoccupied country"),
    "attack_cost_per_value": Option(1000, None, "C-I.4", "PBU per value to attack an occupied country"),
    "max_rounds": Option(0, None, "C-H.3", "rounds before the final round starts anyway (0: no clock)"),
}


def resolve_options(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """All options with defaults filled in; unknown names or values are a user error."""
    options = {name: option.default for name, option in OPTIONS.items()}
    for name, value in (given or {}).items():
        option = OPTIONS.get(name)
        if option is None:
            raise IllegalAction(f"unknown Conquest option {name!r} (known: {', '.join(OPTIONS)})")
        if option.choices is None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise IllegalAction(f"option {name} must be a whole number >= 0, not {value!r}")
        elif value not in option.choices or type(value) is not type(option.default):
            choices = ", ".join(repr(choice) for choice in option.choices)
            raise IllegalAction(f"option {name} must be one of {choices}, not {value!r}")
        options[name] = value
    return options


def round_to_nearest_500(amount: int, halves: str = "up") -> int:
    """C-20.C / C-21.G: "rounded off to the nearest 500"; exact halves follow COTW-A3."""
    whole, rest = divmod(amount, ROUNDING_STEP)
    if 2 * rest > ROUNDING_STEP:
        whole += 1
    elif 2 * rest == ROUNDING_STEP:
        whole += {"up": 1, "down": 0, "even": whole % 2}[halves]
    return whole * ROUNDING_STEP


def chips_to_record_halves(chips: int, halves: str = "up") -> int:
    """C-20.C: every 1000 PBU in chips is one space, every 500 half a space (after rounding)."""
    return round_to_nearest_500(chips, halves) * 2 // PBU_PER_SPACE


def leftover_to_record_halves(units: int, units_per_space: int = 1000, halves: str = "up") -> int:
    """C-21.G: one space per 1000 leftover screen units, half per 500, rounded to the nearest 500."""
    return round_to_nearest_500(units, halves) * 2 // units_per_space


def energy_units(record_halves: int) -> int:
    """C-21.C: the POWER BASE RECORD x 100 is entered on the screen (55 -> 5500)."""
    return record_halves * ENERGY_PER_SPACE // 2


def result_source(result: Mapping[str, Any]) -> dict[str, str]:
    """C-I.9: a battle result may say where it came from ("source": console record, screen, manual
    entry and why); it is kept in the action log and the battle event, and changes nothing else."""
    if "source" not in result:
        return {}
    if not isinstance(result["source"], str) or not result["source"]:
        raise IllegalAction("a battle result's source must be a non-empty text")
    return {"source": result["source"]}


def format_record(record_halves: int) -> str:
    return f"{record_halves // 2}" + ("½" if record_halves % 2 else "")


class ConquestRuleset(Ruleset):
    name = "conquest"
    version = 1
    min_players = 2
    max_players = 6

    def __init__(self) -> None:
        self._board_cache: dict[bytes, dict[str, Any]] = {}
        self._legal_cache: tuple[State, str, list[Action]] | None = None

    # -- setting up --------------------------------------------------------------------------------
    def default_setup(
        self, players: Sequence[str], options: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """C-I.1: players take the HOMELAND markers in seating order unless the setup says otherwise."""
        board = default_board()
        return {
            "players": list(players),
            "homelands": dict(zip(players, board["homelands"], strict=False)),
            "options": dict(options or {}),
            "board": board,
        }

    def initial_state(self, setup: Mapping[str, Any], seed: int) -> State:
        players = list(setup.get("players", []))
        if not self.min_players <= len(players) <= self.max_players:
            raise IllegalAction(f"Conquest is for {self.min_players} to {self.max_players} players")
        if len(set(players)) != len(players) or any(
            not isinstance(p, str) or not p or p == CHANCE for p in players
        ):
            raise IllegalAction(f"player names must be different, non-empty and not {CHANCE!r}")
        board = self._compiled_board(setup.get("board") or default_board())
        options = resolve_options(setup.get("options"))
        homelands = dict(setup.get("homelands") or {})
        if sorted(homelands) != sorted(players):
            raise IllegalAction("every player needs exactly one HOMELAND")
        for country in homelands.values():
            if country not in board["homelands"]:
                raise IllegalAction(
                    f"{country} is not a HOMELAND on this board ({', '.join(board['homelands'])})"
                )
        if len(set(homelands.values())) != len(homelands):
            raise IllegalAction("two players cannot share a HOMELAND")
        owner: dict[str, str | None] = {country: None for country in board["values"]}
        for player, country in homelands.items():
            owner[country] = player
        state: State = {
            "board": board,
            "options": options,
            "players": players,
            "homeland": homelands,
            "owner": owner,
            "ally_of": {},
            "chips": {player: options["starting_chips"] for player in players},
            "bank": options["bank_chips"],
            # C-I.8: each marker starts at its HOMELAND's value.
            "record": {player: 2 * board["values"][homelands[player]] for player in players},
            "active": list(players),
            "alliances": [],
            "phase": "turn",
            "turn": players[0],
            "round": 1,
            "proposed": False,
            "offer": None,
            "battle": None,
            "final_round": None,
            "ladder": None,
            "winners": [],
            "events": [event("setup", players=players, homelands=homelands)],
        }
        self._begin_turn(state, players[0])
        return state

    def _compiled_board(self, board_data: Mapping[str, Any]) -> dict[str, Any]:
        """Validate and compile a board once per board content (playouts start from many setups that
        carry equal boards). The key is the board's marshal bytes, not ==, because marshal tells apart
        what == does not (True from 1, a tuple from a list): a board the check would refuse never
        matches one it passed. Format 2 writes every object in full; later formats flag each object
        that is also referenced elsewhere (for back references), so equal boards gave different keys.
        A board marshal cannot write is checked every time."""
        try:
            key = marshal.dumps(board_data, BOARD_KEY_FORMAT)
        except ValueError:
            key = None
        cached = None if key is None else self._board_cache.get(key)
        if cached is not None:
            return cached
        validate_board(board_data, "setup board")
        compiled = compile_board(board_data)
        if key is not None:
            self._board_cache = {key: compiled}
        return compiled

    def legal_actions(self, state: State, player: str) -> list[Action]:
        """Memoised for the last state asked about (states are never mutated, so identity is enough)."""
        cached = self._legal_cache
        if cached is not None and cached[0] is state and cached[1] == player:
            return list(cached[2])
        actions = self._legal_actions(state, player)
        self._legal_cache = (state, player, actions)
        return list(actions)

    # -- small queries ---------------------------------------------------------------------------
    @staticmethod
    def value(state: State, country: str) -> int:
        return state["board"]["values"][country]

    @staticmethod
    def allies(state: State, player: str) -> set[str]:
        """Players in `player`'s alliance (C-I.6), not including `player`."""
        for group in state["alliances"]:
            if player in group:
                return {member for member in group if member != player}
        return set()

    @staticmethod
    def holder(state: State, country: str) -> str | None:
        """Who holds a country: its occupier, or the player it is allied with (C-I.7)."""
        return state["owner"][country] or state["ally_of"].get(country)

    def holdings(self, state: State, player: str) -> set[str]:
        held = {country for country, owner in state["owner"].items() if owner == player}
        return held | {country for country, ally in state["ally_of"].items() if ally == player}

    def unoccupied(self, state: State) -> list[str]:
        allied = state["ally_of"]
        return [
            country for country, owner in state["owner"].items() if owner is None and country not in allied
        ]

    def reachable(self, state: State, player: str) -> set[str]:
        """C-I.3: countries bordering one the player holds."""
        neighbours = state["board"]["neighbours"]
        near: set[str] = set()
        for country in self.holdings(state, player):
            near.update(neighbours[country])
        return near

    def siege_complete(self, state: State, player: str, homeland: str) -> bool:
        """C-19.A: every country bordering the HOMELAND is occupied by the attacker (or alliance, COTW-A8)."""
        besiegers = {player}
        if state["options"]["homeland_siege_by"] == "alliance":
            besiegers |= self.allies(state, player)
        return all(state["owner"][near] in besiegers for near in state["board"]["neighbours"][homeland])

    # -- whose move -----------------------------------------------------------------------------
    def current_players(self, state: State) -> tuple[str, ...]:
        phase = state["phase"]
        if phase == "turn":
            return (state["turn"],)
        if phase == "offer":
            return (state["offer"]["to"],)
        if phase in ("battle", "duel_battle"):
            return (CHANCE,)
        if phase == "weapons":
            duel = state["ladder"]["duel"]
            waiting = tuple(p for p in (duel["attacker"], duel["defender"]) if p not in duel["weapons"])
            return waiting if state["options"]["weapon_entry"] == "secret" else waiting[:1]
        return ()

    def is_simultaneous(self, state: State) -> bool:
        return state["phase"] == "weapons" and state["options"]["weapon_entry"] == "secret"

    def is_terminal(self, state: State) -> bool:
        return state["phase"] == "over"

    def winners(self, state: State) -> list[str]:
        return list(state["winners"])

    # -- legal actions --------------------------------------------------------------------------
    def _legal_actions(self, state: State, player: str) -> list[Action]:
        if player not in self.current_players(state) or player == CHANCE:
            return []
        phase = state["phase"]
        if phase == "offer":
            return [Action("accept_alliance", player), Action("decline_alliance", player)]
        if phase == "weapons":
            return [Action("weapon", player, {"weapon": w}) for w in self.allowed_weapons(state, player)]
        return self._turn_actions(state, player)

    def allowed_weapons(self, state: State, player: str) -> list[str]:
        """C-21.C choices, minus the weapon lost in the previous battle (C-21.F, COTW-A5)."""
        banned = state["ladder"]["duel"]["banned"].get(player)
        if not state["options"]["lost_weapon_enforced"]:
            banned = None
        return [weapon for weapon in WEAPONS if weapon != banned]

    def _turn_actions(self, state: State, player: str) -> list[Action]:
        options = state["options"]
        chips = state["chips"][player]
        final = state["final_round"] is not None
        actions = [Action("pass", player)]
        near = sorted(self.reachable(state, player))
        friends = self.allies(state, player)
        values, owners, allied = state["board"]["values"], state["owner"], state["ally_of"]
        homelands = {state["homeland"][p] for p in state["active"]}
        for country in near:
            value = values[country]
            holder = owners[country] or allied.get(country)
            if holder is None:
                if final:
                    continue  # C-20.A: the final round is for attacks on occupied countries only
                if value * options["unoccupied_cost_per_value"] <= chips:
                    actions.append(Action("occupy", player, {"country": country}))
                if value * options["ally_cost_per_value"] <= chips:
                    actions.append(Action("ally", player, {"country": country}))
            elif holder != player and holder not in friends:
                if country not in homelands:
                    if value * options["attack_cost_per_value"] <= chips:
                        actions.append(Action("attack", player, {"country": country}))
                elif (
                    (not final or options["final_round_homeland_attacks"])
                    and self.siege_complete(state, player, country)
                    and value * HOMELAND_ATTACK_PBU_PER_VALUE <= chips
                ):
                    actions.append(Action("attack_homeland", player, {"country": country}))
        if not final and not state["proposed"] and not friends:
            for other in state["active"]:
                if other != player:
                    actions.append(Action("propose_alliance", player, {"to": other}))
        return actions

    # -- transitions ----------------------------------------------------------------------------
    def apply(self, state: State, action: Action) -> State:
        new = self._copy(state)
        new["events"] = []
        if action.player == CHANCE:
            if action.kind != "combat_result" or state["phase"] not in ("battle", "duel_battle"):
                raise IllegalAction(f"unexpected chance action {action.kind}")
            if state["phase"] == "battle":
                self._resolve_battle(new, action.params)
            else:
                self._resolve_duel_battle(new, action.params)
            return new
        if action not in self.legal_actions(state, action.player):
            raise IllegalAction(f"illegal move: {action}")
        handler = getattr(self, f"_do_{action.kind}")
        handler(new, action.player, action.params)
        return new

    def apply_joint(self, state: State, moves: Mapping[str, Action]) -> State:
        new = self._copy(state)
        new["events"] = []
        for player, move in moves.items():
            if move not in self.legal_actions(state, player):
                raise IllegalAction(f"illegal move: {move}")
        for player, move in moves.items():
            new["ladder"]["duel"]["weapons"][player] = move.params["weapon"]
        self._weapons_chosen(new)
        return new

    @staticmethod
    def _copy(state: State) -> State:
        new = dict(state)
        for key in ("owner", "ally_of", "chips", "record"):
            new[key] = dict(state[key])
        new["active"] = list(state["active"])
        new["alliances"] = [list(group) for group in state["alliances"]]
        if state["final_round"] is not None:
            new["final_round"] = list(state["final_round"])
        if state["ladder"] is not None:
            ladder = state["ladder"]
            duel = ladder["duel"]
            new["ladder"] = {
                **ladder,
                "waiting": list(ladder["waiting"]),
                "duel": None
                if duel is None
                else {
                    **duel,
                    "energy": dict(duel["energy"]),
                    "banned": dict(duel["banned"]),
                    "weapons": dict(duel["weapons"]),
                },
            }
        return new

    def _pay_warchest(self, state: State, player: str, amount: int, why: str) -> None:
        """C-19.B, C-I.5: chips paid into the WARCHEST go back to the bank."""
        state["chips"][player] -= amount
        state["bank"] += amount
        state["events"].append(event("warchest", player=player, pbu=amount, reason=why))

    def _advance_record(self, state: State, player: str, halves: int, why: str) -> None:
        record = state["record"][player] + halves
        if state["options"]["record_floor_zero"]:
            record = max(record, 0)
        state["events"].append(
            event("record", player=player, change_halves=record - state["record"][player], reason=why)
        )
        state["record"][player] = record

    # campaign moves
    def _do_pass(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        state["events"].append(event("pass", player=player))
        self._end_turn(state)

    def _do_occupy(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        """C-I.3: pay into the WARCHEST and occupy; the marker advances by the country's value."""
        country = params["country"]
        value = self.value(state, country)
        self._pay_warchest(state, player, value * state["options"]["unoccupied_cost_per_value"], "occupy")
        state["owner"][country] = player
        state["events"].append(event("occupied", player=player, country=country))
        self._advance_record(state, player, 2 * value, f"occupied {country}")
        self._end_turn(state)

    def _do_ally(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        """C-I.7: an unoccupied country becomes allied to the player (no record advance)."""
        country = params["country"]
        value = self.value(state, country)
        self._pay_warchest(state, player, value * state["options"]["ally_cost_per_value"], "alliance")
        state["ally_of"][country] = player
        state["events"].append(event("allied_country", player=player, country=country))
        self._end_turn(state)

    def _do_attack(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        """C-I.4: pay value x attack cost into the WARCHEST; the console decides the battle."""
        country = params["country"]
        value = self.value(state, country)
        self._pay_warchest(state, player, value * state["options"]["attack_cost_per_value"], "attack")
        self._start_battle(state, player, country, "occupied")

    def _do_attack_homeland(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        """C-19.A (siege checked in legal_actions) and C-19.B (full value x 1000 to the WARCHEST)."""
        country = params["country"]
        value = self.value(state, country)
        self._pay_warchest(state, player, value * HOMELAND_ATTACK_PBU_PER_VALUE, "homeland attack")
        self._start_battle(state, player, country, "homeland")

    def _start_battle(self, state: State, player: str, country: str, kind: str) -> None:
        defender = self.holder(state, country)
        state["battle"] = {"attacker": player, "defender": defender, "country": country, "kind": kind}
        state["phase"] = "battle"
        state["events"].append(
            event("attack", attacker=player, defender=defender, country=country, target=kind)
        )

    def _do_propose_alliance(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        """C-I.6: an alliance needs the other player's consent; proposing does not end the turn."""
        state["offer"] = {"from": player, "to": params["to"]}
        state["proposed"] = True
        state["phase"] = "offer"
        state["events"].append(event("alliance_offer", player=player, to=params["to"]))

    def _do_accept_alliance(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        proposer = state["offer"]["from"]
        for group in state["alliances"]:
            if player in group:
                group.append(proposer)
                break
        else:
            state["alliances"].append([proposer, player])
        state["events"].append(event("alliance", players=sorted([proposer, player])))
        self._close_offer(state)

    def _do_decline_alliance(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        state["events"].append(event("alliance_declined", player=player, to=state["offer"]["from"]))
        self._close_offer(state)

    def _close_offer(self, state: State) -> None:
        state["offer"] = None
        state["phase"] = "turn"

    # battles
    def chance_node(self, state: State) -> ChanceNode | None:
        if state["phase"] == "battle":
            battle = state["battle"]
            request = CombatRequest(
                "console_battle",
                battle["attacker"],
                battle["defender"],
                {
                    "country": battle["country"],
                    "kind": battle["kind"],
                    # C-I.10: on the console each side enters its record x 100, as in the END GAME
                    "energy": {
                        side: energy_units(state["record"][side])
                        for side in (battle["attacker"], battle["defender"])
                    },
                },
            )
            return ChanceNode("battle", combat=request)
        if state["phase"] == "duel_battle":
            duel = state["ladder"]["duel"]
            request = CombatRequest(
                "end_game_battle",
                duel["attacker"],
                duel["defender"],
                {"energy": dict(duel["energy"]), "weapons": dict(duel["weapons"]), "battle": duel["number"]},
            )
            return ChanceNode("battle", combat=request)
        return None

    def random_combat_result(self, request: CombatRequest, rng: Any) -> dict[str, Any]:
        winner = rng.choice([request.attacker, request.defender])
        if request.kind == "console_battle":
            return {"winner": winner}
        energy = dict(request.params["energy"])
        loser = request.defender if winner == request.attacker else request.attacker
        energy[loser] = max(0, energy[loser] - rng.choice((250, 500, 1000, 1500, 2000, 3000)))
        energy[winner] = max(1, energy[winner] - rng.randrange(0, 600, 100))
        return {"winner": winner, "energy": energy}

    def _resolve_battle(self, state: State, result: Mapping[str, Any]) -> None:
        battle = state["battle"]
        attacker, defender, country = battle["attacker"], battle["defender"], battle["country"]
        winner = result.get("winner")
        if winner not in (attacker, defender) or set(result) - {"source"} != {"winner"}:
            raise IllegalAction(f"a battle result names the winner: {attacker} or {defender}")
        source = result_source(result)
        state["battle"] = None
        state["phase"] = "turn"
        state["events"].append(event("battle", winner=winner, country=country, attacker=attacker, **source))
        if winner == attacker:
            if battle["kind"] == "homeland":
                self._eliminate(state, attacker, defender)
            else:
                self._conquer(state, attacker, defender, country)
        self._end_turn(state)

    def _conquer(self, state: State, attacker: str, defender: str, country: str) -> None:
        """C-I.4 / C-I.8: the country changes hands; markers move by its value."""
        value = self.value(state, country)
        was_occupied = state["owner"][country] == defender
        state["ally_of"].pop(country, None)
        state["owner"][country] = attacker
        self._advance_record(state, attacker, 2 * value, f"conquered {country}")
        if was_occupied and state["options"]["defender_loses_record"]:
            self._advance_record(state, defender, -2 * value, f"lost {country}")

    def _eliminate(self, state: State, victor: str, loser: str) -> None:
        """C-19.C (the loser is out, booty to the victor) and C-19.D (shared equally in an alliance)."""
        booty = sorted(
            (country for country, owner in state["owner"].items() if owner == loser),
            key=lambda country: (-self.value(state, country), country),
        )
        chips = state["chips"][loser]
        state["chips"][loser] = 0
        for country in [c for c, ally in state["ally_of"].items() if ally == loser]:
            del state["ally_of"][country]  # C-19.C: allied countries return to unoccupied status
        members = [victor] + [p for p in state["active"] if p in self.allies(state, victor)]
        state["active"].remove(loser)
        state["alliances"] = [
            [p for p in group if p != loser]
            for group in state["alliances"]
            if len(group) - (loser in group) >= 2
        ]
        if state["final_round"] is not None and loser in state["final_round"]:
            state["final_round"].remove(loser)
        share_value = dict.fromkeys(members, 0)
        for country in booty:
            taker = min(members, key=lambda p: (share_value[p], members.index(p)))
            share_value[taker] += self.value(state, country)
            state["owner"][country] = taker
        per_member = chips // len(members) // ROUNDING_STEP * ROUNDING_STEP
        for member in members:
            state["chips"][member] += per_member
        remainder = chips - per_member * len(members)
        if state["options"]["booty_remainder"] == "victor":
            state["chips"][victor] += remainder
        else:
            state["bank"] += remainder
        state["events"].append(
            event("eliminated", player=loser, victor=victor, booty=booty, pbu=chips, shared_with=members)
        )
        for member in members:
            self._advance_record(state, member, 2 * share_value[member], f"booty from {loser}")

    # turn order
    def _begin_turn(self, state: State, player: str) -> None:
        """C-I.2 turn order; C-H.1 income at the start of each campaign turn."""
        state["turn"] = player
        state["proposed"] = False
        state["phase"] = "turn"
        if state["final_round"] is None:
            held = sum(self.value(state, c) for c, owner in state["owner"].items() if owner == player)
            income = min(state["bank"], held * state["options"]["income_per_value"])
            state["bank"] -= income
            state["chips"][player] += income
            state["events"].append(event("turn", player=player, round=state["round"], income=income))
        else:
            state["events"].append(event("final_turn", player=player))

    def _left_of(self, state: State, player: str) -> list[str]:
        """Active players in seating order starting with the one to the left of `player`."""
        seats = state["players"]
        start = seats.index(player)
        order = [seats[(start + step) % len(seats)] for step in range(1, len(seats) + 1)]
        return [p for p in order if p in state["active"]]

    def _end_turn(self, state: State) -> None:
        current = state["turn"]
        if len(state["active"]) == 1:
            self._start_end_game(state)
            return
        if state["final_round"] is not None:
            if current in state["final_round"]:
                state["final_round"].remove(current)  # C-20.B: no second chance
            if state["final_round"]:
                self._begin_turn(state, state["final_round"][0])
            else:
                self._start_end_game(state)
            return
        order = self._left_of(state, current)
        following = order[0]
        if state["players"].index(following) <= state["players"].index(current):
            state["round"] += 1
        clock = state["options"]["max_rounds"]
        if not self.unoccupied(state) or (clock and state["round"] > clock):
            state["final_round"] = order  # C-20.A: one more chance each, from the next player on
            state["events"].append(event("final_round", order=order))
            self._begin_turn(state, order[0])
        else:
            self._begin_turn(state, following)

    # the end game
    def _start_end_game(self, state: State) -> None:
        """C-20.C conversion of chips, then the C-21.B ladder from the lowest record up."""
        halves = state["options"]["rounding_halves"]
        for player in state["active"]:
            chips = state["chips"][player]
            state["chips"][player] = 0
            state["bank"] += chips
            gain = chips_to_record_halves(chips, halves)
            state["events"].append(event("chips_converted", player=player, pbu=chips, record_halves=gain))
            self._advance_record(state, player, gain, "PBU chips converted")
        state["final_round"] = None
        state["turn"] = None
        seats = state["players"]
        order = sorted(state["active"], key=lambda p: (state["record"][p], seats.index(p)))
        state["ladder"] = {"holder": order[0], "waiting": order[1:], "duel": None}
        state["events"].append(event("end_game", order=order))
        self._next_duel(state)

    def _next_duel(self, state: State) -> None:
        """C-21.B/H: the ladder holder challenges the next highest player who is not an ally."""
        ladder = state["ladder"]
        holder = ladder["holder"]
        friends = self.allies(state, holder)
        opponent = next((p for p in ladder["waiting"] if p not in friends), None)
        if state["options"]["ladder_allies"] == "skip":
            skipped = (
                ladder["waiting"]
                if opponent is None
                else ladder["waiting"][: ladder["waiting"].index(opponent)]
            )
            for ally in list(skipped):
                ladder["waiting"].remove(ally)
                state["events"].append(event("ally_passed_over", player=ally, holder=holder))
        if opponent is None:
            self._finish(state)
            return
        ladder["waiting"].remove(opponent)
        energy = {p: energy_units(state["record"][p]) for p in (holder, opponent)}
        ladder["duel"] = {
            "attacker": holder,
            "defender": opponent,
            "energy": energy,
            "banned": {},
            "weapons": {},
            "number": 1,
        }
        state["events"].append(event("confrontation", attacker=holder, defender=opponent, energy=energy))
        if 0 in energy.values():
            self._end_duel(state)
        else:
            state["phase"] = "weapons"

    def _do_weapon(self, state: State, player: str, params: Mapping[str, Any]) -> None:
        state["ladder"]["duel"]["weapons"][player] = params["weapon"]
        if len(state["ladder"]["duel"]["weapons"]) == 2:
            self._weapons_chosen(state)

    def _weapons_chosen(self, state: State) -> None:
        duel = state["ladder"]["duel"]
        state["events"].append(event("weapons", weapons=dict(duel["weapons"])))
        state["phase"] = "duel_battle"

    def _resolve_duel_battle(self, state: State, result: Mapping[str, Any]) -> None:
        """C-21.D (markers ±1), C-21.E (roles alternate), C-21.F (lost weapon), C-21.G (run out)."""
        duel = state["ladder"]["duel"]
        attacker, defender = duel["attacker"], duel["defender"]
        winner, energy = result.get("winner"), result.get("energy")
        if winner not in (attacker, defender) or set(result) - {"source"} != {"winner", "energy"}:
            raise IllegalAction(
                f"an end-game battle result names the winner ({attacker} or {defender}) and energy"
            )
        if not isinstance(energy, dict) or set(energy) != {attacker, defender}:
            raise IllegalAction(f"give the energy units left on screen for {attacker} and {defender}")
        loser = defender if winner == attacker else attacker
        for player, units in energy.items():
            if (
                not isinstance(units, int)
                or isinstance(units, bool)
                or not 0 <= units <= duel["energy"][player]
            ):
                raise IllegalAction(f"{player}'s energy must be between 0 and {duel['energy'][player]}")
        if energy[loser] >= duel["energy"][loser] or energy[winner] == 0:
            raise IllegalAction("the loser of a battle loses energy units and the winner keeps some")
        state["events"].append(
            event(
                "duel_battle",
                winner=winner,
                energy=dict(energy),
                number=duel["number"],
                **result_source(result),
            )
        )
        self._advance_record(state, winner, 2, "won an end-game battle")
        self._advance_record(state, loser, -2, "lost an end-game battle")
        duel["banned"] = {loser: duel["weapons"][loser]}
        duel["energy"] = dict(energy)
        duel["weapons"] = {}
        duel["attacker"], duel["defender"] = defender, attacker
        duel["number"] += 1
        if 0 in energy.values():
            self._end_duel(state)
        else:
            state["phase"] = "weapons"

    def _end_duel(self, state: State) -> None:
        """C-21.G: the survivor banks the leftover units; C-21.H: the higher record goes on."""
        ladder = state["ladder"]
        duel = ladder["duel"]
        first, second = duel["attacker"], duel["defender"]
        survivor = first if duel["energy"][first] > 0 else second
        if duel["energy"][survivor] > 0:
            options = state["options"]
            leftover = duel["energy"][survivor]
            gain = leftover_to_record_halves(
                leftover, options["leftover_units_per_space"], options["rounding_halves"]
            )
            state["events"].append(
                event("leftover_converted", player=survivor, units=leftover, record_halves=gain)
            )
            self._advance_record(state, survivor, gain, "leftover screen units")
        challenger = ladder["holder"]
        other = second if challenger == first else first
        records = state["record"]
        if records[challenger] != records[other]:
            holder = max((challenger, other), key=lambda p: records[p])
        elif state["options"]["ladder_tie"] == "survivor":
            holder = survivor
        else:
            holder = challenger
        ladder["holder"] = holder
        ladder["duel"] = None
        self._next_duel(state)

    def _finish(self, state: State) -> None:
        """C-22: the strongest POWER BASE RECORD at the end of the END GAME wins."""
        state["phase"] = "over"
        state["ladder"]["duel"] = None
        best = max(state["record"][p] for p in state["active"])
        leaders = [p for p in state["active"] if state["record"][p] == best]
        if state["options"]["final_tie"] == "seat":
            leaders = leaders[:1]
        state["winners"] = leaders
        state["events"].append(event("game_over", winners=leaders, record_halves=dict(state["record"])))

    # -- views and checks -----------------------------------------------------------------------
    def view(self, state: State, player: str | None) -> State:
        """Nothing on the Conquest board is secret; secret weapon entries live in the engine's commits."""
        return {key: value for key, value in state.items() if key != "events"}

    def describe(self, view: State) -> str:
        from hilbridge.game.conquest.text import describe_state

        return describe_state(view)

    def check_invariants(self, before: State, action: Action | None, after: State) -> None:
        """Conservation of chips and who may hold what; whole-board checks are set operations, and a
        failing one names its first offending country in board order."""
        options, chips, owner, ally_of = after["options"], after["chips"], after["owner"], after["ally_of"]
        active = set(after["active"])
        total = options["starting_chips"] * len(after["players"]) + options["bank_chips"]
        assert sum(chips.values()) + after["bank"] == total, "PBU chips not conserved"
        assert after["bank"] >= 0 and min(chips.values(), default=0) >= 0, "negative chips"
        if options["record_floor_zero"]:
            assert min(after["record"].values(), default=0) >= 0, "negative POWER BASE RECORD"
        gone = set(owner.values()) - active - {None}
        assert not gone, f"{next(c for c, p in owner.items() if p in gone)} held by an eliminated player"
        assert set(map(owner.get, ally_of)) <= {None}, (
            f"{next(c for c, p in owner.items() if p is not None and c in ally_of)} occupied and allied"
        )
        assert active.issuperset(ally_of.values()), "allied to an eliminated player"
        for player in after["active"]:
            assert owner[after["homeland"][player]] == player, f"{player} lost the HOMELAND but plays on"
        for player in set(after["players"]) - active:
            assert chips[player] == 0, f"eliminated {player} still has chips"
        if after["ladder"] and after["ladder"]["duel"]:
            assert all(units >= 0 for units in after["ladder"]["duel"]["energy"].values()), "negative energy"
        if action is not None and action.kind in ("occupy", "ally", "attack", "attack_homeland"):
            country = action.params["country"]
            assert country in self.reachable(before, action.player), (
                f"{country} does not border {action.player}"
            )
            if action.kind == "attack_homeland":
                assert self.siege_complete(before, action.player, country), (
                    "homeland attacked before its siege"
                )
