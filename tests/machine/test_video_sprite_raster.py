"""A sprite's raster is cached by shape alone and shifted into place (`placed_sprite`): placed at
any Y and X, it must be exactly the sprite's own mask drawn at that place (`sprite_layer`), cut at
the right edge and not wrapped onto the next line, both as a bool raster and as bits."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from hilbridge.machine.video import SPRITE_X_LIMIT, VISIBLE_LINES, VISIBLE_WIDTH, placed_sprite, sprite_layer


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
