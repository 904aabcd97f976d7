"""The engine core, exercised through a tiny game that has every kind of node.

"Bid and roll": each round all players bid coins secretly (simultaneous); the single highest
bidder pays the bank, rolls a die for points (chance), draws a secret card (chance, seen only by
the drawer), then fights the next player in a battle decided by a combat resolver.
"""

from __future__ import annotations

import json
import random

import pytest

from hilbridge.errors import HilbridgeError
from hilbridge.game import (
    CHANCE,
    Action,
    ChanceNode,
    CombatRequest,
    DiceResolver,
    Game,
    IllegalAction,
    ManualResolver,
    RandomResolver,
    Ruleset,
    SaveFileError,
    event,
    register,
)
from hilbridge.game.conformance import (
    REDACTED,
    check_save_load_continue,
    check_undo_to_start,
    check_views_hide,
    play_random_moves,
    random_playout,
)

COINS = 10
ROUNDS = 3


class BidAndRoll(Ruleset):
    name = "bid-and-roll"

    def default_setup(self, players, options=None):
        return {"players": list(players), "options": dict(options or {})}

    def initial_state(self, setup, seed):
        players = setup["players"]
        return {
            "players": players,
            "coins": {p: COINS for p in players},
            "bank": 0,
            "points": {p: 0 for p in players},
            "hands": {p: [] for p in players},
            "round": 1,
            "phase": "bid",
            "leader": None,
            "battles": {p: 0 for p in players},
            "events": [],
        }

    def _copy(self, state):
        return json.loads(json.dumps(state))

    def current_players(self, state):
        return {
            "bid": tuple(state["players"]),
            "roll": (CHANCE,),
            "draw": (CHANCE,),
            "battle": (CHANCE,),
            "over": (),
        }[state["phase"]]

    def is_simultaneous(self, state):
        return state["phase"] == "bid"

    def legal_actions(self, state, player):
        if state["phase"] != "bid":
            return []
        return [Action("bid", player, {"coins": n}) for n in range(min(3, state["coins"][player]) + 1)]

    def apply_joint(self, state, moves):
        new = self._copy(state)
        bids = {p: move.params["coins"] for p, move in moves.items()}
        top = max(bids.values())
        leaders = [p for p, bid in bids.items() if bid == top]
        new["events"] = []
        if len(leaders) == 1 and top > 0:
            new["leader"] = leaders[0]
            new["coins"][leaders[0]] -= top
            new["bank"] += top
            new["phase"] = "roll"
        else:
            new["events"] = [event("no_winner")]
            self._next_round(new)
        return new

    def _next_round(self, new):
        new["round"] += 1
        new["leader"] = None
        new["phase"] = "over" if new["round"] > ROUNDS else "bid"

    def chance_node(self, state):
        if state["phase"] == "roll":
            return ChanceNode("die", tuple(Action("roll", CHANCE, {"value": v}) for v in range(1, 7)))
        if state["phase"] == "draw":
            return ChanceNode("card", tuple(Action("draw", CHANCE, {"card": c}) for c in "ABC"))
        if state["phase"] == "battle":
            players = state["players"]
            leader = state["leader"]
            other = players[(players.index(leader) + 1) % len(players)]
            return ChanceNode(
                "battle", combat=CombatRequest("duel", leader, other, {"dice": {leader: 1, other: 1}})
            )
        return None

    def random_combat_result(self, request, rng):
        return {"winner": rng.choice([request.attacker, request.defender])}

    def apply(self, state, action):
        new = self._copy(state)
        leader = state["leader"]
        if action.kind == "roll":
            new["points"][leader] += action.params["value"]
            new["events"] = [event("rolled", player=leader, value=action.params["value"])]
            new["phase"] = "draw"
        elif action.kind == "draw":
            new["hands"][leader].append(action.params["card"])
            new["events"] = [event("drew", visible_to=[leader], card=action.params["card"])]
            new["phase"] = "battle"
        elif action.kind == "combat_result":
            request = self.chance_node(state).combat
            result = action.params
            if "rolls" in result:
                winner = max(
                    (request.attacker, request.defender),
                    key=lambda p: (result["rolls"][p], p == request.defender),
                )
            else:
                winner = result.get("winner")
            if winner not in (request.attacker, request.defender):
                raise IllegalAction(f"battle winner must be {request.attacker} or {request.defender}")
            new["battles"][winner] += 1
            new["events"] = [event("battle", winner=winner)]
            self._next_round(new)
        else:
            raise IllegalAction(f"unknown action {action.kind}")
        return new

    def is_terminal(self, state):
        return state["phase"] == "over"

    def view(self, state, player):
        shown = self._copy(state)
        del shown["events"]
        shown["hands"] = {p: (cards if p == player else REDACTED) for p, cards in state["hands"].items()}
        return shown

    def check_invariants(self, before, action, after):
        assert sum(after["coins"].values()) + after["bank"] == COINS * len(after["players"])
        assert all(c >= 0 for c in after["coins"].values())


