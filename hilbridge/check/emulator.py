"""The expected side of a check: the reference emulator running the cartridge, seen from the slot.

It produces what `hilbridge.sim.capture` reports for the simulated console (cartridge fetches
0400h-0FFFh, MOVX reads and writes, P1 changes of P10/P11/P14, a reset marker at every fetch of
0400h and a frame marker at every fetch of the VSYNC hook 0406h), one video frame per call, so a
check holds one frame at a time. Events are rows `(cycle, kind, address, value, p1)` with the
CAPTURE_* kind numbers, a frame's in one int64 array (`Rows`): comparing two frames is one array
comparison.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain

import numpy as np

from hilbridge.capture.stream import (
    RECORD_DTYPE,
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
Rows = np.ndarray
"""Events as an (n, 5) int64 array, one row per event in bus order: cycle, kind, address, value, p1
(how both sides of a check hold and compare them)."""
NO_ROWS = np.empty((0, 5), np.int64)
STATES_TAKEN = 16
"""Video frames whose VDC state `EmulatorSide.next_frame` takes as they start (Vdc.state() costs
some 0.3 ms, a sixth of a traced frame): the state is needed only to draw the console's picture
at a divergence, so a later frame's is made by running the emulator again up to it, once."""


def as_rows(events: Rows | list[Event]) -> Rows:
    """Events as rows (a list of event tuples is converted; rows are returned as they are)."""
    if isinstance(events, np.ndarray):
        return events
    return _flat(events, 5)


def _flat(rows: list, width: int) -> np.ndarray:
    """Tuples of `width` ints as an (n, width) int64 array (np.array would first find their shape)."""
    return np.fromiter(chain.from_iterable(rows), np.int64, len(rows) * width).reshape(-1, width)


def as_events(rows: Rows) -> list[Event]:
    """Rows as event tuples: for the detail work at a divergence and the replay, not the hot path."""
    return list(zip(*rows.T.tolist(), strict=True)) if len(rows) else []


@dataclass(slots=True)
class EmulatedFrame:
    """One video frame of the emulator: its events in bus order (copy-mode accesses with COPY_FLAG)."""

    number: int
    end_cycle: int
    rows: Rows
    picture: np.ndarray | None = None  # (243, 360) palette indices, when pictures were asked for
    pc: int = 0  # the CPU's PC at the frame end
    inputs: tuple[InputEvent, ...] = ()  # movie events applied before this frame ran
    input_held: bool = False  # a key or joystick input was held while the frame ran
    vdc_state: dict | None = None  # the VDC at the frame's start (None: `EmulatorSide.vdc_state_at`)
    unseen: int = 0  # MOVX accesses in copy mode (P16 = 1) the source cannot see
    unseen_vdc: int = 0  # ... of which VDC writes

    @property
    def events(self) -> list[Event]:
        return as_events(self.rows)


