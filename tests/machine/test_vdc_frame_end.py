"""What `Vdc._set_frame_end` works out once a frame (the frame end's cycle, line 0's pixel and the
scanline-0 timer's cycle) must follow the frame end wherever it moves: a chip loaded from another's
state in the middle of any frame goes on drawing and placing accesses exactly as that one does."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from hilbridge.machine.timing import NTSC, PAL, Region
from hilbridge.machine.vdc import Vdc

# background colour changes (each redraws up to the beam) and sprite 0 moves, spread over frames
writes = st.lists(
    st.tuples(st.sampled_from([0xA3, 0x00, 0x01, 0xA0]), st.integers(0, 255), st.integers(50, 2500)),
    min_size=1,
    max_size=40,
)


def frame_end_fields(vdc: Vdc) -> tuple[int, int, int, int]:
    return vdc._frame_end, vdc._frame_end_cycle, vdc._line0, vdc._line0_timer


@settings(max_examples=40, deadline=None)
@given(region=st.sampled_from([NTSC, PAL]), before=writes, after=writes)
def test_a_loaded_chip_draws_as_the_one_it_was_loaded_from(
    region: Region, before: list[tuple[int, int, int]], after: list[tuple[int, int, int]]
) -> None:
    original = Vdc(region)
    original.write(0xA0, 0x28, 5)
    cycle = 10
    for address, value, gap in before:
        cycle += gap
        original.write(address, value | (0x28 if address == 0xA0 else 0), cycle)
    loaded = Vdc(region)
    loaded.load_state(original.state())
    assert frame_end_fields(loaded) == frame_end_fields(original)
    for address, value, gap in after:
        cycle += gap
        for vdc in (original, loaded):
            vdc.write(address, value | (0x28 if address == 0xA0 else 0), cycle)
        assert frame_end_fields(loaded) == frame_end_fields(original)
    for vdc in (original, loaded):
        vdc.run_to(vdc.frame_end_cycle(vdc.frames_completed) + 1)
    assert (loaded.frame() == original.frame()).all()
    assert loaded.state() == original.state()