RULES = BidAndRoll()
register(RULES)
SETUP = RULES.default_setup(["ann", "bob", "cy"])


def secret_paths(state):
    return {p: [("hands", p)] for p in state["players"]}


def test_random_playouts_finish_with_invariants():
    for seed in range(200):
        result = random_playout(RULES, SETUP, seed)
        assert result.terminal


def test_simultaneous_commit_hides_then_reveals():
    game = Game(RULES, SETUP, seed=1)
    game.apply(Action("bid", "ann", {"coins": 3}))
    assert game.current_players() == ("bob", "cy")
    check_views_hide(game, secret_paths)
    assert all("action" not in item for item in game.events("bob"))
    assert game.describe_action(game.actions[-1], "bob") == "ann: committed a secret move"
    assert "coins=3" in game.describe_action(game.actions[-1], "ann")
    with pytest.raises(IllegalAction):
        game.apply(Action("bid", "ann", {"coins": 1}))
    game.apply(Action("bid", "bob", {"coins": 1}))
    game.apply(Action("bid", "cy", {"coins": 0}))
    revealed = [item for item in game.events("bob") if item["kind"] == "revealed"]
    assert revealed[0]["moves"]["ann"]["params"] == {"coins": 3}
    assert game.state["coins"] == {"ann": 7, "bob": 10, "cy": 10}
    assert game.current_players() == (CHANCE,)


def test_secret_draw_is_seen_only_by_the_drawer():
    game = Game(RULES, SETUP, seed=5)
    for player, coins in (("ann", 2), ("bob", 1), ("cy", 0)):
        game.apply(Action("bid", player, {"coins": coins}))
    game.step_chance()  # die
    drawn = game.step_chance()
    assert drawn.kind == "draw"
    assert game.view("ann")["hands"]["ann"] == [drawn.params["card"]]
    assert game.view("bob")["hands"]["ann"] == REDACTED
    assert not any(item["kind"] == "drew" for item in game.events("bob"))
    assert any(item["kind"] == "drew" for item in game.events("ann"))
    check_views_hide(game, secret_paths)


def test_chance_is_reproducible_from_seed_and_position():
    def run(seed):
        game = Game(RULES, SETUP, seed)
        for player, coins in (("ann", 2), ("bob", 1), ("cy", 0)):
            game.apply(Action("bid", player, {"coins": coins}))
        game.advance(RandomResolver(RULES))
        return game.actions

    assert run(3) == run(3)
    assert len({json.dumps([a.to_json() for a in run(s)]) for s in range(20)}) > 1


def test_players_may_only_undo_their_own_moves():
    game = Game(RULES, SETUP, seed=9)
    game.apply(Action("bid", "ann", {"coins": 2}))
    with pytest.raises(IllegalAction, match="only ann can take it back"):
        game.undo("bob")
    assert game.undo("ann") == [Action("bid", "ann", {"coins": 2})]
    assert game.undo("bob") == []


def test_undo_does_not_reroll():
    game = Game(RULES, SETUP, seed=9)
    for player, coins in (("ann", 2), ("bob", 1), ("cy", 0)):
        game.apply(Action("bid", player, {"coins": coins}))
    roll = game.step_chance()
    replay = Game(RULES, SETUP, seed=9)
    for action in game.actions[:-1]:
        replay.apply(action)
    assert replay.step_chance() == roll


def test_a_secret_move_cannot_be_taken_back_after_the_reveal():
    """Undoing the commit that revealed the bids would let its player re-bid knowing the others'."""
    game = Game(RULES, SETUP, seed=9)
    for player, coins in (("ann", 2), ("bob", 1), ("cy", 0)):
        game.apply(Action("bid", player, {"coins": coins}))
    game.step_chance()
    before = list(game.actions)
    with pytest.raises(IllegalAction, match="revealed"):
        game.undo("cy")
    with pytest.raises(IllegalAction, match="revealed"):
        game.undo()
    assert game.actions == before
    game = Game(RULES, SETUP, seed=9)
    game.apply(Action("bid", "ann", {"coins": 2}))
    assert game.undo("ann") == [Action("bid", "ann", {"coins": 2})]  # before the reveal: allowed


