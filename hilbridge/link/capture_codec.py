"""CAPTURE_CHUNK records as 4-byte words (protocol version 4, docs/protocol.md §4.1), both ways, as
numpy array operations: the check decodes every chunk of a capture, so no step loops per record.

The word's bit fields are `capture_record.tsv` beside this file, its tags the `record_tag` table of
`codes.tsv`; the firmware's writer is generated from the same tables. A record is stamped with its
cycle distance from the record before it (the chunk header carries the absolute cycle and P1 of that
record, so a lost chunk costs only its own records); a distance of 512 cycles or more takes a TIME
word first. P1 is not sent per record: a P1 record sets the slot's P10/P11/P14, and a P1_LATCH word
gives the next record's whole P1 where it changes otherwise (bits the slot does not see, which only
the simulated adapter knows, or P1 records left out of the capture).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources
from typing import NamedTuple

import numpy as np

from hilbridge.link.errors import ProtocolError
from hilbridge.link.protocol import codes
from hilbridge.machine.cartridge import CART_P1_MASK

WORD_SIZE = 4
CHUNK_HEADER_SIZE = 9  # chunk_seq:I cycle:I p1:B (messages.tsv CAPTURE_CHUNK)
RECORD_DTYPE = np.dtype([("cycle", "<u8"), ("kind", "u1"), ("address", "<u2"), ("value", "u1"), ("p1", "u1")])
"""A decoded record: the cycle as the wire gives it (u32 range unless a caller adds the high bits)."""


@dataclass(frozen=True, slots=True)
class BitField:
    lsb: int
    bits: int

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1


def _load_fields() -> dict[str, BitField]:
    text = resources.files("hilbridge.link").joinpath("capture_record.tsv").read_text(encoding="utf-8")
    return {
        row["field"]: BitField(int(row["lsb"]), int(row["bits"]))
        for row in csv.DictReader(text.splitlines(), delimiter="\t")
    }


FIELDS = _load_fields()
TAGS = codes("record_tag")
_TAG, _DELTA, _ADDRESS, _VALUE, _HIGH = (
    FIELDS[name] for name in ("tag", "delta", "address", "value", "high")
)
TIME, P1_LATCH, P1 = TAGS["TIME"], TAGS["P1_LATCH"], TAGS["P1"]
MAX_DELTA = _DELTA.mask
_U32 = 0xFFFFFFFF
_OUTER_MASK = 0xFF & ~CART_P1_MASK  # the P1 bits the slot does not see


def _p1_after(previous: np.ndarray, kind: np.ndarray, value: np.ndarray) -> np.ndarray:
    """P1 as the decoder rebuilds it for each record from the P1 before it: a P1 record sets the
    slot's bits, any other keeps P1 as it was."""
    slot = np.where(kind == P1, value, previous) & CART_P1_MASK
    return (previous & _OUTER_MASK) | slot


_REFUSED_KIND = np.ones(256, bool)  # kinds a record cannot have: beyond the tag, or a TIME/P1_LATCH tag
_REFUSED_KIND[: _TAG.mask + 1] = False
_REFUSED_KIND[[TIME, P1_LATCH]] = True


def encode_words(rows: np.ndarray, cycle: int, p1: int) -> tuple[np.ndarray, np.ndarray]:
    """The words of `rows` (RECORD_DTYPE, in bus order) after a record at `cycle` with `p1`, and for
    each row the index of its own word (the words before it up to the previous row's are its TIME
    and P1_LATCH words), so a caller can cut chunks at row boundaries."""
    return encode_columns(_columns_of(rows), cycle, p1)


class RecordColumns(NamedTuple):
    """Records as one integer array per field, in bus order: a caller holding columns need not
    build RECORD_DTYPE rows to encode them."""

    cycles: np.ndarray
    kinds: np.ndarray
    addresses: np.ndarray
    values: np.ndarray
    p1s: np.ndarray


def _columns_of(rows: np.ndarray) -> RecordColumns:
    return RecordColumns(rows["cycle"], rows["kind"], rows["address"], rows["value"], rows["p1"])


