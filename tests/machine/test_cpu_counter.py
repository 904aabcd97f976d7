"""The event counter counts T1 falling edges lazily; the counts must equal sampling T1 every cycle."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from fixture_runs import built_cart
from hypothesis import given, settings
from hypothesis import strategies as st
from machine_doubles import PeriodicT1Edges, ScriptedVdc

from hilbridge.machine.bios import UnknownBiosWarning
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.timing import REGIONS, BeamT1Edges, SampledT1Edges, fall_offsets
from hilbridge.machine.vdc import Vdc

VDCS = {name: Vdc(REGIONS[name], draw=False) for name in ("ntsc", "pal")}
BEAM = {name: BeamT1Edges(vdc.t1, vdc.raster) for name, vdc in VDCS.items()}
SAMPLED = {name: SampledT1Edges(vdc.t1) for name, vdc in VDCS.items()}


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    region=st.sampled_from(sorted(VDCS)),
    first=st.integers(0, 2_000_000),
    length=st.integers(0, 3000),
    previous=st.integers(0, 1),
)
def test_beam_falls_equal_sampling_every_cycle(region, first, length, previous):
    assert BEAM[region].falls(previous, first, first + length) == SAMPLED[region].falls(
        previous, first, first + length
    )


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    region=st.sampled_from(sorted(VDCS)),
    first=st.integers(0, 2_000_000),
    count=st.integers(1, 256),
    previous=st.integers(0, 1),
)
def test_beam_fall_sample_equals_sampling_every_cycle(region, first, count, previous):
    assert BEAM[region].fall_sample(previous, first, count) == SAMPLED[region].fall_sample(
        previous, first, count
    )


def test_beam_falls_equal_sampling_over_whole_frames():
    for region, vdc in VDCS.items():
        samples = [vdc.t1(cycle) for cycle in range(3 * 7200)]
        falls = [cycle for cycle in range(1, len(samples)) if samples[cycle - 1] and not samples[cycle]]
        assert len(falls) > 600
        assert [BEAM[region].fall_sample(1, 0, number) for number in range(1, len(falls) + 1)] == falls


# STRT CNT, then random code with MOV A,T / MOVX writes of it sprinkled in, around T1 edges.
COUNTER_START = bytes([0x27, 0x62, 0x45])  # CLR A; MOV T,A; STRT CNT
READ_T = bytes([0x42, 0x90])  # MOV A,T; MOVX @R0,A


def run_counter_program(image: bytes, fold_every_step: bool) -> tuple:
    vdc = ScriptedVdc(t1_period=23, t1_high=4)
    console = Console(load_cartridge(image, "o2_rom"), vdc=vdc)
    records: list = []
    console.add_bus_listener(records.append)
    if fold_every_step:
        # state() folds the counter up to the current cycle: folding after every instruction is the
        # per-instruction counting MAME's burn_cycles does (and no idle-loop skipping)
        console.cpu.skip_idle = False
        while console.cycle < 4000:
            console.cpu.step()
            console.cpu.state()
    else:
        console.cpu.run_until(4000)
    return console.cpu.state()["timer_start_value"], console.cpu.state()["t1_history"], records


@settings(max_examples=300, deadline=None)
@given(
    first=st.integers(0, 100_000),
    last_offset=st.integers(-3, 3000),
    count=st.integers(1, 40),
    previous=st.booleans(),
    shape=st.sampled_from([(23, 4), (2, 1), (7, 6), (0, 4), (23, 0), (5, 5), (5, 9)]),
)
def test_periodic_t1_edges_equal_sampling_every_cycle(first, last_offset, count, previous, shape):
    """Every T1 the scripted VDC can make (its `t1_edges`): periodic, and constant low or high."""
    period, high = shape
    vdc = ScriptedVdc(t1_period=period, t1_high=high)
    periodic, sampled = PeriodicT1Edges(vdc), SampledT1Edges(vdc.t1)
    last = first + last_offset
    assert periodic.falls(previous, first, last) == sampled.falls(previous, first, last)
    assert periodic.fall_sample(previous, first, count) == sampled.fall_sample(previous, first, count)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    body=st.lists(st.sampled_from([READ_T, b"\x00", b"\x00" * 7, b"\x62\x45", b"\x65", b"\x45"]), max_size=40)
)
def test_counter_folded_rarely_equals_folded_every_instruction(body):
    code = COUNTER_START + b"".join(body) + bytes([0x84, 0x03])  # ... JMP 403h
    image = bytearray(2048)
    image[: len(code)] = code
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        assert run_counter_program(bytes(image), False) == run_counter_program(bytes(image), True)


@pytest.mark.slow
def test_counter_cart_records_equal_with_beam_and_sampled_edges():
    from hilbridge.oracle.carts import load_manifest

    carts = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
    spec = next(spec for spec in load_manifest(carts) if spec.name == "timer_counter")
    image = built_cart(spec)
    traces = []
    for sampled in (False, True):
        console = Console(load_cartridge(image, spec.slot), region="pal", vdc=Vdc(REGIONS["pal"], draw=False))
        if sampled:
            console.t1_edges = SampledT1Edges(console.vdc.t1)
        records: list = []
        console.add_bus_listener(records.append)
        console.run_frames(40)
        traces.append(records)
    assert len(traces[0]) > 100
    assert traces[0] == traces[1]


@pytest.mark.parametrize("region", sorted(VDCS))
def test_the_fall_pixels_from_the_raster_are_where_a_fresh_chips_sampled_t1_is_low(region) -> None:
    """`fall_offsets` works from the raster alone (once per region); a line falls where T1, as a
    fresh chip samples it in the middle of the low stretch after hblank_end, is low."""
    vdc = Vdc(REGIONS[region], draw=False)
    timing, chip = vdc.raster.timing, vdc.raster.chip
    low_middle = (timing.htotal - chip.hblank_end + chip.hblank_start - 1) // 2
    sampled = [
        line * timing.htotal + chip.hblank_end
        for line in range(timing.vtotal)
        if not vdc.t1(timing.first_cycle_at_pixel(line * timing.htotal + chip.hblank_end + low_middle))
    ]
    assert list(fall_offsets(vdc.raster)) == sampled
    assert 0 < len(sampled) < timing.vtotal
