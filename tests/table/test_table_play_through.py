"""Whole games through the web table's HTTP interface, as three players' pages would send them:
only the moves each page offers (its buttons) and the console-battle prompt's fields."""

from __future__ import annotations

import random

import pytest
from starlette.testclient import TestClient

from hilbridge.game import Game, get_ruleset
from hilbridge.table.app import create_app
from hilbridge.table.seats import Table

PLAYERS = ("ann", "bob", "cy")


def open_table(tmp_path, name: str, options: dict) -> tuple[Table, TestClient]:
    ruleset = get_ruleset(name)
    path = tmp_path / f"{name}.json"
    Game(ruleset, ruleset.default_setup(list(PLAYERS), options), 99).save(path)
    table = Table(path)
    return table, TestClient(create_app(table))


def play(table: Table, client: TestClient, rng: random.Random, done, prefer=()) -> int:
    """Each turn: the first page whose player must act sends one of its offered moves (or the
    battle result its prompt asks for). Returns the number of requests made."""
    requests = 0
    while not done():
        for player in PLAYERS:
            seen = client.get(f"/t/{table.tokens[player]}/state").json()
            if seen["battle"] and seen["battle"]["yours"]:
                battle = seen["battle"]
                result = {"winner": rng.choice([battle["attacker"], battle["defender"]])}
                if battle["kind"] == "end_game_battle":
                    loser = (
                        battle["defender"] if result["winner"] == battle["attacker"] else battle["attacker"]
                    )
                    energy = dict(battle["params"]["energy"])
                    energy[loser] = max(0, energy[loser] - rng.choice((500, 1500, 4000)))
                    result["energy"] = energy
                path, body = "/battle", {"result": result}
            elif seen["moves"]:
                preferred = [m for m in seen["moves"] if m["kind"] in prefer]
                move = rng.choice(preferred or seen["moves"])
                path, body = "/move", {"kind": move["kind"], "params": move["params"]}
            else:
                continue
            response = client.post(
                f"/t/{table.tokens[player]}{path}", json={**body, "revision": seen["revision"]}
            )
            assert response.status_code == 200, response.text
            requests += 1
            break
        assert requests < 5000, "the game does not progress"
    return requests


@pytest.mark.slow
def test_three_players_play_a_supremacy_cycle_in_their_pages(tmp_path):
    table, client = open_table(tmp_path, "supremacy", {})
    play(
        table,
        client,
        random.Random(1),
        lambda: table.game.state["cycle"] == 2,
        prefer=("bid", "pass", "end_turn"),
    )
    log = client.get(f"/t/{table.tokens['cy']}/state").json()["log"]
    assert "Cycle 2 begins." in log and any(line.startswith("Stage 7 blind bids") for line in log)


@pytest.mark.slow
def test_three_players_play_conquest_to_the_end_in_their_pages(tmp_path):
    table, client = open_table(tmp_path, "conquest", {"max_rounds": 2})
    play(table, client, random.Random(2), table.game.is_terminal)
    for player in PLAYERS:
        seen = client.get(f"/t/{table.tokens[player]}/state").json()
        assert seen["over"] and seen["status"].startswith("Game over. Winner: ")
    events = [item["kind"] for item in table.game.events(everything=True)]
    assert "end_game" in events and "duel_battle" in events and "game_over" in events
