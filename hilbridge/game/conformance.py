"""Checks every ruleset must pass, shared by the test suites of all games and by the benchmark.

Modelled on OpenSpiel's generic tests: random simulation (with the ruleset's invariants checked
after every move), save → load → continue equals never saving, undo back to the start reproduces
every earlier state, and no view or event log shows a player another player's secret. Failures are
`AssertionError`s naming the step, so pytest shows them directly.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hilbridge.game.combat import RandomResolver
from hilbridge.game.core import CHANCE, Action, IllegalAction, Ruleset, State, event_visible
from hilbridge.game.session import Game, chance_rng

REDACTED = "hidden"
"""What a view shows in place of a value the viewer may not see."""


@dataclass(frozen=True, slots=True)
class PlayoutResult:
    state: State
    steps: int
    terminal: bool


def random_playout(
    ruleset: Ruleset,
    setup: Mapping[str, Any],
    seed: int,
    max_steps: int = 10_000,
    check: bool = True,
) -> PlayoutResult:
    """Play random legal moves and random battle results straight on the ruleset (fast path).

    With `check`, `Ruleset.check_invariants` runs after every transition and every move is
    verified to be among the legal actions.
    """
    rng = random.Random(seed)
    resolver = RandomResolver(ruleset)
    state = ruleset.initial_state(setup, seed)
    steps = 0
    while steps < max_steps and not ruleset.is_terminal(state):
        players = ruleset.current_players(state)
        action: Action | None
        if players == (CHANCE,):
            node = ruleset.chance_node(state)
            assert node is not None, f"step {steps}: chance to move but no chance node"
            if node.combat is not None:
                action = Action("combat_result", CHANCE, resolver.resolve(node.combat, rng))
            else:
                action = node.outcomes[rng.randrange(len(node.outcomes))]
            after = ruleset.apply(state, action)
        elif ruleset.is_simultaneous(state):
            moves = {}
            for player in players:
                options = ruleset.legal_actions(state, player)
                assert options, f"step {steps}: {player} must move but has no legal action"
                moves[player] = options[rng.randrange(len(options))]
            action = None
            after = ruleset.apply_joint(state, moves)
        else:
            assert players, f"step {steps}: nobody to move in a non-terminal state"
            options = ruleset.legal_actions(state, players[0])
            assert options, f"step {steps}: {players[0]} must move but has no legal action"
            action = options[rng.randrange(len(options))]
            after = ruleset.apply(state, action)
        if check:
            ruleset.check_invariants(state, action, after)
        state = after
        steps += 1
    return PlayoutResult(state, steps, ruleset.is_terminal(state))


def play_random_moves(game: Game, steps: int, policy_seed: int) -> None:
    """Advance a `Game` by up to `steps` moves chosen at random (chance through RandomResolver).

    The choice at each step depends only on `policy_seed` and the log length, so two games at
    the same position choose the same move.
    """
    resolver = RandomResolver(game.ruleset)
    for _ in range(steps):
        if game.is_terminal():
            return
        if game.ruleset.current_players(game.state) == (CHANCE,):
            game.step_chance(resolver)
            continue
        rng = chance_rng(policy_seed, len(game.entries))
        player = game.current_players()[0]
        options = game.legal_actions(player)
        game.apply(options[rng.randrange(len(options))])


def check_json_state(state: State) -> None:
    """States must survive JSON unchanged (no tuples, sets or non-string keys)."""
    assert json.loads(json.dumps(state)) == state, "state is not plain JSON"


def check_save_load_continue(
    ruleset: Ruleset, setup: Mapping[str, Any], seed: int, split: int, total: int
) -> None:
    """Saving after `split` moves, loading and playing on equals playing `total` moves straight."""
    straight = Game(ruleset, setup, seed)
    play_random_moves(straight, total, policy_seed=seed)
    resumed = Game(ruleset, setup, seed)
    play_random_moves(resumed, split, policy_seed=seed)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "game.json"
        resumed.save(path)
        loaded = Game.load(path)
    assert loaded.state == resumed.state, "loading changed the state"
    play_random_moves(loaded, total - split, policy_seed=seed)
    assert loaded.actions == straight.actions, "the game continued differently after loading"
    assert loaded.state == straight.state
    assert loaded.events(everything=True) == straight.events(everything=True)


def check_undo_to_start(ruleset: Ruleset, setup: Mapping[str, Any], seed: int, total: int) -> int:
    """Undo back to the start passes through every earlier state; returns the number of undos.

    Undo refuses to take back a move that revealed secret moves; there the check goes on from a
    replay that stops just before that move (as if the game master had never let it be made).
    """
    game = Game(ruleset, setup, seed)
    play_random_moves(game, total, policy_seed=seed)
    replay = Game(ruleset, setup, seed)
    seen = {0: replay.state}
    for action in game.actions:
        replay.apply(action)
        seen[len(replay.entries)] = replay.state
    undos = 0
    while game.entries:
        try:
            game.undo()
        except IllegalAction:
            index = max(i for i, entry in enumerate(game.entries) if entry.action.player != CHANCE)
            assert any(item["kind"] == "revealed" for item in game.entries[index].events), (
                "undo refused a move that revealed nothing"
            )
            game = Game(ruleset, setup, seed)
            for action in replay.actions[:index]:
                game.apply(action)
            continue
        undos += 1
        assert game.state == seen[len(game.entries)], f"undo to step {len(game.entries)} differs"
        assert game.current_players() != (CHANCE,), "undo stopped where chance, not a player, moves"
    assert game.state == game.ruleset.initial_state(setup, seed)
    return undos


def _lookup(data: Any, path: Sequence[Any]) -> Any:
    for key in path:
        found_in_dict = isinstance(data, dict) and key in data
        found_in_list = isinstance(data, list) and isinstance(key, int) and 0 <= key < len(data)
        if not (found_in_dict or found_in_list):
            return None
        data = data[key]
    return data


def check_views_hide(
    game: Game,
    secret_paths: Callable[[State], Mapping[str, Iterable[Sequence[Any]]]],
) -> None:
    """No player (nor a spectator) sees another's secrets, in the view or in the event log.

    `secret_paths(state)` maps each player to the JSON paths in the full state that only that
    player may see; in anyone else's view such a path must be absent, None or `REDACTED`.
    """
    state = game.state
    players = [*game.setup["players"], None]
    for owner, paths in secret_paths(state).items():
        for path in paths:
            for viewer in players:
                if viewer == owner:
                    continue
                value = _lookup(game.ruleset.view(state, viewer), path)
                assert value in (None, REDACTED), f"{viewer} sees {owner}'s secret at {list(path)}: {value!r}"
    for viewer in players:
        for item in game.events(viewer):
            assert event_visible(item, viewer), f"{viewer} got an event meant for {item['visible_to']}"
        pending = {player: move.to_json() for player, move in game.commits.items() if player != viewer}
        for item in game.events(viewer):
            assert item.get("action") not in pending.values(), f"{viewer} sees an unrevealed commit"
