"""The board as an SVG map, drawn from a player's view and the layout data (`layouts/<game>.json`).

Zones are circles at the layout's positions joined by their borders; colours say who holds what.
Only the view is read, so the picture shows exactly what that player may see. Every zone is an
element with ``data-zone`` (and a ``<title>`` tooltip), so a page or a test can find it by name.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from hilbridge.game.conquest.rules import ConquestRuleset
from hilbridge.game.core import Ruleset, State
from hilbridge.game.supremacy import Supremacy

PLAYER_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")
"""One colour per seat, in seating order."""

LAND, NEUTRAL, LIGHT_SEA, DARK_SEA = "#e8e2c8", "#b9b9b9", "#9fd3f0", "#2f6fa8"


@cache
def layout(game: str) -> dict[str, Any]:
    text = resources.files("hilbridge.table").joinpath("layouts", f"{game}.json").read_text("utf-8")
    return json.loads(text)


def colours(players: list[str]) -> dict[str, str]:
    return {player: PLAYER_COLOURS[index % len(PLAYER_COLOURS)] for index, player in enumerate(players)}


def _positions(game: str, names: list[str]) -> tuple[dict[str, tuple[int, int]], int, int]:
    """Layout positions; names the layout lacks (a replacement board) go in rows below the map."""
    data = layout(game)
    width, height = data["width"], data["height"]
    placed = {name: tuple(data["zones"][name]) for name in names if name in data["zones"]}
    missing = [name for name in names if name not in placed]
    for index, name in enumerate(missing):
        placed[name] = (40 + (index % 12) * 95, height + 30 + (index // 12) * 40)
    rows = -(-len(missing) // 12)
    return placed, width, height + rows * 40  # type: ignore[return-value]


def _edges(positions: dict[str, tuple[int, int]], pairs: list[tuple[str, str]], width: int) -> list[str]:
    lines = []
    for a, b in pairs:
        (x1, y1), (x2, y2) = positions[a], positions[b]
        if abs(x1 - x2) > width / 2:  # the border wraps around the edge of the map
            continue
        lines.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" class="border"/>')
    return lines


def _node(name: str, x: int, y: int, fill: str, stroke: str, label: str, tip: str, extra: str = "") -> str:
    return (
        f"<g class='zone' data-zone={quoteattr(name)}><title>{escape(tip)}</title>"
        f"<circle cx='{x}' cy='{y}' r='11' fill='{fill}' stroke='{stroke}' stroke-width='2.5'/>"
        f"{extra}<text x='{x}' y='{y + 22}' class='name'>{escape(name)}</text>"
        + (f"<text x='{x}' y='{y + 4}' class='count'>{escape(label)}</text>" if label else "")
        + "</g>"
    )


def _svg(width: int, height: int, body: list[str], legend: list[str]) -> str:
    style = (
        "<style>.border{stroke:#8a8a8a;stroke-width:0.8}.name{font:9px sans-serif;text-anchor:middle;"
        "fill:#222}.count{font:bold 9px sans-serif;text-anchor:middle;fill:#000}"
        ".legend{font:12px sans-serif}.zone{cursor:pointer}</style>"
    )
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height + 30}' class='board'>"
        f"{style}<rect width='{width}' height='{height + 30}' fill='#f7f7f2'/>"
        + "".join(body)
        + "".join(legend)
        + "</svg>"
    )


def _legend(players: list[str], palette: dict[str, str], y: int, labels: dict[str, str]) -> list[str]:
    items = []
    for index, player in enumerate(players):
        x = 20 + index * 190
        items.append(
            f"<g class='legend'><rect x='{x}' y='{y}' width='14' height='14' fill='{palette[player]}'/>"
            f"<text x='{x + 20}' y='{y + 12}'>{escape(labels.get(player, player))}</text></g>"
        )
    return items


def supremacy_svg(view: dict[str, Any], board: Any) -> str:
    """Territories (land), light and dark seas, ports (white dots), units and mushroom clouds."""
    names = list(board.zones)
    positions, width, height = _positions("supremacy", names)
    palette = colours(view["players"])
    home_colour = {code: palette[p] for p, code in view["power"].items()}
    pairs = sorted({tuple(sorted((a, b))) for a in names for b in board.zones[a].adjacent})
    body = _edges(positions, pairs, width)  # type: ignore[arg-type]
    for name in names:
        zone, (x, y) = board.zones[name], positions[name]
        forces = view["units"].get(name, {})
        holder = next(iter(forces), None) if len(forces) == 1 else None
        if zone.is_land:
            fill = palette[holder] if holder else (LAND if zone.home_of else NEUTRAL)
            stroke = home_colour.get(zone.home_of, "#555") if zone.home_of else "#555"
        else:
            fill = palette[holder] if holder else (LIGHT_SEA if zone.is_light_sea else DARK_SEA)
            stroke = LIGHT_SEA if zone.is_light_sea else DARK_SEA
        counts = [f"{a}A{f' {n}N' if n else ''}" if a else f"{n}N" for a, n in forces.values()]
        label = "/".join(counts)
        kind = "territory" if zone.is_land else f"{zone.colour} blue sea"
        home = f", home of {zone.home_of}" if zone.home_of else ""
        tip = f"{name} ({kind}{', port' if zone.port else ''}{home})"
        tip += "".join(f"; {p}: {a} armies, {n} navies" for p, (a, n) in forces.items())
        extra = ""
        if zone.port:
            extra += f"<circle cx='{x + 10}' cy='{y - 9}' r='3' fill='#fff' stroke='#333' class='port'/>"
        if name in view["clouds"]:
            extra += (
                f"<g class='mushroom-cloud'><rect x='{x - 2}' y='{y - 2}' width='4' height='9' fill='#000'/>"
                f"<ellipse cx='{x}' cy='{y - 4}' rx='8' ry='5' fill='#000'/></g>"
            )
            tip += "; nuked (mushroom cloud)"
        body.append(_node(name, x, y, fill, stroke, label, tip, extra))
    labels = {p: f"{p} ({view['power'].get(p, '?')})" for p in view["players"]}
    return _svg(width, height, body, _legend(view["players"], palette, height, labels))


def conquest_svg(view: dict[str, Any]) -> str:
    """Countries coloured by occupier (allied countries paler), HOMELANDs starred, values shown."""
    board = view["board"]
    names = list(board["values"])
    positions, width, height = _positions("conquest", names)
    palette = colours(view["players"])
    pairs = sorted({tuple(sorted((a, b))) for a in names for b in board["neighbours"][a]})
    body = _edges(positions, pairs, width)  # type: ignore[arg-type]
    homelands = {country: player for player, country in view["homeland"].items() if player in view["active"]}
    for name in names:
        x, y = positions[name]
        owner, ally = view["owner"][name], view["ally_of"].get(name)
        fill = palette[owner] if owner else (palette[ally] if ally else NEUTRAL)
        opacity = " fill-opacity='0.45'" if ally and not owner else ""
        status = f"occupied by {owner}" if owner else (f"allied with {ally}" if ally else "unoccupied")
        tip = f"{name} ({board['zones'][name]}), value {board['values'][name]}: {status}"
        extra = ""
        if name in homelands:
            extra = f"<text x='{x}' y='{y - 13}' class='count'>★</text>"
            tip += f", HOMELAND of {homelands[name]}"
        node = _node(name, x, y, fill, "#444", str(board["values"][name]), tip, extra)
        body.append(node.replace(f"fill='{fill}'", f"fill='{fill}'{opacity}", 1))
    return _svg(width, height, body, _legend(view["players"], palette, height, {}))


def zone_names(ruleset: Ruleset, view: State) -> list[str]:
    """The zones a move may name: Supremacy's territories and seas, or Conquest's countries."""
    if isinstance(ruleset, Supremacy):
        return list(ruleset.board.zones)
    return list(view["board"]["values"]) if "board" in view else []


def draw_board(ruleset: Ruleset, view: State) -> str:
    """The map of `view` for the games that have one (an empty string for any other)."""
    if isinstance(ruleset, Supremacy):
        return supremacy_svg(view, ruleset.board)
    if isinstance(ruleset, ConquestRuleset):
        return conquest_svg(view)
    return ""