def encode_columns(columns: RecordColumns, cycle: int, p1: int) -> tuple[np.ndarray, np.ndarray]:
    """`encode_words` of records given as columns. Cycle arithmetic is u32, which wraps as the wire
    does."""
    cycles, kinds, addresses, values, p1s = columns
    count = len(cycles)
    kinds = kinds.astype(np.uint32)
    addresses = addresses.astype(np.uint32)
    if count and (addresses.max() > _ADDRESS.mask or _REFUSED_KIND[np.minimum(kinds, 255)].any()):
        raise ValueError("a record's address does not fit 12 bits or its kind is a TIME or P1_LATCH tag")
    cycles = cycles.astype(np.uint32)  # the low 32 bits: the wire's cycles are u32
    values = values.astype(np.uint32)
    p1s = p1s.astype(np.uint32)
    if not count:
        return np.empty(0, np.uint32), np.empty(0, np.int64)
    delta = np.empty(count, np.uint32)
    np.subtract(cycles[:1], np.uint32(cycle & _U32), out=delta[:1])
    np.subtract(cycles[1:], cycles[:-1], out=delta[1:])
    before_p1 = np.empty(count, np.uint32)
    before_p1[0] = p1
    before_p1[1:] = p1s[:-1]
    timed = delta > MAX_DELTA
    latched = _p1_after(before_p1, kinds, values) != p1s
    record_words = (
        kinds << _TAG.lsb
        | (delta & MAX_DELTA) << _DELTA.lsb
        | (addresses & _ADDRESS.mask) << _ADDRESS.lsb
        | (values & _VALUE.mask) << _VALUE.lsb
    )
    if not (timed.any() or latched.any()):
        return record_words, np.arange(count)
    own = np.cumsum(1 + timed.astype(np.int64) + latched) - 1
    words = np.empty(int(own[-1]) + 1, np.uint32)
    words[own] = record_words
    words[own[timed] - 1] = TIME << _TAG.lsb | (delta[timed] >> _DELTA.bits) << _HIGH.lsb
    latch_at = own[latched] - 1 - timed[latched]
    words[latch_at] = P1_LATCH << _TAG.lsb | (p1s[latched] & _VALUE.mask) << _VALUE.lsb
    return words, own


def encode_chunks(rows: np.ndarray, cycle: int, p1: int, max_words: int) -> list[tuple[int, int, bytes]]:
    """`rows` as chunks of at most `max_words` words: (cycle, p1, words) per chunk, the cycle and P1
    being those of the record before the chunk."""
    return encode_column_chunks(_columns_of(rows), cycle, p1, max_words)


def encode_column_chunks(
    columns: RecordColumns, cycle: int, p1: int, max_words: int
) -> list[tuple[int, int, bytes]]:
    """`encode_chunks` of records given as columns."""
    words, own = encode_columns(columns, cycle, p1)
    cycles, p1s = columns.cycles, columns.p1s
    chunks = []
    first_row, first_word = 0, 0
    count = len(cycles)
    while first_row < count:
        end_row = int(np.searchsorted(own, first_word + max_words, side="left"))
        if end_row == first_row:
            raise ValueError(f"a record takes more than {max_words} words")
        end_word = int(own[end_row - 1]) + 1
        chunks.append((cycle & _U32, p1, words[first_word:end_word].tobytes()))
        cycle, p1 = int(cycles[end_row - 1]), int(p1s[end_row - 1])
        first_row, first_word = end_row, end_word
    return chunks


