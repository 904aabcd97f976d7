"""Console battles on the web table (`serve --console`): the emulated console fights, the battle's
players confirm or correct its result on their own pages, and a console that fails ends in a manual
entry with the reason. Over HTTP with Starlette's test client; the console is hilbridge's emulator."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import pytest
from conftest import require_tool
from starlette.testclient import TestClient
from table_games import conquest_at_battle, saved

from hilbridge.bridge.combat import combat_image
from hilbridge.bridge.consoles import EmulatorConsole
from hilbridge.bridge.profile import profile_for
from hilbridge.bridge.resolver import ConsoleResolver
from hilbridge.cli.game import console_bridge
from hilbridge.errors import HilbridgeError
from hilbridge.table.app import create_app
from hilbridge.table.seats import BridgeFactory, Table

pytestmark = pytest.mark.slow  # each battle runs the emulated console for a few hundred frames


@dataclasses.dataclass
class Battle:
    table: Table
    client: TestClient
    attacker: str
    defender: str
    other: str

    def url(self, player: str, path: str = "") -> str:
        return f"/t/{self.table.tokens[player]}{path}"

    def state(self, player: str) -> dict:
        response = self.client.get(self.url(player, "/state"))
        assert response.status_code == 200
        return response.json()

    def asked(self, player: str, until: Callable[[dict], bool], seconds: float = 60) -> dict:
        """`player`'s state once the bridge's part of it satisfies `until`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            seen = self.state(player)
            if seen["battle"] is not None and until(seen["battle"]["bridge"]):
                return seen
            time.sleep(0.05)
        raise AssertionError(f"the bridge never got there; {player} sees {self.state(player)['battle']}")

    def confirm(self, player: str, question: int, yes: bool):
        return self.client.post(self.url(player, "/confirm"), json={"question": question, "yes": yes})


def open_battle(tmp_path, bridge: BridgeFactory) -> Battle:
    game = conquest_at_battle()
    battle = game.state["battle"]
    table = Table(saved(game, tmp_path / "conquest.json"), bridge=bridge)
    attacker, defender = battle["attacker"], battle["defender"]
    other = next(p for p in ("ann", "bob", "cy") if p not in (attacker, defender))
    return Battle(table, TestClient(create_app(table)), attacker, defender, other)


def asking(kind: str) -> Callable[[dict], bool]:
    return lambda bridge: bridge["state"] == kind


def test_both_players_confirm_the_consoles_result_and_the_log_names_the_console(tmp_path):
    battle = open_battle(tmp_path, console_bridge("sim", None, None, False))
    seen = battle.asked(battle.attacker, asking("confirm"))
    bridge = seen["battle"]["bridge"]
    winner = bridge["result"]["winner"]
    assert winner in (battle.attacker, battle.defender) and winner in bridge["text"]
    assert bridge["messages"][0].startswith(f"Battle {battle.attacker} vs {battle.defender} on the console")
    assert "confirm the console's result" in seen["status"]

    onlooker = battle.state(battle.other)["battle"]["bridge"]
    assert onlooker.pop("seconds_left") > 0
    assert onlooker == {"state": "confirm", "waiting_for": sorted([battle.attacker, battle.defender])}
    refused = battle.confirm(battle.other, bridge["question"], True)
    assert refused.status_code == 400 and "answers for this battle" in refused.json()["error"]
    assert battle.confirm(battle.attacker, bridge["question"] + 1, True).status_code == 409

    first = battle.confirm(battle.attacker, bridge["question"], True)
    assert first.status_code == 200 and "waiting for the other player" in first.json()["did"][0]
    assert battle.state(battle.defender)["battle"]["bridge"]["waiting_for"] == [battle.defender]
    done = battle.confirm(battle.defender, bridge["question"], True)
    assert done.status_code == 200, done.text
    country = seen["battle"]["params"]["country"]
    said = f"Battle for {country}: {winner} wins. Result from console sim: ram record #1."
    assert said in done.json()["did"]
    assert battle.state(battle.other)["battle"] is None
    assert said in battle.state(battle.other)["log"]