class BulkFetches:
    """The fetch tables reported in bulk during a frame, expanded into event rows at once at its end:
    a block's table entries are stored once (the first time it is seen), each run of it is one
    tuple; skipped idle iterations are one tuple per skip (their table is new each time, so its
    entries are kept for the frame only)."""

    def __init__(self) -> None:
        # id -> (the table, kept alive; its first entry in the store; its offsets)
        self._known: dict[int, tuple[FetchTable, int, tuple[int, ...]]] = {}
        self._entries: list[tuple[int, int, int]] = []  # every known table's (offset, address, byte)
        self._store = np.empty((0, 3), np.int64)
        self.runs: list[tuple[FetchTable, int, int, int]] = []  # (table, cycle, cycles ran, p1 shown)
        self._repeats: list[tuple[int, int, int, int, int, int]] = []  # (base, n, cycle, period, count, p1)
        self._repeat_entries: list[tuple[int, int, int]] = []  # the frame's skipped tables' entries
        self.rows: list[np.ndarray] = []  # rows expanded, in report order

    def add(self, fetches: FetchTable, cycle: int, ran: int, shown: int) -> None:
        """The entries of `fetches` at offsets below `ran`, from `cycle`, with P1 `shown`."""
        self.runs.append((fetches, cycle, ran, shown))

    def add_repeat(self, fetches: FetchTable, cycle: int, period: int, count: int, shown: int) -> None:
        """`count` iterations of `fetches`, every `period` cycles from `cycle` (`repeated_rows`)."""
        entries = fetches.entries
        self._repeats.append((len(self._repeat_entries), len(entries), cycle, period, count, shown))
        self._repeat_entries += entries

    def _reports(self) -> list[tuple[int, int, int, int]]:
        """The runs so far as (first entry in the store, entries run, cycle, p1 shown); forgets them."""
        known = self._known
        reports = []
        last: FetchTable | None = None  # loops run one block many times in a row
        for fetches, cycle, ran, shown in self.runs:
            if fetches is not last:
                found = known.get(id(fetches))
                if found is None:
                    if len(known) >= 1 << 16:
                        return reports  # the store is full: the rest after it is expanded and emptied
                    offsets = tuple(offset for offset, _, _ in fetches.entries)
                    found = known[id(fetches)] = (fetches, len(self._entries), offsets)
                    self._entries += fetches.entries
                last, base, offsets = fetches, found[1], found[2]
                size, final = len(offsets), offsets[-1]
            reports.append((base, size if final < ran else bisect_left(offsets, ran), cycle, shown))
        return reports

    def _flush(self) -> None:
        """Expand the runs and repeats so far into `rows`."""
        while self.runs:
            reports = self._reports()
            done = len(reports)
            del self.runs[:done]
            if len(self._store) < len(self._entries):
                self._store = np.array(self._entries, np.int64)
            if reports:
                self.rows.append(_expanded(self._store, _flat(reports, 4)))
            if self.runs:  # the store was full
                self._known.clear()
                self._entries.clear()
                self._store = np.empty((0, 3), np.int64)
        if self._repeats:
            repeats = _flat(self._repeats, 6)
            base, entries, cycle, period, count, shown = repeats.T
            iteration = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
            reports = np.column_stack(
                (
                    np.repeat(base, count),
                    np.repeat(entries, count),
                    np.repeat(cycle, count) + iteration * np.repeat(period, count),
                    np.repeat(shown, count),
                )
            )
            self.rows.append(_expanded(np.array(self._repeat_entries, np.int64), reports))
            self._repeats.clear()
            self._repeat_entries.clear()

    def take(self) -> list[np.ndarray]:
        """The frame's fetch rows; forgets them. Rows of different reports never share a cycle (each
        covers its own instructions), so their order is left to the merge by cycle."""
        self._flush()
        rows, self.rows = self.rows, []
        return rows


