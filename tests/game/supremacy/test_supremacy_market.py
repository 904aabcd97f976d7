"""Properties of the pure market and dice functions (S-3.C, S-7.C, S-4.C.conv.C/D, S-4.C.strat.D)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hilbridge.game.supremacy import rules
from hilbridge.game.supremacy.ruleset import OPTIONS

SCALE = OPTIONS["market_scale"]["value"]
steps = st.integers(0, len(SCALE) - 1)
units = st.integers(0, 30)
pricing = st.sampled_from(["pre_sale", "per_unit"])


def test_market_scale_runs_from_bull_pen_to_bear_pit_and_starts_at_500():
    assert SCALE[0] == 1 and SCALE[-1] == 1000 and sorted(SCALE) == SCALE
    assert SCALE[OPTIONS["market_start_step"]["value"]] == 500


@given(steps, units, pricing)
def test_selling_never_leaves_the_scale_and_pays_at_most_the_pre_sale_price(step, n, how):
    proceeds, new_step = rules.sell_to_market(SCALE, step, n, how)
    assert new_step == max(0, step - n)
    assert SCALE[new_step] * n <= proceeds <= SCALE[step] * n


@given(steps, units, pricing)
def test_buying_never_leaves_the_scale_and_costs_at_least_the_pre_purchase_price(step, n, how):
    cost, new_step = rules.buy_from_market(SCALE, step, n, how)
    assert new_step == min(len(SCALE) - 1, step + n)
    assert SCALE[step] * n <= cost <= SCALE[new_step] * n


@given(st.lists(st.integers(1, 6), max_size=5))
def test_three_points_per_loss(rolls):
    assert rules.kills(rolls) * 3 <= sum(rolls) < rules.kills(rolls) * 3 + 3


@given(st.integers(0, 9), st.integers(0, 9), st.integers(0, 3), st.integers(0, 3), st.booleans())
def test_dice_counts_are_one_to_three_for_the_attacker_one_to_four_for_the_defender(af, df, al, dl, paid):
    attacker, defender = rules.conventional_dice(af, df, al, dl, paid)
    assert 1 <= attacker <= 3 and 1 <= defender <= 4
    assert attacker + defender == (2 if paid else 1) + 1 + (af != df) + (al != dl)


@given(st.lists(st.integers(1, 6), max_size=6))
def test_champions_hit_less_often_than_the_defender(rolls):
    assert rules.screen_hits(rolls, champion=True) <= rules.screen_hits(rolls, champion=False)
    assert rules.screen_hits(rolls, champion=False) == sum(1 for r in rolls if r != 6)
