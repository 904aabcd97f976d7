"""The map and the log sentences: drawn from the view and the data files, for both games."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ElementTree

import pytest

from hilbridge.game import Game, get_ruleset
from hilbridge.game.conformance import play_random_moves
from hilbridge.table.board_svg import conquest_svg, layout, supremacy_svg
from hilbridge.table.messages import describe_event, templates

SVG = "{http://www.w3.org/2000/svg}"


def zones(svg: str) -> dict[str, ElementTree.Element]:
    root = ElementTree.fromstring(svg)  # well-formed XML, or this raises
    return {group.get("data-zone"): group for group in root.iter(f"{SVG}g") if group.get("data-zone")}


def test_the_layouts_place_every_zone_of_both_packaged_boards():
    supremacy = get_ruleset("supremacy").board
    assert set(layout("supremacy")["zones"]) == set(supremacy.zones)
    conquest = Game(get_ruleset("conquest"), get_ruleset("conquest").default_setup(["a", "b"]), 1)
    assert set(layout("conquest")["zones"]) == set(conquest.state["board"]["values"])


def test_the_supremacy_map_shows_seas_ports_units_and_mushroom_clouds():
    ruleset = get_ruleset("supremacy")
    game = Game(ruleset, ruleset.default_setup(["ann", "bob"]), 2)
    view = game.view("ann")
    view["power"] = {"ann": "USA", "bob": "CSA"}
    view["units"] = {"Venezuela": {"bob": [2, 0]}, "Carribean Sea": {"ann": [3, 1]}}
    view["clouds"] = ["Peru"]
    drawn = zones(supremacy_svg(view, ruleset.board))
    assert set(drawn) == set(ruleset.board.zones)
    ports = [name for name, group in drawn.items() if group.find(f"{SVG}circle[@class='port']") is not None]
    assert sorted(ports) == sorted(name for name, zone in ruleset.board.zones.items() if zone.port)
    clouds = [
        name for name, group in drawn.items() if group.find(f"{SVG}g[@class='mushroom-cloud']") is not None
    ]
    assert clouds == ["Peru"]
    labels = {name: [t.text for t in group.iter(f"{SVG}text")] for name, group in drawn.items()}
    assert "2A" in labels["Venezuela"] and "3A 1N" in labels["Carribean Sea"]
    assert "bob: 2 armies, 0 navies" in drawn["Venezuela"].find(f"{SVG}title").text
    dark = drawn["North Atlantic"].find(f"{SVG}rect").get("fill")
    light = drawn["Gulf of Panama"].find(f"{SVG}rect").get("fill")
    assert dark != light


def test_the_conquest_map_shows_owners_allies_and_homelands():
    ruleset = get_ruleset("conquest")
    game = Game(ruleset, ruleset.default_setup(["ann", "bob", "cy"]), 2)
    view = game.view("bob")
    view["ally_of"] = {"Canada": "ann"}
    drawn = zones(conquest_svg(view))
    assert len(drawn) == 43
    stars = [n for n, g in drawn.items() if any(t.text == "★" for t in g.iter(f"{SVG}text"))]
    assert sorted(stars) == sorted(view["homeland"].values())
    canada = drawn["Canada"].find(f"{SVG}circle")
    assert canada.get("fill-opacity") == "0.45" and canada.get("fill") == drawn["United States"].find(
        f"{SVG}circle"
    ).get("fill")


@pytest.mark.parametrize("name", ["supremacy", "conquest"])
def test_every_event_of_random_games_has_a_sentence(name):
    ruleset = get_ruleset(name)
    kinds = set()
    for seed in range(6):
        options = {"turn_cap": 2} if name == "supremacy" else {"max_rounds": 2}
        game = Game(ruleset, ruleset.default_setup(["ann", "bob", "cy"], options), seed)
        play_random_moves(game, 400, policy_seed=seed)
        for item in game.events(everything=True):
            kinds.add(item["kind"])
            text = describe_event(name, item)
            assert "{" not in text and not text.startswith(item["kind"] + " "), text
    assert kinds <= set(templates(name))
    assert len(kinds) > 12


def supremacy_map() -> tuple[str, dict[str, set[str]]]:
    ruleset = get_ruleset("supremacy")
    view = Game(ruleset, ruleset.default_setup(["ann", "bob"]), 2).view("ann")
    view["power"] = {"ann": "USA", "bob": "CSA"}
    return supremacy_svg(view, ruleset.board), {n: set(z.adjacent) for n, z in ruleset.board.zones.items()}


def conquest_map() -> tuple[str, dict[str, set[str]]]:
    ruleset = get_ruleset("conquest")
    view = Game(ruleset, ruleset.default_setup(["ann", "bob", "cy"]), 2).view("ann")
    return conquest_svg(view), {n: set(others) for n, others in view["board"]["neighbours"].items()}


def text_box(text: ElementTree.Element, font: float) -> tuple[float, float, float, float]:
    """A generous box around an SVG text: 0.6 em a letter, from 0.8 em above the baseline to 0.25 below."""
    x, y, width = float(text.get("x")), float(text.get("y")), 0.6 * font * len(text.text)
    left = {"start": x, "middle": x - width / 2, "end": x - width}[text.get("text-anchor")]
    return left, y - 0.8 * font, left + width, y + 0.25 * font


def mark_centre(group: ElementTree.Element) -> tuple[float, float]:
    circle = group.find(f"{SVG}circle")
    if circle is not None:
        return float(circle.get("cx")), float(circle.get("cy"))
    square = group.find(f"{SVG}rect")
    return float(square.get("x")) + float(square.get("width")) / 2, float(square.get("y")) + float(
        square.get("height")
    ) / 2


def apart(a, b) -> bool:
    return a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]


@pytest.mark.parametrize("draw", [supremacy_map, conquest_map], ids=["supremacy", "conquest"])
def test_no_two_zone_names_overlap_nor_cover_another_zones_mark(draw):
    svg, _ = draw()
    font = float(re.search(r"\.name\{font:(\d+(?:\.\d+)?)px", svg).group(1))
    drawn = zones(svg)
    names = {}
    for name, group in drawn.items():
        (label,) = [t for t in group.iter(f"{SVG}text") if t.get("class") == "name"]
        assert label.text == name
        names[name] = text_box(label, font)
    marks = {name: (x - 11, y - 11, x + 11, y + 11) for name, (x, y) in map(
        lambda item: (item[0], mark_centre(item[1])), drawn.items()
    )}  # fmt: skip
    clashes = [(a, b) for a, b in itertools.combinations(names, 2) if not apart(names[a], names[b])]
    assert clashes == []
    covered = [(a, b) for a in names for b in marks if a != b and not apart(names[a], marks[b])]
    assert covered == []


@pytest.mark.parametrize("draw", [supremacy_map, conquest_map], ids=["supremacy", "conquest"])
def test_every_adjacency_of_the_board_data_is_drawn_between_its_two_zones(draw):
    svg, adjacent = draw()
    root = ElementTree.fromstring(svg)
    width = float(root.get("viewBox").split()[2])
    centres = {name: mark_centre(group) for name, group in zones(svg).items()}
    lines: dict[str, list[tuple[tuple[float, float], tuple[float, float]]]] = {}
    for line in root.iter(f"{SVG}line"):
        ends = (
            (float(line.get("x1")), float(line.get("y1"))),
            (float(line.get("x2")), float(line.get("y2"))),
        )
        lines.setdefault(line.get("data-edge"), []).append(ends)
    pairs = {tuple(sorted((a, b))) for a, others in adjacent.items() for b in others}
    assert set(lines) == {f"{a}|{b}" for a, b in pairs}
    for a, b in pairs:
        drawn = lines[f"{a}|{b}"]
        if len(drawn) == 1:  # a straight border from one zone to the other
            assert set(drawn[0]) == {centres[a], centres[b]}
        else:  # across the map's edge: a stub from each zone to an edge, both at the same height
            assert len(drawn) == 2
            assert {start for start, _ in drawn} == {centres[a], centres[b]}
            assert sorted(end[0] for _, end in drawn) == [0, width] and drawn[0][1][1] == drawn[1][1][1]
