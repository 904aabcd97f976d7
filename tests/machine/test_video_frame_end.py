"""The frame end draws a frame's spans into a new bitmap (`Renderer.end_frame`): it must equal the
spans drawn one by one, in order, over the previous frame (later spans over earlier ones, pixels
no span covers as they were), and the frame handed out before must not change."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.machine.video import VISIBLE_LINES, VISIBLE_WIDTH, Renderer, snapshot_of

AREA = VISIBLE_LINES * VISIBLE_WIDTH


def snapshot(control: int, colour: int) -> bytes:
    """A character and a sprite over a grid, or a plain background (control 0)."""
    registers = bytearray(256)
    registers[0x00:0x03] = bytes([60, 40, 0x08])  # sprite 0: Y, X, attribute
    registers[0x80:0x88] = b"\x3c\x7e\xff\xff\xff\xff\x7e\x3c"
    registers[0x10:0x14] = bytes([70, 50, 0x20, 0x0E])  # character 0
    registers[0xC0:0xC9] = b"\xff" * 9
    registers[0xE0:0xEA] = b"\x55" * 10
    registers[0xA0], registers[0xA3] = control, colour
    return snapshot_of(registers)


SNAPSHOTS = [snapshot(control, colour) for control in (0x28, 0x08, 0x00) for colour in (0x0E, 0x3A)]
spans = st.lists(
    st.tuples(
        st.integers(0, AREA - 1), st.integers(1, 30000), st.sampled_from(range(len(SNAPSHOTS))), st.booleans()
    ),
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(first=spans, second=spans)
def test_frame_end_equals_the_spans_drawn_in_order_over_the_frame_before(
    first: list[tuple[int, int, int, bool]], second: list[tuple[int, int, int, bool]]
) -> None:
    renderer = Renderer(hides_high_characters=True)
    expected = np.zeros(AREA, dtype=np.uint8)
    handed_out = []
    for frame in (first, second):
        for start, length, which, lum in frame:
            end = min(AREA, start + length)
            picture = renderer.picture(SNAPSHOTS[which])
            renderer.add_range(start, end, picture, lum)
            picture.draw(expected[start:end], start, end, lum)  # the plain path: one span at a time
        renderer.end_frame(True)
        assert np.array_equal(renderer.last_frame.reshape(-1), expected)
        handed_out.append((renderer.last_frame, renderer.last_frame.copy()))
    for frame, as_it_was in handed_out:
        assert np.array_equal(frame, as_it_was)
