"""Bus capture for the simulated adapter: the reference emulator runs the cartridge and reports what a
real adapter would see on the slot (docs/hardware.md, "The bus engines and their timing"): cartridge
fetches, MOVX reads and writes, P1 changes, plus RESET_DETECTED (fetch of 0400h) and FRAME_SYNC (fetch
of the VSYNC hook 0406h) events.

The console is a copy of the cartridge, so capturing never disturbs the slot the dumper reads. The
simulated console pauses while the host is behind (a real one cannot, so the firmware counts drops).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hilbridge.check.emulator import BulkFetches, as_rows
from hilbridge.link.capture_codec import CHUNK_HEADER_SIZE, WORD_SIZE, RecordColumns, encode_column_chunks
from hilbridge.link.protocol import CAPTURE_KINDS, MESSAGES
from hilbridge.machine.blocks import FetchTable
from hilbridge.machine.bus import FETCH, READ, WRITE, BusAccess
from hilbridge.machine.cartridge import CART_P1_MASK, PROGRAM_START, Cartridge, load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import NO_INPUT, InputMovie

ConsoleFactory = Callable[..., Console]
"""Makes the simulated console from the cartridge and `region=`: `Console`, or one that deviates
from the emulator (`hilbridge.sim.deviations`)."""

CHUNK_PAYLOAD = 4096  # capture chunks stay short so events reach the host soon after they happen
WORDS_PER_CHUNK = (CHUNK_PAYLOAD - CHUNK_HEADER_SIZE) // WORD_SIZE
RESET_ADDRESS = 0x400
VSYNC_HOOK = 0x406
_KIND_BITS = {
    FETCH: CAPTURE_KINDS["FETCH"],
    READ: CAPTURE_KINDS["MOVX_READ"],
    WRITE: CAPTURE_KINDS["MOVX_WRITE"],
}
_P1_BIT = CAPTURE_KINDS["P1"]
_FETCH_BIT = CAPTURE_KINDS["FETCH"]
_CHUNK = MESSAGES["CAPTURE_CHUNK"].id
_RESET_ID = MESSAGES["RESET_DETECTED"].id
_SYNC_ID = MESSAGES["FRAME_SYNC"].id
_RESET, _SYNC = 8, 9  # pseudo record kinds: a reset or frame marker, in its place among the records
_RECORD_KINDS = sum(1 << kind for kind in (*_KIND_BITS.values(), _P1_BIT))  # the kinds a frame can hold
Record = tuple[int, int, int, int, int]
"""(cycle, kind number or marker, address, value, p1)."""


class CaptureStream:
    """Runs the console one frame per call of `next_events` and returns the event frames it produced.

    Fetches come from the CPU as it runs whole compiled blocks and skips idle loops (`Cpu.trace_blocks`,
    `skip_traced`): a block's fetches after its accesses, so a frame's records are merged by cycle
    at its end, as the check's emulator side does (`hilbridge.check.emulator`), before they are cut
    into chunks."""

    def __init__(
        self,
        cart: Cartridge,
        what: int,
        region: str = "ntsc",
        movie: InputMovie = NO_INPUT,
        console: ConsoleFactory = Console,
    ):
        self.console = console(load_cartridge(cart.image, cart.mapper, name=cart.name), region=region)
        self.movie = movie
        self.what = what
        self.chunks = 0
        self.records = 0
        self.dropped = 0
        self.resets = 0
        self.frames = 0
        self._accesses: list[Record] = []  # MOVX accesses and the P1 changes seen at them, in bus order
        self._fetches: list[Record] = []  # fetches, their P1 changes and markers, in the order reported
        self._bulk = BulkFetches()  # fetches reported a table at a time
        self._events: list[tuple[int, bytes]] = []  # the frame's adapter event frames
        self._p1 = self.console.p1 & CART_P1_MASK
        self._sent = (0, CART_P1_MASK)  # cycle and P1 of the last record sent (the next chunk's header)
        self.console.add_bus_listener(self._on_access, fetches=True)
        self.console.program_fetch = self._on_program_fetch  # type: ignore[method-assign]
        self.console.program_fetches = self._on_fetches  # type: ignore[method-assign]
        self.console.repeat_fetches = self._on_repeat_fetches  # type: ignore[method-assign]
        self.console.repeat_reads = self._on_repeat_reads  # type: ignore[method-assign]
        cpu = self.console.cpu
        cpu.trace_blocks = True
        # idle loops stay skipped: the CPU reports the skipped iterations' fetches and reads in bulk
        cpu.skip_traced = True

    def _p1_changed(self, records: list[Record], cycle: int, p1: int) -> None:
        slot_p1 = p1 & CART_P1_MASK
        if slot_p1 != self._p1:
            self._p1 = slot_p1
            records.append((cycle, _P1_BIT, 0, slot_p1, p1))

    def _on_access(self, access: BusAccess) -> None:
        """A MOVX access, or a fetch by the console's own `program_fetch` (which `_on_program_fetch`
        stands for: the plain path its test compares it with)."""
        cycle, kind, address, value, p1 = access
        if kind == FETCH:
            self._record_fetch(cycle, address, value, p1)
            return
        records = self._accesses
        self._p1_changed(records, cycle, p1)
        records.append((cycle, _KIND_BITS[kind], address, value, p1))

    def _record_fetch(self, cycle: int, address: int, value: int, p1: int) -> None:
        """A fetch of the cartridge, after the P1 change it shows, then its marker if it has one."""
        records = self._fetches
        self._p1_changed(records, cycle, p1)
        records.append((cycle, _FETCH_BIT, address, value, p1))
        if address in (RESET_ADDRESS, VSYNC_HOOK):
            records.append((cycle, _RESET if address == RESET_ADDRESS else _SYNC, address, 0, 0))

    def _on_program_fetch(self, address: int, cycle: int) -> None:
        """One fetch (`Board.program_fetch`), recorded without the BusAccess and listener call the
        console makes per fetch: a stepping CPU fetches millions of times."""
        if address >= PROGRAM_START:
            console = self.console
            self._record_fetch(cycle, address, console.prog[address], console.p1)

    def _on_repeat_reads(self, address: int, first: int, period: int, count: int) -> None:
        """Skipped polling reads (`Board.repeat_reads`), valued in one call (`Console.peek_reads`):
        the loop writes no port, so P1 is as it is now at all of them."""
        console = self.console
        values = console.peek_reads(address, first, period, count)
        p1 = console.p1
        self._p1_changed(self._accesses, first, p1)
        kind = _KIND_BITS[READ]
        self._accesses.extend(
            (first + index * period, kind, address, value, p1) for index, value in enumerate(values)
        )

    def _on_fetches(self, fetches: FetchTable, cycle: int, ran: int) -> None:
        """A block's fetches (`Board.program_fetches`): the code writes no port, so P1 is as it is
        now. Tables reaching into the internal ROM or to a marker's address go one by one."""
        entries = fetches.entries
        if fetches.high < PROGRAM_START or entries[0][0] >= ran:
            return
        p1 = self.console.p1
        if fetches.low > VSYNC_HOOK:
            self._p1_changed(self._fetches, cycle + entries[0][0], p1)
            self._bulk.add(fetches, cycle, ran, p1)
            return
        for offset, address, value in entries:
            if offset >= ran:
                break
            if address >= PROGRAM_START:
                self._record_fetch(cycle + offset, address, value, p1)

    def _on_repeat_fetches(self, fetches: FetchTable, cycle: int, period: int, count: int) -> None:
        """Skipped idle iterations' fetches (`Board.repeat_fetches`), in bulk unless the table
        reaches into the internal ROM or to a marker's address."""
        if fetches.low <= VSYNC_HOOK:
            for number in range(count):
                self._on_fetches(fetches, cycle + number * period, period)
            return
        p1 = self.console.p1
        self._p1_changed(self._fetches, cycle + fetches.entries[0][0], p1)
        self._bulk.add_repeat(fetches, cycle, period, count, p1)

    def _flush(self, rows: np.ndarray) -> None:
        """Records as CAPTURE_CHUNK payloads of at most WORDS_PER_CHUNK record words."""
        if not len(rows):
            return
        columns = RecordColumns(rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3], rows[:, 4])
        for cycle, p1, words in encode_column_chunks(columns, *self._sent, WORDS_PER_CHUNK):
            header = self.chunks.to_bytes(4, "little") + cycle.to_bytes(4, "little") + bytes((p1,))
            self._events.append((_CHUNK, header + words))
            self.chunks += 1
        self.records += len(rows)
        self._sent = (int(rows[-1, 0]) & 0xFFFFFFFF, int(rows[-1, 4]))

    def _frame_events(self) -> list[tuple[int, bytes]]:
        """The frame's records merged by cycle (at one cycle the accesses of the instruction ending
        there before the next one's fetches, then the fetches in the order reported; the sort is
        stable), as adapter event frames: chunks of at most WORDS_PER_CHUNK words, cut at each
        reset and frame marker."""
        pieces = [as_rows(self._accesses), as_rows(self._fetches), *self._bulk.take()]
        self._accesses, self._fetches = [], []
        rows = np.concatenate(pieces)
        rows = np.take(rows, np.argsort(rows[:, 0], kind="stable"), axis=0)  # 4x faster than rows[order]
        if self.what & _RECORD_KINDS != _RECORD_KINDS:  # some kinds are not captured
            kinds = rows[:, 1]
            markers = kinds >= _RESET
            rows = rows[markers | (self.what >> np.minimum(kinds, 31) & 1 == 1)]
        self._events = []
        position = 0
        for at in np.flatnonzero(rows[:, 1] >= _RESET).tolist():
            self._flush(rows[position:at])
            cycle, kind = int(rows[at, 0]), int(rows[at, 1])
            stamp = (cycle & 0xFFFFFFFF).to_bytes(4, "little")
            if kind == _RESET:
                self.resets += 1
                self._events.append((_RESET_ID, stamp))
            else:
                self._events.append((_SYNC_ID, self.frames.to_bytes(4, "little") + stamp))
                self.frames += 1
            position = at + 1
        self._flush(rows[position:])
        return self._events

    def next_events(self) -> list[tuple[int, bytes]]:
        """Run one more video frame (its inputs applied first); the (frame type, payload) events it
        produced, in bus order."""
        self.movie.apply(self.console, self.console.frame)
        self.console.run_frames(1)
        return self._frame_events()
