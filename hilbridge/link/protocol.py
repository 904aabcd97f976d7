"""The adapter protocol as data: message and code tables, payload packing, and frames.

`messages.tsv` and `codes.tsv` beside this file are the single source of truth; `docs/protocol.md`
documents the same tables and the firmware implements them. A frame on the wire is

    COBS( type:u8  seq:u8  payload  crc32:u32le )  0x00

where crc32 is CRC-32 (zlib/IEEE) over type, seq and payload. A command request has type = id, its reply
type = id | 0x80, an ERROR reply 0xFF; events have type = id and seq 0. Multi-byte fields are little-endian.
"""

from __future__ import annotations

import csv
import struct
import zlib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

from cobs import cobs

from hilbridge.link.errors import FramingError, ProtocolError
from hilbridge.machine.mappers import DEFAULT_REGISTRY

PROTOCOL_VERSION = 4
REPLY_BIT = 0x80
DELIMITER = b"\x00"
MAX_PAYLOAD = 65535  # the most HELLO's max_payload:H can say; 16384 in protocol version 2, 4096 in 1
HEADER_SIZE = 2
CRC_SIZE = 4
MAX_FRAME = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE
# COBS adds one byte per 254 plus one; anything longer between delimiters is garbage.
MAX_ENCODED_FRAME = MAX_FRAME + MAX_FRAME // 254 + 2
CRC_RESIDUE = 0x2144DF1C  # CRC-32 of any bytes followed by their own CRC-32 (little-endian)

_FIXED_FORMATS = "BHI"  # u8, u16, u32 (little-endian struct codes); "*" bytes and "s" text are tails


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    format: str  # "B", "H", "I" (little-endian unsigned), "*" (rest as bytes), "s" (rest as UTF-8)

    @property
    def is_tail(self) -> bool:
        return self.format in ("*", "s")


class Layout:
    """A field list compiled once: a struct for the fixed-size fields, then an optional tail field.

    Packing and unpacking run per frame at link speed, so they are a struct call, not a loop over fields.
    """

    __slots__ = ("names", "struct", "tail")

    def __init__(self, fields: tuple[Field, ...]):
        fixed = [f for f in fields if not f.is_tail]
        self.names = tuple(f.name for f in fixed)
        self.struct = struct.Struct("<" + "".join(f.format for f in fixed))
        self.tail = fields[-1] if fields and fields[-1].is_tail else None

    def pack(self, values: dict[str, Any]) -> bytes:
        """Payload bytes; ValueError when a value is missing or out of range."""
        try:
            head = self.struct.pack(*[int(values[name]) for name in self.names])
        except KeyError as error:
            raise ValueError(f"missing field {error.args[0]!r}") from None
        except struct.error as error:
            raise ValueError(f"field out of range: {error}") from None
        tail = self.tail
        if tail is None:
            return head
        if tail.name not in values:
            raise ValueError(f"missing field {tail.name!r}")
        value = values[tail.name]
        return head + (bytes(value) if tail.format == "*" else str(value).encode("utf-8"))

    def unpack(self, payload: bytes, what: str) -> dict[str, Any]:
        """Field values; ProtocolError when the payload length does not match."""
        size = self.struct.size
        tail = self.tail
        if len(payload) != size:
            if len(payload) < size:
                raise ProtocolError(f"{what}: payload of {len(payload)} bytes is too short")
            if tail is None:
                raise ProtocolError(f"{what}: payload of {len(payload)} bytes is too long")
        values = dict(zip(self.names, self.struct.unpack_from(payload), strict=False))  # one per name
        if tail is not None:
            rest = bytes(payload[size:])
            values[tail.name] = rest if tail.format == "*" else rest.decode("utf-8", errors="replace")
        return values


@dataclass(frozen=True, slots=True)
class Message:
    name: str
    id: int
    kind: str  # "command", "event" or "reply"
    request: tuple[Field, ...]
    response: tuple[Field, ...]
    description: str
    request_layout: Layout = field(init=False, repr=False, compare=False)
    response_layout: Layout = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "request_layout", Layout(self.request))
        object.__setattr__(self, "response_layout", Layout(self.response))

    @property
    def reply_type(self) -> int:
        return self.id | REPLY_BIT


@dataclass(frozen=True, slots=True)
class Code:
    table: str
    name: str
    value: int
    meaning: str


def _parse_fields(text: str) -> tuple[Field, ...]:
    fields = []
    for item in text.split():
        name, _, fmt = item.partition(":")
        if fmt not in (*_FIXED_FORMATS, "*", "s"):
            raise ValueError(f"messages.tsv: bad field format {item!r}")
        fields.append(Field(name, fmt))
    if any(f.is_tail for f in fields[:-1]):
        raise ValueError("messages.tsv: a bytes/string field must come last")
    return tuple(fields)


def _read_tsv(name: str) -> list[dict[str, str]]:
    text = resources.files("hilbridge.link").joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines(), delimiter="\t"))


def _load_messages() -> dict[str, Message]:
    table = {}
    for row in _read_tsv("messages.tsv"):
        message = Message(
            name=row["name"],
            id=int(row["id"], 16),
            kind=row["kind"],
            request=_parse_fields(row["request"]),
            response=_parse_fields(row["response"]),
            description=row["description"],
        )
        table[message.name] = message
    return table


