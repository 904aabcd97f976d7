"""The items of a bus capture and the interface every capture source offers.

A capture is a header followed by items in bus order: `CaptureRecord`s (one bus access each, as the
adapter protocol's CAPTURE_CHUNK carries them), `ResetDetected` and `FrameSync` markers (the protocol's
events) and `Gap`s, which say that records are missing (chunks lost on the link, dropped by the adapter,
or a damaged chunk of a file) so a consumer can never mistake missing data for agreement.

Sources also offer the same stream batched (`BatchedSource.batches()`): consecutive records as one
`RecordBatch` (a numpy structured array), decoded from a chunk at once. The check reads batches: one
Python object per record costs more than emulating the access it records. `items()` is the batches
expanded (`expanded`), so both views come from one decoder.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.capture_codec import RECORD_DTYPE, decode_words
from hilbridge.link.protocol import CAPTURE_KINDS

FIXED_DTYPE = np.dtype([("cycle", "<u4"), ("kind", "u1"), ("address", "<u2"), ("value", "u1"), ("p1", "u1")])
"""The .hbcap file's 9-byte record (the adapter protocol's up to version 3): decoded with one frombuffer."""
KIND_NAMES = {value: name for name, value in CAPTURE_KINDS.items()}
_KIND_NAME_OF = [KIND_NAMES.get(kind, f"?{kind}") for kind in range(256)]
"""A u1 kind number's name ("?n" for a number this hilbridge does not know)."""


@dataclass(frozen=True, slots=True)
class ResetDetected:
    """The console fetched 0400h from reset."""

    cycle: int


@dataclass(frozen=True, slots=True)
class FrameSync:
    """The console fetched the VSYNC hook 0406h: the start of frame `frame`."""

    frame: int
    cycle: int


@dataclass(frozen=True, slots=True)
class Gap:
    """Records are missing here: `chunks` chunks and/or `records` records lost, and why."""

    reason: str
    chunks: int = 0
    records: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class RecordBatch:
    """Consecutive records in bus order: `rows` has RECORD_DTYPE (full cycles, CAPTURE_* kind numbers)."""

    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def from_wire(cls, records: bytes | memoryview, cycle: int, p1: int, high: int = 0) -> RecordBatch:
        """A CAPTURE_CHUNK's record words after a record at `cycle` with `p1` (the chunk header), the
        u32 stamps with `high` added (the upper bits of the cycle); ProtocolError for a bad chunk."""
        rows = decode_words(records, cycle, p1)
        if high:
            rows["cycle"] += high
        return cls(rows)

    @classmethod
    def from_fixed(cls, records: bytes | memoryview, high: int = 0) -> RecordBatch:
        """9-byte records (FIXED_DTYPE) whose u32 stamps have `high` added."""
        fixed = np.frombuffer(records, FIXED_DTYPE)
        rows = np.empty(len(fixed), RECORD_DTYPE)
        for name in FIXED_DTYPE.names:
            rows[name] = fixed[name]
        if high:
            rows["cycle"] += high
        return cls(rows)

    @classmethod
    def from_tuples(cls, records: list[tuple[int, int, int, int, int]]) -> RecordBatch:
        """(cycle, kind number, address, value, p1) tuples, as emulators produce them."""
        rows = np.empty(len(records), RECORD_DTYPE)
        if records:
            columns = list(zip(*records, strict=True))
            for name, column in zip(RECORD_DTYPE.names, columns, strict=True):
                rows[name] = column
        return cls(rows)

    def records(self) -> list[CaptureRecord]:
        """One object per record: for showing, exporting and the check's report, not its hot path.
        Built by `map` over the columns, kind names from a table: tests expand millions."""
        cycle, kind, address, value, p1 = (self.rows[name].tolist() for name in RECORD_DTYPE.names)
        return list(map(CaptureRecord, cycle, map(_KIND_NAME_OF.__getitem__, kind), address, value, p1))

    def until(self, cycle: int) -> RecordBatch:
        """The records stamped before `cycle` (stamps are in bus order, so a prefix)."""
        return RecordBatch(self.rows[: int(np.searchsorted(self.rows["cycle"], cycle, side="left"))])


CaptureItem = CaptureRecord | ResetDetected | FrameSync | Gap
BatchItem = RecordBatch | ResetDetected | FrameSync | Gap


@dataclass(frozen=True, slots=True)
class CaptureHeader:
    """What is known about a capture before its first item: who captured what, on which console."""

    source: str  # "adapter", "sim", "mame", "file"
    adapter: str = ""  # adapter name and firmware info, "" when not captured through an adapter
    cart_sha1: str = ""  # SHA-1 of the cartridge image (hex), "" when unknown (sniffing an unknown cart)
    mapper: str = ""
    region: str = "ntsc"
    bios: str = ""  # BIOS identity (name or SHA-1), "" when unknown
    kinds: tuple[str, ...] = ("FETCH", "MOVX_WRITE")  # the CAPTURE_* kinds recorded
    inputs: str = ""  # the input movie applied, as text; "" for none
    fetches: str = "all"  # "compressed": sequential fetches left out (the adapter firmware's rule)
    ends_on_frame: bool = False  # stops exactly at a console frame's end (a frame limit on a timed console)
    notes: tuple[str, ...] = field(default_factory=tuple)


@runtime_checkable
class CaptureSource(Protocol):
    """A device or file that yields a capture: its header, then its items in bus order.

    `items()` may be called once; it streams (constant memory) and ends when the source has no more
    (a file's end, the requested frames captured, or a device that stopped, which ends with a `Gap`).
    """

    @property
    def header(self) -> CaptureHeader: ...

    def items(self) -> Iterator[CaptureItem]: ...

    def close(self) -> None: ...


@runtime_checkable
class BatchedSource(CaptureSource, Protocol):
    """A source that also streams its records batched: `batches()` instead of `items()`, never both."""

    def batches(self) -> Iterator[BatchItem]: ...


class BatchStream:
    """What the batched sources share: the header they were made with, and `items()` as their
    batches expanded (a subclass defines `batches`)."""

    _header: CaptureHeader

    @property
    def header(self) -> CaptureHeader:
        return self._header

    def items(self) -> Iterator[CaptureItem]:
        return expanded(self.batches())

    def batches(self) -> Iterator[BatchItem]:
        raise NotImplementedError


def expanded(batches: Iterator[BatchItem]) -> Iterator[CaptureItem]:
    """Batches as items: each `RecordBatch` as its records."""
    for item in batches:
        if type(item) is RecordBatch:
            yield from item.records()
        else:
            yield item


BATCH_RECORDS = 4096


def batched(items: Iterator[CaptureItem]) -> Iterator[BatchItem]:
    """Items as batches: runs of records (up to BATCH_RECORDS) grouped into `RecordBatch`es."""
    run: list[tuple[int, int, int, int, int]] = []
    kinds = CAPTURE_KINDS
    for item in items:
        if type(item) is CaptureRecord:
            kind = kinds.get(item.kind)
            if kind is not None:  # a kind this hilbridge does not know is not evidence of anything
                run.append((item.cycle, kind, item.address, item.value, item.p1))
                if len(run) < BATCH_RECORDS:
                    continue
            else:
                continue
        if run:
            yield RecordBatch.from_tuples(run)
            run = []
        if type(item) is not CaptureRecord:
            yield item
    if run:
        yield RecordBatch.from_tuples(run)


def source_batches(source: CaptureSource) -> Iterator[BatchItem]:
    """The source's stream batched: its own batches where it has them, else its items grouped."""
    if isinstance(source, BatchedSource):
        return source.batches()
    return batched(source.items())
