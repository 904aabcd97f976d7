"""Vdc.read_horizon: re-reading a register before the horizon returns the same value (so the CPU
may skip polling loops up to it)."""

from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hilbridge.machine.timing import NTSC, PAL
from hilbridge.machine.vdc import NEVER, Vdc


def scene(region, seed: int, enable: int) -> Vdc:
    """Random sprites and characters (some overlapping), grid, collision mask `enable`."""
    rng = random.Random(seed)
    vdc = Vdc(region)
    writes = [(a, rng.randrange(256)) for a in range(0x00, 0x10)]
    writes += [(a, rng.randrange(256)) for a in range(0x10, 0x40)]
    writes += [(a, rng.randrange(256)) for a in range(0x80, 0xA0)]
    writes += [(a, rng.randrange(256)) for a in (0xC0, 0xC3, 0xE1, 0xE4)]
    writes += [(0x10, 0x50), (0x11, 0x20), (0x14, 0x50), (0x15, 0x24)]  # two overlapping characters
    writes += [(0xA2, enable), (0xA0, 0x2C | rng.choice((0, 0x40, 0x80)))]
    for n, (address, value) in enumerate(writes):
        vdc.write(address, value, 3 + 2 * n)
    return vdc


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    region=st.sampled_from([NTSC, PAL]),
    seed=st.integers(0, 10_000),
    enable=st.sampled_from([0x00, 0xFF, 0x0F, 0x30, 0x80]),
    address=st.sampled_from([0xA1, 0xA2, 0xA4, 0x10, 0x80]),
    start=st.integers(1_000, 30_000),
)
# the A1 read at 5983 is the last before the frame end, after which the redrawn half line reports overlap
@example(region=NTSC, seed=279, enable=0x00, address=0xA1, start=3930)
def test_reads_before_the_horizon_repeat_the_same_value(region, seed, enable, address, start) -> None:
    vdc = scene(region, seed, enable)
    for cycle in range(start, start + 4_000):
        # the CPU may skip every re-read before the horizon, taking them to return this value
        value = vdc.read(address, cycle)
        horizon = vdc.read_horizon(address, cycle)
        assert horizon > cycle
        if horizon > cycle + 1:
            assert vdc.read(address, cycle + 1) == value, (hex(address), cycle, horizon)


def test_constant_registers_never_change() -> None:
    vdc = scene(NTSC, 1, 0)
    assert vdc.read_horizon(0x10, 500) == NEVER
    assert vdc.read_horizon(0xA3, 500) == NEVER
    vdc.write(0xA0, 0x02, 600)  # strobe: A4/A5 follow the beam
    assert vdc.read_horizon(0xA5, 700) == 701


@pytest.mark.parametrize("region", [NTSC, PAL])
def test_a1_poll_stops_at_vbl(region) -> None:
    vdc = Vdc(region)
    vbl = next(c for c in range(0, 9000) if vdc.irq(c))
    cycle = vbl - 300
    vdc.read(0xA1, cycle)
    horizon = vdc.read_horizon(0xA1, cycle)
    assert horizon <= vbl + 2


def test_a_read_that_cleared_bits_has_no_horizon() -> None:
    vdc = Vdc(NTSC)
    vbl = next(c for c in range(0, 9000) if vdc.irq(c))
    assert vdc.read(0xA1, vbl + 2) & 0x08
    assert vdc.read_horizon(0xA1, vbl + 2) == vbl + 3, "the next read returns the VBL bit cleared"


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(
    region=st.sampled_from([NTSC, PAL]),
    seed=st.integers(0, 10_000),
    enable=st.sampled_from([0x00, 0xFF, 0x80]),
    address=st.sampled_from([0xA1, 0xA2]),
    mask=st.sampled_from([0xFF, 0x08, 0x88, 0x0C]),
    start=st.integers(1_000, 30_000),
)
def test_masked_horizon_and_peek_give_what_reads_would(region, seed, enable, address, mask, start) -> None:
    stepped, skipped = scene(region, seed, enable), scene(region, seed, enable)
    cycle = start
    for _ in range(200):
        value = stepped.read(address, cycle)
        assert skipped.read(address, cycle) == value
        horizon = skipped.read_horizon(address, cycle, mask)
        # every 6 cycles, as a MOVX / JB / JMP polling loop reads
        next_cycle = cycle + 6
        while next_cycle < horizon and next_cycle < cycle + 3_000:
            again = stepped.read(address, next_cycle)
            assert again & mask == value & mask, (hex(address), next_cycle, horizon)
            assert skipped.peek(address, next_cycle) == again
            next_cycle += 6
        cycle = next_cycle
