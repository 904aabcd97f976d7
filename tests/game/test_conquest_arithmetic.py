"""Properties of the POWER BASE RECORD arithmetic (rules 20.C, 21.C, 21.G; COTW-A1, COTW-A3)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hilbridge.game.conquest.rules import (
    chips_to_record_halves,
    energy_units,
    format_record,
    leftover_to_record_halves,
    round_to_nearest_500,
)

amounts = st.integers(min_value=0, max_value=10_000_000)
modes = st.sampled_from(["up", "down", "even"])


@given(amounts, modes)
def test_rounding_lands_on_the_nearest_multiple_of_500(amount, mode):
    rounded = round_to_nearest_500(amount, mode)
    assert rounded % 500 == 0
    assert abs(rounded - amount) <= 250
    if abs(rounded - amount) == 250:  # an exact half: COTW-A3
        expected = {"up": rounded > amount, "down": rounded < amount, "even": rounded % 1000 == 0}
        assert expected[mode]


@given(amounts, amounts, modes)
def test_rounding_is_monotonic(first, second, mode):
    low, high = sorted((first, second))
    assert round_to_nearest_500(low, mode) <= round_to_nearest_500(high, mode)


@given(amounts, modes)
def test_chips_convert_half_a_space_per_500(amount, mode):
    assert chips_to_record_halves(amount, mode) == round_to_nearest_500(amount, mode) // 500
    assert leftover_to_record_halves(amount, 1000, mode) == chips_to_record_halves(amount, mode)
    assert leftover_to_record_halves(amount, 100, mode) == 10 * chips_to_record_halves(amount, mode)


@given(st.integers(min_value=0, max_value=10_000))
def test_energy_entered_is_the_record_times_100(halves):
    assert energy_units(halves) * 2 == halves * 100
    # A record converted to energy and straight back (COTW-A1, symmetric option) is unchanged.
    assert leftover_to_record_halves(energy_units(halves), 100, "up") == halves - halves % 10 + (
        10 if halves % 10 >= 5 else 0
    )


def test_records_print_in_half_spaces():
    assert [format_record(h) for h in (0, 1, 110, 111)] == ["0", "0½", "55", "55½"]