def test_save_file_is_the_game_masters_record_readable_only_by_its_owner(tmp_path):
    path = tmp_path / "game.json"
    path.write_text("old")
    path.chmod(0o644)
    Game(RULES, SETUP, seed=9).save(path)
    assert path.stat().st_mode & 0o777 == 0o600
    Game(RULES, SETUP, seed=9).save(tmp_path / "new.json")
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o600


def test_dice_and_manual_resolvers():
    request = CombatRequest("duel", "ann", "bob", {"dice": {"ann": 2, "bob": 3}})
    rolls = DiceResolver().resolve(request, random.Random(1))["rolls"]
    assert [len(rolls["ann"]), len(rolls["bob"])] == [2, 3]
    assert all(1 <= die <= 6 for die in rolls["ann"] + rolls["bob"])
    asked = []
    manual = ManualResolver(lambda req: asked.append(req) or {"winner": "bob"})
    assert manual.resolve(request, random.Random(1)) == {"winner": "bob"}
    assert asked == [request]


def test_bad_manual_battle_result_is_rejected():
    game = Game(RULES, SETUP, seed=2)
    for player, coins in (("ann", 2), ("bob", 1), ("cy", 0)):
        game.apply(Action("bid", player, {"coins": coins}))
    game.step_chance()
    game.step_chance()
    with pytest.raises(IllegalAction, match="winner must be"):
        game.step_chance(ManualResolver(lambda request: {"winner": "cy"}))
    game.step_chance(ManualResolver(lambda request: {"winner": "bob"}))
    assert game.state["battles"]["bob"] == 1


def test_illegal_and_out_of_turn_moves():
    game = Game(RULES, SETUP, seed=2)
    with pytest.raises(IllegalAction):
        game.apply(Action("bid", "ann", {"coins": 4}))
    with pytest.raises(IllegalAction):
        game.apply(Action("bid", "zed", {"coins": 1}))
    with pytest.raises(IllegalAction):
        game.step_chance()


@pytest.mark.parametrize("seed", range(10))
def test_save_load_continue_equals_never_saving(seed):
    check_save_load_continue(RULES, SETUP, seed, split=seed % 7 + 1, total=40)


@pytest.mark.parametrize("seed", range(10))
def test_undo_back_to_start(seed):
    assert check_undo_to_start(RULES, SETUP, seed, total=40) > 0


def test_views_hide_secrets_throughout_random_games():
    for seed in range(30):
        game = Game(RULES, SETUP, seed)
        while not game.is_terminal():
            play_random_moves(game, 1, policy_seed=seed)
            check_views_hide(game, secret_paths)


def _saved(tmp_path, steps=6):
    game = Game(RULES, SETUP, seed=4)
    play_random_moves(game, steps, policy_seed=4)
    path = tmp_path / "game.json"
    game.save(path)
    return game, path


def test_truncated_save_reports_line_and_column(tmp_path):
    _, path = _saved(tmp_path)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(SaveFileError, match="not valid JSON") as caught:
        Game.load(path)
    assert caught.value.location.line is not None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(version=99), "version 99 is not supported"),
        (lambda d: d.update(format="other"), "not a hilbridge game save"),
        (lambda d: d.update(ruleset_version=0), "rules version 0"),
        (lambda d: d.pop("actions"), "lacks actions"),
        (lambda d: d["snapshot"]["coins"].update(ann=99), "snapshot does not match"),
        (lambda d: d["actions"][0]["params"].update(coins=9), "action 1 does not replay"),
        (lambda d: d.update(ruleset="chess"), "unknown game"),
    ],
)
def test_corrupt_saves_give_clear_errors(tmp_path, change, message):
    _, path = _saved(tmp_path)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(HilbridgeError, match=message):
        Game.load(path)


def test_save_round_trip_keeps_pending_commits(tmp_path):
    game = Game(RULES, SETUP, seed=4)
    game.apply(Action("bid", "ann", {"coins": 2}))
    game.save(tmp_path / "g.json")
    loaded = Game.load(tmp_path / "g.json")
    assert loaded.commits == game.commits
    assert loaded.current_players() == ("bob", "cy")


def test_action_new_makes_the_same_frozen_action_as_the_constructor():
    made, built = Action.new("move", "ann", {"to": "x"}), Action("move", "ann", {"to": "x"})
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
    assert made.to_json() == built.to_json() and str(made) == str(built)
    with pytest.raises(AttributeError):
        made.kind = "pass"
