"""The expected side of a check: the reference emulator running the cartridge, seen from the slot.

It produces what `hilbridge.sim.capture` reports for the simulated console (cartridge fetches
0400h-0FFFh, MOVX reads and writes, P1 changes of P10/P11/P14, a reset marker at every fetch of
0400h and a frame marker at every fetch of the VSYNC hook 0406h), one video frame per call, so a
check holds one frame at a time. Events are plain tuples `(cycle, kind, address, value, p1)` with
the CAPTURE_* kind numbers: comparing two frames is then one list comparison.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from hilbridge.capture.stream import (
    BatchItem,
    BatchStream,
    CaptureHeader,
    FrameSync,
    RecordBatch,
    ResetDetected,
)
from hilbridge.link.protocol import CAPTURE_KINDS
from hilbridge.machine.bios import Bios
from hilbridge.machine.blocks import FetchTable
from hilbridge.machine.bus import READ as BUS_READ
from hilbridge.machine.bus import BusAccess
from hilbridge.machine.cartridge import CART_P1_MASK, PROGRAM_START, Cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import NO_INPUT, InputEvent, InputMovie

FETCH = CAPTURE_KINDS["FETCH"]
READ = CAPTURE_KINDS["MOVX_READ"]
WRITE = CAPTURE_KINDS["MOVX_WRITE"]
P1 = CAPTURE_KINDS["P1"]
RESET = 8  # a pseudo kind: the console fetched 0400h (ResetDetected)
SYNC = 9  # a pseudo kind: the console fetched 0406h (FrameSync)
KIND_NAMES = {FETCH: "fetch", READ: "read", WRITE: "write", P1: "p1", RESET: "reset", SYNC: "frame-sync"}
KIND_BITS = {name: 1 << bit for name, bit in CAPTURE_KINDS.items()}
RESET_ADDRESS = 0x400
VSYNC_HOOK = 0x406
P16_COPY_MODE = 0x40  # /WR and /RD are gated off the slot while P16 = 1 (docs/hardware.md)
P13_VDC_DISABLE = 0x08
COPY_FLAG = 0x10  # kind | COPY_FLAG: a MOVX access in copy mode (P16 = 1), kept apart from the compared ones

Event = tuple[int, int, int, int, int]
"""(cycle, kind, address, value, p1): one bus event as the check compares it."""


@dataclass(slots=True)
class EmulatedFrame:
    """One video frame of the emulator: its events in bus order (copy-mode accesses with COPY_FLAG)."""

    number: int
    end_cycle: int
    events: list[Event]
    picture: np.ndarray | None = None  # (243, 360) palette indices, when pictures were asked for
    pc: int = 0  # the CPU's PC at the frame end
    inputs: tuple[InputEvent, ...] = ()  # movie events applied before this frame ran
    input_held: bool = False  # a key or joystick input was held while the frame ran
    vdc_state: dict | None = None  # the VDC at the frame's start (to draw the console's frame from)
    unseen: int = 0  # MOVX accesses in copy mode (P16 = 1) the source cannot see
    unseen_vdc: int = 0  # ... of which VDC writes


class EmulatorSide:
    """The reference emulator on a cartridge, producing the slot's view one video frame at a time."""

    def __init__(
        self,
        cart: Cartridge,
        *,
        region: str = "ntsc",
        bios: Bios | None = None,
        inputs: InputMovie = NO_INPUT,
        kinds: tuple[str, ...] = ("FETCH", "MOVX_WRITE", "P1"),
        pictures: bool = True,
        p1_mask: int = CART_P1_MASK,
        copies: bool = False,
        console: Console | None = None,
    ) -> None:
        self.console = console or Console(cart, bios=bios, region=region)
        self.cart = cart
        self.region = self.console.region.name
        self.inputs = inputs
        self.what = sum(KIND_BITS[kind] for kind in kinds)
        self.pictures = pictures
        self.p1_mask = p1_mask
        self.copies = copies  # the source reports accesses in copy mode (it knows the whole P1)
        self._unseen = [0, 0]  # copy-mode accesses this frame that the source cannot see: all, VDC
        self._events: list[Event] = []  # accesses and P1 changes, in bus order
        self._fetched: list[Event] = []  # fetches and their markers, in bus order
        self._p1 = self.console.p1 & CART_P1_MASK
        self.console.add_bus_listener(self._on_access)
        # Fetches come straight from the CPU (as `program_fetch` calls), without a BusAccess each:
        # they are most of the events, and the check must keep up with the console. Without fetches
        # in the capture they are traced only up to the reset fetch (the alignment point): the CPU
        # then runs its fast paths, many times faster.
        self.fetches = bool(self.what & KIND_BITS["FETCH"])
        self.reset_cycle: int | None = None
        self.console.program_fetch = self._on_fetch  # type: ignore[method-assign]
        self.console.program_fetches = self._on_fetches  # type: ignore[method-assign]
        self.console.cpu.trace_fetches = True
        self.console.cpu.trace_blocks = True  # _take_events merges the bulk fetches by cycle
        # idle loops stay skipped: the CPU hands the skipped iterations' fetches and reads to the board
        self.console.cpu.skip_traced = self.fetches
        self._port_write = self.console.port_write

    def _on_port_write(self, port: int, value: int, cycle: int) -> None:
        """P1 changes stamped at the port write, when no fetch comes after them to stamp them at
        (the simulated adapter stamps a change at the next access, which is the same cycle in cart
        code)."""
        self._port_write(port, value, cycle)
        if port == 1:
            self._p1_seen(cycle, self.console.p1)

    def _p1_seen(self, cycle: int, p1: int) -> int:
        """P1 as the events show it, after a P1 event when the slot's P10/P11/P14 just changed."""
        shown = p1 & self.p1_mask
        slot_p1 = p1 & CART_P1_MASK
        if slot_p1 != self._p1:
            self._p1 = slot_p1
            if self.what & 8:
                self._events.append((cycle, P1, 0, slot_p1, shown))
        return shown

    def _on_fetch(self, address: int, cycle: int) -> None:
        if address < PROGRAM_START:
            return
        shown = self._p1_seen(cycle, self.console.p1)
        events = self._fetched
        if self.what & 1:
            events.append((cycle, FETCH, address, self.console.prog[address], shown))
        if address == RESET_ADDRESS:
            events.append((cycle, RESET, address, 0, 0))
            if self.reset_cycle is None:
                self.reset_cycle = cycle
                if not self.fetches:
                    self.console.cpu.trace_fetches = False
                    self.console.port_write = self._on_port_write  # type: ignore[method-assign]
        elif address == VSYNC_HOOK:
            events.append((cycle, SYNC, address, 0, 0))

    def _on_fetches(self, fetches: FetchTable, cycle: int, ran: int) -> None:
        """The fetches of a block or of skipped idle iterations (`Board.program_fetches`), appended
        as `_on_fetch` would: the code writes no port, so P1 stays as it is at the first fetch.
        Tables reaching into the internal ROM or to a marker's address go through `_on_fetch`."""
        entries = fetches.entries
        if fetches.high < PROGRAM_START or entries[0][0] >= ran:
            return  # internal ROM code: the slot sees none of it
        if fetches.low <= VSYNC_HOOK:
            for offset, address, _ in entries:
                if offset >= ran or not self.console.cpu.trace_fetches:  # the reset fetch ends it
                    return
                self._on_fetch(address, cycle + offset)
            return
        shown = self._p1_seen(cycle + entries[0][0], self.console.p1)
        if self.what & 1:
            self._fetched += [
                (cycle + offset, FETCH, address, value, shown)
                for offset, address, value in entries
                if offset < ran
            ]

    def _take_events(self) -> list[Event]:
        """The frame's events in bus order: accesses and fetches merged by cycle; at one cycle the
        accesses (and P1 changes) come first, as the accesses of the instruction ending there
        precede the fetches of the next one (the sort is stable)."""
        events = self._events + self._fetched
        self._events, self._fetched = [], []
        events.sort(key=itemgetter(0))
        return events

    def _on_access(self, access: BusAccess) -> None:
        cycle, kind, address, value, p1 = access
        shown = self._p1_seen(cycle, p1)
        events = self._events
        code = READ if kind == BUS_READ else WRITE
        if not self.what >> code & 1:
            return
        if p1 & P16_COPY_MODE:
            if self.copies:
                events.append((cycle, code | COPY_FLAG, address, value, p1))
            else:
                self._unseen[0] += 1
                self._unseen[1] += not p1 & P13_VDC_DISABLE
        else:
            events.append((cycle, code, address, value, shown))

    def next_frame(self) -> EmulatedFrame:
        """Apply the movie's events for the next frame, run it, and return what the slot saw."""
        console = self.console
        number = console.frame
        applied = self.inputs.at(number)
        for event in applied:
            event.apply(console)
        vdc_state = console.vdc.state() if self.pictures else None
        console.run_frames(1)
        events = self._take_events()
        picture = console.vdc.frame().copy() if self.pictures else None
        end = console.frame_end_cycle(number)
        held = any(console.keys) or any(console.joysticks)
        unseen, self._unseen = self._unseen, [0, 0]
        return EmulatedFrame(
            number, end, events, picture, console.cpu.pc, tuple(applied), held, vdc_state, *unseen
        )

    def frames(self) -> Iterator[EmulatedFrame]:
        while True:
            yield self.next_frame()


