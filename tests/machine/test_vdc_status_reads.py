"""Skipped status reads valued with array arithmetic (`Vdc.peek_reads` from `BULK_STATUS_READS` reads on)
must give the values and leave the state of the per-read path, and its pieces (`Timeslices.starts`,
`Raster.hstatus_of`) the answers of their scalar counterparts."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
from fixture_runs import built_cart
from hypothesis import example, given, settings
from hypothesis import strategies as st

import hilbridge.machine.vdc as vdc_module
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.timing import NTSC, PAL, Region
from hilbridge.machine.vdc import Vdc
from hilbridge.oracle.carts import load_manifest

REGIONS = [NTSC, PAL]
STATUS = 0xA1
CARTS = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
STATE = (
    "_status_read_cycle",
    "_earlier_status_read_cycle",
    "_t1_span",
    "_t1_next_span",
    "control_status",
    "_quiet_until",
    "_next_vbl_frame",
    "irq_line",
)


class PatchableVdc(Vdc):
    """A chip on which a test may replace a method (`Vdc` has slots: no instance dict)."""


def twin_of(vdc: Vdc) -> Vdc:
    """A deep copy of `vdc` that shares the register tables: `_info` is `register_map()`'s cached
    table, which every chip shares, and `_write_plan` and `_plain_writes` hold only numbers and
    flags. Copying them was most of the copy's time (about 10 ms of 12)."""
    shared = (vdc._info, vdc._write_plan, vdc._plain_writes)
    return copy.deepcopy(vdc, {id(table): table for table in shared})


def per_read(vdc: Vdc, first: int, period: int, count: int) -> tuple[list[int], Vdc]:
    """The values and the chip after the per-read path, on a twin of `vdc`."""
    twin = twin_of(vdc)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vdc_module, "BULK_STATUS_READS", 1 << 62)
        values = Vdc.peek_reads(twin, STATUS, first, period, count)
    return values, twin


def trace_with_quiet_fetch_hooks(console: Console) -> None:
    """Run `console` as a traced check does (blocks and skipped loops reported in bulk, status
    reads skipped through `peek_reads`), with the fetch reports themselves thrown away."""
    console.cpu.trace_fetches = console.cpu.trace_blocks = console.cpu.skip_traced = True
    console.program_fetch = lambda address, cycle: None  # type: ignore[method-assign]
    console.program_fetches = lambda fetches, cycle, ran: None  # type: ignore[method-assign]
    console.repeat_fetches = lambda fetches, cycle, period, count: None  # type: ignore[method-assign]
    console.repeat_reads = lambda address, first, period, count: console.peek_reads(
        address, first, period, count
    )  # type: ignore[method-assign]


def assert_same_reads(vdc: Vdc, first: int, period: int, count: int) -> None:
    expected, twin = per_read(vdc, first, period, count)
    assert vdc.peek_reads(STATUS, first, period, count) == expected
    assert [getattr(vdc, name) for name in STATE] == [getattr(twin, name) for name in STATE]


@pytest.mark.parametrize("region", REGIONS, ids=lambda region: region.name)
@pytest.mark.parametrize("cart", ["video_objects", "xram", "wait_lines"])
def test_bulk_status_reads_equal_the_per_read_path_in_the_skips_of_a_running_cart(cart: str, region: Region):
    specs = {spec.name: spec for folder in (CARTS, CARTS / "wait_loops") for spec in load_manifest(folder)}
    spec = specs[cart]
    console = Console(
        load_cartridge(built_cart(spec), None if spec.slot == "o2_rom" else spec.slot),
        region=region,
        vdc=PatchableVdc(region),
    )
    skipped = []
    vdc = console.vdc
    peek_reads = vdc.peek_reads

    def checked(address: int, first: int, period: int, count: int) -> list[int]:
        if vdc._info[address].read != "status" or count < vdc_module.BULK_STATUS_READS:
            return peek_reads(address, first, period, count)
        skipped.append(count)
        expected, twin = per_read(vdc, first, period, count)
        assert peek_reads(address, first, period, count) == expected
        assert [getattr(vdc, name) for name in STATE] == [getattr(twin, name) for name in STATE]
        return expected

    vdc.peek_reads = checked  # type: ignore[method-assign]
    trace_with_quiet_fetch_hooks(console)
    console.run_frames(20)
    assert sum(skipped) > 1000, f"only {sum(skipped)} status reads were skipped in bulk"


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    region=st.sampled_from(REGIONS),
    frames=st.integers(0, 3),
    offset=st.integers(2, 30_000),
    period=st.integers(2, 80),
    count=st.integers(16, 1500),
    earlier=st.integers(0, 40),
)
def test_bulk_status_reads_equal_the_per_read_path_anywhere(region, frames, offset, period, count, earlier):
    """From a chip run to some frame with a status read just before, reads across VBL, the frame
    timers and the line timers (where an event reaches the VDC the per-read path is taken)."""
    vdc = Vdc(region, draw=False)
    start = vdc.frame_end_cycle(frames) - 15_000 + offset
    vdc.read(STATUS, start - earlier - 2)
    assert_same_reads(vdc, start, period, count)


@settings(max_examples=200, deadline=None)
@given(
    region=st.sampled_from(REGIONS),
    first=st.integers(0, 200_000),
    period=st.integers(1, 120),
    count=st.integers(1, 3000),
)
@example(region=REGIONS[1], first=1773, period=1, count=1)  # a frame timer fired before any line timer (CI)
def test_timeslice_starts_equal_start_one_by_one(region: Region, first: int, period: int, count: int):
    slices = Vdc(region, draw=False).slices
    found = slices.starts(first, period, count)
    expected = [slices.start(first + index * period) for index in range(count)]
    if found is None:  # only before the line timer first fires (a frame timer may have: PAL's at 1773)
        line_first, _ = slices.line_timer
        assert (first + 1) * slices.cycle_as <= line_first or count * period * slices.cycle_as >= 1 << 62
    else:
        assert found.tolist() == expected


@pytest.mark.parametrize("region", REGIONS, ids=lambda region: region.name)
def test_hstatus_of_every_pixel_of_two_frames(region: Region) -> None:
    raster = Vdc(region, draw=False).raster
    pixels = np.arange(2 * raster.frame_pixels + 5, dtype=np.int64) + 12_345
    expected = [raster.hstatus(*raster.position_of(pixel)) for pixel in pixels.tolist()]
    assert raster.hstatus_of(pixels).tolist() == expected
