"""Beam timing of the NTSC (8244) and PAL (8245) consoles: the one place for cycle ↔ beam arithmetic.

* `Region`: the clocks and raster size, as data. The CPU clock and the VDC pixel clock are not in an
  exact integer ratio (5 369 317 Hz vs 7 159 090 Hz: 20.0000037 pixel clocks per machine cycle), so
  conversions are exact (rational or integer attoseconds) and never drift.
* `BeamTiming`, `ChipTiming`, `Raster`: MAME 0.251's integer-attosecond clocks, the chip's blanking
  windows, and the beam position and beam-derived signals (T1, hstatus, Y beam) of a global pixel.
* `Timeslices`: MAME's scheduler timeslices, which decide the CPU-local time of an access.
* `SampledT1Edges`, `BeamT1Edges`: T1 falling edges as the 8048's event counter counts them.

The facts and their sources: docs/hardware.md, "Beam timing".
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from typing import Protocol

import numpy as np

CLOCKS_PER_MACHINE_CYCLE = 15  # 8048: oscillator / 3 / 5


@dataclass(frozen=True, slots=True)
class Region:
    name: str
    cpu_clock_hz: int
    pixel_clock_hz: int
    htotal: int  # pixel clocks per line
    vtotal: int  # lines per frame
    power_on_line: int  # raster line at cycle 0 (MAME: start of its screen VBLANK)
    power_on_hpos: int
    hides_high_characters: bool  # 8244 does not draw characters/quads with Y < 14

    @property
    def pixels_per_frame(self) -> int:
        return self.htotal * self.vtotal

    @property
    def pixels_per_cycle(self) -> Fraction:
        """Pixel clocks per 8048 machine cycle (≈20 NTSC, ≈18 PAL)."""
        return Fraction(self.pixel_clock_hz * CLOCKS_PER_MACHINE_CYCLE, self.cpu_clock_hz)

    @property
    def cycles_per_frame(self) -> Fraction:
        return self.pixels_per_frame / self.pixels_per_cycle

    @property
    def machine_cycles_per_second(self) -> Fraction:
        return Fraction(self.cpu_clock_hz, CLOCKS_PER_MACHINE_CYCLE)

    @property
    def frame_rate_hz(self) -> Fraction:
        return Fraction(self.pixel_clock_hz, self.pixels_per_frame)

    def frame_end_cycle(self, frame: int) -> int:
        """Machine cycle at which frame `frame` (0-based) ends, rounded as MAME's trace stamps it."""
        exact = self.cycles_per_frame * (frame + 1)
        return int(exact + Fraction(1, 2))


NTSC = Region(
    name="ntsc",
    cpu_clock_hz=5_369_317,
    pixel_clock_hz=7_159_090,
    htotal=455,
    vtotal=263,
    power_on_line=243,
    power_on_hpos=0,
    hides_high_characters=True,
)

PAL = Region(
    name="pal",
    cpu_clock_hz=5_911_492,
    pixel_clock_hz=7_093_790,
    htotal=456,
    vtotal=313,
    power_on_line=243,
    power_on_hpos=0,
    hides_high_characters=False,
)

REGIONS: dict[str, Region] = {region.name: region for region in (NTSC, PAL)}


# -- MAME's clocks in attoseconds ---------------------------------------------------------------------
ATTOSECONDS_PER_SECOND = 10**18
POWER_ON_LINE = 243  # MAME: the raster starts at the start of its screen VBLANK
SOUND_UPDATE_AS = ATTOSECONDS_PER_SECOND // 50  # MAME sound manager update timer (even with -sound none)
NEVER = 1 << 62


@dataclass(frozen=True, slots=True)
class ChipTiming:
    """Per-chip raster windows from MAME's `set_default_params` (docs/hardware.md, "Beam timing")."""

    vblank_start: int  # line
    vblank_end: int  # line
    hblank_start: int  # hpos
    hblank_end: int  # hpos (exclusive)
    bgate_start: int  # hpos from which the Y beam counts the next line
    hstatus_start: int = 225
    y_beam_cap: int = 263