def _load_codes() -> list[Code]:
    """codes.tsv, then the `mapper` table: the protocol ids of the mapper registry (machine/mappers.tsv)."""
    listed = [Code(r["table"], r["name"], int(r["value"]), r["meaning"]) for r in _read_tsv("codes.tsv")]
    ids = DEFAULT_REGISTRY.protocol_ids
    return listed + [Code("mapper", name, ids[name], DEFAULT_REGISTRY.mappers[name].note) for name in ids]


MESSAGES: dict[str, Message] = _load_messages()
MESSAGES_BY_ID: dict[int, Message] = {m.id: m for m in MESSAGES.values()}
CODES: list[Code] = _load_codes()


def codes(table: str) -> dict[str, int]:
    """Name → value for one code table: "error", "capability", "strobe", "mapper" or "capture"."""
    return {c.name: c.value for c in CODES if c.table == table}


ERROR_CODES = codes("error")
ERROR_NAMES = {v: k for k, v in ERROR_CODES.items()}
STROBES = codes("strobe")
CAPABILITIES = codes("capability")
CAPTURE_KINDS = codes("capture")
ERROR = MESSAGES["ERROR"]
# Frame type byte → message, per direction: a reply is id | REPLY_BIT (ERROR's is 0xFF), an event its id.
HOST_FRAME_TYPES = {m.id: m for m in MESSAGES.values() if m.kind == "command"}
DEVICE_FRAME_TYPES = {m.id if m.kind == "event" else m.reply_type: m for m in MESSAGES.values()}


@cache
def layout_of(fields: tuple[Field, ...]) -> Layout:
    """The Layout of `fields`, compiled once per field list (a struct is not made per frame)."""
    return Layout(fields)


def pack_fields(fields: tuple[Field, ...], values: dict[str, Any]) -> bytes:
    """Payload bytes for `values` laid out as `fields`; ValueError when a value is missing or out of range."""
    return layout_of(fields).pack(values)


def unpack_fields(fields: tuple[Field, ...], payload: bytes, what: str) -> dict[str, Any]:
    """Field values of `payload`; ProtocolError when its length does not match."""
    return layout_of(fields).unpack(payload, what)


class Frame(NamedTuple):
    """One decoded frame (a tuple: one is made per frame at link speed)."""

    type: int
    seq: int
    payload: bytes


def encode_frame(frame_type: int, seq: int, payload: bytes = b"") -> bytes:
    """The wire bytes of one frame, delimiter included."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    header = bytes((frame_type, seq))
    crc = zlib.crc32(payload, zlib.crc32(header))
    return cobs.encode(b"".join((header, payload, crc.to_bytes(4, "little")))) + DELIMITER


def decode_frame(encoded: bytes | bytearray) -> Frame:
    """One frame from the bytes between two delimiters; FramingError for anything invalid."""
    if len(encoded) > MAX_ENCODED_FRAME:
        raise FramingError(f"frame of {len(encoded)} bytes is longer than any valid frame")
    try:
        raw = cobs.decode(encoded)
    except cobs.DecodeError as error:
        raise FramingError(f"bad COBS encoding: {error}") from None
    if len(raw) < HEADER_SIZE + CRC_SIZE:
        raise FramingError(f"frame of {len(raw)} bytes is too short")
    # The CRC of a frame with its own CRC appended is a constant: one pass, no slicing.
    if zlib.crc32(raw) != CRC_RESIDUE:
        raise FramingError("CRC mismatch")
    return Frame(raw[0], raw[1], raw[HEADER_SIZE:-CRC_SIZE])


class FrameDecoder:
    """Splits a byte stream into frames at 0x00 delimiters, dropping (and counting) invalid ones.

    Garbage, lost bytes and corrupted bytes cost at most the frames they touch: the next delimiter
    starts a clean frame again. A read without a delimiter (most reads of a long frame) is only appended
    to the buffer; frames are decoded in place from it when their delimiter arrives.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.bad = 0

    @property
    def partial(self) -> int:
        """Bytes of an unfinished frame held since the last delimiter."""
        return len(self._buffer)

    def feed(self, data: bytes | bytearray) -> list[Frame]:
        buffer = self._buffer
        if 0 not in data:
            buffer += data
            if len(buffer) > MAX_ENCODED_FRAME:
                self.bad += 1
                buffer.clear()
            return []
        search = len(buffer)
        buffer += data
        frames = []
        begin = 0
        end = buffer.find(0, search)
        while end >= 0:
            if end > begin:
                try:
                    frames.append(decode_frame(buffer[begin:end]))
                except FramingError:
                    self.bad += 1
            begin = end + 1
            end = buffer.find(0, begin)
        del buffer[:begin]
        return frames


def message_for_reply(frame: Frame) -> Message:
    """The message a device → host frame carries (reply or event); ProtocolError if none."""
    message = DEVICE_FRAME_TYPES.get(frame.type)
    if message is None:
        raise ProtocolError(f"unknown frame type 0x{frame.type:02X}")
    return message


def parse_device_frame(frame: Frame) -> tuple[Message, dict[str, Any]]:
    """Message and field values of a reply or event frame."""
    message = message_for_reply(frame)
    return message, message.response_layout.unpack(frame.payload, message.name)


def parse_host_frame(frame: Frame) -> tuple[Message, dict[str, Any]]:
    """Message and field values of a host → device request frame."""
    message = HOST_FRAME_TYPES.get(frame.type)
    if message is None:
        raise ProtocolError(f"unknown request type 0x{frame.type:02X}")
    return message, message.request_layout.unpack(frame.payload, message.name)
