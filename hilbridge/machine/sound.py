"""The VDC's sound: a 24-bit shift register clocked from horizontal blank (docs/hardware.md, "Sound").

The register lives in VDC registers A7 (bits 23-16), A8 and A9 (bits 7-0); AA is the control byte.
`SoundShifter.tick()` is one hblank-start clock, exactly as MAME 0.251's `sound_update`. The audible
output is 1 bit (the last bit shifted out, AND the enable bit AA b7) gated by a 16-step duty cycle at
the VDC clock (on for `volume` steps of 16). That duty cycle runs at 224 kHz, far above audio, so
`AudioRecorder` keeps its mean, output × volume / 16, as a piecewise-constant level and box-filters it
into samples at the requested rate. Levels are scaled to what MAME 0.251's `-wavwrite` records:
measured 0.125 × volume / 16 of full scale while the output bit is on (its stream value is 0.5,
routed at 0.40; the rest of its mixer brings that to 0.25).
"""

from __future__ import annotations

from functools import cache

import numpy as np

SHIFT_HIGH, SHIFT_MID, SHIFT_LOW, SOUND_CONTROL, CONTROL = 0xA7, 0xA8, 0xA9, 0xAA, 0xA0
ENABLE, FAST_CLOCK, NOISE, VOLUME = 0x80, 0x20, 0x10, 0x0F
SOUND_INTERRUPT_ENABLE = 0x04  # A0 b2
SHIFTS_PER_INTERRUPT = 24
CHIP_ON_LEVEL = 0.5  # MAME's stream value while the output bit is on
SPEAKER_GAIN = 0.25  # chip level -> MAME -wavwrite sample (measured at volumes 1, 8, 10, 15)


def shift_once(signal: int, noise: bool) -> tuple[int, int]:
    """One shift of the 24-bit register: (new register, output bit)."""
    output = signal & 1
    feedback = output
    signal >>= 1
    if noise:
        # noise taps bits 0 and 5 (pre-shift) and feeds the result into bit 15 as well
        feedback ^= (signal >> 4) & 1
        signal = (signal & ~0x8000) | (feedback << 15)
    return signal | (feedback << 23), output


ShiftTables = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


@cache
def shift_tables(noise: bool, power: int) -> ShiftTables:
    """The register after 2 ** `power` shifts of each value of its low, middle and high byte alone.

    A shift is linear over GF(2) (each new bit is an old bit, or with noise the XOR of two), so
    the register after those shifts is the XOR of its three bytes' entries (`_shifted`)."""
    if power == 0:
        low, mid, high = (
            [shift_once(value << place, noise)[0] for value in range(256)] for place in (0, 8, 16)
        )
    else:
        half = shift_tables(noise, power - 1)
        low, mid, high = ([_shifted(half, entry) for entry in table] for table in half)
    return tuple(low), tuple(mid), tuple(high)


def _shifted(tables: ShiftTables, signal: int) -> int:
    low, mid, high = tables
    return low[signal & 0xFF] ^ mid[(signal >> 8) & 0xFF] ^ high[signal >> 16]


def shift_many(signal: int, noise: bool, count: int) -> tuple[int, int]:
    """`count` (>= 1) shifts: (new register, output bit of the last), what `shift_once` run `count`
    times gives, in a few table lookups: all but the last by the binary digits of their number
    (`shift_tables`), the last one as it is, for its output bit."""
    before_last = count - 1
    power = 0
    while before_last:
        if before_last & 1:
            signal = _shifted(shift_tables(noise, power), signal)
        before_last >>= 1
        power += 1
    return shift_once(signal, noise)


