"""VDC timing: VBL, T1, hstatus, beam registers and the interrupt line (docs/hardware.md, "Beam timing")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.machine.timing import NTSC, PAL, BeamTiming, SampledT1Edges
from hilbridge.machine.vdc import Vdc

REGIONS = [NTSC, PAL]


def cycle_at(vdc: Vdc, frame: int, line: int, hpos: int) -> int:
    """First cycle at which the beam is at or past (line, hpos) of a frame (frame 0 starts at power-on)."""
    htotal, vtotal = vdc.region.htotal, vdc.region.vtotal
    lines_from_243 = (line - 243) % vtotal
    pixel = frame * htotal * vtotal + lines_from_243 * htotal + hpos
    return vdc.timing.first_cycle_at_pixel(pixel)


def test_mame_cycle_length_is_rounded_up_clock() -> None:
    # MAME's mcs48 runs ceil(5369317 / 15) = 357955 cycles per second, not 357954.47
    timing = BeamTiming.for_region(NTSC)
    assert timing.cycle_as == 10**18 // 357955
    assert timing.pixel_as == 10**18 // 7159090


@pytest.mark.parametrize("region", REGIONS)
def test_power_on_beam_and_frame_ends_match_mame_traces(region) -> None:
    vdc = Vdc(region)
    assert vdc.position(0) == (243, 0)
    # MAME trace frame_done stamps (docs/oracle.md): the frame ends within these cycles
    stamps = {"ntsc": (5983, 11966, 17950), "pal": (7929, 15859, 23788)}[region.name]
    for stamp in stamps:
        before, after = vdc.position(stamp - 1), vdc.position(stamp + 1)
        assert before[0] == 242 and after[0] == 243


@pytest.mark.parametrize("region", REGIONS)
def test_vbl_sets_status_and_irq_once_per_frame_at_242_365(region) -> None:
    vdc = Vdc(region)
    for frame in range(3):
        first = next(c for c in range(frame * 8000, frame * 8000 + 9000) if vdc.irq(c))
        # the event fires at (242, 365): the first instruction to see it is the one MAME's
        # timeslice stops before, i.e. starting at floor(event time / cycle time)
        event_as = ((region.vtotal - 1 + frame * region.vtotal) * region.htotal + 365) * vdc.timing.pixel_as
        assert first == event_as // vdc.timing.cycle_as
        line, hpos = vdc.position(first + 1)
        assert line == 242 and hpos >= 365 - 25
        status = vdc.read(0xA1, first + 2)
        assert status & 0x08
        assert not vdc.irq(first + 3), "reading A1 drops /INT"
        assert not vdc.read(0xA1, first + 5) & 0x08, "reading A1 clears the VBL bit"


@pytest.mark.parametrize("region", REGIONS)
def test_irq_is_a_level_held_until_a1_is_read(region) -> None:
    vdc = Vdc(region)
    start = next(c for c in range(0, 9000) if vdc.irq(c))
    assert all(vdc.irq(c) for c in range(start, start + 3000, 7))


@pytest.mark.parametrize("region", REGIONS)
def test_t1_counts_one_falling_edge_per_active_line(region) -> None:
    vdc = Vdc(region)
    frame = int(region.cycles_per_frame)
    # measured on MAME 0.251 (docs/hardware.md, "T1 and the event counter"): STRT CNT counts 242
    # edges per frame on NTSC and 243 on PAL
    expected = {"ntsc": 242, "pal": 243}[region.name]
    for k in range(2, 5):
        start = cycle_at(vdc, k, 100, 0)
        assert SampledT1Edges(vdc.t1).falls(vdc.t1(start), start + 1, start + frame) == expected


@pytest.mark.parametrize("region", REGIONS)
def test_t1_windows(region) -> None:
    vdc = Vdc(region)
    hblank_end = {"ntsc": 453, "pal": 454}[region.name]
    for line in (10, 100, 200):
        levels = set()
        for cycle in range(cycle_at(vdc, 1, line, 0), cycle_at(vdc, 1, line + 1, 0)):
            hpos = vdc.position(cycle)[1]
            assert vdc.t1(cycle) == (366 <= hpos < hblank_end), (line, hpos)
            levels.add(vdc.t1(cycle))
        assert levels == {True, False}
    # through VBLANK T1 stays high
    assert all(vdc.t1(c) for c in range(cycle_at(vdc, 1, 242, 370), cycle_at(vdc, 1, 250, 0)))


@pytest.mark.parametrize("region", REGIONS)
def test_hstatus_window(region) -> None:
    vdc = Vdc(region)
    bgate = {"ntsc": 413, "pal": 414}[region.name]
    seen = set()
    for cycle in range(cycle_at(vdc, 1, 50, 0), cycle_at(vdc, 1, 52, 0)):
        line, hpos = vdc.position(cycle)
        assert bool(vdc.read(0xA1, cycle) & 1) == (225 <= hpos < bgate), (line, hpos)
        seen.add(bool(vdc.read(0xA1, cycle) & 1))
    assert seen == {True, False}
    # never on line 0 before hblank: the Y beam reads 263 there
    cycle = cycle_at(vdc, 1, 0, 300)
    assert not vdc.read(0xA1, cycle) & 1


@pytest.mark.parametrize("region", REGIONS)
def test_beam_registers_and_strobe_latch(region) -> None:
    vdc = Vdc(region)
    assert vdc.read(0xA4, 500) == 0 and vdc.read(0xA5, 500) == 0, "0 before the strobe was ever set"
    vdc.write(0xA0, 0x02, 600)
    cycle = cycle_at(vdc, 1, 100, 200)
    line, hpos = vdc.position(cycle)
    assert vdc.read(0xA4, cycle) == line and vdc.read(0xA5, cycle) == hpos // 2
    assert vdc.read(0xA1, cycle) & 0x02, "A1 b1 mirrors the strobe bit"
    vdc.write(0xA0, 0x00, cycle + 3)
    latched = (vdc.read(0xA4, cycle + 10), vdc.read(0xA5, cycle + 10))
    assert latched == (vdc.read(0xA4, cycle + 900), vdc.read(0xA5, cycle + 900))
    assert latched[0] == vdc.position(cycle + 3)[0]


def test_y_beam_is_8_bits_and_pal_reads_07_after_line_263() -> None:
    ntsc, pal = Vdc(NTSC), Vdc(PAL)
    for vdc in (ntsc, pal):
        vdc.write(0xA0, 0x02, 10)
    assert ntsc.read(0xA4, cycle_at(ntsc, 1, 258, 100)) == 258 - 256
    assert ntsc.read(0xA4, cycle_at(ntsc, 1, 0, 100)) == 263 - 256  # line 0 before hblank reads 263
    for line in (263, 280, 311):
        assert pal.read(0xA4, cycle_at(pal, 1, line, 100)) == 0x07
    assert ntsc.read(0xA4, cycle_at(ntsc, 1, 50, 420)) == 51  # +1 from the BG gate


@settings(max_examples=60, deadline=None)
@given(region=st.sampled_from(REGIONS), start=st.integers(0, 200_000))
def test_next_irq_event_is_never_late_and_t1_change_never_late(region, start: int) -> None:
    vdc = Vdc(region)
    vdc.write(0xA0, 0x04, 0)  # sound interrupt enabled: sound events count too
    cycle = start
    for _ in range(3):
        event = vdc.next_irq_event(cycle)
        assert event > cycle
        irq = vdc.irq(cycle)
        assert all(vdc.irq(c) == irq for c in range(cycle + 1, event))
        cycle = event
    cycle = start
    for _ in range(6):
        change = vdc.next_t1_change(cycle)
        assert change > cycle
        t1 = vdc.t1(cycle)
        assert all(vdc.t1(c) == t1 for c in range(cycle + 1, change))
        cycle = change


@pytest.mark.parametrize("region", REGIONS)
def test_frame_end_cycle_completes_exactly_that_frame(region) -> None:
    vdc = Vdc(region)
    for frame in range(4):
        end = vdc.frame_end_cycle(frame)
        vdc.run_to(end - 1)
        assert vdc.frames_completed == frame
        vdc.run_to(end)
        assert vdc.frames_completed == frame + 1


@settings(max_examples=50, deadline=None)
@given(region=st.sampled_from(REGIONS), frames=st.lists(st.integers(0, 100_000), max_size=30))
def test_frame_end_cycle_kept_answer_is_the_timing_one(region, frames: list[int]) -> None:
    """`Vdc.frame_end_cycle` keeps its last answer: asked in any order, with repeats, it must give
    what `BeamTiming.frame_end_cycle` works out each time."""
    vdc = Vdc(region)
    for frame in frames + frames[::-1]:
        assert vdc.frame_end_cycle(frame) == vdc.timing.frame_end_cycle(frame), frame


def test_mame_trace_stamps_fall_behind_cycle_counts() -> None:
    # measured on MAME 0.251: a 5-cycle loop's stamps first lag the count near cycle 335 600
    vdc = Vdc(NTSC)
    writes = [14 + 5 * j for j in range(143_596)]  # the measured run: a write every 5 cycles
    lag = [vdc.mame_trace_cycle(n) - n for n in writes]
    assert lag.index(-1) == 67_119 and min(lag[:67_119]) == 0
    assert lag[-1] == -1


def slice_start_directly(vdc: Vdc, start: int) -> int:
    """The start of the MAME timeslice holding an instruction starting at `start`: the latest
    firing of any slice-ending timer strictly before the instruction's end time, in cycles."""
    cycle_as = vdc.timing.cycle_as
    limit = (start + 1) * cycle_as
    fired = [
        (first + (limit - 1 - first) // period * period) // cycle_as
        for first, period in vdc.slices.timers
        if limit > first
    ]
    return max(fired, default=0)


@settings(max_examples=50, deadline=None)
@given(
    region=st.sampled_from(REGIONS),
    starts=st.lists(st.integers(0, 3_000_000), min_size=1, max_size=40),
    steps=st.lists(st.integers(0, 40), max_size=40),
)
def test_cached_slice_start_equals_the_direct_computation(
    region, starts: list[int], steps: list[int]
) -> None:
    """Jumps anywhere (forwards and backwards) and short forward walks, as accesses make them."""
    vdc = Vdc(region)
    for start in starts:
        assert vdc.slices.start(start) == slice_start_directly(vdc, start)
        for step in steps:
            start += step
            assert vdc.slices.start(start) == slice_start_directly(vdc, start)


@settings(max_examples=30, deadline=None)
@given(region=st.sampled_from(REGIONS), frame=st.integers(0, 3000), back=st.integers(0, 40))
def test_accesses_before_the_frame_end_cycle_are_before_the_frame_end(region, frame: int, back: int) -> None:
    """Reads and writes skip placing accesses before `_frame_end_cycle` on the beam: that must
    never skip a frame end, and the bound must be within a cycle of the exact one."""
    vdc = Vdc(region)
    vdc.run_to(vdc.frame_end_cycle(frame) - 200)
    bound = vdc._frame_end_cycle
    assert vdc._beam_pixel(bound - 1 - back) < vdc._frame_end
    assert vdc._beam_pixel(bound + 1) >= vdc._frame_end


def test_an_a1_read_starts_a_new_mame_timeslice() -> None:
    """Every A1 read calls MAME's irq callback (CLEAR_LINE), which synchronizes the scheduler and
    ends the CPU's timeslice after that MOVX. The next access's time counts the 15-clock-period
    cycle from that read, not from the last timer: measured on MAME 0.251 (`xram`, NTSC, reads at
    cycles 2 881 547 and 2 881 553, frame 481 line 138) as 8 s + 50 042 603 144 823 854 as, hpos 224,
    hstatus (from 225) still 0."""
    vdc = Vdc(NTSC, draw=False)
    assert vdc.read(0xA1, 2_881_547) & 1 == 0
    assert vdc._access_time(2_881_553) == 8 * 10**18 + 50_042_603_144_823_854
    assert vdc.position(2_881_553) == (138, 224)
    assert vdc.read(0xA1, 2_881_553) & 1 == 0
    assert vdc.read(0xA1, 2_881_559) & 1 == 1


@pytest.mark.parametrize("region", REGIONS)
def test_a1_read_slice_start_gives_way_to_a_later_timer(region) -> None:
    vdc = Vdc(region, draw=False)
    timing = vdc.timing
    read_at = cycle_at(vdc, 3, 100, 40)
    vdc.read(0xA1, read_at)
    # 4 cycles later: still in the slice the read started
    expected = read_at * timing.cycle_as + 4 * timing.slice_cycle_as
    assert vdc._access_time(read_at + 4) == expected
    # after the line's hblank sound tick (hpos 366) the timer's slice counts again
    later = cycle_at(vdc, 3, 100, 420)
    assert vdc._access_time(later) != later * timing.cycle_as + (later - read_at) * timing.slice_cycle_as
    assert vdc.slices.start(later - 2) > read_at
