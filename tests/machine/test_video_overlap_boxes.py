"""`overlap_boxes` (pairs of major cells compared in x order, stopping 16 pixels right of each
cell) covers exactly the pixels that two cells or more cover, counted cell by cell."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from hilbridge.machine.video import VISIBLE_LINES, VISIBLE_WIDTH, overlap_boxes

# x crowded near both edges as well as anywhere, so that cells meet often
cell_x = st.one_of(st.integers(0, 40), st.integers(330, VISIBLE_WIDTH - 1), st.integers(0, VISIBLE_WIDTH - 1))
cell = st.tuples(st.integers(0, VISIBLE_LINES - 1), st.integers(1, 16), cell_x).map(
    lambda c: (c[0], min(c[0] + c[1], VISIBLE_LINES), c[2], 0, 0, 8)
)


@given(cells=st.lists(cell, max_size=28))
@example(cells=[(10, 20, 100, 0, 0, 8), (12, 14, 115, 0, 0, 8), (12, 14, 116, 0, 0, 8)])
@example(cells=[(5, 9, 350, 0, 0, 8), (5, 9, 340, 0, 0, 8), (5, 9, 340, 0, 0, 8)])
def test_overlap_boxes_cover_the_pixels_of_two_cells_or_more(cells: list[tuple[int, ...]]) -> None:
    covers = np.zeros((VISIBLE_LINES, VISIBLE_WIDTH + 16), dtype=int)
    for y, bottom, x, *_rest in cells:
        covers[y:bottom, x : x + 16] += 1
    expected = covers[:, :VISIBLE_WIDTH] >= 2
    found = np.zeros((VISIBLE_LINES, VISIBLE_WIDTH), dtype=bool)
    for top, bottom, left, right in overlap_boxes(cells):
        found[top:bottom, left:right] = True
    assert np.array_equal(found, expected)
