"""Framing and payload parsing: round trips, resynchronisation, and a fuzz of ≥ 100k frames."""

from __future__ import annotations

import contextlib
import random
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.link.errors import FramingError, LinkTimeout, ProtocolError
from hilbridge.link.protocol import (
    CODES,
    MESSAGES,
    MESSAGES_BY_ID,
    Frame,
    FrameDecoder,
    decode_frame,
    encode_frame,
    pack_fields,
    parse_device_frame,
    parse_host_frame,
    unpack_fields,
)
from hilbridge.link.session import Link
from hilbridge.sim import build_device

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
FRAMES_PER_EXAMPLE = 50
FUZZ_EXAMPLES = 2100  # × 50 frames = 105 000 random and mutated frames
_LIMITS = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF}


def _random_values(fields, rng: random.Random) -> dict:
    values = {}
    for field in fields:
        if field.format == "*":
            values[field.name] = rng.randbytes(rng.randrange(0, 64))
        elif field.format == "s":
            values[field.name] = "".join(rng.choice("abcdé0_ ") for _ in range(rng.randrange(0, 20)))
        else:
            values[field.name] = rng.randrange(0, _LIMITS[field.format] + 1)
    return values


@given(st.sampled_from(sorted(MESSAGES)), st.integers(0, 2**32), st.sampled_from(["request", "response"]))
def test_every_message_round_trips_through_a_frame(name, seed, side):
    message = MESSAGES[name]
    fields = getattr(message, side)
    values = _random_values(fields, random.Random(seed))
    seq = seed & 0xFF
    frame = decode_frame(encode_frame(message.id, seq, pack_fields(fields, values))[:-1])
    assert (frame.type, frame.seq) == (message.id, seq)
    assert unpack_fields(fields, frame.payload, name) == values


def _mutate(wire: bytes, rng: random.Random) -> bytes:
    data = bytearray(wire)
    for _ in range(rng.randrange(1, 4)):
        choice = rng.randrange(6)
        position = rng.randrange(len(data)) if data else 0
        if choice == 0 and data:
            data[position] ^= 1 << rng.randrange(8)
        elif choice == 1 and data:
            del data[position]
        elif choice == 2:
            data.insert(position, rng.randrange(256))
        elif choice == 3:
            data = data[: rng.randrange(len(data) + 1)]
        elif choice == 4 and data:
            data[position:position] = data[position : position + rng.randrange(1, 16)]
        else:
            data[position:position] = b"\x00"
    return bytes(data)


def _fuzz_frames(seed: int) -> list[bytes]:
    """Random bytes, mutated valid frames, and CRC-valid frames with random type and payload."""
    rng = random.Random(seed)
    names = sorted(MESSAGES)
    frames = []
    for _ in range(FRAMES_PER_EXAMPLE):
        kind = rng.randrange(3)
        if kind == 0:
            frames.append(rng.randbytes(rng.randrange(0, 120)))
            continue
        message = MESSAGES[rng.choice(names)]
        fields = message.request if rng.random() < 0.5 else message.response
        payload = pack_fields(fields, _random_values(fields, rng))
        if kind == 1:
            frames.append(
                _mutate(encode_frame(message.id | rng.choice((0, 0x80)), rng.randrange(256), payload), rng)
            )
        else:
            junk = rng.randbytes(rng.randrange(0, 12)) if rng.random() < 0.5 else payload[: rng.randrange(40)]
            frames.append(encode_frame(rng.randrange(256), rng.randrange(256), junk))
    return frames


@pytest.mark.slow
@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(st.integers(0, 2**64), st.binary(max_size=200))
def test_fuzzed_frames_raise_only_our_errors_and_never_hang(seed, extra):
    frames = [*_fuzz_frames(seed), extra]
    stream = b"".join(frames)
    decoder = FrameDecoder()
    for frame in decoder.feed(stream) + decoder.feed(b"\x00"):
        for parse in (parse_device_frame, parse_host_frame):
            with contextlib.suppress(ProtocolError):
                parse(frame)
    for piece in frames:
        with contextlib.suppress(FramingError):
            decode_frame(piece.rstrip(b"\x00") or b"\x01")
    device = build_device()
    device.receive(stream)  # the device side answers or drops, never raises
    assert isinstance(device.transmit(), bytes)


def test_decoder_resynchronises_after_garbage_and_split_reads():
    wire = encode_frame(0x83, 5, b"hello")
    decoder = FrameDecoder()
    stream = b"\xde\xad\xbe\xef" + b"\x00" + wire + b"\x42" * 9000 + b"\x00" + wire
    frames = []
    for start in range(0, len(stream), 7):
        frames += decoder.feed(stream[start : start + 7])
    assert [(f.type, f.seq, f.payload) for f in frames] == [(0x83, 5, b"hello")] * 2
    assert decoder.bad >= 2


def test_corrupted_frame_fails_its_crc():
    wire = bytearray(encode_frame(0x91, 1, bytes(range(1, 40))))
    wire[10] ^= 0x04
    with pytest.raises(FramingError):
        decode_frame(bytes(wire[:-1]))


def test_wrong_payload_length_is_a_protocol_error():
    with pytest.raises(ProtocolError):
        parse_host_frame(decode_frame(encode_frame(MESSAGES["CART_READ"].id, 3, b"\x01\x02")[:-1]))


class _Garbage:
    name = "garbage"

    def __init__(self):
        self.rng = random.Random(1)

    def write(self, data: bytes) -> None:
        pass

    def read(self, timeout: float) -> bytes:
        return self.rng.randbytes(64)

    def close(self) -> None:
        pass


def test_a_device_that_only_sends_garbage_times_out_instead_of_hanging():
    link = Link(_Garbage(), timeout=0.005, max_timeout=0.02, retries=5)
    started = time.monotonic()
    with pytest.raises(LinkTimeout):
        link.request("STATUS")
    assert time.monotonic() - started < 5


def test_protocol_document_covers_every_message_and_code():
    text = DOC.read_text(encoding="utf-8")
    missing = [m.name for m in MESSAGES.values() if f"`{m.name}`" not in text]
    missing += [f"{c.table}:{c.name}" for c in CODES if f"`{c.name}`" not in text]
    assert not missing
    for message in MESSAGES.values():
        assert f"0x{message.id:02X}" in text, message.name


@pytest.mark.parametrize("type_byte", range(256))
def test_each_frame_type_parses_in_the_one_direction_the_spec_gives_it(type_byte):
    """Requests carry a command's id; replies id | 0x80 (ERROR 0xFF); events their id. Nothing else."""
    message = MESSAGES_BY_ID.get(type_byte & 0x7F)
    is_request = message is not None and message.kind == "command" and type_byte < 0x80
    is_from_device = message is not None and (type_byte < 0x80) == (message.kind == "event")
    rng = random.Random(type_byte)
    for parse, accepted, fields in (
        (parse_host_frame, is_request, message.request if message else ()),
        (parse_device_frame, is_from_device, message.response if message else ()),
    ):
        frame = Frame(type_byte, 1, pack_fields(fields, _random_values(fields, rng)))
        if accepted:
            assert parse(frame)[0] is message
        else:
            with pytest.raises(ProtocolError, match="unknown"):
                parse(frame)