class SoundShifter:
    """Prescaler, pending/written flags and 24-shift counter of the sound register."""

    def __init__(self, registers: bytearray) -> None:
        self.registers = registers
        self.reset()

    def reset(self) -> None:
        self.prescaler = 0
        self.pending = False
        self.written = False
        self.count = 0
        self.output = 0

    @property
    def shift_register(self) -> int:
        r = self.registers
        return r[SHIFT_HIGH] << 16 | r[SHIFT_MID] << 8 | r[SHIFT_LOW]

    def tick(self) -> bool:
        """One hblank-start clock; True when this tick raises the sound interrupt."""
        registers = self.registers
        self.prescaler = (self.prescaler + 1) & 0xFF
        control = registers[SOUND_CONTROL]
        if self.prescaler & (3 if control & FAST_CLOCK else 15) == 0:
            self.pending = True
        if self.pending and not self.written:
            self.pending = False
            signal, self.output = shift_once(self.shift_register, bool(control & NOISE))
            registers[SHIFT_HIGH] = signal >> 16
            registers[SHIFT_MID] = (signal >> 8) & 0xFF
            registers[SHIFT_LOW] = signal & 0xFF
            self.count += 1
            if self.count == SHIFTS_PER_INTERRUPT:
                self.count = 0
                return bool(registers[CONTROL] & SOUND_INTERRUPT_ENABLE)
        elif self.written:
            # a write to A7-A9 costs the next shift and restarts the 24-shift count
            self.count = 0
            self.written = False
        return False

    def ticks_to_24th_shift(self) -> int:
        """Ticks from now until the tick that completes 24 shifts, if nothing is written meanwhile:
        `tick()` run on a copy while a shift is pending or a write still costs one (two ticks at
        most), then one shift at each prescaler rollover (every mask + 1 ticks; the masks divide
        the 8-bit prescaler's 256)."""
        prescaler, pending, written, count = self.prescaler, self.pending, self.written, self.count
        mask = 3 if self.registers[SOUND_CONTROL] & FAST_CLOCK else 15
        ticks = 0
        while pending or written:
            ticks += 1
            prescaler = (prescaler + 1) & 0xFF
            if prescaler & mask == 0:
                pending = True
            if pending and not written:
                pending = False
                count += 1
                if count == SHIFTS_PER_INTERRUPT:
                    return ticks
            elif written:
                count = 0
                written = False
        first = (-prescaler) & mask or mask + 1  # ticks to the next rollover
        return ticks + first + (SHIFTS_PER_INTERRUPT - 1 - count) * (mask + 1)

    def level(self) -> float:
        """Mean chip output (0 … 0.5) over the duty cycle, before the speaker gain."""
        control = self.registers[SOUND_CONTROL]
        if not (self.output and control & ENABLE):
            return 0.0
        return CHIP_ON_LEVEL * (control & VOLUME) / 16

    def state(self) -> dict[str, int | bool]:
        return {
            "prescaler": self.prescaler,
            "pending": self.pending,
            "written": self.written,
            "count": self.count,
            "output": self.output,
        }

    def load_state(self, state: dict) -> None:
        self.prescaler = int(state["prescaler"])
        self.pending = bool(state["pending"])
        self.written = bool(state["written"])
        self.count = int(state["count"])
        self.output = int(state["output"])


class AudioRecorder:
    """Piecewise-constant speaker level over time (attoseconds), turned into samples on demand."""

    def __init__(self) -> None:
        self.times: list[int] = [0]
        self.levels: list[float] = [0.0]

    def set_level(self, time_as: int, level: float) -> None:
        level *= SPEAKER_GAIN
        if level == self.levels[-1]:
            return
        if time_as <= self.times[-1]:
            self.levels[-1] = level
            return
        self.times.append(time_as)
        self.levels.append(level)

    def samples(self, rate: int, end_as: int) -> np.ndarray:
        """float32 samples in [-1, 1] from time 0 to `end_as`, each the mean level over its period."""
        count = end_as * rate // 10**18
        if count <= 0:
            return np.zeros(0, dtype=np.float32)
        edges = np.arange(count + 1, dtype=np.float64) / rate  # sample boundaries in seconds
        times = np.asarray(self.times, dtype=np.float64) / 1e18
        levels = np.asarray(self.levels, dtype=np.float64)
        # integral of the step function at each boundary, then mean per sample
        segment_area = np.diff(times) * levels[:-1]
        cumulative = np.concatenate(([0.0], np.cumsum(segment_area)))
        index = np.clip(np.searchsorted(times, edges, side="right") - 1, 0, len(times) - 1)
        integral = cumulative[index] + (edges - times[index]) * levels[index]
        return (np.diff(integral) * rate).astype(np.float32)
