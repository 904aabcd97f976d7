"""The map and the log sentences: drawn from the view and the data files, for both games."""

from __future__ import annotations

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
    dark = drawn["North Atlantic"].find(f"{SVG}circle").get("fill")
    light = drawn["Gulf of Panama"].find(f"{SVG}circle").get("fill")
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
