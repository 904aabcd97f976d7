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
