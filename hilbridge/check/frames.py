"""Both sides of a check as streams of frames: capture items to event blocks, and the frame cut.

A side is a stream of blocks (lists of events in bus order) and `Gap`s. The cut starts frame 0 at
the reset fetch of 0400h and a new frame at every frame marker (`MARKERS`): the VSYNC hook fetch
(FrameSync), the external-interrupt entry fetch 0402h, or, for carts that fetch neither, the
emulator's frame ends (a cycle count from the reset, which every record carries). A frame that a
`Gap` touches is marked and never compared.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from hilbridge.capture.stream import BatchItem, CaptureItem, FrameSync, Gap, RecordBatch, ResetDetected
from hilbridge.check.emulator import (
    COPY_FLAG,
    FETCH,
    P1,
    P16_COPY_MODE,
    RESET,
    RESET_ADDRESS,
    SYNC,
    VSYNC_HOOK,
    Event,
)
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.protocol import CAPTURE_KINDS

IRQ_ENTRY = 0x402
NEVER = 1 << 62
CYCLE_WRAP = 1 << 32  # capture records carry the low 32 bits of the cycle count
BLOCK_ITEMS = 4096
KNOWN_KINDS = np.array(sorted(CAPTURE_KINDS.values()))
MARKERS = {
    "vsync": "the fetch of the VSYNC hook 0406h (FRAME_SYNC)",
    "irq": "the fetch of the external-interrupt entry 0402h (once per VBL interrupt)",
    "time": "the emulator's frame ends, counted in cycles from the reset fetch of 0400h "
    "(the cart fetches neither 0406h nor 0402h once a frame)",
}

Block = list[Event] | Gap


@dataclass(slots=True)
class CutFrame:
    """One frame of one side: [start, end) in aligned cycles, its compared events, copy-mode writes."""

    index: int
    start: int
    end: int | None  # start of the next frame; None: the stream ended inside this frame
    events: list[Event] = field(default_factory=list)
    gap: str = ""  # why this frame cannot be compared ("" = it can)


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
    block: list[Event] = []

    def unwrap(cycle: int) -> int:
        nonlocal high, last
        cycle += high
        if cycle < last - CYCLE_WRAP // 2:
            high += CYCLE_WRAP
            cycle += CYCLE_WRAP
        last = cycle
        return cycle

    def events_of(rows: np.ndarray) -> list[Event]:
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
        keep = np.isin(kinds, KNOWN_KINDS)
        if copies:
            kinds[copied] |= COPY_FLAG
            shown[copied] = p1[copied]
        else:
            keep &= ~copied
        if not keep.all():
            cycles, kinds, addresses, shown = cycles[keep], kinds[keep], addresses[keep], shown[keep]
            values = rows["value"][keep]
        else:
            values = rows["value"]
        return list(
            zip(
                (cycles + shift).tolist(),
                kinds.tolist(),
                addresses.tolist(),
                values.tolist(),
                shown.tolist(),
                strict=True,
            )
        )

    for item in items:
        if type(item) is CaptureRecord:
            item = batched_record(item)
            if item is None:
                continue  # a record kind this check does not know is not evidence of anything
        if type(item) is RecordBatch:
            if shift is None or not len(item.rows):
                continue
            block += events_of(item.rows)
        elif isinstance(item, ResetDetected):
            cycle = unwrap(item.cycle)
            if shift is None:
                shift = anchor() - cycle
            elif not markers:
                continue
            block.append((cycle + shift, RESET, RESET_ADDRESS, 0, 0))
        elif isinstance(item, FrameSync):
            if shift is None or not markers:
                continue
            block.append((unwrap(item.cycle) + shift, SYNC, VSYNC_HOOK, 0, 0))
        elif isinstance(item, Gap):
            if shift is None:
                continue
            if block:
                yield block
                block = []
            yield item
            continue
        if len(block) >= BLOCK_ITEMS:
            yield block
            block = []
    if block:
        yield block


def batched_record(record: CaptureRecord) -> RecordBatch | None:
    """One loose record as a batch (None: a kind this check does not know)."""
    kind = CAPTURE_KINDS.get(record.kind)
    if kind is None:
        return None
    return RecordBatch.from_tuples([(record.cycle, kind, record.address, record.value, record.p1)])


def _cycle(event: Event) -> int:
    return event[0]


def cut_frames(
    blocks: Iterator[Block],
    marker: str,
    frame_end: Callable[[int], int],
    ends_on_frame: bool = False,
) -> Iterator[CutFrame]:
    """Cut a side into frames, from its first reset on (what comes before is not compared).

    The last frame has `end` None (the stream ended inside it), unless `ends_on_frame` says the
    source stops exactly at a frame end (console-timed captures) and the time marker is used.

    `frame_end(n)` is the emulator's end cycle of video frame n; with the time marker, frame n is
    the part of video frame n after the reset."""
    frame: CutFrame | None = None
    boundary = NEVER
    ended_by_gap = False
    for block in blocks:
        ended_by_gap = isinstance(block, Gap)
        if isinstance(block, Gap):
            if frame is not None and not frame.gap:
                frame.gap = f"{block.reason} ({block.chunks} chunks, {block.records} records lost)"
            continue
        position = 0
        if frame is None:
            position = next((i for i, event in enumerate(block) if event[1] == RESET), len(block))
            if position == len(block):
                continue
            start = block[position][0]
            index = 0
            if marker == "time":
                while frame_end(index) <= start:
                    index += 1
                boundary = frame_end(index)
            frame = CutFrame(index, start, None)
            frame.events.append(block[position])
            position += 1
        if marker == "time":
            while block and block[-1][0] >= boundary:
                at = bisect.bisect_left(block, boundary, lo=position, key=_cycle)
                frame.events.extend(block[position:at])
                frame.end = boundary
                yield frame
                frame = CutFrame(frame.index + 1, boundary, None)
                boundary = frame_end(frame.index)
                position = at
            frame.events.extend(block[position:])
            continue
        if marker == "vsync":
            starts = [i for i in range(position, len(block)) if block[i][1] == SYNC]
        else:
            starts = [
                i for i in range(position, len(block)) if block[i][1] == FETCH and block[i][2] == IRQ_ENTRY
            ]
        for at in starts:
            frame.events.extend(block[position:at])
            frame.end = block[at][0]
            yield frame
            frame = CutFrame(frame.index + 1, block[at][0], None)
            position = at
        frame.events.extend(block[position:])
    if frame is not None:
        if ends_on_frame and marker == "time" and not ended_by_gap:
            frame.end = boundary
        yield frame
