"""`Vdc.write`'s short paths (a plain register's write that leaves the picture as it is; a write
that does nothing before the frame end: locked, read-only, unused or unmapped) do what its full
steps do: random writes to every address, with A0 turning the display, the grid and the
sound interrupt on and off, reads and frame ends in between, go through a chip whose writes all
take the full steps (no register short in its write plan) and one with the short paths. Every read,
/INT and its next rise, every completed frame and the whole state must stay the same."""

from __future__ import annotations

import hypothesis.strategies as st
from hypothesis import given, settings

from hilbridge.machine.timing import NTSC, PAL, Region
from hilbridge.machine.vdc import Vdc
from hilbridge.machine.video import DRAWING_STATES

# A0 values: display, grid and sound interrupt on and off, strobe bits
CONTROLS = [0x00, 0x04, 0x08, 0x20, 0x28, 0x2C, 0x02, 0x2A]
# plain registers, the sound registers (which the timer events read: never short) and their
# mirrors, then ignored ones (status, beam, unused, unmapped) and sprite_unused (ignored, but a
# changed value redraws)
addresses = st.one_of(
    st.integers(0, 255),
    st.sampled_from([0x00, 0x10, 0x80, 0xA2, 0xA3, 0xC0, 0xE0]),
    st.sampled_from([0xA7, 0xA8, 0xA9, 0xAA, 0xB7, 0xBA]),
    st.sampled_from([0xA1, 0xA4, 0xA6, 0xAB, 0xC9, 0xDF, 0xEA, 0xF0, 0xFF, 0x03, 0x0F]),
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("write"), addresses, st.integers(0, 255), st.integers(1, 400)),
        st.tuples(st.just("write"), st.just(0xA0), st.sampled_from(CONTROLS), st.integers(1, 400)),
        st.tuples(st.just("same"), addresses, st.just(0), st.integers(1, 40)),  # rewrite the stored byte
        st.tuples(
            st.just("read"), st.sampled_from([0x00, 0xA1, 0xA2, 0xA4, 0xC0]), st.just(0), st.integers(1, 400)
        ),
        st.tuples(st.just("wait"), st.just(0), st.just(0), st.integers(1000, 6000)),  # over a frame end
        st.tuples(st.just("edge"), st.just(0), st.just(0), st.integers(-2, 3)),  # next to the frame end
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
        if kind == "edge":  # the next access just before or after the frame end cycle
            cycle = max(cycle, fast._frame_end_cycle + gap)
            continue
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


@settings(max_examples=100, deadline=None)
@given(
    region=st.sampled_from([NTSC, PAL]),
    control=st.sampled_from([0x00, 0x08, 0x20, 0x28]),
    stored=st.integers(0, 255),
    value=st.integers(0, 255),
    cycle=st.integers(10, 5000),
)
def test_ignored_writes_change_nothing_before_the_frame_end(
    region: Region, control: int, stored: int, value: int, cycle: int
) -> None:
    """What `_plain_writes` marks IGNORED is a write whose full steps, before the frame end, leave
    the chip as it was: no register, no deferred redraw, no drawing. (sprite_unused 03-0F, whose
    write is ignored but redraws when the value differs from the stored byte, must not be one.)"""
    vdc = full_path_chip(region)
    vdc.write(0xA0, control, 5)
    ignored = [address for address, plan in enumerate(Vdc(region)._plain_writes[control]) if plan == ()]
    assert 0xA1 in ignored and (0x03 in ignored) == bool(control & 0x20)  # sprite_unused: if locked
    for address in ignored:
        vdc.registers[vdc._write_plan[address][0]] = stored
        before = (bytes(vdc.registers), vdc._deferred_update, vdc._last_line, vdc._last_hpos)
        vdc.write(address, value, cycle)
        after = (bytes(vdc.registers), vdc._deferred_update, vdc._last_line, vdc._last_hpos)
        assert after == before, hex(address)


def plans_follow_a0(vdc: Vdc) -> bool:
    drawing_state = vdc.registers[0xA0] & DRAWING_STATES
    return (
        vdc._plain_writes_now is vdc._plain_writes[drawing_state]
        and vdc._read_plan_now is vdc._read_plan[drawing_state]
    )


@settings(max_examples=60, deadline=None)
@given(region=st.sampled_from([NTSC, PAL]), steps=operations)
def test_the_plans_in_use_follow_a0(region: Region, steps: list[tuple[str, int, int, int]]) -> None:
    """`write` and `read` index the plans of A0's display and grid bits taken when A0 last changed
    (`_plan_control`): after every access through A0 or its mirrors, a state load and a reset, they
    must be the plans of A0 as it is."""
    vdc = Vdc(region)
    cycle = 10
    for kind, address, value, gap in steps:
        cycle += gap if kind != "edge" else 0
        if kind in ("write", "same"):
            vdc.write(address, value if kind == "write" else vdc.registers[address], cycle)
        elif kind == "read":
            vdc.read(address, cycle)
        assert plans_follow_a0(vdc), (kind, address, value)
    loaded = Vdc(region)
    loaded.load_state(vdc.state())
    assert plans_follow_a0(loaded)
    vdc.reset()
    assert plans_follow_a0(vdc)
