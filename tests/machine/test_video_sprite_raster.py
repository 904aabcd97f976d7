"""A sprite's raster is cached by shape alone and shifted into place (`placed_sprite`): placed at
any Y and X, it must be exactly the sprite's own mask drawn at that place (`sprite_layer` below,
row by row as the 8244 draws it), cut at the right edge and not wrapped onto the next line, both as
a bool raster and as bits."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from hilbridge.machine.video import SPRITE_X_LIMIT, VISIBLE_LINES, VISIBLE_WIDTH, placed_sprite


def sprite_shape(attribute: int, shape: bytes) -> np.ndarray:
    """A sprite's pixels relative to its top left corner (attribute b0-b2: shift and zoom)."""
    size = 4 if attribute & 4 else 2
    bits = np.unpackbits(np.frombuffer(shape, dtype=np.uint8)[:, None], axis=1, bitorder="little")
    rows = np.repeat(bits.astype(bool), size, axis=1)
    mask = np.zeros((8 * size, 8 * size + size // 2), dtype=bool)
    for row in range(8):
        # a half-unit shift right: 1 every row, 2 the even rows, 3 the odd rows
        shift = {0: 0, 1: 1, 2: (row & 1) ^ 1, 3: row & 1}[attribute & 3] * (size // 2)
        mask[row * size : row * size + size, shift : shift + 8 * size] = rows[row]
    return mask


def sprite_layer(key: bytes) -> np.ndarray | None:
    """The mask of one sprite's lines from its top on (360 wide), None when it draws nothing;
    key: its Y, X, attribute and 8 shape bytes."""
    y, x, attribute = key[0], key[1], key[2]
    shape = sprite_shape(attribute & 7, key[3:11])
    height = min(len(shape), max(VISIBLE_LINES - y, 0))
    left = (x + 5) * 2
    visible = np.zeros((height, VISIBLE_WIDTH), dtype=bool)
    if left < VISIBLE_WIDTH:
        width = min(shape.shape[1], VISIBLE_WIDTH - left)
        visible[:, left : left + width] = shape[:height, :width]
    return visible if visible.any() else None


@given(
    y=st.integers(0, VISIBLE_LINES - 1),
    x=st.integers(0, 40) | st.integers(150, SPRITE_X_LIMIT - 1),
    attribute=st.integers(0, 255),
    shape=st.binary(min_size=8, max_size=8),
)
@example(y=0, x=SPRITE_X_LIMIT - 1, attribute=0x05, shape=b"\xff" * 8)  # cut at the right edge
@example(y=VISIBLE_LINES - 1, x=0, attribute=0x04, shape=b"\x80" * 8)
def test_placed_sprite_equals_the_sprite_drawn_at_its_place(
    y: int, x: int, attribute: int, shape: bytes
) -> None:
    key = bytes([y, x, attribute]) + shape
    height = min(32 if attribute & 4 else 16, VISIBLE_LINES - y)
    expected = np.zeros((height, VISIBLE_WIDTH), dtype=bool)
    layer = sprite_layer(key)
    if layer is not None:
        expected[:] = layer
    origin, raster, bits = placed_sprite(key)
    first, end = y * VISIBLE_WIDTH, (y + height) * VISIBLE_WIDTH
    assert np.array_equal(raster[first - origin : end - origin], expected.reshape(-1))
    lit = np.flatnonzero(expected.reshape(-1)) + first
    positions = [origin + index for index in range(bits.bit_length()) if bits >> index & 1]
    assert [p for p in positions if p < VISIBLE_LINES * VISIBLE_WIDTH] == lit.tolist()
    assert all(p >= first for p in positions)