def test_a_correction_becomes_a_manual_entry_by_the_battles_players(tmp_path):
    battle = open_battle(tmp_path, console_bridge("sim", None, None, False))
    bridge = battle.asked(battle.defender, asking("confirm"))["battle"]["bridge"]
    loser = next(p for p in (battle.attacker, battle.defender) if p != bridge["result"]["winner"])
    corrected = battle.confirm(battle.defender, bridge["question"], False)
    assert corrected.status_code == 200 and corrected.json()["did"][0].startswith("corrected")

    seen = battle.asked(battle.attacker, asking("manual"))
    assert seen["battle"]["bridge"]["text"] == "the players corrected the console's result"
    revision = seen["revision"]
    wrong = battle.client.post(
        battle.url(battle.attacker, "/battle"),
        json={"revision": revision, "result": {"winner": battle.other}},
    )
    assert wrong.status_code == 400 and "winner" in wrong.json()["error"]
    body = {"revision": revision, "result": {"winner": loser}}
    assert battle.client.post(battle.url(battle.other, "/battle"), json=body).status_code == 400
    entered = battle.client.post(battle.url(battle.attacker, "/battle"), json=body)
    assert entered.status_code == 200, entered.text
    done = enter(battle, battle.defender, loser)  # the same result, on the page that shows it
    assert done.status_code == 200, done.text
    assert any(
        line.endswith(
            f"{loser} wins. Result from manual entry by {battle.attacker}, confirmed by {battle.defender}: "
            "the players corrected the console's result."
        )
        for line in done.json()["did"]
    )


def enter(battle: Battle, player: str, winner: str):
    revision = battle.state(player)["revision"]
    return battle.client.post(
        battle.url(player, "/battle"), json={"revision": revision, "result": {"winner": winner}}
    )


def test_a_manual_entry_applies_only_once_the_other_battle_player_confirms_it(tmp_path):
    battle = open_battle(tmp_path, console_bridge("sim", None, None, False))
    bridge = battle.asked(battle.attacker, asking("confirm"))["battle"]["bridge"]
    winner = bridge["result"]["winner"]
    loser = next(p for p in (battle.attacker, battle.defender) if p != winner)
    battle.confirm(battle.attacker, bridge["question"], False)
    battle.asked(battle.attacker, asking("manual"))

    # The loser types a false result: alone it changes nothing.
    first = enter(battle, loser, loser)
    assert first.status_code == 200, first.text
    assert f"waiting for {winner} to confirm it" in first.json()["did"][0]
    asked = battle.state(winner)["battle"]["bridge"]
    assert asked["entry"] == {"result": {"winner": loser}, "entered_by": loser}
    assert asked["waiting_for"] == [winner]
    onlooker = battle.state(battle.other)["battle"]["bridge"]
    assert onlooker == {"state": "manual", "waiting_for": [winner]}  # not what was entered
    assert battle.table.pending_battle() is not None

    # The winner enters what the screen showed: shown back to the loser, still nothing applied.
    second = enter(battle, winner, winner)
    assert second.status_code == 200 and f"differs from {loser}'s" in second.json()["did"][0]
    seen = battle.state(loser)["battle"]["bridge"]
    assert seen["entry"] == {"result": {"winner": winner}, "entered_by": winner}
    assert seen["waiting_for"] == [loser] and battle.table.pending_battle() is not None
    assert battle.confirm(winner, seen["question"], True).status_code == 400  # not their own entry
    assert battle.confirm(loser, seen["question"] - 1, True).status_code == 409  # the older entry

    done = battle.confirm(loser, seen["question"], True)
    assert done.status_code == 200, done.text
    said = (
        f"{winner} wins. Result from manual entry by {winner}, confirmed by {loser}: "
        "the players corrected the console's result."
    )
    assert any(line.endswith(said) for line in done.json()["did"])
    assert battle.table.pending_battle() is None
    assert any(line.endswith(said) for line in battle.state(battle.other)["log"])


def test_an_unconfirmed_result_goes_to_manual_entry_after_the_timeout(tmp_path):
    game = conquest_at_battle()
    bridge = console_bridge("sim", None, None, False)
    table = Table(saved(game, tmp_path / "conquest.json"), bridge=bridge, confirm_timeout=4)
    revisions: list[str] = []
    table.listeners.append(revisions.append)
    attacker, defender = game.state["battle"]["attacker"], game.state["battle"]["defender"]
    battle = Battle(table, TestClient(create_app(table)), attacker, defender, "")
    seen = battle.asked(attacker, asking("confirm"))
    assert 0 < seen["battle"]["bridge"]["seconds_left"] <= 4
    assert "s left" in seen["status"]
    assert battle.confirm(attacker, seen["battle"]["bridge"]["question"], True).status_code == 200
    heard = len(revisions)

    seen = battle.asked(defender, asking("manual"), seconds=10)
    reason = seen["battle"]["bridge"]["text"]
    assert reason == f"the console's result was not confirmed within 4 s (waiting for {defender})"
    assert len(revisions) > heard  # the pages were told (the event stream sends the new revision)
    assert "enter or confirm the result" in seen["status"]
    assert table.pending_battle() is not None  # nothing applied
    stale = battle.confirm(defender, seen["battle"]["bridge"]["question"] - 1, True)
    assert stale.status_code == 409
    table.close()


