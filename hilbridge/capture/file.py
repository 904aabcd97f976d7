"""The `.hbcap` capture file: a versioned header, then CRC-checked chunks of records and events.

Layout (all integers little-endian; `docs/capture.md` is the full description):

    magic "HBCAP\\r\\n\\x1a"  u16 version  u32 header length  header (JSON, UTF-8)  u32 CRC-32 of it
    chunk*:  u32 payload length  u32 CRC-32 of (index, cycle_high, payload)  u32 index  u32 cycle_high
             payload: items, each a tag byte and its fields

Records keep the adapter protocol's 9-byte layout of versions 1-3 (u32 cycle, kind, address, value,
p1; version 4 sends denser words, `docs/protocol.md` §4.1); the chunk's
`cycle_high` holds the upper 32 bits of their cycles, so the file keeps full 64-bit cycles. A chunk
that is cut short or fails its CRC ends the reading there with a warning and a `Gap` item; a file
without its end item (an interrupted capture) ends with a `Gap` too, so missing data is never silent.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, fields
from pathlib import Path
from typing import BinaryIO

from hilbridge import __version__
from hilbridge.capture.stream import (
    BatchItem,
    CaptureHeader,
    CaptureItem,
    FrameSync,
    Gap,
    RecordBatch,
    ResetDetected,
    expanded,
)
from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.protocol import CAPTURE_KINDS

MAGIC = b"HBCAP\r\n\x1a"
FORMAT_VERSION = 1
FILE_RECORD = struct.Struct("<IBHBB")
"""A record in the file: cycle (low 32 bits), kind, address, value, P1 (stream.FIXED_DTYPE); the link's
words are denser, the file keeps this layout so every file written reads."""
SUFFIX = ".hbcap"
PARTIAL_SUFFIX = ".part"  # an unfinished capture: readable, never under the final name
CHUNK_TARGET = 32 * 1024  # payload bytes after which the writer closes a chunk and flushes it
MAX_CHUNK = 1 << 20  # a longer length field is damage, not data
MAX_HEADER = 1 << 20
RECORDS_PER_RUN = 0xFFFF

_PREAMBLE = struct.Struct("<8sHI")
_CHUNK_HEAD = struct.Struct("<IIII")  # length, crc, index, cycle_high
_CRC = struct.Struct("<I")
_RUN = struct.Struct("<BH")  # tag, record count
_SYNC = struct.Struct("<BIQ")  # tag, frame, cycle
_RESET = struct.Struct("<BQ")  # tag, cycle
_GAP = struct.Struct("<BIIH")  # tag, chunks, records, reason length
_END = struct.Struct("<BQQ")  # tag, items written, records written
TAG_RECORDS, TAG_SYNC, TAG_RESET, TAG_GAP, TAG_END = b"R"[0], b"S"[0], b"X"[0], b"G"[0], b"E"[0]

Warn = Callable[[str], None]


def header_json(header: CaptureHeader) -> dict[str, object]:
    return {**asdict(header), "kinds": list(header.kinds), "notes": list(header.notes)}


def header_from_json(data: dict[str, object], where: SourceLocation) -> CaptureHeader:
    known = {field.name for field in fields(CaptureHeader)}
    values = {key: value for key, value in data.items() if key in known}
    if "source" not in values:
        raise HilbridgeError("capture header has no 'source' field", where)
    for key in ("kinds", "notes"):
        if key in values:
            values[key] = tuple(values[key])  # type: ignore[arg-type]
    try:
        return CaptureHeader(**values)  # type: ignore[arg-type]
    except TypeError as error:
        raise HilbridgeError(f"bad capture header: {error}", where) from None


class CaptureWriter:
    """Streams items into a `.hbcap` file in constant memory; `finish()` makes it appear under its name.

    Until then the bytes go to `<output>.part` next to the output, each chunk flushed as it closes, so
    an interrupted capture leaves a readable partial file and never a damaged file under the final name.
    """

    def __init__(self, output: str | os.PathLike[str], header: CaptureHeader, *, overwrite: bool = False):
        self.path = Path(output)
        self.partial = self.path.with_name(self.path.name + PARTIAL_SUFFIX)
        if self.path.exists() and not overwrite:
            raise HilbridgeError("output exists (use --force to replace it)", SourceLocation(str(self.path)))
        if self.partial.exists() and not overwrite:
            raise HilbridgeError(
                "an interrupted capture's partial file is in the way (use --force to replace it)",
                SourceLocation(str(self.partial)),
                hint="it is readable: `hilbridge capture show` it, or rename it to keep it",
            )
        if not self.path.parent.is_dir():
            raise HilbridgeError("output directory does not exist", SourceLocation(str(self.path.parent)))
        self.header = header
        self.items = 0
        self.records = 0
        self.chunks = 0
        self._payload = bytearray()
        self._run: list[bytes] = []
        self._high: int | None = None
        try:
            self._file: BinaryIO = open(self.partial, "wb")  # noqa: SIM115 (closed by finish/abort)
        except OSError as error:
            raise HilbridgeError(
                f"cannot write: {error.strerror}", SourceLocation(str(self.partial))
            ) from None
        text = json.dumps(
            {"format": FORMAT_VERSION, "writer": f"hilbridge {__version__}", **header_json(header)},
            sort_keys=True,
        ).encode()
        self._file.write(
            _PREAMBLE.pack(MAGIC, FORMAT_VERSION, len(text)) + text + _CRC.pack(zlib.crc32(text))
        )
        self._file.flush()

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(self, kind: object, error: object, traceback: object) -> None:
        if kind is None:
            self.finish()
        else:
            self.abort()

    def write(self, item: CaptureItem) -> None:
        self.items += 1
        if isinstance(item, CaptureRecord):
            high = item.cycle >> 32
            if high != self._high:
                self._close_chunk()
                self._high = high
            self._run.append(
                FILE_RECORD.pack(
                    item.cycle & 0xFFFFFFFF, CAPTURE_KINDS[item.kind], item.address, item.value, item.p1
                )
            )
            self.records += 1
            if len(self._run) == RECORDS_PER_RUN:
                self._end_run()
        else:
            self._end_run()
            if isinstance(item, FrameSync):
                self._payload += _SYNC.pack(TAG_SYNC, item.frame, item.cycle)
            elif isinstance(item, ResetDetected):
                self._payload += _RESET.pack(TAG_RESET, item.cycle)
            else:
                reason = item.reason.encode()[:0xFFFF]
                self._payload += _GAP.pack(TAG_GAP, item.chunks, item.records, len(reason)) + reason
        if len(self._payload) + len(self._run) * FILE_RECORD.size >= CHUNK_TARGET:
            self._close_chunk()

    def _end_run(self) -> None:
        if self._run:
            self._payload += _RUN.pack(TAG_RECORDS, len(self._run)) + b"".join(self._run)
            self._run.clear()

    def _close_chunk(self) -> None:
        self._end_run()
        if not self._payload:
            return
        body = struct.pack("<II", self.chunks, self._high or 0) + bytes(self._payload)
        self._file.write(_CRC.pack(len(self._payload)) + _CRC.pack(zlib.crc32(body)) + body)
        self._file.flush()
        self.chunks += 1
        self._payload.clear()

    def finish(self) -> Path:
        """Write the end item, sync, and rename the partial file to the output name."""
        self._close_chunk()
        self._payload += _END.pack(TAG_END, self.items, self.records)
        self._close_chunk()
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.replace(self.partial, self.path)
        return self.path

    def abort(self) -> Path:
        """Close what was written as the partial file (readable up to its last chunk); return its path."""
        if not self._file.closed:
            self._close_chunk()
            self._file.close()
        return self.partial


class CaptureReader:
    """A `.hbcap` file as a `CaptureSource`: the header on opening, the items streamed chunk by chunk.

    An unknown version, a damaged header, or (given `expected_sha1`) a capture of another cartridge
    is refused; damage after the header ends the items with a warning and a `Gap`.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, expected_sha1: str | None = None, warn: Warn | None = None
    ):
        self.path = Path(path)
        self.where = SourceLocation(str(self.path))
        self.warnings: list[str] = []
        self._warn = warn
        try:
            self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 (closed by close())
        except OSError as error:
            raise HilbridgeError(f"cannot read the capture: {error.strerror}", self.where) from None
        try:
            self.header, self.version, self.info = self._read_header()
        except BaseException:
            self._file.close()
            raise
        if expected_sha1 and not self.header.cart_sha1:
            self._warning(
                "the capture does not say which cartridge it is of (sniffed): its SHA-1 is unchecked"
            )
        if expected_sha1 and self.header.cart_sha1 and self.header.cart_sha1.lower() != expected_sha1.lower():
            self._file.close()
            raise HilbridgeError(
                f"this capture is of another cartridge (SHA-1 {self.header.cart_sha1}, "
                f"expected {expected_sha1.lower()})",
                self.where,
            )

    def _read_header(self) -> tuple[CaptureHeader, int, dict[str, object]]:
        preamble = self._file.read(_PREAMBLE.size)
        if len(preamble) < _PREAMBLE.size or not preamble.startswith(MAGIC):
            raise HilbridgeError("not a hilbridge capture file (no HBCAP magic)", self.where)
        _, version, length = _PREAMBLE.unpack(preamble)
        if version != FORMAT_VERSION:
            raise HilbridgeError(
                f"capture format version {version} is not supported; this hilbridge reads version "
                f"{FORMAT_VERSION}",
                self.where,
                hint="a newer hilbridge wrote it: update hilbridge" if version > FORMAT_VERSION else None,
            )
        if length > MAX_HEADER:
            raise HilbridgeError("capture header is damaged (impossible length)", self.where)
        text = self._file.read(length)
        crc = self._file.read(_CRC.size)
        if len(text) < length or len(crc) < _CRC.size:
            raise HilbridgeError("capture file ends inside its header", self.where)
        if zlib.crc32(text) != _CRC.unpack(crc)[0]:
            raise HilbridgeError("capture header is damaged (CRC mismatch)", self.where)
        try:
            data = json.loads(text)
        except ValueError:
            raise HilbridgeError("capture header is not valid JSON", self.where) from None
        if not isinstance(data, dict):
            raise HilbridgeError("capture header is not a JSON object", self.where)
        return header_from_json(data, self.where), version, data

    def _warning(self, message: str) -> None:
        text = f"{self.where}: warning: {message}"
        self.warnings.append(text)
        if self._warn:
            self._warn(text)

    def items(self) -> Iterator[CaptureItem]:
        return expanded(self.batches())

    def batches(self) -> Iterator[BatchItem]:
        index = 0
        while True:
            offset = self._file.tell()
            head = self._file.read(8)
            if not head:
                self._warning(
                    f"capture ends after chunk {index} without its end marker (interrupted capture?)"
                )
                yield Gap("capture file ends without its end marker: the capture was interrupted")
                return
            damage = self._chunk_damage(head, index)
            if isinstance(damage, str):
                self._warning(f"{damage} at byte {offset}; reading stops at the last good chunk ({index})")
                yield Gap(f"capture file damaged after chunk {index}: {damage}", chunks=1)
                return
            cycle_high, payload = damage
            for item in _decode_payload(payload, cycle_high):
                if item is None:
                    return
                yield item
            index += 1

    def _chunk_damage(self, head: bytes, index: int) -> str | tuple[int, bytes]:
        """The chunk's (cycle_high, payload), or what is wrong with it."""
        if len(head) < 8:
            return "chunk cut short"
        length, crc = struct.unpack("<II", head)
        if length > MAX_CHUNK:
            return "chunk length is impossible"
        body = self._file.read(8 + length)
        if len(body) < 8 + length:
            return "chunk cut short"
        if zlib.crc32(body) != crc:
            return "chunk fails its CRC check"
        number, cycle_high = struct.unpack_from("<II", body)
        if number != index:
            return f"chunk {number} found where chunk {index} belongs"
        return cycle_high, body[8:]

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> CaptureReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _decode_payload(payload: bytes, cycle_high: int) -> Iterator[BatchItem | None]:
    """The items of one CRC-checked chunk; None after the end item."""
    base = cycle_high << 32
    at = 0
    size = len(payload)
    while at < size:
        tag = payload[at]
        if tag == TAG_RECORDS:
            _, count = _RUN.unpack_from(payload, at)
            at += _RUN.size
            yield RecordBatch.from_fixed(memoryview(payload)[at : at + count * FILE_RECORD.size], base)
            at += count * FILE_RECORD.size
        elif tag == TAG_SYNC:
            _, frame, cycle = _SYNC.unpack_from(payload, at)
            at += _SYNC.size
            yield FrameSync(frame, cycle)
        elif tag == TAG_RESET:
            _, cycle = _RESET.unpack_from(payload, at)
            at += _RESET.size
            yield ResetDetected(cycle)
        elif tag == TAG_GAP:
            _, chunks, records, length = _GAP.unpack_from(payload, at)
            at += _GAP.size
            yield Gap(payload[at : at + length].decode(errors="replace"), chunks, records)
            at += length
        elif tag == TAG_END:
            yield None
            return
        else:
            raise HilbridgeError(f"capture chunk holds an unknown item tag {tag:#04x}")


def write_capture(
    output: str | os.PathLike[str],
    header: CaptureHeader,
    items: Iterator[CaptureItem] | list[CaptureItem],
    *,
    overwrite: bool = False,
) -> Path:
    """All `items` into `output` (finished atomically); on an exception the partial file stays."""
    with CaptureWriter(output, header, overwrite=overwrite) as writer:
        for item in items:
            writer.write(item)
    return writer.path
