"""`Vdc.write`'s short path (a plain register's write that leaves the picture as it is) does what
its full steps do: random writes to every address, with A0 turning the display, the grid and the
sound interrupt on and off, reads and frame ends in between, go through a chip whose writes all
take the full steps (no register plain in its write plan) and one with the short path. Every read,
/INT and its next rise, every completed frame and the whole state must stay the same."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from hilbridge.machine.timing import NTSC, PAL, Region
from hilbridge.machine.vdc import Vdc

# A0 values: display, grid and sound interrupt on and off, strobe bits
CONTROLS = [0x00, 0x04, 0x08, 0x20, 0x28, 0x2C, 0x02, 0x2A]
addresses = st.one_of(st.integers(0, 255), st.sampled_from([0x00, 0x10, 0x80, 0xA2, 0xA3, 0xC0, 0xE0]))
operations = st.lists(
    st.one_of(
        st.tuples(st.just("write"), addresses, st.integers(0, 255), st.integers(1, 400)),
        st.tuples(st.just("write"), st.just(0xA0), st.sampled_from(CONTROLS), st.integers(1, 400)),
        st.tuples(st.just("same"), addresses, st.just(0), st.integers(1, 40)),  # rewrite the stored byte
        st.tuples(
            st.just("read"), st.sampled_from([0x00, 0xA1, 0xA2, 0xA4, 0xC0]), st.just(0), st.integers(1, 400)
        ),
        st.tuples(st.just("wait"), st.just(0), st.just(0), st.integers(1000, 6000)),  # over a frame end
    ),
    max_size=120,
)


def full_path_chip(region: Region) -> Vdc:
    vdc = Vdc(region)
    vdc._write_plan = tuple((*plan[:5], False) for plan in vdc._write_plan)
    vdc._plan_writes()
    return vdc


@settings(max_examples=80, deadline=None)
@given(region=st.sampled_from([NTSC, PAL]), steps=operations)
def test_fast_writes_equal_full_writes(region: Region, steps: list[tuple[str, int, int, int]]) -> None:
    fast, full = Vdc(region), full_path_chip(region)
    cycle = 10
    for kind, address, value, gap in steps:
        cycle += gap
        for vdc in (fast, full):
            if kind == "write":
                vdc.write(address, value, cycle)
            elif kind == "same":
                vdc.write(address, vdc.registers[address], cycle)
        if kind == "read":
            assert fast.read(address, cycle) == full.read(address, cycle), (address, cycle)
        elif kind == "wait":
            fast.run_to(cycle)
            full.run_to(cycle)
        assert fast.irq(cycle + 1) == full.irq(cycle + 1)
        assert fast.next_irq_event(cycle + 1) == full.next_irq_event(cycle + 1)
        assert fast.frames_completed == full.frames_completed
        assert (fast.frame() == full.frame()).all(), (kind, address, cycle)
    assert fast.state() == full.state()
