"""The Supremacy board and resource deck, loaded from the data files beside this module and validated.

The map and cards are data (``data/map.json``, ``data/cards.tsv``); this module only reads them and
checks that they are consistent, so a corrected board is a data edit, not a code change.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from hilbridge.errors import HilbridgeError, SourceLocation

RESOURCES = ("grain", "oil", "mineral")
WEAPONS = ("nuke", "lstar")
#: The seed's deck: "20 grain, 20 oil, 20 mineral, three nuke and two L-star".
DECK_COMPOSITION = {"grain": 20, "oil": 20, "mineral": 20, "nuke": 3, "lstar": 2}


class BoardDataError(HilbridgeError):
    """The map or card data breaks one of the board's rules (asymmetric adjacency, a missing homeland...)."""


@dataclass(frozen=True, slots=True)
class Zone:
    """A zone of the map. `is_land`, `is_light_sea` and `is_dark_sea` follow from `kind` and `colour`;
    they are fields set once, not properties, because every legal-move check reads them."""

    name: str
    kind: str  # "land" or "sea"
    adjacent: tuple[str, ...]
    home_of: str | None = None  # superpower code for a home territory
    port: bool = False  # land only
    colour: str | None = None  # sea only: "light" (territorial) or "dark" (international)
    is_land: bool = field(init=False, repr=False, compare=False)
    is_light_sea: bool = field(init=False, repr=False, compare=False)
    is_dark_sea: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "is_land", self.kind == "land")
        object.__setattr__(self, "is_light_sea", self.kind == "sea" and self.colour == "light")
        object.__setattr__(self, "is_dark_sea", self.kind == "sea" and self.colour == "dark")


@dataclass(frozen=True, slots=True)
class Card:
    id: str
    kind: str  # "company" or "weapon"
    owner: str  # superpower code, "neutral", or "-" for weapon cards
    name: str
    territory: str | None
    resource: str  # grain / oil / mineral for companies, nuke / lstar for weapon cards
    units: int
    status: str


@dataclass(frozen=True, slots=True)
class Board:
    superpowers: dict[str, str]
    homelands: dict[str, tuple[str, ...]]
    zones: dict[str, Zone]
    cards: dict[str, Card]

    def adjacent(self, a: str, b: str) -> bool:
        return b in self.zones[a].adjacent

    def cards_in(self, territory: str) -> list[str]:
        return [card.id for card in self.cards.values() if card.territory == territory]


def _data_text(name: str) -> str:
    return resources.files("hilbridge.game.supremacy").joinpath("data", name).read_text(encoding="utf-8")


def parse_map(document: dict[str, Any]) -> tuple[dict[str, str], dict[str, tuple[str, ...]], dict[str, Zone]]:
    zones = {
        name: Zone(
            name=name,
            kind=entry["kind"],
            adjacent=tuple(entry["adjacent"]),
            home_of=entry.get("home_of"),
            port=bool(entry.get("port", False)),
            colour=entry.get("colour"),
        )
        for name, entry in document["zones"].items()
    }
    homelands = {code: tuple(names) for code, names in document["homelands"].items()}
    return dict(document["superpowers"]), homelands, zones


def parse_cards(text: str) -> dict[str, Card]:
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    cards = {}
    for row in csv.DictReader(lines, delimiter="\t"):
        territory = None if row["territory"] == "-" else row["territory"]
        cards[row["id"]] = Card(
            row["id"],
            row["kind"],
            row["owner"],
            row["name"],
            territory,
            row["resource"],
            int(row["units"]),
            row["status"],
        )
    return cards


def validate(board: Board, source: str = "supremacy board") -> None:
    """Raise `BoardDataError` listing every inconsistency in the map and deck."""
    problems: list[str] = []
    zones = board.zones
    for zone in zones.values():
        if zone.kind not in ("land", "sea"):
            problems.append(f"{zone.name}: kind must be land or sea, not {zone.kind!r}")
        if zone.kind == "sea" and zone.colour not in ("light", "dark"):
            problems.append(f"{zone.name}: a sea must be light or dark, not {zone.colour!r}")
        if zone.name in zone.adjacent:
            problems.append(f"{zone.name}: adjacent to itself")
        for other in zone.adjacent:
            if other not in zones:
                problems.append(f"{zone.name}: unknown neighbour {other!r}")
            elif zone.name not in zones[other].adjacent:
                problems.append(f"{zone.name} -> {other} has no edge back (adjacency must be symmetric)")
        if zone.port and not any(zones[o].kind == "sea" for o in zone.adjacent if o in zones):
            problems.append(f"{zone.name}: a port must touch a sea")
    for code, names in board.homelands.items():
        if code not in board.superpowers:
            problems.append(f"homelands: unknown superpower {code!r}")
        for name in names:
            if name not in zones:
                problems.append(f"home territory {name!r} of {code} is not on the map")
            elif zones[name].home_of != code:
                problems.append(f"{name}: home_of is {zones[name].home_of!r}, the homelands list says {code}")
    for zone in zones.values():
        if zone.home_of is not None and zone.name not in board.homelands.get(zone.home_of, ()):
            problems.append(f"{zone.name}: home of {zone.home_of} but missing from its homelands list")
    counts = {kind: 0 for kind in DECK_COMPOSITION}
    for card in board.cards.values():
        counts[card.resource] = counts.get(card.resource, 0) + 1
        if card.kind == "company":
            if card.territory not in zones or not zones[card.territory].is_land:
                problems.append(f"card {card.id}: territory {card.territory!r} is not a land territory")
            elif card.owner != "neutral" and zones[card.territory].home_of != card.owner:
                problems.append(f"card {card.id}: {card.territory} is not a home territory of {card.owner}")
            if card.resource not in RESOURCES or card.units <= 0:
                problems.append(
                    f"card {card.id}: a company produces a positive number of grain, oil or mineral"
                )
    if counts != DECK_COMPOSITION:
        problems.append(f"deck composition {counts} differs from the seed's {DECK_COMPOSITION}")
    for code in board.superpowers:
        own = [c.resource for c in board.cards.values() if c.owner == code]
        if sorted(own) != sorted(RESOURCES * 2):
            problems.append(f"{code} must own two companies of each resource, has {sorted(own)}")
    if problems:
        raise BoardDataError("; ".join(problems), SourceLocation(source))


@cache
def load_board() -> Board:
    """The packaged board, validated once per process."""
    superpowers, homelands, zones = parse_map(json.loads(_data_text("map.json")))
    board = Board(superpowers, homelands, zones, parse_cards(_data_text("cards.tsv")))
    validate(board, "hilbridge/game/supremacy/data")
    return board
