"""`Vdc.position` places a cycle with `_beam_pixel`'s certain case inlined and the last line it
found kept; it must give what the plain computation, `raster.position_of(_beam_pixel(cycle))`,
gives at every cycle: in order and out of order, across lines and frames, and after A1 reads that
move the slice start an access's time depends on."""

from __future__ import annotations

import random

import pytest

from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import Vdc

STATUS = 0xA1


def plain_position(vdc: Vdc, cycle: int) -> tuple[int, int]:
    return vdc.raster.position_of(vdc._beam_pixel(cycle))


def uncertain(vdc: Vdc, cycle: int) -> bool:
    """Whether `_beam_pixel` must look up the slice start at `cycle` (its slow case)."""
    least, most = vdc._beam_drift
    time = cycle * vdc._cycle_as
    return (time + least) // vdc._pixel_as != (time + most) // vdc._pixel_as


@pytest.mark.parametrize("region", sorted(REGIONS))
def test_every_cycle_of_three_frames_in_order(region: str) -> None:
    vdc = Vdc(REGIONS[region], draw=False)
    cycles = range(0, vdc.frame_end_cycle(2) + 50)
    slow = 0
    for cycle in cycles:
        assert vdc.position(cycle) == plain_position(vdc, cycle), cycle
        slow += uncertain(vdc, cycle)
    assert slow > 0  # the slice-start lookup was compared too


@pytest.mark.parametrize("region", sorted(REGIONS))
def test_random_cycles_with_status_reads_between(region: str) -> None:
    rng = random.Random(f"position {region}")
    vdc = Vdc(REGIONS[region], draw=False)
    cycle = 0
    slow = 0
    for _ in range(20_000):
        cycle += rng.randrange(1, 40)
        if rng.random() < 0.2:
            vdc.read(STATUS, cycle)  # the next slice starts at this read's end
        for asked in (cycle, cycle + rng.randrange(0, 30), max(0, cycle - rng.randrange(0, 5000))):
            assert vdc.position(asked) == plain_position(vdc, asked), asked
            slow += uncertain(vdc, asked)
        if rng.random() < 0.001:
            cycle += rng.randrange(0, 10**6)  # far ahead: other frames
    assert slow > 0


@pytest.mark.parametrize("region", sorted(REGIONS))
def test_after_reset_and_load_state(region: str) -> None:
    vdc = Vdc(REGIONS[region], draw=False)
    for cycle in range(0, 3000, 7):
        vdc.read(STATUS, cycle)
        assert vdc.position(cycle + 1) == plain_position(vdc, cycle + 1)
    state = vdc.state()
    vdc.reset()
    for cycle in range(0, 3000, 5):
        assert vdc.position(cycle) == plain_position(vdc, cycle)
    vdc.load_state(state)
    for cycle in range(2990, 6000, 3):
        assert vdc.position(cycle) == plain_position(vdc, cycle)
