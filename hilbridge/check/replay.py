"""What the console drew: the captured VDC writes replayed at their cycles through the VDC model.

Reads are replayed too: a status or collision read makes the VDC draw up to the beam, and where the
last partial update stopped decides how a half-drawn line ends (docs/accuracy.md), so a replay
without the reads is not the console's picture (the check then does not compare pictures).

The slot does not carry P13 (the VDC's chip select), so a capture that reports only the slot's P1
bits is classified by P14, A7 and the address, as docs/hardware.md describes: P14 = 1 and an address in
the VDC's register ranges. Sources that report the whole P1 latch (the simulated adapter, MAME)
give P13 itself. LUM (P17) is only known from those sources, at the accesses that carry it.
"""

from __future__ import annotations

import numpy as np

from hilbridge.check.emulator import COPY_FLAG, READ, WRITE, Event
from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import Vdc

VDC_RANGES = ((0x00, 0x7F), (0xA0, 0xAA), (0xC0, 0xE9))
P13_VDC_DISABLE = 0x08
P14_RAM_DISABLE = 0x10
P17_LUM = 0x80


def classified_as_vdc(address: int, p1: int) -> bool:
    """A write the slot sees goes to the VDC, judged from the slot's P14 and the address alone."""
    return bool(p1 & P14_RAM_DISABLE) and any(low <= address <= high for low, high in VDC_RANGES)


class PictureReplay:
    """A VDC fed only with the writes of a capture; `pictures_until` yields its completed frames."""

    def __init__(self, region: str, full_p1: bool, *, state: dict | None = None, frame: int = 0) -> None:
        """A replay from power-on, or (`state`, `frame`) from the start of video frame `frame` with
        the VDC in `state` (the emulator's, where both sides were equal up to there)."""
        self.vdc = Vdc(REGIONS[region])
        self.full_p1 = full_p1
        self.next_frame = frame
        self._lum = P17_LUM  # P1 is FFh from power-on: LUM high, the picture dim
        if state is not None:
            self.vdc.load_state(state)
            self._lum = 0 if self.vdc.lum_bright else P17_LUM

    def _to_vdc(self, address: int, p1: int) -> bool:
        if self.full_p1:
            return not p1 & P13_VDC_DISABLE
        return classified_as_vdc(address, p1)

    def pictures_until(self, cycle: int) -> list[tuple[int, np.ndarray]]:
        """The frames that end at or before `cycle`, as (video frame number, picture)."""
        done = []
        vdc = self.vdc
        while vdc.frame_end_cycle(self.next_frame) <= cycle:
            vdc.run_to(vdc.frame_end_cycle(self.next_frame))
            done.append((self.next_frame, vdc.frame().copy()))
            self.next_frame += 1
        return done

    def apply(self, events: list[Event]) -> list[tuple[int, np.ndarray]]:
        """Replay the writes among `events` (in cycle order); the frames completed on the way."""
        done: list[tuple[int, np.ndarray]] = []
        vdc = self.vdc
        next_end = vdc.frame_end_cycle(self.next_frame)
        for cycle, kind, address, value, p1 in events:
            if cycle >= next_end:
                done += self.pictures_until(cycle)
                next_end = vdc.frame_end_cycle(self.next_frame)
            if self.full_p1:
                lum = p1 & P17_LUM
                if lum != self._lum:
                    vdc.set_lum(not lum, cycle)
                    self._lum = lum
            plain = kind & ~COPY_FLAG
            if plain == WRITE and self._to_vdc(address, p1):
                vdc.write(address, value, cycle)
            elif plain == READ and self._to_vdc(address, p1):
                vdc.read(address, cycle)  # status and collision reads move where the VDC has drawn to
        return done
