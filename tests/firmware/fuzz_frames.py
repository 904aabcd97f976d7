"""Bad frames for fuzzing the firmware (its host build and the emulated chip), with what each must be
answered with per docs/protocol.md: garbage and truncated frames are dropped (counted in frames_bad),
CRC-valid frames of no message get UNKNOWN_MESSAGE, of a wrong payload length BAD_REQUEST, and
well-formed requests with random field values a reply or an ERROR."""

from __future__ import annotations

import random

from hilbridge.link.protocol import ERROR_CODES, HOST_FRAME_TYPES, MESSAGES, Frame, encode_frame

ERROR_TYPE = MESSAGES["ERROR"].reply_type


def fuzz_frames(rng: random.Random, count: int) -> tuple[bytes, list[str | None]]:
    """`count` bad frames and what each must be answered with: None (dropped), an error name, or
    "any" (a well-formed request with random field values: a reply or an ERROR)."""
    commands = [m for m in MESSAGES.values() if m.kind == "command"]
    unknown = [t for t in range(256) if t not in HOST_FRAME_TYPES]
    pieces, expected = [], []
    for index in range(count):
        seq = index % 256
        kind = rng.randrange(5)
        if kind == 0:  # garbage
            pieces.append(bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 60))) + b"\x00")
            expected.append(None)
        elif kind == 1:  # truncated
            frame = encode_frame(rng.choice(commands).id, seq, rng.randbytes(rng.randrange(0, 40)))
            pieces.append(frame[: rng.randrange(1, len(frame) - 1)] + b"\x00")
            expected.append(None)
        elif kind == 2:  # CRC-valid, no such message
            pieces.append(encode_frame(rng.choice(unknown), seq, rng.randbytes(rng.randrange(0, 20))))
            expected.append("UNKNOWN_MESSAGE")
        elif kind == 3:  # CRC-valid, wrong payload length
            message = rng.choice([m for m in commands if m.request_layout.tail is None])
            size = message.request_layout.struct.size
            wrong = rng.choice([n for n in range(size + 4) if n != size])
            pieces.append(encode_frame(message.id, seq, rng.randbytes(wrong)))
            expected.append("BAD_REQUEST")
        else:  # CRC-valid, random field values
            message = rng.choice(commands)
            size = message.request_layout.struct.size
            tail = rng.randbytes(rng.randrange(0, 30)) if message.request_layout.tail else b""
            pieces.append(encode_frame(message.id, seq, rng.randbytes(size) + tail))
            expected.append("any")
    return b"".join(pieces), expected


def assert_fuzz_replies(replies: list[Frame], expected: list[str | None]) -> None:
    """The replies to `fuzz_frames` plus a final HELLO (seq 77): one per answerable frame, in order,
    with the error the protocol names where one is expected."""
    answered = [(index, want) for index, want in enumerate(expected) if want is not None]
    assert len(replies) == len(answered) + 1
    for reply, (index, want) in zip(replies, answered, strict=False):
        assert reply.seq == index % 256
        if want != "any":
            assert reply.type == ERROR_TYPE and reply.payload[0] == ERROR_CODES[want], (index, want, reply)
    assert (replies[-1].type, replies[-1].seq) == (MESSAGES["HELLO"].reply_type, 77)
