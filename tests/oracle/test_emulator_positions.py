"""`Vdc._beam_pixel` finds the slice start only where the access time's possible drift crosses a
pixel edge (`Vdc._drift_bounds`): at the accesses of every fixture cart, and at cycles around them asked
out of order, the beam position must be the plain reckoning from the access time (`plain_position`).
It is asked at every write but only at every third read, as a trace without reads asks."""

from __future__ import annotations

import pytest
from conftest import quick_few
from fixture_runs import REGIONS, SPECS, cart_image

from hilbridge.machine import timing
from hilbridge.machine.bus import READ, BusAccess
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.vdc import Vdc
from hilbridge.oracle.emulator import MAME_EQUIVALENT_MAPPERS

FRAMES = 12
QUICK_CARTS = ("cpu_alu", "interrupts", "vdc_regs", "video_midframe")
"""RAM writes every few cycles, status reads that start slices, beam reads, mid-frame reads."""
AROUND = (0, 2, -1, 30, 0)
"""Cycles asked after each access, relative to it: later in its slice, earlier, in the next ones."""


def plain_position(vdc: Vdc, cycle: int) -> tuple[int, int]:
    """The beam position from the access time, its slice start looked up at every cycle."""
    pixel_as = vdc._pixel_as
    return vdc.raster.position_of((vdc._access_time(cycle) + pixel_as // 2) // pixel_as)


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("name", quick_few(SPECS, QUICK_CARTS))
def test_position_is_the_plain_reckoning_at_every_access(name: str, region: str) -> None:
    spec = SPECS[name]
    cart = load_cartridge(cart_image(name), MAME_EQUIVALENT_MAPPERS.get(spec.slot, spec.slot))
    vdc = Vdc(timing.REGIONS[region])
    console = Console(cart, region=region, vdc=vdc)
    differing: list[tuple[int, tuple[int, int], tuple[int, int]]] = []
    asked = reads = 0

    def check(access: BusAccess) -> None:
        nonlocal asked, reads
        if access.kind == READ:
            reads += 1
            if reads % 3:
                return
        for offset in AROUND:
            cycle = access.cycle + offset
            plain = plain_position(vdc, cycle)
            kept = vdc.position(cycle)
            asked += 1
            if kept != plain and len(differing) < 5:
                differing.append((cycle, kept, plain))

    console.add_bus_listener(check)
    for frame in range(FRAMES):
        spec.inputs.apply(console, frame)
        console.run_frames(1)
    assert asked > FRAMES * len(AROUND)
    assert not differing, f"(cycle, position, plain reckoning): {differing}"


@pytest.mark.parametrize("region", REGIONS)
def test_position_at_pixel_edges_and_before_the_first_line_timer(region: str) -> None:
    """Every cycle from power-on (before the line timer's first slice) over a few dozen lines, an A1
    read now and then (a slice starts there): the scan meets cycles whose drift range crosses a
    pixel edge, where the slice start decides."""
    vdc = Vdc(timing.REGIONS[region])
    least, most = vdc._drift_bounds()
    cycle_as, pixel_as = vdc._cycle_as, vdc._pixel_as
    edges = 0
    for cycle in range(20_000):
        if cycle % 37 == 5:
            vdc.read(0xA1, cycle)
        assert vdc.position(cycle) == plain_position(vdc, cycle), cycle
        time = cycle * cycle_as
        edges += (time + least) // pixel_as != (time + most) // pixel_as
    assert edges
