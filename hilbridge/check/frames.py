"""Both sides of a check as streams of frames: capture items to event blocks, and the frame cut.

A side is a stream of blocks (lists of events in bus order) and `Gap`s. The cut starts frame 0 at
the reset fetch of 0400h and a new frame at every frame marker (`MARKERS`): the VSYNC hook fetch
(FrameSync), the external-interrupt entry fetch 0402h, or, for carts that fetch neither, the
emulator's frame ends (a cycle count from the reset, which every record carries). A frame that a
`Gap` touches is marked and never compared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from hilbridge.capture.stream import BatchItem, CaptureItem, FrameSync, Gap, RecordBatch, ResetDetected
from hilbridge.check.emulator import (
    COPY_FLAG,
    FETCH,
    NO_ROWS,
    P1,
    P16_COPY_MODE,
    RESET,
    RESET_ADDRESS,
    SYNC,
    VSYNC_HOOK,
    Event,
    Rows,
    as_events,
    as_rows,
)
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.protocol import CAPTURE_KINDS

IRQ_ENTRY = 0x402
NEVER = 1 << 62
CYCLE_WRAP = 1 << 32  # capture records carry the low 32 bits of the cycle count
BLOCK_ITEMS = 4096
KNOWN_KINDS = np.zeros(256, bool)
"""Whether a record's kind (a byte) is one this check knows: a table, looked up per record."""
KNOWN_KINDS[list(CAPTURE_KINDS.values())] = True
MARKERS = {
    "vsync": "the fetch of the VSYNC hook 0406h (FRAME_SYNC)",
    "irq": "the fetch of the external-interrupt entry 0402h (once per VBL interrupt)",
    "time": "the emulator's frame ends, counted in cycles from the reset fetch of 0400h "
    "(the cart fetches neither 0406h nor 0402h once a frame)",
}

Block = Rows | Gap


@dataclass(slots=True)
class CutFrame:
    """One frame of one side: [start, end) in aligned cycles, its compared events, copy-mode writes."""

    index: int
    start: int
    end: int | None  # start of the next frame; None: the stream ended inside this frame
    rows: Rows = field(default_factory=lambda: NO_ROWS)
    gap: str = ""  # why this frame cannot be compared ("" = it can)

    @property
    def events(self) -> list[Event]:
        return as_events(self.rows)