def _expanded(store: np.ndarray, reports: np.ndarray) -> Rows:
    """Fetch rows of `reports` (first entry in `store`, entries, cycle, p1 shown), each report's
    entries in table order. Filled column by column (`columns` is the rows transposed): taking
    from one column of `store` at a time costs half of picking (index, column) pairs."""
    base, run, cycle, shown = reports.T
    total = int(run.sum())
    starts = np.cumsum(run) - run
    index = np.arange(total) + np.repeat(base - starts, run)
    columns = np.empty((5, total), np.int64)
    np.take(store[:, 0], index, out=columns[0])
    columns[0] += np.repeat(cycle, run)
    columns[1] = FETCH
    np.take(store[:, 1], index, out=columns[2])
    np.take(store[:, 2], index, out=columns[3])
    columns[4] = np.repeat(shown, run)
    return columns.T


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
        # what an identical side is made from, to run again to a frame whose VDC state was not taken
        self._replica = (
            {"region": region, "bios": bios, "inputs": inputs, "kinds": kinds}
            | {"pictures": pictures, "p1_mask": p1_mask, "copies": copies}
            if console is None
            else None
        )
        self.cart = cart
        self.region = self.console.region.name
        self.inputs = inputs
        self.what = sum(KIND_BITS[kind] for kind in kinds)
        self.pictures = pictures
        self.p1_mask = p1_mask
        self.copies = copies  # the source reports accesses in copy mode (it knows the whole P1)
        self._unseen = [0, 0]  # copy-mode accesses this frame that the source cannot see: all, VDC
        self._events: list[Event] = []  # accesses and P1 changes, in bus order
        self._fetched: list[Event] = []  # fetches and their markers reported one by one, in bus order
        self._bulk = BulkFetches()  # fetches reported a table at a time, after the accesses among them
        self._runs = self._bulk.runs
        self._reads: list[np.ndarray] = []  # skipped polling reads, (n, 5) event rows, in bus order
        self._p1 = self.console.p1 & CART_P1_MASK
        # MOVX accesses are taken by wrapping the console's (without a BusAccess and a listener
        # call each, which cost as much as the access itself)
        self._movx_read = self.console.movx_read
        self._movx_write = self.console.movx_write
        self.console.movx_read = self._on_movx_read  # type: ignore[method-assign]
        self.console.movx_write = self._on_movx_write  # type: ignore[method-assign]
        # Fetches come straight from the CPU (as `program_fetch` calls), without a BusAccess each:
        # they are most of the events, and the check must keep up with the console. Without fetches
        # in the capture they are traced only up to the reset fetch (the alignment point): the CPU
        # then runs its fast paths, many times faster.
        self.fetches = bool(self.what & KIND_BITS["FETCH"])
        self._prog = self.console.prog  # the console keeps it up to date in place (bank switches)
        self.reset_cycle: int | None = None
        self.console.program_fetch = self._on_fetch  # type: ignore[method-assign]
        self.console.program_fetches = self._on_fetches  # type: ignore[method-assign]
        self.console.repeat_fetches = self._on_repeat_fetches  # type: ignore[method-assign]
        self.console.repeat_reads = self._on_repeat_reads  # type: ignore[method-assign]
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

    def _on_port_write_traced(self, port: int, value: int, cycle: int) -> None:
        """With fetches traced, a change of the slot's P1 bits shows at the next cartridge fetch or
        access, as stepping shows it: until then a block's first fetch is reported before it runs."""
        self._port_write(port, value, cycle)
        if port == 1 and (self.console.p1 & CART_P1_MASK) != self._p1:
            self.console.cpu.trace_first_fetches_after = False

    def _p1_seen(self, cycle: int, p1: int) -> int:
        """P1 as the events show it, after a P1 event when the slot's P10/P11/P14 just changed."""
        shown = p1 & self.p1_mask
        slot_p1 = p1 & CART_P1_MASK
        if slot_p1 != self._p1:
            self._p1 = slot_p1
            self.console.cpu.trace_first_fetches_after = self.fetches and self.reset_cycle is not None
            if self.what & 8:
                self._events.append((cycle, P1, 0, slot_p1, shown))
        return shown

    def _on_fetch(self, address: int, cycle: int) -> None:
        if address < PROGRAM_START:
            return
        p1 = self.console.p1
        if (p1 & CART_P1_MASK) != self._p1:
            self._p1_seen(cycle, p1)
        events = self._fetched
        if self.fetches:
            events.append((cycle, FETCH, address, self._prog[address], p1 & self.p1_mask))
        if address > VSYNC_HOOK:
            return
        if address == RESET_ADDRESS:
            events.append((cycle, RESET, address, 0, 0))
            if self.reset_cycle is None:
                self.reset_cycle = cycle
                if not self.fetches:
                    self.console.cpu.trace_fetches = False
                    self.console.port_write = self._on_port_write  # type: ignore[method-assign]
                else:  # a block's first fetch needs no call of its own from now on (`_on_fetches`)
                    self.console.cpu.trace_first_fetches_after = True
                    self.console.port_write = self._on_port_write_traced  # type: ignore[method-assign]
        elif address == VSYNC_HOOK:
            events.append((cycle, SYNC, address, 0, 0))

    def _on_fetches(self, fetches: FetchTable, cycle: int, ran: int) -> None:
        """The fetches of a block or of skipped idle iterations (`Board.program_fetches`), appended
        as `_on_fetch` would: the code writes no port, so P1 stays as it is at the first fetch.
        Tables reaching into the internal ROM or to a marker's address go through `_on_fetch`."""
        entries = fetches.entries
        if fetches.low > VSYNC_HOOK and entries[0][0] < ran:  # cartridge code past the markers
            p1 = self.console.p1
            if (p1 & CART_P1_MASK) != self._p1:
                self._p1_seen(cycle + entries[0][0], p1)
            if self.fetches:
                self._runs.append((fetches, cycle, ran, p1 & self.p1_mask))  # BulkFetches.add, inline
            return
        if fetches.high < PROGRAM_START or entries[0][0] >= ran or fetches.low > VSYNC_HOOK:
            return  # internal ROM code (the slot sees none of it), or nothing of the table ran
        for offset, address, _ in entries:
            if offset >= ran or not self.console.cpu.trace_fetches:  # the reset fetch ends it
                return
            self._on_fetch(address, cycle + offset)

    def _on_repeat_fetches(self, fetches: FetchTable, cycle: int, period: int, count: int) -> None:
        """The fetches of skipped idle iterations (`Board.repeat_fetches`): one iteration's table
        `count` times, in bulk unless it reaches into the internal ROM or to a marker's address."""
        if fetches.high < PROGRAM_START or fetches.low <= VSYNC_HOOK:
            for number in range(count):
                self._on_fetches(fetches, cycle + number * period, period)
            return
        shown = self._p1_seen(cycle + fetches.entries[0][0], self.console.p1)
        if self.what & 1:
            self._bulk.add_repeat(fetches, cycle, period, count, shown)

    def _take_events(self) -> Rows:
        """The frame's events in bus order: accesses and fetches merged by cycle; at one cycle the
        accesses (and P1 changes) come first, as the accesses of the instruction ending there
        precede the fetches of the next one, then the fetches in the order they were reported (the
        sort is stable: fetches reported one by one come before a table's at the same cycle, as a
        block's first fetch is reported before it runs, and the next one after the table).

        Merged column by column: the bulk rows are views of column-major arrays (`_expanded`), so
        their columns are copied whole and each column is reordered in one gather; the rows
        returned are a view of the columns (F-ordered), which reads a column at a time faster."""
        pieces = [as_rows(self._events), *self._reads, as_rows(self._fetched), *self._bulk.take()]
        self._events, self._fetched, self._reads = [], [], []
        columns = np.concatenate([piece.T for piece in pieces], axis=1)
        return columns.take(np.argsort(columns[0], kind="stable"), axis=1).T

    def _on_movx_read(self, address: int, cycle: int) -> int:
        p1 = self.console.p1
        value = self._movx_read(address, cycle)
        if (p1 & CART_P1_MASK) != self._p1:
            self._p1_seen(cycle, p1)
        if self.what & KIND_BITS["MOVX_READ"]:
            if p1 & P16_COPY_MODE:
                self._copy_mode(cycle, READ, address, value, p1)
            else:
                self._events.append((cycle, READ, address, value, p1 & self.p1_mask))
        return value

    def _on_movx_write(self, address: int, value: int, cycle: int) -> None:
        p1 = self.console.p1
        self._movx_write(address, value, cycle)
        if (p1 & CART_P1_MASK) != self._p1:
            self._p1_seen(cycle, p1)
        if self.what & KIND_BITS["MOVX_WRITE"]:
            if p1 & P16_COPY_MODE:
                self._copy_mode(cycle, WRITE, address, value, p1)
            else:
                self._events.append((cycle, WRITE, address, value, p1 & self.p1_mask))

    def _copy_mode(self, cycle: int, code: int, address: int, value: int, p1: int) -> None:
        """A MOVX access in copy mode (P16 = 1): kept apart where the source reports such accesses,
        else counted as unseen."""
        if self.copies:
            self._events.append((cycle, code | COPY_FLAG, address, value, p1))
        else:
            self._unseen[0] += 1
            self._unseen[1] += not p1 & P13_VDC_DISABLE

    def _on_repeat_reads(self, address: int, first: int, period: int, count: int) -> None:
        """The reads of skipped polling iterations (`Board.repeat_reads`), appended in bulk as
        `_on_access` would one by one: the loop writes no port, so P1 is the same at all of them."""
        console = self.console
        values = console.peek_reads(address, first, period, count)
        p1 = console.p1
        shown = self._p1_seen(first, p1)
        if not self.what >> READ & 1:
            return
        if p1 & P16_COPY_MODE and not self.copies:
            self._unseen[0] += count
            self._unseen[1] += 0 if p1 & P13_VDC_DISABLE else count
            return
        copied = bool(p1 & P16_COPY_MODE)
        rows = np.empty((count, 5), np.int64)
        rows[:, 0] = np.arange(first, first + count * period, period)
        rows[:, 1] = READ | COPY_FLAG if copied else READ
        rows[:, 2] = address
        rows[:, 3] = values
        rows[:, 4] = p1 if copied else shown
        self._reads.append(rows)

    def next_frame(self) -> EmulatedFrame:
        """Apply the movie's events for the next frame, run it, and return what the slot saw."""
        console = self.console
        number = console.frame
        applied = self.inputs.at(number)
        for event in applied:
            event.apply(console)
        taken = self.pictures and (number < STATES_TAKEN or self._replica is None)
        vdc_state = console.vdc.state() if taken else None
        console.run_frames(1)
        rows = self._take_events()
        picture = console.vdc.frame().copy() if self.pictures else None
        end = console.frame_end_cycle(number)
        held = any(console.keys) or any(console.joysticks)
        unseen, self._unseen = self._unseen, [0, 0]
        return EmulatedFrame(
            number, end, rows, picture, console.cpu.pc, tuple(applied), held, vdc_state, *unseen
        )

    def frames(self) -> Iterator[EmulatedFrame]:
        while True:
            yield self.next_frame()

    def vdc_state_at(self, frame: EmulatedFrame) -> dict | None:
        """The VDC at the start of `frame`: its own `vdc_state`, else (a frame past STATES_TAKEN) an
        identical side run again up to it (None: without pictures, nothing is drawn from it)."""
        if frame.vdc_state is not None or not self.pictures or self._replica is None:
            return frame.vdc_state
        side = EmulatorSide(self.cart, **self._replica)
        while side.console.frame < frame.number:
            side.next_frame()
        return side.console.vdc.state()


def _record_batch(rows: Rows) -> RecordBatch:
    """Event rows as a capture's records (copy-mode accesses as plain ones: the record's P1 says it)."""
    records = np.empty(len(rows), RECORD_DTYPE)
    for column, name in enumerate(RECORD_DTYPE.names):
        records[name] = rows[:, column]
    records["kind"] &= 0xFF & ~COPY_FLAG
    return RecordBatch(records)


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
            ends_on_frame=True,
        )

    def batches(self) -> Iterator[BatchItem]:
        syncs = 0
        for _ in range(self.frame_count):
            rows = self.side.next_frame().rows
            kinds = rows[:, 1]
            markers = np.flatnonzero((kinds == RESET) | (kinds == SYNC)).tolist()
            position = 0
            for at in [*markers, len(rows)]:
                if at > position:
                    yield _record_batch(rows[position:at])
                if at == len(rows):
                    break
                cycle = int(rows[at, 0])
                if kinds[at] == RESET:
                    yield ResetDetected(cycle)
                else:
                    yield FrameSync(syncs, cycle)
                    syncs += 1
                position = at + 1

    def close(self) -> None:
        """Nothing to release: the emulator lives in this process."""
