"""Random Supremacy games: invariants, save/load, undo and hidden bids (the engine's conformance checks)."""

from __future__ import annotations

import copy
import random

import pytest
from conftest import quick_few

from hilbridge.game import CHANCE, Action, Game, get_ruleset
from hilbridge.game.combat import RandomResolver
from hilbridge.game.conformance import (
    check_json_state,
    check_save_load_continue,
    check_undo_to_start,
    check_views_hide,
    play_random_moves,
    random_playout,
)
from hilbridge.game.supremacy import Supremacy
from hilbridge.game.supremacy.base import COPY_DEPTH, _clone

R = get_ruleset("supremacy")
NAMES = ["ann", "bob", "cid", "dee", "eve", "fay"]


def setup(players: int, turn_cap: int = 2) -> dict:
    return R.default_setup(NAMES[:players], {"turn_cap": turn_cap})


def test_registered_under_its_name():
    assert isinstance(R, Supremacy) and R.name == "supremacy"


PLAYOUTS, PLAYOUT_CHUNKS = 2000, 8


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(PLAYOUT_CHUNKS))
def test_2000_random_playouts_finish_with_invariants_holding(chunk):
    """Random legal moves and random dice; check_invariants runs after every move. The seeds are
    split into chunks (each 5-10 s) so that xdist workers share them."""
    seeds = range(chunk, PLAYOUTS, PLAYOUT_CHUNKS)
    for seed in seeds:
        result = random_playout(R, setup(2 + seed % 5), seed)
        assert result.terminal, f"seed {seed} neither finished nor reached the turn cap"
    assert len(seeds) == PLAYOUTS // PLAYOUT_CHUNKS


@pytest.mark.slow
def test_longer_random_games_reach_battles_and_every_stage():
    kinds: set[str] = set()
    for seed in range(12):
        game = Game(R, setup(2 + seed % 3, turn_cap=6), seed)
        play_random_moves(game, 5000, policy_seed=seed)
        assert game.is_terminal()
        check_json_state(game.state)
        kinds.update(e["kind"] for e in game.events(everything=True))
    assert {"battle", "sell", "buy", "trade", "move", "build", "flip", "production", "borrow"} <= kinds


@pytest.mark.parametrize("seed", quick_few([1, 2, 3], [1]))
def test_save_load_continue_equals_never_saving(seed):
    check_save_load_continue(R, setup(3, turn_cap=3), seed, split=120, total=300)


@pytest.mark.parametrize("seed", quick_few([4, 5], [4]))
def test_undo_back_to_the_start_reproduces_every_state(seed):
    assert check_undo_to_start(R, setup(3, turn_cap=3), seed, total=250) > 50


@pytest.mark.slow
def test_bids_never_visible_to_others_during_random_games():
    game = Game(R, setup(4, turn_cap=3), 9)
    for _ in range(400):
        play_random_moves(game, 1, policy_seed=9)
        check_views_hide(game, lambda state: {})
        for player in game.setup["players"]:
            for other, move in game.commits.items():
                if other != player:
                    assert move.to_json() not in [e.get("action") for e in game.events(player)]
        if game.is_terminal():
            break


@pytest.mark.slow
def test_apply_never_changes_the_state_it_was_given():
    """`_clone` shares what moves never change in place (COPY_DEPTH); this catches a wrong entry."""
    resolver = RandomResolver(R)
    for seed in range(15):
        rng = random.Random(seed)
        state = R.initial_state(setup(2 + seed % 4, turn_cap=4), seed)
        while not R.is_terminal(state):
            before = copy.deepcopy(state)
            players = R.current_players(state)
            if players == (CHANCE,):
                node = R.chance_node(state)
                move = (
                    Action("combat_result", CHANCE, resolver.resolve(node.combat, rng))
                    if node.combat
                    else node.outcomes[rng.randrange(len(node.outcomes))]
                )
                after = R.apply(state, move)
            elif R.is_simultaneous(state):
                after = R.apply_joint(state, {p: rng.choice(R.legal_actions(state, p)) for p in players})
            else:
                after = R.apply(state, rng.choice(R.legal_actions(state, players[0])))
            assert state == before, "a move changed the previous state"
            state = after


def _mutable_parts(value: object) -> list[object]:
    """Every dict and list inside `value`, itself included."""
    if isinstance(value, dict):
        return [value, *(part for inner in value.values() for part in _mutable_parts(inner))]
    if isinstance(value, list):
        return [value, *(part for inner in value for part in _mutable_parts(inner))]
    return []


def test_clone_equals_a_deep_copy_and_shares_only_the_keys_it_names():
    """`_clone` (share, shallow copies per COPY_DEPTH, one marshal round trip for the rest) against the
    plain path, copy.deepcopy: the same keys in the same order and values, new events, and no dict or
    list held in common with the state outside the keys COPY_DEPTH shares; on states where every
    deep-copied key has held a value."""
    held: set[str] = set()
    for seed in range(2):
        rng = random.Random(seed)
        state = R.initial_state(setup(3 + seed, turn_cap=3), seed)
        while not R.is_terminal(state):
            clone = _clone(state)
            assert list(clone) == list(state)
            assert clone == {**copy.deepcopy(state), "events": []}
            for key in state:
                if COPY_DEPTH.get(key) != "share":
                    ours = {id(part) for part in _mutable_parts(state[key])}
                    assert not ours & {id(part) for part in _mutable_parts(clone[key])}, key
            held.update(key for key, value in state.items() if key not in COPY_DEPTH and value)
            state = random_playout_step(state, rng)
    assert held >= {"dps", "offer", "battle", "steps", "search", "events"}, held


def random_playout_step(state: dict, rng: random.Random) -> dict:
    """The state after one random move (chance by RandomResolver), as random_playout makes it."""
    players = R.current_players(state)
    if players == (CHANCE,):
        node = R.chance_node(state)
        if node.combat:
            result = RandomResolver(R).resolve(node.combat, rng)
            return R.apply(state, Action("combat_result", CHANCE, result))
        return R.apply(state, node.outcomes[rng.randrange(len(node.outcomes))])
    if R.is_simultaneous(state):
        return R.apply_joint(state, {p: rng.choice(R.legal_actions(state, p)) for p in players})
    return R.apply(state, rng.choice(R.legal_actions(state, players[0])))