CHIP_TIMING: dict[str, ChipTiming] = {
    "ntsc": ChipTiming(vblank_start=242, vblank_end=0, hblank_start=366, hblank_end=453, bgate_start=413),
    "pal": ChipTiming(vblank_start=242, vblank_end=312, hblank_start=366, hblank_end=454, bgate_start=414),
}


@dataclass(frozen=True, slots=True)
class BeamTiming:
    """MAME's integer-attosecond clocks: machine cycle ↔ global pixel-clock count since power-on.

    MAME runs the 8048 at ceil(clock / 15) cycles per second (`execute_clocks_to_cycles` rounds up),
    so one cycle lasts 10**18 // 357955 as (NTSC), a hair shorter than 15 / 5369317 s; a pixel clock
    lasts 10**18 // pixel_clock as, and the screen rounds time to the *nearest* pixel."""

    cycle_as: int
    pixel_as: int
    htotal: int
    vtotal: int
    slice_cycle_as: int  # CPU-local time per cycle inside a timeslice (15 clock periods)

    @classmethod
    def for_region(cls, region: Region) -> BeamTiming:
        cycles_per_second = -(-region.cpu_clock_hz // CLOCKS_PER_MACHINE_CYCLE)
        return cls(
            ATTOSECONDS_PER_SECOND // cycles_per_second,
            ATTOSECONDS_PER_SECOND // region.pixel_clock_hz,
            region.htotal,
            region.vtotal,
            CLOCKS_PER_MACHINE_CYCLE * (ATTOSECONDS_PER_SECOND // region.cpu_clock_hz),
        )

    @property
    def pixels_per_frame(self) -> int:
        return self.htotal * self.vtotal

    def time_of_cycle(self, cycle: int) -> int:
        return cycle * self.cycle_as

    def pixel_at(self, cycle: int) -> int:
        """Pixel clocks since power-on at `cycle`, rounded to the nearest as MAME's screen does."""
        return (cycle * self.cycle_as + self.pixel_as // 2) // self.pixel_as

    def first_cycle_at_pixel(self, pixel: int) -> int:
        """Smallest cycle c >= 0 with pixel_at(c) >= pixel."""
        need = pixel * self.pixel_as - self.pixel_as // 2
        return max(0, -(-need // self.cycle_as))

    def frame_end_cycle(self, frame: int) -> int:
        """First cycle at which frame `frame` (0-based from power-on) is complete: line 243 reached."""
        return self.first_cycle_at_pixel((frame + 1) * self.pixels_per_frame)


class Raster:
    """Where the beam is and what the VDC's beam-derived signals are at a global pixel count.

    A global pixel counts pixel clocks since power-on, when the beam is at (line 243, hpos 0); line 0
    is the first visible line. T1 is hblank OR vblank; hstatus (A1 b0) is set from hpos 225 up to the
    Y beam's next-line gate, outside the last lines."""

    def __init__(self, timing: BeamTiming, chip: ChipTiming) -> None:
        self.timing = timing
        self.chip = chip
        self.htotal = timing.htotal
        self.vtotal = timing.vtotal
        self.frame_pixels = timing.htotal * timing.vtotal
        self.line0_offset = (timing.vtotal - POWER_ON_LINE) * timing.htotal  # frame start to line 0
        self.vbl_offset = (timing.vtotal - 1) * timing.htotal + chip.hblank_start - 1  # VDC VBL (242, 365)
        self.tick_offset = self.line0_offset + chip.hblank_start  # first hblank sound tick
        self._hstatus_spans = _hstatus_spans(timing, chip)

    def vbl_cycle(self, frame: int) -> int:
        """The first instruction-start cycle that sees frame `frame`'s VBL event (242, 365): an
        instruction sees a timer event at time t iff it starts at or after cycle t // T."""
        return (self.vbl_offset + frame * self.frame_pixels) * self.timing.pixel_as // self.timing.cycle_as

    def tick_cycle(self, tick: int) -> int:
        """The first instruction-start cycle that sees hblank sound tick `tick` (hpos 366)."""
        return (self.tick_offset + tick * self.htotal) * self.timing.pixel_as // self.timing.cycle_as

    def ticks_before(self, start: int) -> int:
        """Number of hblank ticks whose event an instruction starting at `start` sees."""
        timing = self.timing
        limit = (start + 1) * timing.cycle_as  # ticks firing strictly before this time
        span = limit - self.tick_offset * timing.pixel_as
        return 0 if span <= 0 else -(-span // (self.htotal * timing.pixel_as))

    def position_of(self, pixel: int) -> tuple[int, int]:
        """(line, hpos) of global pixel `pixel`."""
        pixel %= self.frame_pixels
        return (pixel // self.htotal + POWER_ON_LINE) % self.vtotal, pixel % self.htotal

    def vblank(self, line: int, hpos: int) -> bool:
        chip = self.chip
        start, end, edge = chip.vblank_start, chip.vblank_end, chip.hblank_start - 1
        if (line == start and hpos >= edge) or (line == end and hpos <= edge):
            return True
        if end < start:
            return line > start or line < end
        return start < line < end

    def hblank(self, hpos: int) -> bool:
        return self.chip.hblank_start <= hpos < self.chip.hblank_end

    def t1(self, line: int, hpos: int) -> bool:
        return self.hblank(hpos) or self.vblank(line, hpos)

    def y_beam(self, line: int, hpos: int) -> int:
        """The Y beam counter (A4): the next line from the bgate on, line 0 before its hblank counts
        as the frame's last line, capped."""
        chip = self.chip
        if line == 0 and hpos < chip.hblank_start:
            line = self.vtotal
        if hpos >= chip.bgate_start:
            line += 1
        return min(line, chip.y_beam_cap)

    def hstatus(self, line: int, hpos: int) -> bool:
        chip = self.chip
        return chip.hstatus_start <= hpos < chip.bgate_start and self.y_beam(line, hpos) <= 242

    def hstatus_span(self, line: int) -> tuple[int, int]:
        """The hpos range [low, high) in which `hstatus(line, hpos)` holds, from `hstatus` itself (once
        per line and region): a status read then tests a range instead of working out y_beam.

        `hstatus` and `y_beam` compare hpos with hstatus_start, hblank_start and bgate_start only,
        so between those edges the answer stays as it is at a piece's first hpos: one `hstatus` per
        piece, not per hpos (a cart whose reads reach new lines every frame asked hundreds)."""
        span = self._hstatus_spans[line]
        if span is None:
            chip = self.chip
            edges = sorted({0, chip.hstatus_start, chip.hblank_start, chip.bgate_start, self.htotal})
            held = [(low, high) for low, high in pairwise(edges) if self.hstatus(line, low)]
            span = (held[0][0], held[-1][1]) if held else (0, 0)
            assert sum(high - low for low, high in held) == span[1] - span[0], (
                f"hstatus is not one range on line {line}"
            )
            self._hstatus_spans[line] = span
        return span

    def positions_of(self, pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`position_of` of each global pixel in `pixels` (int64): their lines and their hpos."""
        pixels = pixels % self.frame_pixels
        return (pixels // self.htotal + POWER_ON_LINE) % self.vtotal, pixels % self.htotal

    def hstatus_of(self, pixels: np.ndarray) -> np.ndarray:
        """`hstatus(*position_of(pixel))` of each global pixel in `pixels` (int64), as booleans."""
        chip = self.chip
        line, hpos = self.positions_of(pixels)
        line[(line == 0) & (hpos < chip.hblank_start)] = self.vtotal  # y_beam's line 0 before its hblank
        # from bgate_start on hstatus is clear, so y_beam's next-line step never matters here
        return (
            (chip.hstatus_start <= hpos)
            & (hpos < chip.bgate_start)
            & (np.minimum(line, chip.y_beam_cap) <= 242)
        )

    def next_t1_change_pixel(self, pixel: int) -> int:
        """First global pixel after `pixel` at which T1 changes."""
        return self.t1_run(pixel)[1]

    def t1_run(self, pixel: int) -> tuple[bool, int]:
        """T1 at global pixel `pixel` and the first pixel after it at which T1 changes."""
        chip = self.chip
        frame_pixel = pixel % self.frame_pixels
        line = (frame_pixel // self.htotal + POWER_ON_LINE) % self.vtotal
        hpos = frame_pixel % self.htotal
        line_start = pixel - hpos
        if self.vblank(line, hpos):
            # T1 stays high through VBLANK and the hblank that follows it
            lines_ahead = (chip.vblank_end - line) % self.vtotal
            candidate = line_start + lines_ahead * self.htotal + chip.hblank_end
            if candidate <= pixel:
                candidate += self.frame_pixels
            return True, candidate
        if self.hblank(hpos):
            return True, line_start + chip.hblank_end
        rise = chip.hblank_start - 1 if line == chip.vblank_start else chip.hblank_start
        if hpos < rise:
            return False, line_start + rise
        next_line = (line + 1) % self.vtotal
        rise = chip.hblank_start - 1 if next_line == chip.vblank_start else chip.hblank_start
        return False, line_start + self.htotal + rise

    def next_hstatus_change(self, pixel: int) -> int:
        """First global pixel after `pixel` at which A1 b0 (hstatus) may differ."""
        chip = self.chip
        line_start = pixel - pixel % self.frame_pixels % self.htotal
        for line_offset in range(self.vtotal + 1):
            base = line_start + line_offset * self.htotal
            for hpos in sorted((chip.hstatus_start, chip.bgate_start, chip.hblank_start)):
                if base + hpos > pixel:
                    return base + hpos
        return NEVER


class Timeslices:
    """MAME's scheduler timeslices, as far as they move an access on the beam.

    Inside a timeslice MAME's CPU-local time advances by 15 clock periods per cycle (`slice_cycle_as`,
    4162 fs longer than a scheduler cycle on NTSC); a slice starts where the last slice-ending timer
    fired: the hblank sound clock (hpos 366, every line), screen VBLANK start (243, 0, and power-on),
    scanline 0 / VBLANK end, the VDC's VBL (242, 365) and the sound manager's 50 Hz update. (A timer's
    slice really starts at the first instruction boundary at or after its cycle; we take the cycle
    itself, up to one slice cycle minus one cycle early: no visible difference on any oracle cart.)
    The VDC also starts a slice at the end of each A1 read; it keeps that part (`Vdc._access_time`)."""

    def __init__(self, raster: Raster) -> None:
        timing = raster.timing
        pixel_as, frame_as = timing.pixel_as, raster.frame_pixels * timing.pixel_as
        self.cycle_as = timing.cycle_as
        self.line_timer = (raster.tick_offset * pixel_as, raster.htotal * pixel_as)
        self.frame_timers = (
            (0, frame_as),  # screen VBLANK start (243, 0); power-on starts a slice too
            (raster.line0_offset * pixel_as, frame_as),  # scanline 0 and VBLANK end (0, 0)
            (raster.vbl_offset * pixel_as, frame_as),  # VDC VBL (242, 365)
            (SOUND_UPDATE_AS, SOUND_UPDATE_AS),  # sound manager stream update, 50 Hz
        )
        self.timers = (self.line_timer, *self.frame_timers)
        self.reset()

    def reset(self) -> None:
        """Forget the caches (after a state load)."""
        self.cache = (0, 0, 0)  # (first, last + 1) instruction starts of a slice, its start
        self._frame_timers_window = (0, 0, 0)  # as `cache`, for the few-a-frame timers alone

    def start(self, start: int) -> int:
        """Cycle at which the MAME timeslice holding an instruction that starts at `start` began:
        the last firing of any slice-ending timer it sees. Valid from there to the next firing."""
        low, high, begun = self.cache
        if low <= start < high:
            return begun
        cycle_as = self.cycle_as
        limit = (start + 1) * cycle_as
        low, following, begun = self._frame_timers_window
        if not low <= start < following:
            low, following, begun = self._frame_timers_window = self._window(self.frame_timers, limit)
        first, period = self.line_timer
        if limit > first:
            last = first + (limit - 1 - first) // period * period
            fired = last // cycle_as
            if fired > begun:
                begun = fired
            high = (last + period) // cycle_as
        else:
            high = first // cycle_as
        if high < following:
            following = high
        self.cache = (begun, following, begun)
        return begun

    def starts(self, first: int, period: int, count: int) -> np.ndarray | None:
        """`start(first + k * period)` for k < `count`, as an int64 array (skipped polling reads),
        or None before the first line timer fired. One window of the few-a-frame timers at a
        time; the line timer's arithmetic in attoseconds is done relative to the window's first
        start, so that it fits 64 bits."""
        cycle_as = self.cycle_as
        line_first, line_period = self.line_timer
        if (first + 1) * cycle_as - 1 < line_first or count * period * cycle_as >= 1 << 62:
            return None
        starts = np.empty(count, np.int64)
        done = 0
        while done < count:
            start = first + done * period
            low, following, begun = self._frame_timers_window
            if not low <= start < following:
                window = self._window(self.frame_timers, (start + 1) * cycle_as)
                low, following, begun = self._frame_timers_window = window
            run = min(count - done, (following - 1 - start) // period + 1)
            lines, rest = divmod((start + 1) * cycle_as - 1 - line_first, line_period)
            more = (rest + np.arange(run, dtype=np.int64) * (period * cycle_as)) // line_period
            fired_base, fired_rest = divmod(line_first + lines * line_period, cycle_as)
            fired = fired_base + (fired_rest + more * line_period) // cycle_as
            starts[done : done + run] = np.maximum(fired, begun)
            done += run
        return starts

    def _window(self, timers: tuple[tuple[int, int], ...], limit: int) -> tuple[int, int, int]:
        """(first, last + 1) instruction starts that see the same last firing of `timers` as one
        that starts before attosecond `limit` does, and the cycle of that firing."""
        cycle_as = self.cycle_as
        begun, following = 0, NEVER
        for first, period in timers:
            if limit > first:
                last = first + (limit - 1 - first) // period * period
                fired, high = last // cycle_as, (last + period) // cycle_as
            else:
                fired, high = 0, first // cycle_as
            begun = max(begun, fired)
            following = min(following, high)
        return begun, following, begun


# -- T1 edges as the event counter sees them ----------------------------------------------------------
class T1Edges(Protocol):
    """Falling T1 edges in the samples the 8048 takes once per machine cycle (its event counter)."""

    def falls(self, previous: int, first: int, last: int) -> int:
        """Falling edges in the samples at cycles first..last, the sample before them `previous`."""
        ...

    def fall_sample(self, previous: int, first: int, count: int) -> int:
        """The cycle of the sample that completes the `count`-th (>= 1) falling edge from `first`, or
        an earlier cycle (the CPU then counts up to there and asks again)."""
        ...


class SampledT1Edges:
    """Falling T1 edges as the 8048's event counter sees them: T1 sampled once per machine cycle.

    This is the definition, one `t1()` call per cycle; `BeamT1Edges` gives the same answers fast."""

    SEARCH_CYCLES = 16384

    def __init__(self, t1: Callable[[int], bool]) -> None:
        self.t1 = t1

    def falls(self, previous: int, first: int, last: int) -> int:
        edges = 0
        for cycle in range(first, last + 1):
            current = self.t1(cycle)
            edges += previous and not current
            previous = current
        return edges

    def fall_sample(self, previous: int, first: int, count: int) -> int:
        """As `T1Edges.fall_sample`; T1 may never fall, so the search gives up after a while."""
        for cycle in range(first, first + self.SEARCH_CYCLES):
            current = self.t1(cycle)
            if previous and not current:
                count -= 1
                if not count:
                    return cycle
            previous = current
        return first + self.SEARCH_CYCLES


@functools.cache
def _hstatus_spans(timing: BeamTiming, chip: ChipTiming) -> list[tuple[int, int] | None]:
    """Each line's `Raster.hstatus_span`, filled in as lines are asked: one list per region."""
    return [None] * timing.vtotal


@functools.cache
def _fall_offsets(timing: BeamTiming, chip: ChipTiming) -> tuple[int, ...]:
    raster = Raster(timing, chip)
    htotal = timing.htotal
    # a line falls at hblank_end unless T1 is still high in the middle of the low stretch after it
    low_middle = (htotal - chip.hblank_end + chip.hblank_start - 1) // 2
    return tuple(
        line * htotal + chip.hblank_end
        for line in range(timing.vtotal)
        if not raster.t1_run(line * htotal + chip.hblank_end + low_middle)[0]
    )


def fall_offsets(raster: Raster) -> tuple[int, ...]:
    """The pixels, from a frame's start, at which T1 falls: once per line at hpos `hblank_end`, except
    on lines where vblank still holds it high. A pure fact of the raster (the middle of a low stretch
    is far from any change, so MAME's local time does not matter there), worked out once per region:
    every console start needs it."""
    return _fall_offsets(raster.timing, raster.chip)


class BeamT1Edges:
    """The same falling-edge counts from the beam arithmetic, in a few `t1()` calls.

    T1 (hblank OR vblank) falls once per line at hpos `hblank_end`, except on lines where vblank
    still holds it high: the fall pixels repeat every frame. A sample's T1 follows MAME's CPU-local
    time, which runs ahead of the cycle's global time by at most a slice's drift (well under a pixel,
    and T1 changes are many cycles apart). So the sample that first sees a fall at pixel F is the
    first cycle g whose global pixel reaches F, or g - 1 when the local time already crossed it: one
    `t1(g - 1)` call decides. Everything else is counting fall pixels in a pixel range."""

    def __init__(self, t1: Callable[[int], bool], raster: Raster) -> None:
        self.t1 = t1
        timing = raster.timing
        self.pixel_at: Callable[[int], int] = timing.pixel_at
        self.first_cycle_at_pixel: Callable[[int], int] = timing.first_cycle_at_pixel
        self.frame_pixels = raster.frame_pixels
        self.fall_offsets = fall_offsets(raster)

    def _falls_upto(self, pixel: int) -> int:
        """Fall pixels F with 0 <= F <= `pixel`."""
        if pixel < 0:
            return 0
        frames, offset = divmod(pixel, self.frame_pixels)
        return frames * len(self.fall_offsets) + bisect.bisect_right(self.fall_offsets, offset)

    def _fall_pixel(self, number: int) -> int:
        """The `number`-th (from 1) fall pixel."""
        frames, index = divmod(number - 1, len(self.fall_offsets))
        return frames * self.frame_pixels + self.fall_offsets[index]

    def _seen_by(self, cycle: int) -> int:
        """Falls whose first low sample is at or before `cycle`."""
        pixel_at = self.pixel_at
        count = self._falls_upto(pixel_at(cycle))
        if self._falls_upto(pixel_at(cycle + 1)) > count and not self.t1(cycle):
            count += 1  # the next fall's global cycle is cycle + 1, but the local time got there
        return count

    def falls(self, previous: int, first: int, last: int) -> int:
        first_fall = 1 if previous and not self.t1(first) else 0
        return first_fall + self._seen_by(last) - self._seen_by(first)

    def fall_sample(self, previous: int, first: int, count: int) -> int:
        first_fall = 1 if previous and not self.t1(first) else 0
        if first_fall and count == 1:
            return first
        pixel = self._fall_pixel(self._seen_by(first) + count - first_fall)
        cycle = self.first_cycle_at_pixel(pixel)
        return cycle - 1 if cycle and not self.t1(cycle - 1) else cycle
