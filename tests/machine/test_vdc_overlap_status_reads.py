"""Skipped status reads where the picture has overlapping major cells (A1 b7 set again by the pixels
drawn between two reads), valued in bulk by `Vdc.peek_reads` and made once by `Vdc.skip_reads`: the
values and the whole chip afterwards (drawn-to position, spans, overlap latch and cursor, status
read cycles, the skipped-read memo...) must be those of making the reads one by one (`Vdc.peek`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_runs import built_cart
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_vdc_status_reads import PatchableVdc, per_read, trace_with_quiet_fetch_hooks, twin_of

from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.timing import NTSC, PAL, Region
from hilbridge.machine.vdc import Vdc
from hilbridge.oracle.carts import load_manifest

REGIONS = [NTSC, PAL]
STATUS = 0xA1
CONTROL_DISPLAY = 0x20
SOUND_INTERRUPT = 0x04
CARTS = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
PRIVATE = (
    "_last_read_value",
    "_skipped_status_read",
    "_status_read_cycle",
    "_earlier_status_read_cycle",
    "_t1_span",
    "_t1_next_span",
    "_quiet_until",
    "_deferred_update",
    "_frame_end_cycle",
    "_sound_irq_cycle",
    "_next_irq_cache",
)


def chip_state(vdc: Vdc) -> dict:
    """Everything a later access can depend on: the saved state (registers, status, drawn-to
    position, the renderer's spans, cursors, latches and bitmap) and the private bookkeeping."""
    private = {name: getattr(vdc, name) for name in PRIVATE}
    return {**private, **vdc.state()}


def assert_bulk_equals_one_by_one(vdc: Vdc, first: int, period: int, count: int) -> None:
    expected, twin = per_read(vdc, first, period, count)
    assert vdc.peek_reads(STATUS, first, period, count) == expected
    assert chip_state(vdc) == chip_state(twin)


# major characters (y, x byte): a cluster that overlaps, and others anywhere
cells = st.lists(st.tuples(st.integers(0, 250), st.integers(0, 180)), min_size=0, max_size=6)
cluster = st.tuples(
    st.integers(0, 242),
    st.integers(0, 170),
    st.lists(st.tuples(st.integers(0, 12), st.integers(0, 7)), min_size=1, max_size=5),
)


def overlapping_scene(
    region: Region, draw: bool, near: tuple[int, int, list[tuple[int, int]]], far: list[tuple[int, int]]
) -> Vdc:
    """A chip showing characters of which some overlap (the quads are moved off screen)."""
    vdc = Vdc(region, draw=draw)
    y, x, offsets = near
    places = [(y, x)] + [(y + dy, x + dx) for dy, dx in offsets] + far
    writes = [(0x40 + 4 * index, 0xF8) for index in range(16)]  # quads below the visible lines
    for index in range(12):
        char_y, char_x = places[index] if index < len(places) else (0xF8, 0)
        writes += [(0x10 + 4 * index, min(char_y, 255)), (0x11 + 4 * index, char_x)]
        writes += [(0x12 + 4 * index, 8 * index), (0x13 + 4 * index, 2 * index)]
    writes.append((0xA0, CONTROL_DISPLAY))
    for n, (address, value) in enumerate(writes):
        vdc.write(address, value, 3 + 2 * n)
    return vdc


def has_overlaps(vdc: Vdc) -> bool:
    picture = vdc._current_picture()
    return bool(picture.objects_on and picture.overlap_positions().size)


@settings(max_examples=150, deadline=None)
@given(
    region=st.sampled_from(REGIONS),
    draw=st.booleans(),
    near=cluster,
    far=cells,
    frames=st.integers(0, 2),
    offset=st.integers(2, 30_000),
    period=st.integers(2, 80),
    count=st.integers(16, 1200),
    earlier=st.integers(0, 40),
    sound_interrupt=st.booleans(),
    colour_write=st.integers(-1, 3000),
)
def test_bulk_overlap_reads_equal_the_per_read_path_anywhere(
    region, draw, near, far, frames, offset, period, count, earlier, sound_interrupt, colour_write
):
    """Reads anywhere (across frame ends, VBL, line timers; with the sound interrupt on the hblank
    ticks are events too), from a chip with a status read just before and, maybe, a colour write
    between (a picture change drawn up to its cycle, or a redraw left for the next read)."""
    vdc = overlapping_scene(region, draw, near, far)
    assume(has_overlaps(vdc))
    start = vdc.frame_end_cycle(frames) - 15_000 + offset
    if sound_interrupt:
        vdc.write(0xA0, CONTROL_DISPLAY | SOUND_INTERRUPT, start - earlier - 200)
    vdc.read(STATUS, start - earlier - 2)
    if 0 <= colour_write < earlier + 2000:
        vdc.write(0xA3, 0x41, start - colour_write)
    assert_bulk_equals_one_by_one(vdc, start, period, count)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(
    region=st.sampled_from(REGIONS),
    near=cluster,
    far=cells,
    start=st.integers(1_000, 40_000),
    period=st.integers(2, 40),
    mask=st.sampled_from([0xFF, 0x7F, 0x08, 0x88, 0x7E]),
)
def test_skipped_overlap_reads_no_one_is_told_of_leave_the_chip_as_one_by_one(
    region, near, far, start, period, mask
):
    """`skip_reads` then the CPU's `peek` of the last read, as the CPU skips a poll under the
    horizon of a real read: the last value and the chip are those of peeking every read."""
    vdc = overlapping_scene(region, False, near, far)
    assume(has_overlaps(vdc))
    vdc.read(STATUS, start)
    count = (vdc.read_horizon(STATUS, start, mask) - 1 - start) // period
    assume(count >= 2)
    first, last = start + period, start + count * period
    twin = twin_of(vdc)
    expected = [twin.peek(STATUS, cycle) for cycle in range(first, last + 1, period)]
    vdc.skip_reads(STATUS, first, period, count)
    assert vdc.peek(STATUS, last) == expected[-1]
    assert chip_state(vdc) == chip_state(twin)


def cart_console(name: str, region: Region) -> Console:
    specs = {spec.name: spec for folder in (CARTS, CARTS / "wait_loops") for spec in load_manifest(folder)}
    spec = specs[name]
    return Console(
        load_cartridge(built_cart(spec), None if spec.slot == "o2_rom" else spec.slot),
        region=region,
        vdc=PatchableVdc(region),
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cart", "region"),
    [("video_objects", NTSC), ("video_objects", PAL), ("video_collisions", PAL), ("wait_reload", PAL)],
    ids=lambda value: value if isinstance(value, str) else value.name,
)
def test_bulk_overlap_reads_equal_the_per_read_path_in_the_skips_of_a_running_cart(cart: str, region: Region):
    """Every skip of 20 frames of a cart whose poll runs where overlapping cells are drawn (PAL draws
    the power-on characters on top of each other), valued as the check's emulator side values them."""
    console = cart_console(cart, region)
    vdc = console.vdc
    peek_reads = vdc.peek_reads
    skipped = []

    def checked(address: int, first: int, period: int, count: int) -> list[int]:
        if vdc._info[address].read != "status" or not has_overlaps(vdc):
            return peek_reads(address, first, period, count)
        skipped.append(count)
        expected, twin = per_read(vdc, first, period, count)
        assert peek_reads(address, first, period, count) == expected
        assert chip_state(vdc) == chip_state(twin)
        return expected

    vdc.peek_reads = checked  # type: ignore[method-assign]
    trace_with_quiet_fetch_hooks(console)
    console.run_frames(20)
    assert sum(skipped) > 1000, f"only {sum(skipped)} status reads were skipped where cells overlap"


def row_ends(positions: list[int]) -> list[int]:
    """Overlap positions whose right neighbour on the line is not one."""
    marked = set(positions)
    return [p for p in positions if p + 1 not in marked]


def reads_ending_at(vdc: Vdc, targets: set[int], frames: range) -> list[int]:
    """Cycles in `frames` at which a status read's global pixel (MAME's scheduler time, which the
    access time may pass by a pixel) is at raster index line * 360 + hpos in `targets`."""
    htotal, timing = vdc.region.htotal, vdc.timing
    first_line, last_line = min(targets) // 360, max(targets) // 360
    found = []
    for frame in frames:
        line0 = frame * vdc._frame_pixels + vdc._line0_offset  # a global pixel
        low = timing.first_cycle_at_pixel(line0 + first_line * htotal)
        for cycle in range(low, timing.first_cycle_at_pixel(line0 + (last_line + 1) * htotal)):
            line, hpos = divmod(timing.pixel_at(cycle) - line0, htotal)
            if line * 360 + hpos in targets:
                found.append(cycle)
    return found


def test_an_overlap_pixel_where_the_read_before_stopped_drawing_is_the_next_reads() -> None:
    """A read draws up to the pixel before its beam; an overlap pixel right there (the last one of
    its line, so nothing else sets the bit) sets the bit of the read after it, the first valued in
    bulk. Found by probing the reads that end on the overlap lines of a few frames. (NTSC only: an
    overlap ends at an odd x, 15 pixels right of an even cell start, and PAL's reads are 18.000001
    pixels apart on a raster whose lines and frames are multiples of 6 pixels long, so they stop
    at even x.)"""
    region = NTSC
    vdc = overlapping_scene(region, False, (110, 40, [(0, 1)]), [])  # 16 lines high
    ends = set(row_ends(vdc._current_picture().overlap_positions().tolist()))
    period, tried = 2, 0
    for cycle in reads_ending_at(vdc, ends, range(1, 9)):
        chip = twin_of(vdc)
        chip.read(STATUS, cycle - period)
        probe = twin_of(chip)
        probe.peek(STATUS, cycle)
        if probe._last_line * 360 + probe._last_hpos not in ends:
            continue  # the access time put the beam a pixel further
        tried += 1
        values, _twin = per_read(chip, cycle, period, 40)
        assert values[1] & 0x80, "the pixel where the first read stopped sets the second read's bit"
        assert_bulk_equals_one_by_one(chip, cycle, period, 40)
    assert tried >= 3


@pytest.mark.parametrize("region", REGIONS, ids=lambda region: region.name)
@pytest.mark.parametrize("period", [2, 3, 5])
def test_overlaps_at_the_right_edge_are_drawn_by_the_read_in_the_hblank(region: Region, period: int) -> None:
    """Cells overlapping up to x = 359: a read whose beam is in the horizontal blank has drawn the
    whole line (reads of several lines in bulk, from a real read on the line above them)."""
    vdc = overlapping_scene(region, False, (62, 172, [(0, 1)]), [])  # 16 lines high
    assert max(p % 360 for p in vdc._current_picture().overlap_positions().tolist()) == 359
    cycle = vdc.timing.first_cycle_at_pixel(vdc._frame_pixels + vdc._line0_offset + 58 * region.htotal)
    vdc.read(STATUS, cycle)
    expected, _twin = per_read(vdc, cycle + period, period, 300)
    assert sum(1 for value in expected if value & 0x80) >= 10
    assert_bulk_equals_one_by_one(vdc, cycle + period, period, 300)
