"""The web table over HTTP (Starlette's test client): tokens, malformed and stale moves, secrets."""

from __future__ import annotations

import json
import threading

import pytest
from starlette.testclient import TestClient
from table_games import conquest_at_battle, conquest_at_end_game_battle, saved, supremacy_game

from hilbridge.game import Game
from hilbridge.table.app import create_app
from hilbridge.table.seats import StaleMove, Table


@pytest.fixture
def table(tmp_path) -> Table:
    return Table(saved(supremacy_game(), tmp_path / "game.json"))


@pytest.fixture
def client(table) -> TestClient:
    return TestClient(create_app(table))


def url(table: Table, player: str, path: str = "") -> str:
    return f"/t/{table.tokens[player]}{path}"


def state(client: TestClient, table: Table, player: str) -> dict:
    response = client.get(url(table, player, "/state"))
    assert response.status_code == 200
    return response.json()


def bid(client, table, player, cubes, revision=None):
    revision = state(client, table, player)["revision"] if revision is None else revision
    body = {"revision": revision, "kind": "bid", "params": {"cubes": cubes}}
    return client.post(url(table, player, "/move"), json=body)


@pytest.mark.parametrize("path", ["", "/state", "/events"])
def test_a_wrong_or_missing_token_gets_403(client, table, path):
    assert client.get(f"/t/not-a-token{path}").status_code == 403
    assert client.get(f"/t/{table.tokens['ann']}x{path}").status_code == 403
    assert client.get("/").status_code == 403
    assert client.get("/t/").status_code == 403
    response = client.post("/t/not-a-token/move", json={"revision": "x", "kind": "bid", "params": {}})
    assert response.status_code == 403 and "token" in response.json()["error"]


def test_each_token_shows_its_own_player(client, table):
    page = client.get(url(table, "bob"))
    assert page.status_code == 200 and 'data-player="bob"' in page.text
    assert page.headers["referrer-policy"] == "no-referrer" and page.headers["cache-control"] == "no-store"
    assert state(client, table, "ann")["player"] == "ann"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"kind": "bid", "params": {}}', "missing revision"),
        (b'{"revision": 3, "kind": "bid", "params": {}}', "revision must be"),
        (b'{"revision": "R", "kind": "bid", "params": [], "x": 1}', "unknown x"),
    ],
)
def test_malformed_requests_get_400_with_the_reason(client, table, body, reason):
    body = body.replace(b'"R"', json.dumps(table.revision).encode())
    response = client.post(url(table, "ann", "/move"), content=body)
    assert response.status_code == 400 and reason in response.json()["error"]


def test_an_illegal_move_gets_400_with_the_rule(client, table):
    response = bid(client, table, "ann", 3)
    assert response.status_code == 400 and "illegal move" in response.json()["error"]
    revision = state(client, table, "ann")["revision"]
    body = {"revision": revision, "kind": "sell", "params": {"resource": "oil", "units": 2}}
    response = client.post(url(table, "ann", "/move"), json=body)
    assert response.status_code == 400 and "illegal move: ann: sell" in response.json()["error"]


def test_two_players_moving_at_once_one_applies_the_other_is_stale(client, table):
    seen = state(client, table, "ann")["revision"]
    assert state(client, table, "bob")["revision"] == seen
    first = bid(client, table, "ann", 1, revision=seen)
    second = bid(client, table, "bob", 0, revision=seen)
    assert first.status_code == 200
    assert second.status_code == 409 and second.json()["stale"] is True
    assert "moved on" in second.json()["error"] and second.json()["revision"] == first.json()["revision"]
    assert Game.load(table.save_path).commits.keys() == {"ann"}
    assert bid(client, table, "bob", 0).status_code == 200  # on the new revision it applies


def test_no_answer_carries_another_players_secret_or_the_seed(client, table):
    seed = str(Game.load(table.save_path).seed)
    answers = [bid(client, table, "ann", 1)]
    answers += [client.get(url(table, p, path)) for p in ("ann", "bob") for path in ("", "/state")]
    ann, bob = answers[-3].json(), answers[-1].json()
    assert any("Your secret move: bid cubes=1" in line for line in ann["log"])
    assert not any("secret move:" in line for line in bob["log"])
    assert "bob committed" not in " ".join(bob["log"]) and "ann committed a secret move." in bob["log"]
    assert '"player": "ann", "params"' not in json.dumps(bob) and "cubes=1" not in json.dumps(bob)
    for answer in answers:
        assert seed not in answer.text
    response = bid(client, table, "bob", 0)
    assert response.status_code == 200
    assert any("blind bids" in line and "ann: 1" in line for line in response.json()["did"])


