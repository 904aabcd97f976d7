"""The shared layers make only what the lines they are asked for need (a picture that a mid-frame
write makes may draw one line): what those lines hold must equal the straightforward whole-area
drawing of `video_reference`, whatever lines were asked for before."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from video_reference import grid_layer as reference_grid_layer

from hilbridge.machine.video import VISIBLE_LINES, VISIBLE_WIDTH, GridLayer

# (first line, number of lines - 1): mostly short ranges, as mid-frame spans are
line_ranges = st.lists(
    st.tuples(st.integers(0, VISIBLE_LINES - 1), st.integers(0, 30) | st.just(VISIBLE_LINES)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(
    control=st.sampled_from([0x08, 0x48, 0x88, 0xC8]),
    registers=st.binary(min_size=0x30, max_size=0x30),
    ranges=line_ranges,
)
def test_grid_lines_drawn_a_few_at_a_time_equal_the_reference(
    control: int, registers: bytes, ranges: list[tuple[int, int]]
) -> None:
    """Each range is checked right after it is drawn: its bar rows are made only then."""
    key = bytes([control]) + registers
    reference = reference_grid_layer(key)[:, :VISIBLE_WIDTH]
    grid = GridLayer(key)
    for first, length in ranges:
        last = min(first + length, VISIBLE_LINES - 1)
        drawn = grid.drawn(first, last)
        assert (drawn[first : last + 1] == reference[first : last + 1]).all()
