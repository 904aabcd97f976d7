"""Saved games at interesting positions for the web-table tests, built through the engine's API."""

from __future__ import annotations

import random
from pathlib import Path

from hilbridge.game import CHANCE, Action, Game, RandomResolver, get_ruleset

POWERS = {"ann": "USA", "bob": "CSA"}


def supremacy_game(seed: int = 283745012938475) -> Game:
    """ann (USA) and bob (CSA) after setup and salaries: the Stage 3 blind bid of cycle 1."""
    ruleset = get_ruleset("supremacy")
    game = Game(ruleset, ruleset.default_setup(list(POWERS)), seed)
    while game.state["phase"] == "choose":
        player = game.current_players()[0]
        game.apply(Action("choose", player, {"power": POWERS[player]}))
    while game.state["phase"] == "salaries":
        game.apply(Action("pay_salaries", game.current_players()[0]))
    assert game.state["phase"] == "bid"
    return game


def bid_round(game: Game, bids: dict[str, int]) -> None:
    for player, cubes in bids.items():
        game.apply(Action("bid", player, {"cubes": cubes}))
    game.advance(RandomResolver(game.ruleset))


def supremacy_at_attack_bid(seed: int = 283745012938475) -> Game:
    """The same game at the Stage 4 blind bid of cycle 2 (nobody played a stage in cycle 1)."""
    game = supremacy_game(seed)
    while not (game.state["stage"] == 4 and game.state["phase"] == "bid"):
        if game.state["phase"] == "bid":
            bid_round(game, {player: 0 for player in game.current_players()})
        elif game.state["phase"] == "salaries":
            game.apply(Action("pay_salaries", game.current_players()[0]))
        else:
            game.advance(RandomResolver(game.ruleset))
    return game


def conquest_at_battle(seed: int = 5) -> Game:
    """A Conquest game of ann, bob and cy played at random until a console battle waits."""
    ruleset = get_ruleset("conquest")
    game = Game(ruleset, ruleset.default_setup(["ann", "bob", "cy"]), seed)
    rng = random.Random(seed)
    while game.state["phase"] != "battle":
        assert game.ruleset.current_players(game.state) != (CHANCE,)
        moves = game.legal_actions(game.current_players()[0])
        attacks = [m for m in moves if m.kind == "attack"]
        game.apply(rng.choice(attacks or [m for m in moves if m.kind != "pass"] or moves))
    return game


def saved(game: Game, path: Path) -> Path:
    game.save(path)
    return path


def conquest_at_end_game_battle() -> Game:
    """A short Conquest game played at random (battles too) until an END GAME battle waits (the
    first seed whose game gets there: in some, the end game has nobody to fight)."""
    ruleset = get_ruleset("conquest")
    for seed in range(50):
        game = Game(ruleset, ruleset.default_setup(["ann", "bob", "cy"], {"max_rounds": 2}), seed)
        rng, resolver = random.Random(seed), RandomResolver(ruleset)
        while game.state["phase"] != "duel_battle" and not game.is_terminal():
            if game.ruleset.current_players(game.state) == (CHANCE,):
                game.step_chance(resolver)
                continue
            player = game.current_players()[0]
            game.apply(rng.choice(game.legal_actions(player)))
        if not game.is_terminal():
            return game
    raise AssertionError("no seed reached an END GAME battle")