def test_the_save_and_the_tokens_file_are_private(client, table, tmp_path):
    assert bid(client, table, "ann", 1).status_code == 200
    assert table.save_path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "game.json.tokens").stat().st_mode & 0o777 == 0o600
    again = Table(table.save_path)
    assert again.tokens == table.tokens and not again.new_tokens  # a restart keeps every URL


def test_a_revealed_bid_cannot_be_undone_on_the_web(client, table):
    assert bid(client, table, "ann", 1).status_code == 200
    assert state(client, table, "ann")["can_undo"]
    revision = state(client, table, "ann")["revision"]
    assert client.post(url(table, "ann", "/undo"), json={"revision": revision}).status_code == 200
    assert bid(client, table, "ann", 1).status_code == 200
    assert bid(client, table, "bob", 1).status_code == 200
    revision = state(client, table, "bob")["revision"]
    response = client.post(url(table, "bob", "/undo"), json={"revision": revision})
    assert response.status_code == 400 and "revealed" in response.json()["error"]


def test_moves_with_amounts_sell_two_of_six_oil(client, table):
    """S-3.C's own example: two of six oil at $500M pay $1 billion."""
    assert bid(client, table, "ann", 1).status_code == 200 and bid(client, table, "bob", 0).status_code == 200
    seen = state(client, table, "ann")
    assert "sell" in [form["kind"] for form in seen["forms"]]
    units = next(f for f in seen["forms"] if f["kind"] == "sell")["fields"][1]
    assert units == {"name": "units", "default": 1, "type": "number", "min": 1}
    body = {"revision": seen["revision"], "kind": "sell", "params": {"resource": "oil", "units": 2}}
    response = client.post(url(table, "ann", "/move"), json=body)
    assert response.status_code == 200
    assert response.json()["did"][0] == "ann sells 2 oil to the market for $1000M."


def test_a_console_battle_waits_as_a_prompt_for_its_two_players(tmp_path):
    game = conquest_at_battle()
    battle = game.state["battle"]
    table = Table(saved(game, tmp_path / "conquest.json"))
    client = TestClient(create_app(table))
    attacker, defender = battle["attacker"], battle["defender"]
    other = next(p for p in ("ann", "bob", "cy") if p not in (attacker, defender))
    seen = state(client, table, other)
    assert seen["battle"]["attacker"] == attacker and not seen["battle"]["yours"]
    assert "Console battle" in seen["status"]
    body = {"revision": seen["revision"], "result": {"winner": attacker}}
    refused = client.post(url(table, other, "/battle"), json=body)
    assert refused.status_code == 400 and "reports this battle" in refused.json()["error"]
    wrong = client.post(url(table, defender, "/battle"), json={**body, "result": {"winner": other}})
    assert wrong.status_code == 400 and "winner" in wrong.json()["error"]
    done = client.post(url(table, defender, "/battle"), json=body)
    assert done.status_code == 200
    assert f"Battle for {battle['country']}: {attacker} wins." in done.json()["did"]
    assert state(client, table, other)["battle"] is None


def test_an_end_game_battle_asks_for_the_winner_and_the_energy_left(tmp_path):
    game = conquest_at_end_game_battle()
    duel = game.state["ladder"]["duel"]
    table = Table(saved(game, tmp_path / "conquest.json"))
    client = TestClient(create_app(table))
    attacker, defender = duel["attacker"], duel["defender"]
    seen = state(client, table, attacker)
    fields = {field["name"]: field for field in seen["battle"]["fields"]}
    assert fields[f"energy.{defender}"]["max"] == duel["energy"][defender]
    assert seen["svg"].startswith("<svg") and 'data-zone="Canada"' in seen["svg"]
    energy = {attacker: duel["energy"][attacker], defender: 0}
    body = {"revision": seen["revision"], "result": {"winner": attacker, "energy": energy}}
    done = client.post(url(table, attacker, "/battle"), json=body)
    assert done.status_code == 200, done.text
    assert any(line.startswith("End-game battle 1: " + attacker + " wins") for line in done.json()["did"])


def test_simultaneous_moves_from_two_threads_one_applies_one_is_stale(table):
    revision = table.revision
    start, outcomes = threading.Barrier(2), {}

    def bid_now(player: str) -> None:
        start.wait()
        try:
            table.move(player, {"revision": revision, "kind": "bid", "params": {"cubes": 1}})
            outcomes[player] = "applied"
        except StaleMove:
            outcomes[player] = "stale"

    threads = [threading.Thread(target=bid_now, args=(player,)) for player in ("ann", "bob")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes.values()) == ["applied", "stale"]
    assert len(Game.load(table.save_path).commits) == 1
