"""The VDC runs the hblank sound ticks that wait (no audio recorded) shift by shift, not tick by
tick (`Vdc._run_shifts`): the shift register, output bit, counters and sound interrupt must be
those of `SoundShifter.tick()` run once per tick, as MAME's `sound_update` runs."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from hilbridge.machine.sound import SoundShifter
from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import STATUS_SOUND, Vdc


def sound_fields(vdc: Vdc) -> tuple:
    s = vdc.sound
    return (bytes(vdc.registers[0xA7:0xAB]), s.prescaler, s.pending, s.written, s.count, s.output)


@given(
    control=st.integers(0, 255),
    shift=st.binary(min_size=3, max_size=3),
    sound_control=st.integers(0, 255),
    prescaler=st.integers(0, 255),
    pending=st.booleans(),
    written=st.booleans(),
    count=st.integers(0, 23),
    output=st.integers(0, 1),
    runs=st.lists(st.integers(0, 200), min_size=1, max_size=4),
)
# the 24th shift lands on the last tick of a run (sound interrupt on, fast clock)
@example(0x04, b"\x12\x34\x56", 0x20, 2, False, False, 23, 0, [2])
def test_waiting_ticks_shift_as_one_tick_at_a_time(
    control: int,
    shift: bytes,
    sound_control: int,
    prescaler: int,
    pending: bool,
    written: bool,
    count: int,
    output: int,
    runs: list[int],
) -> None:
    vdc = Vdc(REGIONS["ntsc"])
    vdc.registers[0xA0] = control
    vdc.registers[0xA7:0xAA] = shift
    vdc.registers[0xAA] = sound_control
    s = vdc.sound
    s.prescaler, s.pending, s.written, s.count, s.output = prescaler, pending, written, count, output
    reference_registers = bytearray(vdc.registers)
    reference = SoundShifter(reference_registers)
    reference.load_state(s.state())
    raised = False
    for ticks in runs:
        vdc.control_status = 0
        vdc.irq_line = False
        vdc._run_ticks(vdc._ticks_done + ticks)
        raised = any([reference.tick() for _ in range(ticks)])
        assert sound_fields(vdc) == (bytes(reference_registers[0xA7:0xAB]), *reference.state().values())
        assert bool(vdc.control_status & STATUS_SOUND) == raised == vdc.irq_line


SOUND_ACCESSES = st.lists(
    st.tuples(
        st.sampled_from([0xA0, 0xA0, 0xA0, 0xA7, 0xA8, 0xA9, 0xAA, 0xA1, 0xA4, 0xA5]),
        st.sampled_from([0x00, 0x02, 0x04, 0x06, 0x08, 0x20, 0x24, 0x2A, 0x2E, 0xFF, 0x80, 0x3F]),
        st.integers(1, 3000),
    ),
    max_size=40,
)


class ClockingEveryControlWrite(Vdc):
    """A chip that runs the sound ticks at every A0 write (the plain path)."""

    @staticmethod
    def _control_write_clocks_sound(old: int, new: int) -> bool:
        return True


class EndingQuietAtEverySoundWrite(Vdc):
    """A chip that looks for timer events again after every sound-clocked write (the plain path)."""

    @staticmethod
    def _sound_write_ends_quiet(a: int) -> bool:
        return True


def _assert_same_chip(fast: Vdc, plain: Vdc, accesses: list[tuple[int, int, int]]) -> None:
    """Both chips answer every read, /INT and its next rise alike over `accesses` (address, value,
    cycles since the last), and hold the same state once both have run their ticks."""
    cycle = 100
    for address, value, gap in accesses:
        cycle += gap
        if address in (0xA1, 0xA4, 0xA5):
            assert fast.read(address, cycle) == plain.read(address, cycle), (address, cycle)
        else:
            fast.write(address, value, cycle)
            plain.write(address, value, cycle)
        assert fast.irq(cycle) == plain.irq(cycle)
        assert fast.next_irq_event(cycle) == plain.next_irq_event(cycle)
    for vdc in (fast, plain):
        vdc._sync_ticks(cycle)
    assert fast.state() == plain.state()


@given(region=st.sampled_from(sorted(REGIONS)), accesses=SOUND_ACCESSES)
@example(region="ntsc", accesses=[(0xAA, 0x20, 5), (0xA0, 0x04, 5), (0xA0, 0x06, 2000), (0xA1, 0, 3000)])
def test_control_writes_that_keep_the_sound_interrupt_enable_leave_the_ticks_waiting(
    region: str, accesses: list[tuple[int, int, int]]
) -> None:
    """An A0 write that leaves b2 as it was runs no sound ticks (`_control_write_clocks_sound`);
    the chip must answer every read, /INT and its next rise as one that runs them at every A0 write,
    and hold the same state once both have run their ticks."""
    fast = Vdc(REGIONS[region])
    plain = ClockingEveryControlWrite(REGIONS[region])
    _assert_same_chip(fast, plain, accesses)


@given(region=st.sampled_from(sorted(REGIONS)), accesses=SOUND_ACCESSES)
@example(region="ntsc", accesses=[(0xA0, 0x04, 5), (0xA8, 0x20, 5), (0xA1, 0, 2000), (0xA9, 0xFF, 3000)])
@example(region="pal", accesses=[(0xAA, 0x20, 5), (0xA0, 0x04, 5), (0xA1, 0, 2900), (0xA1, 0, 2900)])
def test_sound_register_writes_keep_the_quiet_span(region: str, accesses: list[tuple[int, int, int]]) -> None:
    """A write to A7-AA leaves `_quiet_until` as it was (`_sound_write_ends_quiet`); the chip must
    answer every read, /INT and its next rise as one that looks for timer events again after
    every sound-clocked write, and hold the same state once both have run their ticks."""
    fast = Vdc(REGIONS[region])
    plain = EndingQuietAtEverySoundWrite(REGIONS[region])
    _assert_same_chip(fast, plain, accesses)
