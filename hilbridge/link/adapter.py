"""`Adapter`: the high-level calls on a cartridge-port adapter (real or simulated), over any transport."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hilbridge.link.capture_codec import decode_words
from hilbridge.link.errors import DeviceError, LinkError, LinkTimeout, ProtocolError, VersionMismatch
from hilbridge.link.protocol import (
    CAPABILITIES,
    CAPTURE_KINDS,
    PROTOCOL_VERSION,
    STROBES,
)
from hilbridge.link.session import Link
from hilbridge.link.transport import Transport
from hilbridge.machine.mappers import registry

MIN_PIECE = 16
MAX_REPEAT = 255  # CART_READ_REPEAT count is a u8
ADAPTIVE_RETRIES = 3
HELLO_RETRIES = 25
HELLO_MAX_TIMEOUT = 0.25
PORT_IDLE = 0xFF  # P1 with P10/P11 high (last bank) and P14 high (no RAM select)


def version_hint(adapter_protocol: int | None) -> str:
    """What to do about an adapter of another protocol version: older firmware is reflashed with the
    firmware of this package (protocol 4 changed the capture stream, docs/protocol.md §1)."""
    if adapter_protocol is not None and adapter_protocol < PROTOCOL_VERSION:
        return (
            f"the adapter's firmware is older than this hilbridge (protocol {adapter_protocol} < "
            f"{PROTOCOL_VERSION}): flash this package's firmware with `hilbridge firmware flash` "
            "(hold BOOTSEL while plugging the board in)"
        )
    return (
        "update hilbridge, or flash this package's firmware (`hilbridge firmware flash`), so both speak "
        "the same protocol"
    )


@dataclass(frozen=True, slots=True)
class AdapterInfo:
    """What HELLO told us."""

    protocol: int
    firmware: str
    capabilities: frozenset[str]
    board_id: int
    max_payload: int
    serial: str


@dataclass(frozen=True, slots=True)
class CaptureRecord:
    cycle: int
    kind: str  # a CAPTURE_* name: FETCH, MOVX_READ, MOVX_WRITE, P1
    address: int
    value: int
    p1: int


_CAPTURE_NAMES = {value: name for name, value in CAPTURE_KINDS.items()}


class Adapter:
    """One adapter session: HELLO on open, then cartridge reads, uploads, emulation and captures."""

    def __init__(self, transport: Transport, **link_options: Any):
        self.link = Link(transport, **link_options)
        self.name = transport.name
        self.info = self._hello()
        self.piece_size = min(1024, self.info.max_payload - 16)
        self._max_piece = self.info.max_payload - 16

    def _hello(self) -> AdapterInfo:
        # Generous retries for noisy links, with a short timeout cap so a silent port fails in seconds.
        max_timeout, self.link.max_timeout = self.link.max_timeout, HELLO_MAX_TIMEOUT
        try:
            reply = self.link.transact(
                [("HELLO", {"host_protocol": PROTOCOL_VERSION})], retries=HELLO_RETRIES
            )[0]
        except DeviceError as error:
            if error.name == "VERSION_MISMATCH":
                spoken = re.search(r"protocol (\d+)", error.detail)
                raise VersionMismatch(
                    f"{self.name}: {error.detail}; this hilbridge speaks protocol {PROTOCOL_VERSION}",
                    hint=version_hint(int(spoken.group(1)) if spoken else None),
                ) from None
            raise
        except LinkTimeout:
            raise LinkTimeout(
                f"{self.name}: no adapter answered HELLO",
                hint="is this a hilbridge adapter? check power and cable; `hilbridge devices` lists adapters",
            ) from None
        finally:
            self.link.max_timeout = max_timeout
        if reply["protocol"] != PROTOCOL_VERSION:
            raise VersionMismatch(
                f"{self.name}: adapter speaks protocol {reply['protocol']}, hilbridge {PROTOCOL_VERSION}",
                hint=version_hint(reply["protocol"]),
            )
        bits = reply["capabilities"]
        return AdapterInfo(
            protocol=reply["protocol"],
            firmware=f"{reply['fw_major']}.{reply['fw_minor']}.{reply['fw_patch']}",
            capabilities=frozenset(name for name, bit in CAPABILITIES.items() if bits >> bit & 1),
            board_id=reply["board_id"],
            max_payload=reply["max_payload"],
            serial=reply["serial"],
        )

    def close(self) -> None:
        self.link.transport.close()

    def __enter__(self) -> Adapter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- information ------------------------------------------------------------------------------
    def firmware_info(self) -> str:
        return self.link.request("FIRMWARE_INFO")["build"]

    def status(self) -> dict[str, int]:
        return self.link.request("STATUS")

    # -- cartridge slot ---------------------------------------------------------------------------
    def set_ports(self, p1: int, p2: int = 0) -> None:
        self.link.request("SET_PORTS", p1=p1, p2=p2)

    def write(self, address: int, value: int, *, p1: int, p2: int = 0) -> None:
        """A MOVX write on the slot (bank latches); acknowledged before the next request is sent."""
        self.link.request("CART_WRITE", p1=p1, p2=p2, address=address, value=value)

    def read(
        self, address: int, length: int, *, p1: int = PORT_IDLE, p2: int = 0, strobe: str = "PSEN"
    ) -> bytes:
        """`length` bytes of the slot cartridge from `address`, pipelined in pieces that adapt to the link.

        A piece that keeps failing is split (a noisy link loses long frames more often); a clean batch
        lets pieces grow again.
        """

        def request(offset: int, size: int) -> tuple[str, dict[str, Any]]:
            fields = {"p1": p1, "p2": p2, "strobe": STROBES[strobe], "length": size}
            return "CART_READ", {**fields, "address": address + offset}

        replies = self._pieces(length, request)
        out = bytearray()
        for (offset, size), reply in replies:
            if reply["address"] != address + offset or len(reply["data"]) != size:
                raise ProtocolError(f"{self.name}: CART_READ reply does not match its request")
            out += reply["data"]
        return bytes(out)

    def read_repeated(
        self,
        address: int,
        length: int,
        count: int,
        *,
        p1: int = PORT_IDLE,
        p2: int = 0,
        strobe: str = "PSEN",
    ) -> list[bytes]:
        """`count` reads of the same `length` bytes (passes, re-reads), as few CART_READ_REPEATs as fit.

        Each request carries as many passes as fit in the current piece size, so on a clean link one
        frame holds several passes; when the link is so noisy that pieces are shorter than two passes,
        the passes are plain `read`s, which split and adapt.
        """
        out: list[bytes] = []
        fields = {"p1": p1, "p2": p2, "strobe": STROBES[strobe], "address": address, "length": length}
        while len(out) < count:
            per_request = min(self.piece_size // length, MAX_REPEAT)
            if per_request < 2:
                out.append(self.read(address, length, p1=p1, p2=p2, strobe=strobe))
                continue
            groups = [min(per_request, count - start) for start in range(len(out), count, per_request)]
            replies = self._transact_adapting(
                [("CART_READ_REPEAT", {**fields, "count": group}) for group in groups]
            )
            if replies is None:
                continue
            for group, reply in zip(groups, replies, strict=True):
                data = reply["data"]
                if reply["address"] != address or len(data) != group * length:
                    raise ProtocolError(f"{self.name}: CART_READ_REPEAT reply does not match its request")
                out += [data[i * length : (i + 1) * length] for i in range(group)]
        return out

    def _pieces(
        self, length: int, request: Callable[[int, int], tuple[str, dict[str, Any]]]
    ) -> list[tuple[tuple[int, int], dict[str, Any]]]:
        while True:
            size = self.piece_size
            spans = [(offset, min(size, length - offset)) for offset in range(0, length, size)]
            replies = self._transact_adapting([request(offset, span) for offset, span in spans])
            if replies is not None:
                return list(zip(spans, replies, strict=True))

    def _transact_adapting(self, requests: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]] | None:
        """One batch sized by `piece_size`, which it adapts: None when the batch timed out and pieces were
        halved (send it again, cut smaller). Losses halve pieces, a clean batch doubles them; at the
        smallest size the request gets the link's full retry budget and a timeout is raised."""
        size = self.piece_size
        last_try = size <= MIN_PIECE
        before = self.link.stats.retransmits
        try:
            replies = self.link.transact(requests, retries=None if last_try else ADAPTIVE_RETRIES)
        except LinkTimeout:
            if last_try:
                raise
            self.piece_size = max(MIN_PIECE, size // 2)
            self.link.reset_backoff()
            return None
        if self.link.stats.retransmits - before > len(requests):
            self.piece_size = max(MIN_PIECE, size // 2)
        elif self.link.stats.retransmits == before:
            self.piece_size = min(self._max_piece, size * 2)
        return replies

    # -- cartridge emulation ----------------------------------------------------------------------
    def upload(self, image: bytes, mapper: str, progress: Callable[[int], None] | None = None) -> int:
        """Upload `image` for `mapper` and check the adapter's read-back CRC; returns the CRC-32."""
        ids = registry().protocol_ids
        if mapper not in ids:
            raise LinkError(f"the adapter cannot emulate mapper {mapper!r}", hint=", ".join(ids))
        self.link.request("UPLOAD_BEGIN", mapper=ids[mapper], size=len(image))
        step = 4096
        for start in range(0, len(image), step):
            block = image[start : start + step]

            def request(offset: int, size: int, block=block, start=start) -> tuple[str, dict[str, Any]]:
                return "UPLOAD_DATA", {"offset": start + offset, "data": block[offset : offset + size]}

            self._pieces(len(block), request)
            if progress:
                progress(len(block))
        reply = self.link.request("UPLOAD_END")
        expected = zlib.crc32(image)
        if reply["size"] != len(image) or reply["crc32"] != expected:
            raise LinkError(
                f"{self.name}: upload verification failed: adapter has CRC-32 {reply['crc32']:08x} "
                f"for {reply['size']} bytes, the image {expected:08x} for {len(image)}",
                hint="retry the load; if it persists the adapter's emulation memory is faulty",
            )
        return expected

    def emulation(self, enable: bool) -> dict[str, Any]:
        """Switch cartridge emulation on or off; returns the adapter's view (mapper name, size, CRC)."""
        reply = self.link.request("EMULATION", enable=int(enable))
        served = registry().by_protocol_id(reply["mapper"])
        return {**reply, "mapper": served.name if served is not None else ""}

    # -- bus capture ------------------------------------------------------------------------------
    def capture_start(self, kinds: tuple[str, ...] = ("FETCH", "MOVX_WRITE")) -> None:
        self.link.request("CAPTURE_START", what=sum(1 << CAPTURE_KINDS[kind] for kind in kinds))

    def capture_stop(self) -> dict[str, int]:
        return self.link.request("CAPTURE_STOP")

    def capture_events(self, timeout: float) -> list[tuple[str, dict[str, Any]]]:
        """Events received within `timeout` seconds: (message name, fields), in arrival order."""
        self.link.poll_events(timeout)
        events = [(message.name, values) for message, values in self.link.events]
        self.link.events.clear()
        return events


def capture_records(chunk: dict[str, Any]) -> list[CaptureRecord]:
    """The records of a CAPTURE_CHUNK's fields (cycle, p1, records); ProtocolError for a bad chunk."""
    rows = decode_words(chunk["records"], chunk["cycle"], chunk["p1"])
    columns = [rows[name].tolist() for name in rows.dtype.names]
    return [
        CaptureRecord(cycle, _CAPTURE_NAMES.get(kind, f"?{kind}"), address, value, p1)
        for cycle, kind, address, value, p1 in zip(*columns, strict=True)
    ]
