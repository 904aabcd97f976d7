"""`Vdc.t1` keeps its answer over a span of cycles: it must equal the beam arithmetic it caches,
`raster.t1(*position(cycle))`, for any order of samples (the model's time goes back when a slice
starts, and the counter asks about earlier cycles) and around the A1 reads that move the slices."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.machine.timing import NTSC, PAL, Region
from hilbridge.machine.vdc import Vdc

REGIONS = [NTSC, PAL]
STATUS = 0xA1


def reference_t1(vdc: Vdc, cycle: int) -> bool:
    return vdc.raster.t1(*vdc.position(cycle))


def frame_end_cycles(region: Region, frames: int) -> list[int]:
    vdc = Vdc(region)
    return [vdc.frame_end_cycle(frame) for frame in range(frames)]


@pytest.mark.parametrize("region", REGIONS, ids=lambda region: region.name)
def test_every_cycle_forward_and_backward_over_frame_ends(region: Region) -> None:
    vdc = Vdc(region, draw=False)
    for end in frame_end_cycles(region, 3):
        cycles = range(end - 1200, end + 1200)  # vblank end, the last lines, frame end, first lines
        for cycle in [*cycles, *reversed(cycles)]:
            assert vdc.t1(cycle) == reference_t1(vdc, cycle), cycle


@pytest.mark.parametrize("region", REGIONS, ids=lambda region: region.name)
def test_every_cycle_around_status_reads(region: Region) -> None:
    """A1 reads every few lines start new slices; samples before and after each read."""
    vdc = Vdc(region, draw=False)
    end = frame_end_cycles(region, 2)[1]
    for read in range(end - 3000, end + 600, 97):
        for cycle in range(read - 60, read + 60):
            assert vdc.t1(cycle) == reference_t1(vdc, cycle), (read, cycle)
        vdc.read(STATUS, read)
        for cycle in range(read - 60, read + 97):
            assert vdc.t1(cycle) == reference_t1(vdc, cycle), (read, cycle)


def drift_edges(vdc: Vdc, frames: int, wanted: int) -> list[int]:
    """Cycles at which the access time's drift within its slice has already carried the beam onto
    a T1 change pixel that the cycle's global time has not reached: the samples a slice decides."""
    raster, timing = vdc.raster, vdc.timing
    found: list[int] = []
    pixel = 0
    while pixel < frames * raster.frame_pixels and len(found) < wanted:
        pixel = raster.next_t1_change_pixel(pixel)
        cycle = timing.first_cycle_at_pixel(pixel) - 1
        if cycle >= 0 and timing.pixel_at(cycle) < pixel <= vdc._beam_pixel(cycle):
            found.append(cycle)
    return found


@functools.cache
def edges_of(region: Region) -> tuple[int, ...]:
    return tuple(drift_edges(Vdc(region, draw=False), 200, 3))


@st.composite
def sessions(draw: st.DrawFn, region: Region) -> list[tuple[str, int]]:
    """Samples and A1 reads: walks of small steps either way from points in the first frames or
    from cycles where the slice decides T1 (`drift_edges`)."""
    steps: list[tuple[str, int]] = []
    for _ in range(draw(st.integers(1, 6))):
        cycle = draw(st.integers(0, 4 * 8000) | st.sampled_from(edges_of(region)))
        for step in draw(st.lists(st.integers(-40, 40), min_size=1, max_size=60)):
            cycle = max(0, cycle + step)
            kind = draw(st.sampled_from(("t1", "t1", "t1", "t1", "read")))
            steps.append((kind, cycle))
    return steps


@pytest.mark.slow  # 100 random sessions: ~4 s on an idle core
@settings(max_examples=100, deadline=None)
@given(session=st.sampled_from(REGIONS).flatmap(lambda region: st.tuples(st.just(region), sessions(region))))
def test_any_sample_order_with_status_reads(session: tuple[Region, list[tuple[str, int]]]) -> None:
    region, steps = session
    vdc = Vdc(region, draw=False)
    for kind, cycle in steps:
        if kind == "read":
            vdc.read(STATUS, cycle)
        else:
            assert vdc.t1(cycle) == reference_t1(vdc, cycle), (kind, cycle)


@pytest.mark.parametrize("region", REGIONS, ids=lambda region: region.name)
def test_state_load_drops_the_span(region: Region) -> None:
    vdc = Vdc(region, draw=False)
    end = frame_end_cycles(region, 1)[0]
    vdc.read(STATUS, end + 500)
    state = vdc.state()
    other = Vdc(region, draw=False)
    for cycle in range(end + 400, end + 700):
        other.t1(cycle)  # fill its span under other read cycles
    other.load_state(state)
    for cycle in range(end + 400, end + 700):
        assert other.t1(cycle) == reference_t1(vdc, cycle), cycle


@pytest.mark.parametrize("region", REGIONS, ids=lambda region: region.name)
def test_samples_where_the_slice_decides(region: Region) -> None:
    """Around those cycles, with A1 reads before them (which end the drift) and after them (which
    bring back the earlier slice start for the samples the model takes back in time)."""
    edges = drift_edges(Vdc(region, draw=False), 200, 3)
    assert edges
    for edge in edges:
        vdc = Vdc(region, draw=False)
        assert vdc.t1(edge) != vdc.raster.t1(*vdc.raster.position_of(vdc.timing.pixel_at(edge)))
        for read in (edge - 3, edge - 2, edge + 7, edge + 9):
            vdc.read(STATUS, read)
            for cycle in (edge, *range(edge - 8, edge + 1)):  # the edge first, and last: its span kept
                assert vdc.t1(cycle) == reference_t1(vdc, cycle), (edge, read, cycle)
        for cycle in [*range(edge + 8, edge - 8, -1), *range(edge - 8, edge + 8)]:
            assert vdc.t1(cycle) == reference_t1(vdc, cycle), (edge, cycle)


@pytest.mark.parametrize("region", REGIONS, ids=lambda region: region.name)
def test_raster_t1_runs_over_two_frames(region: Region) -> None:
    """`t1_run` gives T1 and the next pixel where it changes, as `t1` of each pixel says."""
    raster = Vdc(region, draw=False).raster
    levels = [raster.t1(*raster.position_of(pixel)) for pixel in range(2 * raster.frame_pixels + 1)]
    change = len(levels)  # past the end: not known
    for pixel in range(len(levels) - 1, -1, -1):
        value, following = raster.t1_run(pixel)
        assert value == levels[pixel], pixel
        if change < len(levels):
            assert following == change, pixel
        if pixel and levels[pixel - 1] != levels[pixel]:
            change = pixel


def test_a_slice_cycle_outlasts_a_scheduler_cycle() -> None:
    """What the span argument of `Vdc._t1_sample` rests on: a later slice start never makes a
    cycle's access time later."""
    for region in REGIONS:
        timing = Vdc(region, draw=False).timing
        assert timing.cycle_as < timing.slice_cycle_as < timing.cycle_as + timing.pixel_as // 1000
