"""A line that the last update of a frame left half drawn is finished from where it stopped, with
the registers of the frame end: MAME 0.251's frames of fixtures/carts/wait_loops/wait_timer, whose
frame update turns the display on mid-line (frame 55 NTSC; 10, 12, 17, 21, 47 and 58 PAL)."""

from __future__ import annotations

import numpy as np
import pytest

from hilbridge.machine.timing import NTSC, PAL
from hilbridge.machine.vdc import Vdc
from hilbridge.machine.video import background_colour


def cycle_at(vdc: Vdc, line: int, hpos: int) -> int:
    """The first cycle whose access the beam places at or after (line, hpos) of frame 1."""
    cycle = vdc.frame_end_cycle(0)
    while vdc.position(cycle)[0] >= 243:  # the vertical blank before frame 1's line 0
        cycle += 1
    while vdc.position(cycle) < (line, hpos):
        cycle += 1
    return cycle


@pytest.mark.parametrize("region", [NTSC, PAL])
@pytest.mark.parametrize("hpos", [1, 200, 359, 366])
def test_the_frame_end_finishes_a_half_drawn_line_from_where_it_stopped(region, hpos) -> None:
    vdc = Vdc(region)
    vdc.write(0xA3, 0x08, 10)  # background colour 1 from the start
    cycle = cycle_at(vdc, 100, hpos)
    vdc.write(0xA3, 0x10, cycle)  # colour 2 from here: MAME draws up to the beam first
    stopped = vdc.position(cycle)[1]
    vdc.run_to(vdc.frame_end_cycle(1))
    line = vdc.frame()[100]
    first, second = background_colour(0x08), background_colour(0x10)
    drawn = min(stopped, 360)
    assert np.all(line[:drawn] == first) and np.all(line[drawn:] == second)
    assert np.all(vdc.frame()[99] == first) and np.all(vdc.frame()[101] == second)
