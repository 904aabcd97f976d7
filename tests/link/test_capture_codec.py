"""The capture stream's record words (protocol version 4, docs/protocol.md §4.1): the encoder and the
vectorised decoder are inverse on any record sequence and any chunking, a word is laid out as the
record table says, and damaged chunks are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hilbridge.capture.stream import RecordBatch
from hilbridge.link.adapter import capture_records
from hilbridge.link.capture_codec import (
    CHUNK_HEADER_SIZE,
    FIELDS,
    TAGS,
    chunk_fields,
    decode_words,
    encode_chunks,
    rows_of,
)
from hilbridge.link.errors import ProtocolError
from hilbridge.link.protocol import MESSAGES

U32 = 2**32
gaps = st.one_of(st.integers(0, 3), st.integers(0, 511), st.integers(512, 5000), st.integers(0, U32 - 1))
records = st.lists(
    st.tuples(gaps, st.integers(0, 3), st.integers(0, 0xFFF), st.integers(0, 255), st.integers(0, 255)),
    max_size=60,
)


def stamped(start: int, drafts: list[tuple[int, int, int, int, int]]) -> list[tuple[int, int, int, int, int]]:
    """Drafts with gaps as u32 cycles counted from `start`."""
    out, cycle = [], start
    for gap, kind, address, value, p1 in drafts:
        cycle = (cycle + gap) % U32
        out.append((cycle, kind, address, value, p1))
    return out


@given(
    drafts=records,
    start=st.integers(0, U32 - 1),
    before=st.tuples(st.integers(0, U32 - 1), st.integers(0, 255)),
    max_words=st.integers(3, 40),
)
def test_decoding_the_encoded_chunks_gives_back_every_record(drafts, start, before, max_words):
    rows = rows_of(stamped(start, drafts))
    chunks = encode_chunks(rows, *before, max_words)
    assert all(len(words) <= 4 * max_words for _, _, words in chunks)
    decoded = [decode_words(words, cycle, p1) for cycle, p1, words in chunks]
    assert np.array_equal(np.concatenate(decoded) if decoded else rows[:0], rows)
    # each chunk decodes on its own: a lost chunk costs only its records
    if len(chunks) > 1:
        first_kept = sum(len(part) for part in decoded[:1])
        cycle, p1, words = chunks[1]
        assert np.array_equal(decode_words(words, cycle, p1), rows[first_kept : first_kept + len(decoded[1])])


def test_a_word_is_laid_out_as_the_record_table_says():
    # FETCH of 0406h (byte 84h) 3 cycles after the chunk's cycle, P1 as before: one word
    # tag 0 (bits 0-2), delta 3 (bits 3-11), address 406h (bits 12-23), value 84h (bits 24-31)
    fields = chunk_fields(0, [(1003, 0, 0x406, 0x84, 0x13)], cycle=1000, p1=0x13)
    assert fields["records"] == (3 << 3 | 0x406 << 12 | 0x84 << 24).to_bytes(4, "little")
    # 600 cycles later needs a TIME word (600 >> 9 = 1 in bits 3-31), then the record with 600 & 511
    fields = chunk_fields(0, [(1600, 2, 0x80, 0x55, 0x13)], cycle=1000, p1=0x13)
    time_word = TAGS["TIME"] | 1 << 3
    record = TAGS["MOVX_WRITE"] | (600 & 511) << 3 | 0x80 << 12 | 0x55 << 24
    assert fields["records"] == time_word.to_bytes(4, "little") + record.to_bytes(4, "little")
    # a P1 the chunk's P1 and P1 records do not give takes a P1_LATCH word with the whole P1
    fields = chunk_fields(0, [(1001, 0, 0x400, 0x84, 0xFF)], cycle=1000, p1=0x13)
    latch = TAGS["P1_LATCH"] | 0xFF << 24
    assert fields["records"][:4] == latch.to_bytes(4, "little")


def test_p1_records_carry_the_slots_bits_to_the_records_after_them():
    payload = chunk_fields(
        0, [(10, 3, 0, 0x12, 0x12), (11, 0, 0x400, 1, 0x12), (12, 3, 0, 0x03, 0x03), (13, 2, 0x80, 2, 0x03)]
    )
    assert len(payload["records"]) == 16  # no P1_LATCH: P1 records say it all
    assert [record.p1 for record in capture_records(payload)] == [0x12, 0x12, 0x03, 0x03]


def test_the_chunk_message_carries_the_header_the_decoder_needs():
    message = MESSAGES["CAPTURE_CHUNK"]
    payload = message.response_layout.pack(chunk_fields(7, [(5, 0, 0x400, 1, 0x13)], cycle=2, p1=0x13))
    assert len(payload) == CHUNK_HEADER_SIZE + 4
    values = message.response_layout.unpack(payload, message.name)
    assert (
        RecordBatch.from_wire(values["records"], values["cycle"], values["p1"], high=U32).records()[0].cycle
        == U32 + 5
    )


@pytest.mark.parametrize(
    ("words", "why"),
    [
        (b"\x00\x00\x00", "not whole"),
        ((TAGS["TIME"] | 8).to_bytes(4, "little"), "no record after it"),
        (TAGS["P1_LATCH"].to_bytes(4, "little"), "no record after it"),
    ],
)
def test_a_damaged_chunk_is_refused(words, why):
    with pytest.raises(ProtocolError, match=why):
        decode_words(words, 0, 0x13)


def test_the_protocol_document_gives_the_word_layout_and_tags_of_the_tables():
    text = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
    for name, field in FIELDS.items():
        assert f"| {name} | {field.lsb}–{field.lsb + field.bits - 1} |" in text, name
    for name, value in TAGS.items():
        assert f"| {value} | `{name}` |" in text, name
