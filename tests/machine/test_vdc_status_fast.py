"""A status read takes hstatus from the line `Vdc._status_value` keeps (`Raster.hstatus_span`)
instead of `Raster.hstatus(*position_of(pixel))`: the same bit at every position, and the same
byte as the plain computation (`Raster.hstatus` at the pixel's line and position) at random reads,
in both regions."""

from __future__ import annotations

import random

import pytest

from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import CONTROL_STROBE, STATUS_CLEARED_BY_READ, STATUS_HSTATUS, Vdc

STATUS = 0xA1


@pytest.mark.parametrize("region", sorted(REGIONS))
def test_hstatus_span_is_where_hstatus_holds(region: str) -> None:
    vdc = Vdc(REGIONS[region], draw=False)
    raster = vdc.raster
    for line in range(raster.vtotal):
        low, high = raster.hstatus_span(line)
        for hpos in range(raster.htotal):
            assert (low <= hpos < high) == raster.hstatus(line, hpos), (line, hpos)


@pytest.mark.parametrize("region", sorted(REGIONS))
@pytest.mark.parametrize("strobe", [0x00, CONTROL_STROBE])
def test_status_reads_equal_the_plain_status_value(region: str, strobe: int) -> None:
    rng = random.Random(f"status {region} {strobe}")
    vdc = Vdc(REGIONS[region], draw=False)
    vdc.write(0xA0, 0x08 | strobe, 3)
    cycle = 10
    hstatus_seen = set()
    for _ in range(20_000):
        cycle += rng.randrange(1, 30)
        if rng.random() < 0.3:
            vdc.position(cycle + rng.randrange(-3000, 3000))  # another line kept in between
        # what the plain computation gives just before the read, as the read sees the chip
        vdc._sync_events(cycle - 2)
        pixel = vdc._beam_pixel(cycle)
        vdc._draw_to_beam(cycle, pixel)
        hstatus = vdc.raster.hstatus(*vdc.raster.position_of(pixel))
        expected = vdc.control_status | (STATUS_HSTATUS if hstatus else 0) | strobe  # no objects: no overlap
        value = vdc.read(STATUS, cycle)
        assert value == expected, cycle
        assert vdc.control_status & STATUS_CLEARED_BY_READ == 0
        hstatus_seen.add(value & 1)
        if rng.random() < 0.001:
            cycle += rng.randrange(0, 10**6)
    assert hstatus_seen == {0, 1}