class EmulatorCapture(BatchStream):
    """The emulator as a `CaptureSource`: the items a slot would see, lazily, frame by frame."""

    def __init__(self, side: EmulatorSide, frames: int) -> None:
        self.side = side
        self.frame_count = frames
        self._header = CaptureHeader(
            source="emulator",
            cart_sha1=side.console._cart_sha1(),
            mapper=side.cart.mapper,
            region=side.region,
            bios=side.console.bios.name,
            kinds=tuple(name for name, bit in KIND_BITS.items() if side.what & bit),
        )

    def batches(self) -> Iterator[BatchItem]:
        syncs = 0
        for _ in range(self.frame_count):
            run: list[Event] = []
            for event in self.side.next_frame().events:
                kind = event[1]
                if kind != RESET and kind != SYNC:
                    run.append(event if not kind & COPY_FLAG else (event[0], kind & ~COPY_FLAG, *event[2:]))
                    continue
                if run:
                    yield RecordBatch.from_tuples(run)
                    run = []
                if kind == RESET:
                    yield ResetDetected(event[0])
                else:
                    yield FrameSync(syncs, event[0])
                    syncs += 1
            if run:
                yield RecordBatch.from_tuples(run)

    def close(self) -> None:
        """Nothing to release: the emulator lives in this process."""
