"""The legal-move fast paths of Supremacy against the plain paths they shortcut."""

from __future__ import annotations

import copy
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.game import CHANCE, Action, State, get_ruleset
from hilbridge.game.combat import RandomResolver
from hilbridge.game.supremacy import Supremacy, rules

R = get_ruleset("supremacy")
assert isinstance(R, Supremacy)
NAMES = ["ann", "bob", "cid", "dee", "eve", "fay"]
ZONES = sorted(R.board.zones)


def played_state(seed: int, steps: int) -> State:
    """The state after up to `steps` random moves of a random game (random chance too)."""
    rng = random.Random(seed)
    state = R.initial_state(R.default_setup(NAMES[: 2 + seed % 5], {"turn_cap": 3}), seed)
    for _ in range(steps):
        if R.is_terminal(state):
            break
        players = R.current_players(state)
        if players == (CHANCE,):
            node = R.chance_node(state)
            assert node is not None
            if node.combat is not None:
                move = Action("combat_result", CHANCE, RandomResolver(R).resolve(node.combat, rng))
            else:
                move = node.outcomes[rng.randrange(len(node.outcomes))]
            state = R.apply(state, move)
        elif R.is_simultaneous(state):
            state = R.apply_joint(state, {p: rng.choice(R.legal_actions(state, p)) for p in players})
        else:
            state = R.apply(state, rng.choice(R.legal_actions(state, players[0])))
    return state


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    steps=st.integers(0, 400),
    grain=st.integers(0, 12),
    oil=st.integers(0, 12),
    vacant=st.booleans(),
    clouds=st.lists(st.sampled_from(ZONES), max_size=4, unique=True),
    targets=st.none() | st.lists(st.sampled_from(ZONES), max_size=12, unique=True),
)
def test_move_options_are_the_candidates_move_problem_accepts(
    seed, steps, grain, oil, vacant, clouds, targets
):
    """`_move_options` skips candidates early; on varied states (own grain and oil, the Militia Rule
    option and mushroom clouds changed at random) it must list exactly the plain filter's moves."""
    state = copy.deepcopy(played_state(seed, steps))
    state["options"] = {**state["options"], "move_into_vacant": vacant}
    state["clouds"] = clouds
    kinds = ["move", "reinforce"]
    if isinstance(state.get("battle"), dict) and "occupy" in state["battle"]:
        kinds.append("occupy")
    for player in state["players"]:
        state["supplies"][player]["grain"] = grain
        state["supplies"][player]["oil"] = oil
        for kind in kinds:
            plain = [
                act
                for act in R._move_candidates(state, player, targets, kind)
                if R._move_problem(state, act) is None
            ]
            assert R._move_options(state, player, targets, kind) == plain


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    steps=st.integers(0, 400),
    cash_steps=st.integers(-3, 3),
    short=st.lists(st.sampled_from(sorted(rules.SET_OF_SUPPLIES)), max_size=2, unique=True),
)
def test_build_options_are_the_candidates_build_problem_accepts(seed, steps, cash_steps, short):
    """`_build_options` gives up early on a player who cannot pay for a batch; with cash and the
    supplies a batch needs changed at random (cash up to $150M either side of a batch's cost, in $50M
    steps) it must list exactly the plain filter's builds."""
    state = copy.deepcopy(played_state(seed, steps))
    cash = state["options"]["batch_cost"] + 50 * cash_steps
    state["build_step"] = 0
    for player in state["players"]:
        state["cash"][player] = cash
        for item in rules.SET_OF_SUPPLIES:
            state["supplies"][player][item] = 0 if item in short else 1 + seed % 3
        plain = [act for act in R._build_candidates(state, player) if R._build_problem(state, act) is None]
        assert R._build_options(state, player) == plain
