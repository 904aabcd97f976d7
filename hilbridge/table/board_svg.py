"""The board as an SVG map, drawn from a player's view and the layout data (`layouts/<game>.json`).

Zones are marks at the layout's positions (circles for land, rounded squares for seas) joined by
every border of the board data: land, sea and coast borders drawn differently, and a border across
the map's edge (the Pacific's) as two stubs running off the edges it faces. Colours say who holds
what. Each name goes beside its mark on the first side (below, above, right, left; the layout's
``label_sides`` may put one first) where it covers no other name and no mark, so no two names
overlap. Only the view is read, so the picture shows exactly what that player may see. Every zone
is an element with ``data-zone`` (and a ``<title>`` tooltip) and every border one with
``data-edge``, so a page or a test can find them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
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

NAME_FONT = 9
"""The names' font size (SVG user units)."""
CHAR_WIDTH = 0.6
"""A letter's width as a share of the font size: more than sans-serif letters take on average, so a
name's estimated box covers the name as drawn."""
NODE_RADIUS = 11
CLEAR = 14
"""Half the side of the square around a zone's centre that its mark, port dot, HOMELAND star and
mushroom cloud take: no name is placed there."""
SIDES = ("below", "above", "right", "left")
LEGEND_ROW = 22

Box = tuple[float, float, float, float]
"""left, top, right, bottom"""


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
    placed: dict[str, tuple[int, int]] = {}
    for name in names:
        if name in data["zones"]:
            x, y = data["zones"][name]
            placed[name] = (int(x), int(y))
    missing = [name for name in names if name not in placed]
    for index, name in enumerate(missing):
        placed[name] = (40 + (index % 12) * 95, height + 30 + (index // 12) * 40)
    rows = -(-len(missing) // 12)
    return placed, width, height + rows * 40


def name_box(x: float, y: float, anchor: str, text: str, font: float = NAME_FONT) -> Box:
    """The box of a name drawn with its baseline at (x, y) and this text-anchor."""
    width = CHAR_WIDTH * font * len(text)
    left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
    return left, y - 0.8 * font, left + width, y + 0.25 * font


def overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def mark_box(x: float, y: float) -> Box:
    return x - CLEAR, y - CLEAR, x + CLEAR, y + CLEAR


def _name_at(x: float, y: float, side: str) -> tuple[float, float, str]:
    """Where a name goes on `side` of the zone at (x, y): its baseline point and text-anchor."""
    return {
        "below": (x, y + CLEAR + 0.8 * NAME_FONT, "middle"),
        "above": (x, y - CLEAR - 0.25 * NAME_FONT, "middle"),
        "right": (x + CLEAR, y + 0.3 * NAME_FONT, "start"),
        "left": (x - CLEAR, y + 0.3 * NAME_FONT, "end"),
    }[side]


def place_names(
    positions: dict[str, tuple[int, int]], preferred: dict[str, str]
) -> dict[str, tuple[float, float, str]]:
    """Each zone's name position: the first side whose box covers no name placed before it and no
    zone's mark (if every side does, the one that covers the fewest)."""
    marks = [mark_box(x, y) for x, y in positions.values()]
    placed: dict[str, tuple[float, float, str]] = {}
    boxes: list[Box] = []
    for name, (x, y) in positions.items():
        first = preferred.get(name)
        sides = ([first] if first else []) + [side for side in SIDES if side != first]
        best: tuple[int, tuple[float, float, str], Box] | None = None
        for side in sides:
            at = _name_at(x, y, side)
            box = name_box(*at, name)
            clashes = sum(overlap(box, other) for other in boxes + marks)
            if best is None or clashes < best[0]:
                best = (clashes, at, box)
            if clashes == 0:
                break
        assert best is not None
        placed[name] = best[1]
        boxes.append(best[2])
    return placed


def _pairs(adjacent: dict[str, Iterable[str]]) -> list[tuple[str, str]]:
    """Each border once, as a sorted pair of zone names."""
    return sorted({(a, b) if a < b else (b, a) for a, others in adjacent.items() for b in others})


def edge_key(a: str, b: str) -> str:
    return "|".join(sorted((a, b)))


def _edges(
    positions: dict[str, tuple[int, int]],
    pairs: list[tuple[str, str]],
    width: int,
    kind: Callable[[str, str], str],
) -> list[str]:
    """A line per border; one across the map's edge (its ends more than half the width apart, as
    the Pacific's) as two stubs from its zones to the edges they face."""
    lines = []
    for a, b in pairs:
        (x1, y1), (x2, y2) = positions[a], positions[b]
        attributes = f"class='border {kind(a, b)}' data-edge={quoteattr(edge_key(a, b))}"
        if abs(x1 - x2) <= width / 2:
            lines.append(f"<line x1='{x1}' y1='{y1}' x2='{x2}' y2='{y2}' {attributes}/>")
            continue
        if x1 > x2:
            (x1, y1), (x2, y2) = (x2, y2), (x1, y1)
        # (x1, y1) is near the left edge and (x2, y2) near the right: the straight line from
        # (x1, y1) to (x2 - width, y2), over the edge, crosses x = 0 at this height.
        crossing = y1 + (y2 - y1) * x1 / (x1 - (x2 - width))
        lines.append(f"<line x1='{x1}' y1='{y1}' x2='0' y2='{crossing:.1f}' {attributes}/>")
        lines.append(f"<line x1='{x2}' y1='{y2}' x2='{width}' y2='{crossing:.1f}' {attributes}/>")
    return lines


def _node(
    name: str, x: int, y: int, fill: str, stroke: str, label: str, tip: str,
    at: tuple[float, float, str], extra: str = "", sea: bool = False,
) -> str:  # fmt: skip
    tx, ty, anchor = at
    if sea:  # a rounded square, so that seas and land differ by more than colour
        side = 2 * NODE_RADIUS
        mark = (
            f"<rect x='{x - NODE_RADIUS}' y='{y - NODE_RADIUS}' width='{side}' height='{side}' rx='5' "
            f"fill='{fill}' stroke='{stroke}' stroke-width='2.5'/>"
        )
    else:
        mark = f"<circle cx='{x}' cy='{y}' r='{NODE_RADIUS}' fill='{fill}' stroke='{stroke}'"
        mark += " stroke-width='2.5'/>"
    return (
        f"<g class='zone' data-zone={quoteattr(name)}><title>{escape(tip)}</title>{mark}{extra}"
        f"<text x='{tx:.1f}' y='{ty:.1f}' text-anchor='{anchor}' class='name'>{escape(name)}</text>"
        + (f"<text x='{x}' y='{y + 4}' class='count'>{escape(label)}</text>" if label else "")
        + "</g>"
    )


def _svg(width: int, height: int, body: list[str], legend: list[str], legend_rows: int = 1) -> str:
    style = (
        f"<style>.border{{stroke:#8a8a8a;stroke-width:0.8}}.border.sea{{stroke:{DARK_SEA};"
        "stroke-dasharray:4 2}.border.coast{stroke:#6aaed6;stroke-dasharray:1 2}"
        f".name{{font:{NAME_FONT}px sans-serif;fill:#222;paint-order:stroke;stroke:#f7f7f2;"
        "stroke-width:2px}.count{font:bold 9px sans-serif;text-anchor:middle;fill:#000}"
        ".legend{font:12px sans-serif}.zone{cursor:pointer}</style>"
    )
    total = height + LEGEND_ROW * legend_rows + 8
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {total}' class='board'>"
        f"{style}<rect width='{width}' height='{total}' fill='#f7f7f2'/>"
        + "".join(body)
        + "".join(legend)
        + "</svg>"
    )


def _legend(
    items: list[tuple[str, str, bool]], y: int, width: int, column: int = 190
) -> tuple[list[str], int]:
    """Swatches with their words in rows across the map's width (a player's colour as a square, a
    zone's as a ring, as on the map); and the number of rows."""
    per_row = max(1, (width - 20) // column)
    shown = []
    for index, (colour, text, ring) in enumerate(items):
        x, row = 20 + (index % per_row) * column, index // per_row
        top = y + 6 + row * LEGEND_ROW
        if ring:
            swatch = f"<circle cx='{x + 7}' cy='{top + 7}' r='6' fill='{NEUTRAL}' stroke='{colour}'"
            swatch += " stroke-width='2.5'/>"
        else:
            swatch = f"<rect x='{x}' y='{top}' width='14' height='14' fill='{colour}'/>"
        shown.append(f"<g class='legend'>{swatch}<text x='{x + 20}' y='{top + 12}'>{escape(text)}</text></g>")
    return shown, -(-len(items) // per_row)


def supremacy_svg(view: dict[str, Any], board: Any) -> str:
    """Territories (land), light and dark seas, ports (white dots), units and mushroom clouds."""
    names = list(board.zones)
    positions, width, height = _positions("supremacy", names)
    palette = colours(view["players"])
    home_colour = {code: palette[p] for p, code in view["power"].items()}
    pairs = _pairs({name: board.zones[name].adjacent for name in names})

    def kind(a: str, b: str) -> str:
        lands = board.zones[a].is_land + board.zones[b].is_land
        return ("sea", "coast", "land")[lands]

    body = _edges(positions, pairs, width, kind)
    names_at = place_names(positions, layout("supremacy").get("label_sides", {}))
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
        body.append(_node(name, x, y, fill, stroke, label, tip, names_at[name], extra, sea=not zone.is_land))
    items = [(palette[p], f"{p} ({view['power'].get(p, '?')})", False) for p in view["players"]]
    legend, rows = _legend(items, height, width)
    return _svg(width, height, body, legend, rows)


def conquest_svg(view: dict[str, Any]) -> str:
    """Countries coloured by occupier (allied countries paler), ringed in their zone's colour (the
    layout's ``zone_colours``, in the legend), HOMELANDs starred, values shown."""
    board = view["board"]
    names = list(board["values"])
    positions, width, height = _positions("conquest", names)
    palette = colours(view["players"])
    zone_colours = layout("conquest").get("zone_colours", {})
    pairs = _pairs({name: board["neighbours"][name] for name in names})
    body = _edges(positions, pairs, width, lambda a, b: "land")
    names_at = place_names(positions, layout("conquest").get("label_sides", {}))
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
            extra = f"<text x='{x - 12}' y='{y - 4}' class='count'>★</text>"
            tip += f", HOMELAND of {homelands[name]}"
        ring = zone_colours.get(board["zones"][name], "#444")
        node = _node(name, x, y, fill, ring, str(board["values"][name]), tip, names_at[name], extra)
        body.append(node.replace(f"fill='{fill}'", f"fill='{fill}'{opacity}", 1))
    zones_shown = sorted(set(board["zones"].values()))
    items = [(palette[p], p, False) for p in view["players"]]
    items += [(zone_colours.get(zone, "#444"), zone, True) for zone in zones_shown]
    legend, rows = _legend(items, height, width, column=230)
    return _svg(width, height, body, legend, rows)


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
