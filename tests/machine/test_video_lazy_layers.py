"""The shared layers make only what the lines they are asked for need (a picture that a mid-frame
write makes may draw one line): what those lines hold must equal the straightforward whole-area
drawing of `video_reference`, whatever lines were asked for before."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from video_reference import grid_layer as reference_grid_layer
from video_reference import major_objects

from hilbridge.machine.video import (
    COLOURED_BASES,
    NTSC_HIDDEN_Y,
    VISIBLE_LINES,
    VISIBLE_WIDTH,
    BaseLayer,
    GridLayer,
    MajorSystem,
    major_cells,
)

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


def cells_object_by_object(key: bytes) -> list[tuple[int, int, int, int, int, int]]:
    """`major_cells` written out from `major_objects`: every object, hidden ones dropped."""
    cells = []
    for y, x, pointer9, colour, height_pointer in major_objects(key[:-1]):
        if (key[-1] and y < NTSC_HIDDEN_Y) or x >= VISIBLE_WIDTH or y >= VISIBLE_LINES:
            continue
        height = 7 - (((y >> 1) + height_pointer) & 7) or 8
        cells.append((y, min(y + 2 * height, VISIBLE_LINES), x, pointer9, height_pointer, colour))
    return cells


@settings(max_examples=300, deadline=None)
@given(
    registers=st.binary(min_size=0x70, max_size=0x70), hide_high=st.booleans(), on_screen=st.integers(0, 0xFF)
)
def test_major_cells_are_the_visible_major_objects_in_drawing_order(
    registers: bytes, hide_high: bool, on_screen: int
) -> None:
    registers = bytearray(registers)
    for index in range(0, 0x70, 4):  # Y and X mostly on screen, near the hidden and right edges too
        registers[index] %= on_screen + 1
        registers[index + 1] %= on_screen + 1
    key = bytes(registers) + bytes([hide_high])
    assert major_cells(key) == cells_object_by_object(key)


@settings(max_examples=200, deadline=None)
@given(
    grid=st.binary(min_size=0x30, max_size=0x30),
    characters=st.binary(min_size=0x70, max_size=0x70),
    requests=st.lists(
        st.tuples(
            st.sampled_from([0x07, 0x3F]) | st.integers(0, 255),
            st.booleans(),
            st.integers(0, VISIBLE_LINES - 1),
            st.integers(0, 2) | st.integers(0, 40),  # short ones: many paints of one colouring
        ),
        min_size=1,
        max_size=3 * COLOURED_BASES,
    ),
)
def test_coloured_lines_equal_a_fresh_painting_whatever_was_asked_before(
    grid: bytes, characters: bytes, requests: list[tuple[int, bool, int, int]]
) -> None:
    """A base layer keeps a few colourings (A3 and LUM), painted line by line (in blocks of lines
    once painted a few times) and dropped oldest first: every line asked for equals the whole
    colouring painted at once by a new base layer."""
    base = BaseLayer(GridLayer(b"\x08" + grid), MajorSystem(characters + b"\0"))
    # every whole colouring, each from a layer of its own, all kept: memory that `base` takes for a
    # colouring never held one of them (its lines left unpainted would look painted)
    wholes = {}
    for colour, lum, first, count in requests:
        last = min(first + count, VISIBLE_LINES - 1)
        lines = slice(first * VISIBLE_WIDTH, (last + 1) * VISIBLE_WIDTH)
        if (colour, lum) not in wholes:
            fresh = BaseLayer(GridLayer(b"\x08" + grid), MajorSystem(characters + b"\0"))
            wholes[colour, lum] = fresh.coloured(colour, lum, 0, VISIBLE_LINES - 1)
        # freed just before: the memory a new colouring takes is likely this (no palette index), so
        # a line marked painted but never painted shows
        poison = np.full((VISIBLE_LINES, VISIBLE_WIDTH), 0xEE, dtype=np.uint8)
        del poison
        assert (base.coloured(colour, lum, first, last)[lines] == wholes[colour, lum][lines]).all()
