"""Clocks and raster geometry of the NTSC (8244) and PAL (8245) consoles, as data.

The CPU clock and the VDC pixel clock are not in an exact integer ratio in MAME (5 369 317 Hz vs
7 159 090 Hz: 20.0000037 pixel clocks per machine cycle), so conversions between machine cycles and
raster positions are done in exact rational arithmetic and never accumulate floating-point drift.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

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
