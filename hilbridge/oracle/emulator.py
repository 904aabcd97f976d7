"""Run our emulator on a cartridge and record its bus trace in the same format as a MAME run.

The records are built from the console's bus recorder (a listener told each access's fields), so
the comparison sees exactly what the emulator's CPU did on the MOVX bus, stamped with the same cycle
convention as MAME's trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np

from hilbridge.machine.bus import READ
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import NO_INPUT, InputMovie
from hilbridge.machine.mappers import DEFAULT_REGISTRY, registry
from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import Vdc
from hilbridge.oracle.mame import AUDIO_RATE
from hilbridge.oracle.trace import Access, FrameEnd, Trace, accesses_of, collector_paused

# Our mapper that behaves as MAME 0.251's slot of the same name, where the two differ (mappers.tsv
# `mame_slot`): 0.251's o2_rom maps 0C00h-0FFFh onto 0400h-07FFh, the console (A10 not decoded) onto
# 0800h-0BFFh.
MAME_EQUIVALENT_MAPPERS = {
    slot: mapper.name
    for slot in DEFAULT_REGISTRY.mame_slots
    if (mapper := DEFAULT_REGISTRY.for_mame_slot(slot)) is not None and mapper.name != slot
}


@dataclass(slots=True)
class EmulatorRun:
    trace: Trace
    pixels: np.ndarray | None  # (stored frames, 243, 360) palette indices; trace.pixel_frames index it
    audio: np.ndarray | None = None  # speaker samples, float -1…1 at AUDIO_RATE

    def frame_pixels(self, frame: int) -> np.ndarray:
        if self.pixels is None:
            raise ValueError("this run did not record pixels")
        return self.pixels[self.trace.pixel_frames[frame]]


def run_emulator(
    cart: bytes,
    *,
    frames: int,
    region: str = "ntsc",
    slot: str | None = None,
    bios: bytes | None = None,
    reads: bool = False,
    pixels: bool = False,
    audio: bool = False,
    inputs: InputMovie = NO_INPUT,
) -> EmulatorRun:
    """Run `cart` for `frames` frames; like `run_mame`, keep reads and pixel frames only on request.

    `slot` names the MAME cartridge type; the emulator uses the mapper that behaves like it.
    """
    equivalent = registry().for_mame_slot(slot) if slot else None
    mapper = equivalent.name if equivalent is not None else slot
    vdc = Vdc(REGIONS[region], audio=audio)
    console = Console(load_cartridge(cart, mapper), bios=bios, region=region, vdc=vdc)
    trace = Trace(header={"emulator": "hilbridge", "region": region})
    accesses = trace.accesses

    def record(cycle: int, kind: str, address: int, value: int, p1: int) -> None:
        if kind == READ and not reads:
            return
        line, hpos = vdc.position(cycle)
        # tuple.__new__: an Access without its class's Python __new__, as parse_trace makes them
        accesses.append(tuple.__new__(Access, (kind, cycle, p1, address, value, console.frame, line, hpos)))

    one_by_one = console.repeat_reads

    def record_skipped_reads(address: int, first: int, period: int, count: int) -> None:
        """Reads of a skipped polling loop (`Board.repeat_reads`), placed and valued in bulk where
        the chip can (a polling loop makes most of a trace's reads), else one by one as the console
        tells its listeners. The loop writes no port: P1 is as it is now at all of them, and the
        VDC sees them all or none (`Vdc.read_positions` takes them for its own reads)."""
        if not reads:
            console.peek_reads(address, first, period, count)  # the chip as peeking each leaves it
            return
        placed = vdc.read_positions(address, first, period, count) if console.vdc_selected() else None
        if placed is None:
            one_by_one(address, first, period, count)
            return
        values = console.peek_reads(address, first, period, count)
        cycles = range(first, first + count * period, period)
        lines, hposes = placed
        if not len(values) == len(lines) == len(hposes) == count:
            raise ValueError("the chip placed or valued another number of reads than it was asked")
        fields = zip(
            repeat(READ),
            cycles,
            repeat(console.p1),
            repeat(address),
            values,
            repeat(console.frame),
            lines,
            hposes,
        )
        accesses.extend(accesses_of(fields))

    console.add_bus_recorder(record)
    console.repeat_reads = record_skipped_reads  # type: ignore[method-assign]
    stored: list[np.ndarray] = []
    with collector_paused():
        for frame in range(frames):
            inputs.apply(console, frame)
            console.run_frames(1)
            trace.frames.append(FrameEnd(frame, console.region.frame_end_cycle(frame), console.cpu.pc))
            if pixels:
                picture = console.vdc.frame()
                if not stored or not np.array_equal(stored[-1], picture):
                    stored.append(picture.copy())
                trace.pixel_frames.append(len(stored) - 1)
    trace.complete = True
    sound = console.vdc.audio_samples(AUDIO_RATE, console.cycle) if audio else None
    return EmulatorRun(trace, np.stack(stored) if stored else None, sound)
