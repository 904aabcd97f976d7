"""The Supremacy map and deck data and their validator (S-0.board, S-0.deck)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from hilbridge.game.supremacy.board import (
    DECK_COMPOSITION,
    Board,
    BoardDataError,
    Zone,
    load_board,
    parse_cards,
    parse_map,
    validate,
)

BOARD = load_board()


def test_S_0_board_six_superpowers_and_24_neutral_countries():
    land = [z for z in BOARD.zones.values() if z.is_land]
    assert len([z for z in land if z.home_of is None]) == 24
    assert sum(len(homes) for homes in BOARD.homelands.values()) == len(land) - 24
    assert sorted(BOARD.homelands) == ["CSA", "FAS", "LEN", "PRC", "USA", "USSR"]
    assert BOARD.homelands["PRC"] == ("Manchuria", "Mongolia", "Nanling", "Shantung", "Tibet")


def test_S_0_board_adjacency_is_symmetric_and_seas_are_light_or_dark():
    for zone in BOARD.zones.values():
        for other in zone.adjacent:
            assert zone.name in BOARD.zones[other].adjacent
        if not zone.is_land:
            assert zone.colour in ("light", "dark")
    assert BOARD.zones["Mid Atlantic"].is_dark_sea and BOARD.zones["Carribean Sea"].is_light_sea


def test_S_0_deck_65_cards_and_two_companies_per_resource_for_each_superpower():
    counts: dict[str, int] = {}
    for card in BOARD.cards.values():
        counts[card.resource] = counts.get(card.resource, 0) + 1
    assert counts == DECK_COMPOSITION == {"grain": 20, "oil": 20, "mineral": 20, "nuke": 3, "lstar": 2}
    placeholders = [c for c in BOARD.cards.values() if c.status == "placeholder"]
    assert len(placeholders) == 24 and all(c.owner == "neutral" for c in placeholders)


def _map_document() -> dict:
    from importlib import resources

    text = resources.files("hilbridge.game.supremacy").joinpath("data", "map.json").read_text("utf-8")
    return json.loads(text)


def _board_from(document: dict) -> Board:
    superpowers, homelands, zones = parse_map(document)
    return Board(superpowers, homelands, zones, dict(BOARD.cards))


def test_S_0_validator_rejects_a_one_way_edge():
    document = _map_document()
    document["zones"]["Greenland"]["adjacent"].append("Iceland Gap")
    document["zones"]["Iceland Gap"] = {"kind": "sea", "colour": "dark", "adjacent": []}
    with pytest.raises(BoardDataError, match="Greenland -> Iceland Gap has no edge back"):
        validate(_board_from(document))


def test_S_0_validator_rejects_a_missing_home_territory():
    document = _map_document()
    del document["zones"]["Kola"]
    for zone in document["zones"].values():
        zone["adjacent"] = [name for name in zone["adjacent"] if name != "Kola"]
    with pytest.raises(BoardDataError, match="home territory 'Kola' of USSR is not on the map"):
        validate(_board_from(document))


def test_S_0_validator_rejects_a_sea_without_colour_and_a_port_without_sea():
    zones = dict(BOARD.zones)
    zones["North Sea"] = dataclasses.replace(zones["North Sea"], colour=None)
    zones["Greenland"] = dataclasses.replace(zones["Greenland"], adjacent=("Northern Canada",), port=True)
    zones["Northern Canada"] = dataclasses.replace(
        zones["Northern Canada"], adjacent=tuple(a for a in zones["Northern Canada"].adjacent)
    )
    zones["Hudson Strait"] = Zone(
        "Hudson Strait",
        "sea",
        tuple(a for a in zones["Hudson Strait"].adjacent if a != "Greenland"),
        colour="light",
    )
    board = Board(BOARD.superpowers, BOARD.homelands, zones, dict(BOARD.cards))
    with pytest.raises(BoardDataError) as error:
        validate(board)
    assert "North Sea: a sea must be light or dark" in error.value.message
    assert "Greenland: a port must touch a sea" in error.value.message


def test_S_0_validator_rejects_a_short_deck_and_a_company_outside_its_homeland():
    lines = [
        line
        for line in (BOARD_CARDS_TEXT.splitlines())
        if not line.startswith("C65")  # drop one L-star card
    ]
    cards = parse_cards("\n".join(lines).replace("\tArgentina\tgrain", "\tKola\tgrain"))
    board = Board(BOARD.superpowers, BOARD.homelands, dict(BOARD.zones), cards)
    with pytest.raises(BoardDataError) as error:
        validate(board)
    assert "deck composition" in error.value.message
    assert "Kola is not a home territory of CSA" in error.value.message


BOARD_CARDS_TEXT = (
    __import__("importlib.resources", fromlist=["files"])
    .files("hilbridge.game.supremacy")
    .joinpath("data", "cards.tsv")
    .read_text("utf-8")
)


def test_the_text_board_shows_cards_salary_bill_costs_and_the_winner():
    from hilbridge.game import Action
    from hilbridge.game.supremacy import Supremacy

    rules = Supremacy()
    state = rules.initial_state(rules.default_setup(["ann", "bob"]), 0)
    state.update(active=["ann", "bob"], turn="ann")
    for player, code in (("ann", "USA"), ("bob", "CSA")):
        state = rules.apply(state, Action("choose", player, {"power": code}))
    text = rules.describe(rules.view(state, "ann"))
    # S-1.A: six companies at $50M and four armies at $10M.
    assert "salary bill $340M" in text and "Clark Oil Co. (Western U.S.A., 3 oil)" in text
    assert "move 1 grain per army" in text and "Game over" not in text
    state = {**state, "phase": "over", "winners": ["bob"]}
    assert rules.describe(rules.view(state, "ann")).endswith("Game over. Winner: bob")
