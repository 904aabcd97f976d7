"""The Conquest of the World board: countries, zones, power-base values, borders, homelands.

The board is data (`board.json`, our documented reconstruction: the printed board is unknown to
us). `load_board` reads it or a user's replacement, `validate_board` checks it, and `compile_board`
turns it into the compact JSON form the rules keep in every game state (so a save file replays
with the board it was started on, even after the user swaps the board file).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import read_json

BOARD_FORMAT = "hilbridge-conquest-board"
BOARD_VERSION = 1
COUNTRIES = 43  # manual introduction: "43 countries"
ZONES = 11  # manual introduction: 11 "politectonic" zones
HOMELAND_MARKERS = 6  # components: six rectangular Homeland markers


class BoardError(HilbridgeError):
    """A board file that breaks the board rules (names, counts, borders, homelands)."""


def default_board() -> dict[str, Any]:
    text = resources.files("hilbridge.game.conquest").joinpath("board.json").read_text(encoding="utf-8")
    return json.loads(text)


def load_board(path: str | Path | None = None) -> dict[str, Any]:
    """The board at `path` (the reconstruction when None), validated."""
    if path is None:
        board = default_board()
        source = "hilbridge/game/conquest/board.json"
    else:
        source = str(path)
        board = read_json(path, "board file", BoardError)
    validate_board(board, source)
    return board


def board_problems(board: Any) -> list[str]:
    """Everything wrong with a board description (empty when it is valid)."""
    if not isinstance(board, dict):
        return ["a board must be a JSON object"]
    problems: list[str] = []
    if board.get("format") != BOARD_FORMAT or board.get("version") != BOARD_VERSION:
        problems.append(f"format must be {BOARD_FORMAT!r} version {BOARD_VERSION}")
    zones = board.get("zones")
    if not isinstance(zones, list):
        return [*problems, "zones must be a list"]
    values: dict[str, int] = {}
    for zone in zones:
        countries = zone.get("countries") if isinstance(zone, dict) else None
        if not isinstance(countries, list) or not countries or not isinstance(zone.get("name"), str):
            problems.append(f"zone {zone!r} needs a name and a non-empty country list")
            continue
        for country in countries:
            name = country.get("name") if isinstance(country, dict) else None
            value = country.get("value") if isinstance(country, dict) else None
            if not isinstance(name, str) or not name:
                problems.append(f"country {country!r} in zone {zone['name']} has no name")
            elif name in values:
                problems.append(f"country {name} is listed twice")
            elif not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                problems.append(f"country {name} needs a positive whole power-base value")
            else:
                values[name] = value
    if len(zones) != ZONES:
        problems.append(f"the board has {len(zones)} zones, the manual says {ZONES}")
    if len(values) != COUNTRIES:
        problems.append(f"the board has {len(values)} countries, the manual says {COUNTRIES}")
    neighbours: dict[str, set[str]] = {name: set() for name in values}
    for border in board.get("borders", []):
        if not (isinstance(border, list) and len(border) == 2 and all(side in values for side in border)):
            problems.append(f"border {border!r} must name two countries of the board")
        elif border[0] == border[1]:
            problems.append(f"{border[0]} cannot border itself")
        elif border[1] in neighbours[border[0]]:
            problems.append(f"border {border[0]}–{border[1]} is listed twice")
        else:
            neighbours[border[0]].add(border[1])
            neighbours[border[1]].add(border[0])
    lonely = sorted(name for name, near in neighbours.items() if not near)
    if lonely:
        problems.append(f"countries without borders: {', '.join(lonely)}")
    elif values and len(_reachable(next(iter(values)), neighbours)) != len(values):
        problems.append("the board is not connected: some countries cannot be reached from others")
    homelands = board.get("homelands", [])
    if (
        not isinstance(homelands, list)
        or len(homelands) != HOMELAND_MARKERS
        or len(set(homelands)) != len(homelands)
    ):
        problems.append(f"homelands must list {HOMELAND_MARKERS} different countries")
    else:
        for homeland in homelands:
            if homeland not in values:
                problems.append(f"homeland {homeland} is not a country of the board")
            elif neighbours[homeland] & set(homelands):
                # Rule 19.A needs every neighbour of a homeland conquerable before the homeland.
                problems.append(f"homeland {homeland} borders another homeland")
    return problems


def _reachable(start: str, neighbours: Mapping[str, set[str]]) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for near in neighbours[todo.pop()]:
            if near not in seen:
                seen.add(near)
                todo.append(near)
    return seen


def validate_board(board: Any, source: str = "board") -> None:
    problems = board_problems(board)
    if problems:
        raise BoardError("invalid board: " + "; ".join(problems), SourceLocation(source))


def compile_board(board: Mapping[str, Any]) -> dict[str, Any]:
    """The form kept in game states: value, zone and sorted neighbours per country."""
    values: dict[str, int] = {}
    zone_of: dict[str, str] = {}
    for zone in board["zones"]:
        for country in zone["countries"]:
            values[country["name"]] = country["value"]
            zone_of[country["name"]] = zone["name"]
    neighbours: dict[str, list[str]] = {name: [] for name in values}
    for first, second in board["borders"]:
        neighbours[first].append(second)
        neighbours[second].append(first)
    return {
        "values": values,
        "zones": zone_of,
        "neighbours": {name: sorted(near) for name, near in neighbours.items()},
        "homelands": list(board["homelands"]),
    }
