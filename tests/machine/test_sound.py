"""The VDC sound shift register, its clocks, the sound interrupt and the audio level.

The facts: docs/hardware.md, "Sound"."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.machine.sound import (
    FAST_CLOCK,
    NOISE,
    SOUND_INTERRUPT_ENABLE,
    AudioRecorder,
    SoundShifter,
    shift_many,
    shift_once,
)
from hilbridge.machine.timing import NTSC, PAL
from hilbridge.machine.vdc import Vdc


@given(st.integers(0, (1 << 24) - 1))
def test_without_noise_the_register_rotates_and_outputs_lsb_first(value: int) -> None:
    signal, outputs = value, []
    for _ in range(24):
        signal, bit = shift_once(signal, noise=False)
        outputs.append(bit)
    assert signal == value
    assert outputs == [value >> n & 1 for n in range(24)]


@given(st.integers(0, (1 << 24) - 1))
def test_noise_feeds_bit0_xor_bit5_into_bits_23_and_15(value: int) -> None:
    shifted, bit = shift_once(value, noise=True)
    feedback = (value & 1) ^ (value >> 5 & 1)
    assert bit == value & 1
    assert shifted >> 23 == feedback and shifted >> 15 & 1 == feedback
    assert shifted & 0x7FFF == (value >> 1) & 0x7FFF  # the low bits just move down


@given(st.integers(0, (1 << 24) - 1), st.booleans(), st.integers(1, 3000))
def test_many_shifts_at_once_are_shift_once_that_many_times(value: int, noise: bool, count: int) -> None:
    signal, bit = value, 0
    for _ in range(count):
        signal, bit = shift_once(signal, noise)
    assert shift_many(value, noise, count) == (signal, bit)


def sound_interrupts(vdc: Vdc, cycles: int) -> list[int]:
    """Cycles at which a sound interrupt (A1 b2) was seen, polling /INT and reading A1 as a handler."""
    seen = []
    cycle = 0
    while cycle < cycles:
        if vdc.irq(cycle):
            if vdc.read(0xA1, cycle + 2) & 0x04:
                seen.append(cycle)
            cycle += 2
        cycle += 1
    return seen


@pytest.mark.parametrize(("region", "fast", "lines"), [(NTSC, True, 96), (NTSC, False, 384), (PAL, True, 96)])
def test_sound_interrupt_every_24_shifts(region, fast: bool, lines: int) -> None:
    vdc = Vdc(region)
    vdc.write(0xA0, 0x04, 10)
    vdc.write(0xAA, 0x20 if fast else 0x00, 13)
    seen = sound_interrupts(vdc, 60_000)
    gaps = np.diff(seen)
    cycles_per_line = region.htotal / float(region.pixels_per_cycle)
    assert len(gaps) >= 3
    assert np.all(np.abs(gaps - lines * cycles_per_line) <= 2), gaps


def test_sound_interrupt_needs_a0_b2() -> None:
    vdc = Vdc(NTSC)
    vdc.write(0xAA, 0x20, 13)
    assert sound_interrupts(vdc, 30_000) == []


def test_rewriting_the_register_every_frame_starves_the_interrupt() -> None:
    # measured on MAME 0.251 (docs/hardware.md, "Sound"): with the slow clock, rewriting A7-A9
    # every frame: no sound interrupt
    vdc = Vdc(NTSC)
    vdc.write(0xA0, 0x04, 10)
    frame = int(NTSC.cycles_per_frame)
    seen = []
    for k in range(8):
        vdc.write(0xA7, 0x55, 20 + k * frame)
        seen += [c for c in sound_interrupts_between(vdc, 25 + k * frame, (k + 1) * frame)]
    assert seen == []


def sound_interrupts_between(vdc: Vdc, start: int, end: int) -> list[int]:
    return [c for c in range(start, end, 50) if vdc.irq(c) and vdc.read(0xA1, c + 2) & 0x04]


def test_write_to_shift_register_delays_the_next_shift() -> None:
    chip = SoundShifter(bytearray(256))
    chip.registers[0xA9] = 0x01
    chip.prescaler = 15  # the next tick is due to shift (slow clock)
    chip.written = True
    chip.tick()
    assert chip.registers[0xA9] == 0x01 and chip.pending, "the due shift waits one tick"
    chip.tick()
    assert chip.registers[0xA9] == 0x00 and chip.registers[0xA7] == 0x80
    assert chip.count == 1


def test_level_is_output_and_enable_times_volume() -> None:
    chip = SoundShifter(bytearray(256))
    chip.output = 1
    chip.registers[0xAA] = 0x80 | 8
    assert chip.level() == pytest.approx(0.25)
    chip.registers[0xAA] = 0x08  # not enabled
    assert chip.level() == 0.0
    chip.registers[0xAA] = 0x80  # volume 0 is silent
    assert chip.level() == 0.0


def test_audio_recorder_box_filters_the_level() -> None:
    recorder = AudioRecorder()
    second = 10**18
    recorder.set_level(second // 4, 1.0)
    recorder.set_level(second // 2, 0.0)
    samples = recorder.samples(4, second)
    assert samples.tolist() == pytest.approx([0.0, 0.25, 0.0, 0.0])
    samples = recorder.samples(8, second)
    assert samples.tolist() == pytest.approx([0, 0, 0.25, 0.25, 0, 0, 0, 0])


def test_square_wave_from_the_register_has_the_expected_pitch() -> None:
    # 0x00FFFF rotating at the fast clock: 12 shifts high, 12 low -> a period of 24 shifts
    vdc = Vdc(NTSC, audio=True)
    vdc.write(0xA7, 0x00, 10)
    vdc.write(0xA8, 0xFF, 13)
    vdc.write(0xA9, 0xFF, 16)
    vdc.write(0xAA, 0x80 | 0x20 | 15, 19)
    seconds = 0.5
    cycles = int(seconds * float(NTSC.machine_cycles_per_second))
    samples = vdc.audio_samples(44100, cycles)
    spectrum = np.abs(np.fft.rfft(samples - samples.mean()))
    peak_hz = np.argmax(spectrum) / seconds
    shift_rate = 7159090 / 455 / 4  # lines per second / 4
    assert peak_hz == pytest.approx(shift_rate / 24, rel=0.01)
    assert samples.max() == pytest.approx(0.125 * 15 / 16, rel=0.05)  # MAME -wavwrite level


@settings(max_examples=400)
@given(
    prescaler=st.integers(0, 255),
    pending=st.booleans(),
    written=st.booleans(),
    count=st.integers(0, 23),
    control=st.sampled_from([0x00, FAST_CLOCK, NOISE, FAST_CLOCK | NOISE]),
)
def test_ticks_to_24th_shift_is_where_ticking_raises_the_interrupt(
    prescaler, pending, written, count, control
):
    """The closed form (a pending shift or a write's lost one, then one shift per prescaler
    rollover) equals ticking one by one until the tick that raises the sound interrupt."""
    registers = bytearray(256)
    registers[0xAA] = control
    registers[0xA0] = SOUND_INTERRUPT_ENABLE
    sound = SoundShifter(registers)
    sound.prescaler, sound.pending, sound.written, sound.count = prescaler, pending, written, count
    expected = sound.ticks_to_24th_shift()
    ticks = 1
    while not sound.tick():
        ticks += 1
    assert ticks == expected
