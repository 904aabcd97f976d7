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
    RECORD_DTYPE,
    TAGS,
    chunk_fields,
    decode_words,
    encode_chunks,
    encode_words,
    rows_of,
)
from hilbridge.link.errors import ProtocolError
from hilbridge.link.protocol import MESSAGES
from hilbridge.machine.cartridge import CART_P1_MASK

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


TIME, P1_LATCH, P1 = TAGS["TIME"], TAGS["P1_LATCH"], TAGS["P1"]


def _field(word: int, name: str) -> int:
    return word >> FIELDS[name].lsb & (1 << FIELDS[name].bits) - 1


def _word(**values: int) -> int:
    return sum(value << FIELDS[name].lsb for name, value in values.items())


def plain_encode(
    records: list[tuple[int, int, int, int, int]], cycle: int, p1: int
) -> tuple[list[int], list[int]]:
    """The words of `records` and the index of each record's own word, one record at a time as the
    protocol document describes them: the reference the vectorised encoder must equal."""
    words, own = [], []
    for record_cycle, kind, address, value, record_p1 in records:
        delta = (record_cycle - cycle) % U32
        slot = value if kind == P1 else p1
        if (p1 & ~CART_P1_MASK & 0xFF) | (slot & CART_P1_MASK) != record_p1:
            words.append(_word(tag=P1_LATCH, value=record_p1))
        if delta >> FIELDS["delta"].bits:
            words.append(_word(tag=TIME, high=delta >> FIELDS["delta"].bits))
        words.append(_word(tag=kind, delta=delta & 511, address=address, value=value))
        own.append(len(words) - 1)
        cycle, p1 = record_cycle, record_p1
    return words, own


def plain_decode(words: list[int], cycle: int, p1: int) -> list[tuple[int, int, int, int, int]] | None:
    """The records of `words`, one word at a time (None where the chunk is refused): the reference
    the vectorised decoder must equal."""
    records, pending, latch, inside = [], 0, None, False
    for word in words:
        tag = _field(word, "tag")
        inside = tag in (TIME, P1_LATCH)
        if tag == TIME:
            pending += _field(word, "high") << FIELDS["delta"].bits
        elif tag == P1_LATCH:
            latch = _field(word, "value")
        else:
            cycle = (cycle + pending + _field(word, "delta")) % U32
            value = _field(word, "value")
            if latch is not None:
                p1 = latch
            elif tag == P1:
                p1 = (p1 & ~CART_P1_MASK & 0xFF) | (value & CART_P1_MASK)
            records.append((cycle, tag, _field(word, "address"), value, p1))
            pending, latch = 0, None
    return None if inside else records


edge_gaps = st.sampled_from([0, 1, 2, 510, 511, 512, 513, 2**21, U32 - 512, U32 - 1])
edge_records = st.lists(
    st.tuples(
        st.one_of(edge_gaps, gaps),
        st.sampled_from([0, 1, 2, 3, 4, 5]),
        st.sampled_from([0, 0xFFF, 0x400, 0x406]),
        st.sampled_from([0, 0xFF, CART_P1_MASK, 0x13]),
        st.sampled_from([0, 0xFF, CART_P1_MASK, 0x13, 0x10]),
    ),
    max_size=80,
)


@given(
    drafts=st.one_of(records, edge_records),
    start=st.integers(0, U32 - 1),
    p1=st.integers(0, 255),
    steady=st.booleans(),
)
def test_the_vectorised_encoder_gives_the_words_of_the_plain_one(drafts, start, p1, steady):
    if steady:  # the usual stream: short gaps, P1 unchanged, one word per record
        drafts = [(gap % 512, kind % 3, address, value, p1) for gap, kind, address, value, _ in drafts]
    stamps = stamped(start, drafts)
    words, own = encode_words(rows_of(stamps) if stamps else np.empty(0, RECORD_DTYPE), start, p1)
    assert (words.tolist(), own.tolist()) == plain_encode(stamps, start, p1)


kinds_of_words = st.sampled_from([0, 1, 2, 3, 4, 5, TIME, P1_LATCH])
any_words = st.lists(
    st.one_of(
        st.integers(0, U32 - 1),
        st.builds(lambda tag, rest: rest << 3 | tag, kinds_of_words, st.integers(0, 2**29 - 1)),
        st.builds(lambda tag, high: high << 3 | tag, st.just(TIME), st.sampled_from([0, 1, 2**29 - 1])),
    ),
    max_size=80,
)


@given(words=any_words, cycle=st.integers(0, U32 - 1), p1=st.integers(0, 255))
def test_the_vectorised_decoder_gives_the_records_of_the_plain_one(words, cycle, p1):
    expected = plain_decode(words, cycle, p1)
    data = np.array(words, "<u4").tobytes()
    if expected is None:
        with pytest.raises(ProtocolError):
            decode_words(data, cycle, p1)
    else:
        assert decode_words(data, cycle, p1).tolist() == expected