def test_a_battle_that_never_ends_falls_back_to_manual_entry_with_the_reason(tmp_path):
    hurried = dataclasses.replace(profile_for(combat_image()), battle_frames=30)  # a battle takes ~100

    def bridge(ui, validate) -> ConsoleResolver:
        return ConsoleResolver(EmulatorConsole(combat_image()), hurried, ui, validate=validate)

    battle = open_battle(tmp_path, bridge)
    seen = battle.asked(battle.defender, asking("manual"))
    reason = seen["battle"]["bridge"]["text"]
    assert reason.startswith("the battle did not end within")
    assert "reason" not in battle.state(battle.other)["battle"]["bridge"]
    assert "text" not in battle.state(battle.other)["battle"]["bridge"]
    assert enter(battle, battle.defender, battle.defender).status_code == 200
    done = enter(battle, battle.attacker, battle.defender)
    assert done.status_code == 200, done.text
    said = f"Result from manual entry by {battle.defender}, confirmed by {battle.attacker}: {reason}."
    assert any(line.endswith(said) for line in done.json()["did"])


def test_nobody_can_undo_or_move_while_the_console_fights(tmp_path):
    battle = open_battle(tmp_path, console_bridge("sim", None, None, False))
    seen = battle.asked(battle.attacker, asking("confirm"))
    assert not seen["can_undo"] and seen["moves"] == []
    # the bridge's page updates can move the revision on between reading it and posting (409): post
    # again with the page's new revision until the request is judged on what it asks
    for _ in range(20):
        undo = battle.client.post(battle.url(battle.attacker, "/undo"), json={"revision": seen["revision"]})
        if undo.status_code != 409:
            break
        seen = battle.state(battle.attacker)
    assert undo.status_code == 400, undo.text
    battle.table.close()


class BrokenBridge:
    def resolve(self, request, rng):
        raise HilbridgeError("the profile's key script names 'F13', which is not a console key")


def test_a_bridge_that_fails_leaves_the_battle_to_be_typed_in_with_the_reason(tmp_path):
    battle = open_battle(tmp_path, lambda ui, validate: BrokenBridge())
    seen = battle.state(battle.attacker)
    deadline = time.monotonic() + 10
    while "bridge" in seen["battle"] and time.monotonic() < deadline:
        time.sleep(0.05)
        seen = battle.state(battle.attacker)
    assert "the console bridge failed: the profile's key script names 'F13'" in seen["status"]
    body = {"revision": seen["revision"], "result": {"winner": battle.defender}}
    done = battle.client.post(battle.url(battle.defender, "/battle"), json=body)
    assert done.status_code == 200, done.text
    assert battle.state(battle.other)["battle"] is None


@pytest.mark.mame
def test_a_battle_served_with_the_mame_console_is_confirmed_through_the_http_routes(tmp_path):
    require_tool("mame")
    battle = open_battle(tmp_path, console_bridge("mame", None, None, False))
    seen = battle.asked(battle.attacker, asking("confirm"), seconds=240)  # MAME boots for each battle
    bridge = seen["battle"]["bridge"]
    assert "(from the ram record)" in bridge["text"]
    assert battle.state(battle.other)["battle"]["bridge"]["state"] == "confirm"
    assert battle.confirm(battle.attacker, bridge["question"], True).status_code == 200
    done = battle.confirm(battle.defender, bridge["question"], True)
    assert done.status_code == 200, done.text
    said = f"{bridge['result']['winner']} wins. Result from console mame: ram record #1."
    assert any(line.endswith(said) for line in done.json()["did"])
    assert battle.table.pending_battle() is None
    assert any(line.endswith(said) for line in battle.state(battle.other)["log"])