def decode_words(records: bytes | memoryview, cycle: int, p1: int) -> np.ndarray:
    """The records (RECORD_DTYPE) of a chunk's words, after a record at `cycle` (u32) with `p1`;
    ProtocolError when the bytes are not whole words or end inside a record's TIME/P1_LATCH words.
    Cycle arithmetic is u32, which wraps as the wire's cycles do."""
    if len(records) % WORD_SIZE:
        raise ProtocolError(
            f"capture chunk of {len(records)} record bytes is not whole {WORD_SIZE}-byte words"
        )
    words = np.frombuffer(records, "<u4")
    tags = (words & _TAG.mask).astype(np.uint8)
    # ufuncs called directly: the ndarray methods add a Python layer, and this runs per chunk
    if not len(words) or np.maximum.reduce(tags) < P1_LATCH:  # the usual chunk: records only
        rows = np.empty(len(words), RECORD_DTYPE)
        cycles = np.add.accumulate(words >> _DELTA.lsb & _DELTA.mask, dtype=np.uint32)
        record_words, kinds, latch = words, tags, None
    else:
        is_record = tags < P1_LATCH
        if not is_record[-1]:
            raise ProtocolError("capture chunk ends with a TIME or P1_LATCH word and no record after it")
        timed = tags == TIME
        latching = tags == P1_LATCH
        deltas = np.where(timed, words >> _HIGH.lsb << _DELTA.bits, words >> _DELTA.lsb & _DELTA.mask)
        deltas[latching] = 0
        cycles = np.add.accumulate(deltas, dtype=np.uint32)[is_record]
        # the record each word belongs to (its own, or the next)
        record_index = np.cumsum(is_record) - is_record
        latch = np.full(len(cycles), -1, np.int16)
        latch[record_index[latching]] = words[latching] >> _VALUE.lsb
        record_words, kinds = words[is_record], tags[is_record]
        rows = np.empty(len(record_words), RECORD_DTYPE)
    cycles += np.uint32(cycle & _U32)
    values = (record_words >> _VALUE.lsb).astype(np.uint8)
    rows["cycle"] = cycles
    rows["kind"] = kinds
    rows["address"] = record_words >> _ADDRESS.lsb & _ADDRESS.mask
    rows["value"] = values
    if latch is None and not np.logical_or.reduce(kinds == P1):
        rows["p1"] = p1
    else:
        rows["p1"] = _rebuilt_p1(
            p1, kinds, values, latch if latch is not None else np.full(len(kinds), -1, np.int16)
        )
    return rows


def _last_where(mask: np.ndarray) -> np.ndarray:
    """For each position, the index of the last True at or before it (-1 where none)."""
    return (
        np.maximum.accumulate(np.where(mask, np.arange(len(mask)), -1))
        if len(mask)
        else mask.astype(np.int64)
    )


def _rebuilt_p1(p1: int, kinds: np.ndarray, values: np.ndarray, latch: np.ndarray) -> np.ndarray:
    """Each record's P1: the bits the slot does not see from the last P1_LATCH (or the chunk's P1),
    the slot's bits from the last P1_LATCH or P1 record, whichever is later."""
    latched = latch >= 0
    outer = np.concatenate(([p1 & _OUTER_MASK], latch & _OUTER_MASK))
    slot_source = np.where(latched, latch, values) & CART_P1_MASK
    slot = np.concatenate(([p1 & CART_P1_MASK], slot_source))
    last_latch = _last_where(np.concatenate(([True], latched)))
    last_slot = _last_where(np.concatenate(([True], latched | (kinds == P1))))
    return (outer[last_latch] | slot[last_slot])[1:].astype(np.uint8)


def rows_of(records: list[tuple[int, int, int, int, int]]) -> np.ndarray:
    """(cycle, kind, address, value, p1) tuples as RECORD_DTYPE rows."""
    rows = np.empty(len(records), RECORD_DTYPE)
    for column, name in enumerate(RECORD_DTYPE.names):
        rows[name] = [record[column] for record in records]
    return rows


def chunk_fields(
    seq: int, records: list[tuple[int, int, int, int, int]], cycle: int = 0, p1: int = CART_P1_MASK
) -> dict:
    """A CAPTURE_CHUNK's fields holding `records` (tuples) after a record at `cycle` with `p1`."""
    words, _ = encode_words(rows_of(records), cycle, p1)
    return {"chunk_seq": seq, "cycle": cycle, "p1": p1, "records": words.tobytes()}