def capture_blocks(
    items: Iterator[BatchItem | CaptureItem],
    p1_mask: int,
    anchor: Callable[[], int],
    copies: bool,
    markers: bool = True,
) -> Iterator[Block]:
    """Capture items (batched, `hilbridge.capture.stream.source_batches`) as event blocks in the
    emulator's time, from the first reset on.

    Cycles are unwrapped (records may carry only their low 32 bits) and shifted so that the first
    reset falls on the emulator's (`anchor()`); P1 is masked to what both sides report. Copy-mode
    accesses are kept only where the source reports them (`copies`), as the emulator side does;
    reset and VSYNC markers after the first reset only with `markers` (the emulator's fetches are
    traced). A batch is turned into events with array operations, not record by record."""
    high = 0
    last = 0
    shift: int | None = None
    block: list[Rows] = []  # pieces of the block being filled
    held = 0  # events in it

    def marker(cycle: int, kind: int, address: int) -> Rows:
        return np.array([[cycle, kind, address, 0, 0]], np.int64)

    def unwrap(cycle: int) -> int:
        nonlocal high, last
        cycle += high
        if cycle < last - CYCLE_WRAP // 2:
            high += CYCLE_WRAP
            cycle += CYCLE_WRAP
        last = cycle
        return cycle

    def events_of(rows: np.ndarray) -> Rows:
        nonlocal high, last
        cycles = rows["cycle"].astype(np.int64) + high
        steps = np.diff(cycles, prepend=last)
        wraps = steps < -(CYCLE_WRAP // 2)
        if wraps.any():
            cycles += CYCLE_WRAP * np.cumsum(wraps)
            high += CYCLE_WRAP * int(wraps.sum())
        last = int(cycles[-1])
        kinds = rows["kind"].astype(np.int64)
        addresses = rows["address"].astype(np.int64)
        p1 = rows["p1"].astype(np.int64)
        shown = p1 & p1_mask
        is_p1 = kinds == P1
        addresses[is_p1] = 0
        copied = ~is_p1 & (kinds != FETCH) & (p1 & (P16_COPY_MODE & p1_mask) != 0)
        keep = KNOWN_KINDS[kinds]
        if copies:
            kinds[copied] |= COPY_FLAG
            shown[copied] = p1[copied]
        else:
            keep &= ~copied
        columns = np.empty((5, len(rows)), np.int64)  # filled a column at a time; the rows are its .T
        columns[0] = cycles
        columns[0] += shift
        columns[1] = kinds
        columns[2] = addresses
        columns[3] = rows["value"]
        columns[4] = shown
        return columns.T if keep.all() else columns[:, keep].T

    pending: list[np.ndarray] = []  # batches' records not yet turned into events (a live
    waiting = 0  # adapter's chunks are small: converting them together saves numpy's fixed costs)

    def converted() -> Rows:
        nonlocal waiting
        if len(pending) == 1:
            rows = pending[0]
        else:  # copied into one array: np.concatenate first works out a common type field by field
            rows = np.empty(waiting, pending[0].dtype)
            at = 0
            for piece in pending:
                rows[at : at + len(piece)] = piece
                at += len(piece)
        pending.clear()
        waiting = 0
        return events_of(rows)

    for item in items:
        if type(item) is CaptureRecord:
            item = batched_record(item)
            if item is None:
                continue  # a record kind this check does not know is not evidence of anything
        if pending and (type(item) is not RecordBatch or item.rows.dtype != pending[0].dtype):
            block.append(converted())  # the records before this item first: cycles unwrap in order
            held += len(block[-1])
        if type(item) is RecordBatch:
            if shift is None or not len(item.rows):
                continue
            pending.append(item.rows)
            waiting += len(item.rows)
            if held + waiting < BLOCK_ITEMS:
                continue
            piece = converted()
        elif isinstance(item, ResetDetected):
            cycle = unwrap(item.cycle)
            if shift is None:
                shift = anchor() - cycle
            elif not markers:
                continue
            piece = marker(cycle + shift, RESET, RESET_ADDRESS)
        elif isinstance(item, FrameSync):
            if shift is None or not markers:
                continue
            piece = marker(unwrap(item.cycle) + shift, SYNC, VSYNC_HOOK)
        elif isinstance(item, Gap):
            if shift is None:
                continue
            if block:
                yield np.concatenate(block)
                block, held = [], 0
            yield item
            continue
        else:
            continue
        block.append(piece)
        held += len(piece)
        if held >= BLOCK_ITEMS:
            yield np.concatenate(block)
            block, held = [], 0
    if pending:
        block.append(converted())
    if block:
        yield np.concatenate(block)


def batched_record(record: CaptureRecord) -> RecordBatch | None:
    """One loose record as a batch (None: a kind this check does not know)."""
    kind = CAPTURE_KINDS.get(record.kind)
    if kind is None:
        return None
    return RecordBatch.from_tuples([(record.cycle, kind, record.address, record.value, record.p1)])


def cut_frames(
    blocks: Iterator[Block | list[Event]],
    marker: str,
    frame_end: Callable[[int], int],
    ends_on_frame: bool = False,
) -> Iterator[CutFrame]:
    """Cut a side into frames, from its first reset on (what comes before is not compared).

    The last frame has `end` None (the stream ended inside it), unless `ends_on_frame` says the
    source stops exactly at a frame end (console-timed captures) and the time marker is used.

    `frame_end(n)` is the emulator's end cycle of video frame n; with the time marker, frame n is
    the part of video frame n after the reset. The cuts are found with array operations."""
    frame: CutFrame | None = None
    pieces: list[Rows] = []
    boundary = NEVER
    ended_by_gap = False

    def done(end: int | None) -> CutFrame:
        assert frame is not None
        frame.end = end
        frame.rows = pieces[0] if len(pieces) == 1 else np.concatenate(pieces) if pieces else NO_ROWS
        pieces.clear()
        return frame

    for block in blocks:
        ended_by_gap = isinstance(block, Gap)
        if isinstance(block, Gap):
            if frame is not None and not frame.gap:
                frame.gap = f"{block.reason} ({block.chunks} chunks, {block.records} records lost)"
            continue
        block = as_rows(block)
        position = 0
        if frame is None:
            resets = np.flatnonzero(block[:, 1] == RESET)
            if not resets.size:
                continue
            position = int(resets[0])
            start = int(block[position, 0])
            index = 0
            if marker == "time":
                while frame_end(index) <= start:
                    index += 1
                boundary = frame_end(index)
            frame = CutFrame(index, start, None)
            pieces.append(block[position : position + 1])
            position += 1
        if marker == "time":
            cycles = block[:, 0]
            while len(block) and cycles[-1] >= boundary:
                at = max(position, int(np.searchsorted(cycles, boundary, side="left")))
                pieces.append(block[position:at])
                yield done(boundary)
                frame = CutFrame(frame.index + 1, boundary, None)
                boundary = frame_end(frame.index)
                position = at
            pieces.append(block[position:])
            continue
        rest = block[position:]
        if marker == "vsync":
            starts = np.flatnonzero(rest[:, 1] == SYNC)
        else:
            starts = np.flatnonzero((rest[:, 1] == FETCH) & (rest[:, 2] == IRQ_ENTRY))
        for at in (starts + position).tolist():
            pieces.append(block[position:at])
            cycle = int(block[at, 0])
            yield done(cycle)
            frame = CutFrame(frame.index + 1, cycle, None)
            position = at
        pieces.append(block[position:])
    if frame is not None:
        yield done(boundary if ends_on_frame and marker == "time" and not ended_by_gap else None)
