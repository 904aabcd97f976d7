"""The simulated adapter: the device side of the protocol, with a simulated cartridge in its slot.

It is byte-driven (`receive` host bytes, `transmit` reply bytes), so any transport can carry it: the
in-process one directly, a socket or pty through `hilbridge.sim.serve`, pyusb through
`hilbridge.sim.usb_backend`. Faults are applied around it by `hilbridge.sim.faults`.
"""

from __future__ import annotations

import random
import time
import zlib
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

from hilbridge import __version__
from hilbridge.errors import HilbridgeError
from hilbridge.link.errors import ProtocolError
from hilbridge.link.protocol import (
    CAPABILITIES,
    ERROR,
    ERROR_CODES,
    MAX_PAYLOAD,
    MESSAGES,
    PROTOCOL_VERSION,
    STROBES,
    Frame,
    FrameDecoder,
    encode_frame,
    parse_host_frame,
)
from hilbridge.machine.cartridge import Cartridge, load_cartridge
from hilbridge.machine.inputs import NO_INPUT, InputMovie
from hilbridge.machine.mappers import registry

BOARD_ID_SIM = 0x5100
FIRMWARE_VERSION = (0, 1, 0)
REPLY_CACHE = 64
CAPTURE_BACKLOG = 64 * 1024  # reply bytes in one transmit above which no capture frame is run
FETCH_START, FETCH_END = 0x400, 0x1000
HELLO_ID = MESSAGES["HELLO"].id
HANDLERS = {name: f"on_{name.lower()}" for name in MESSAGES}  # the method answering each command


class RequestRefused(Exception):
    """Raised by a handler; becomes an ERROR reply."""

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code = code
        self.detail = detail


@dataclass(frozen=True, slots=True)
class ConsoleSetup:
    """The simulated console that runs during captures: its region and the input movie it plays."""

    region: str = "ntsc"
    movie: InputMovie = NO_INPUT


class SimulatedAdapter:
    """A protocol-conformant adapter whose slot holds `cartridge` (None: an empty slot).

    `unstable` maps CPU addresses to bit masks whose bits read back at random, like a dirty contact.
    """

    def __init__(
        self,
        cartridge: Cartridge | None,
        *,
        serial: str = "SIM-0001",
        unstable: dict[int, int] | None = None,
        seed: int = 0,
        console: ConsoleSetup | None = None,
    ):
        self.cartridge = cartridge
        self.console = console or ConsoleSetup()
        self.serial = serial
        self.unstable = dict(unstable or {})
        self._random = random.Random(seed)
        self._decoder = FrameDecoder()
        self._requests: deque[Frame] = deque()
        self._replies: OrderedDict[int, tuple[tuple[int, bytes], bytes]] = OrderedDict()
        self._started = time.monotonic()
        self.counters = {"frames_in": 0, "frames_out": 0, "duplicates": 0}
        self.upload_buffer: bytearray | None = None
        self.upload_mapper = ""
        self.emulated: Cartridge | None = None
        self.capture: Any = None  # a hilbridge.sim.capture.CaptureStream while capturing
        self.console_factory: Any = None  # makes the capture console (None: the emulator's Console)

    # -- byte interface ---------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """True while the device has bytes of its own to produce (a capture stream) or requests queued."""
        return self.capture is not None or bool(self._requests)

    @property
    def silent_until_written(self) -> bool:
        """True when `transmit` gives nothing until `receive` is called again: the device makes its
        bytes only when asked, in the caller's thread (`InProcessTransport.read` then need not poll)."""
        return not self.busy

    def receive(self, data: bytes) -> None:
        """Queue the requests in `data`; `transmit` executes them, in order."""
        frames = self._decoder.feed(data)
        self.counters["frames_in"] += len(frames)
        self._requests += frames

    def transmit(self, limit: int | None = None) -> bytes:
        """Reply (and event) bytes: all queued requests answered, or only until `limit` bytes are ready.

        A server passes a limit so that it writes each reply while the host still reads the previous
        one, instead of computing a whole window of replies before writing any.
        """
        output: list[bytes] = []
        size = 0
        requests = self._requests
        while requests and (limit is None or size < limit):
            wire = self._answer(requests.popleft())
            output.append(wire)
            size += len(wire)
        if self.capture is not None and size < CAPTURE_BACKLOG:
            for frame_type, payload in self.capture.next_events():
                output.append(encode_frame(frame_type, 0, payload))
                self.counters["frames_out"] += 1
        return b"".join(output)

    # -- request handling -------------------------------------------------------------------------
    def _answer(self, frame: Frame) -> bytes:
        key = (frame.type, frame.payload)
        if frame.type == HELLO_ID:
            self._replies.clear()  # HELLO starts a session: earlier sequence numbers mean nothing now
        cached = self._replies.get(frame.seq)
        if cached is not None and cached[0] == key:
            self.counters["duplicates"] += 1
            self.counters["frames_out"] += 1
            return cached[1]
        try:
            message, values = parse_host_frame(frame)
        except ProtocolError as error:
            code = "UNKNOWN_MESSAGE" if "unknown" in error.message else "BAD_REQUEST"
            wire = self._error_wire(frame.seq, code, error.message)
        else:
            try:
                reply = getattr(self, HANDLERS[message.name])(**values)
                wire = encode_frame(message.reply_type, frame.seq, message.response_layout.pack(reply))
            except RequestRefused as refusal:
                wire = self._error_wire(frame.seq, refusal.code, refusal.detail)
        self.counters["frames_out"] += 1
        self._replies[frame.seq] = (key, wire)
        self._replies.move_to_end(frame.seq)
        if len(self._replies) > REPLY_CACHE:
            self._replies.popitem(last=False)
        return wire

    @staticmethod
    def _error_wire(seq: int, code: str, detail: str) -> bytes:
        payload = ERROR.response_layout.pack({"code": ERROR_CODES[code], "detail": detail[:200]})
        return encode_frame(ERROR.reply_type, seq, payload)

    def end_session(self) -> None:
        """The host has gone: stop what it left running (emulation, a capture, an upload) for the next."""
        self.emulated = None
        self.capture = None
        self.upload_buffer = None
        self.upload_mapper = ""
        self._requests.clear()
        self._replies.clear()
        self._decoder = FrameDecoder()

    def _slot(self) -> Cartridge:
        if self.cartridge is None:
            raise RequestRefused("NO_CARTRIDGE", "the slot is empty")
        return self.cartridge

    # -- handlers: one per command in messages.tsv --------------------------------------------------
    def on_hello(self, host_protocol: int) -> dict[str, Any]:
        if host_protocol != PROTOCOL_VERSION:
            raise RequestRefused("VERSION_MISMATCH", f"adapter speaks protocol {PROTOCOL_VERSION}")
        capabilities = sum(1 << bit for bit in CAPABILITIES.values())
        major, minor, patch = FIRMWARE_VERSION
        return {
            "protocol": PROTOCOL_VERSION,
            "fw_major": major,
            "fw_minor": minor,
            "fw_patch": patch,
            "capabilities": capabilities,
            "board_id": BOARD_ID_SIM,
            "max_payload": MAX_PAYLOAD,
            "serial": self.serial,
        }

    def on_firmware_info(self) -> dict[str, Any]:
        version = ".".join(map(str, FIRMWARE_VERSION))
        return {"build": f"hilbridge simulated adapter {version} (host {__version__})"}

    def on_status(self) -> dict[str, Any]:
        capture = self.capture
        return {
            "frames_in": self.counters["frames_in"],
            "frames_bad": self._decoder.bad,
            "frames_out": self.counters["frames_out"],
            "duplicates": self.counters["duplicates"],
            "emulating": int(self.emulated is not None),
            "capturing": int(capture is not None),
            "capture_chunks": capture.chunks if capture else 0,
            "capture_dropped": capture.dropped if capture else 0,
            "resets_seen": capture.resets if capture else 0,
            "uptime_ms": int((time.monotonic() - self._started) * 1000) & 0xFFFFFFFF,
        }

    def on_set_ports(self, p1: int, p2: int) -> dict[str, Any]:
        return {"p1": p1, "p2": p2}

    def on_cart_read(self, p1: int, p2: int, strobe: int, address: int, length: int) -> dict[str, Any]:
        cart = self._check_read(strobe, address, length, length)
        return {"address": address, "data": self._read_slot(cart, p1, p2, strobe, address, length)}

    def on_cart_read_repeat(
        self, p1: int, p2: int, strobe: int, address: int, length: int, count: int
    ) -> dict[str, Any]:
        if count < 1:
            raise RequestRefused("BAD_ARGUMENT", "count must be at least 1")
        cart = self._check_read(strobe, address, length, length * count)
        if not self.unstable:  # a stable slot reads the same every pass
            return {
                "address": address,
                "data": self._read_slot(cart, p1, p2, strobe, address, length) * count,
            }
        data = b"".join(self._read_slot(cart, p1, p2, strobe, address, length) for _ in range(count))
        return {"address": address, "data": data}

    def _check_read(self, strobe: int, address: int, length: int, reply_bytes: int) -> Cartridge:
        """The slot's cartridge, once the read is known to be valid; RequestRefused otherwise."""
        cart = self._slot()
        if length < 1 or reply_bytes > MAX_PAYLOAD - 2:
            raise RequestRefused("BAD_ARGUMENT", f"reply of {reply_bytes} bytes is not 1..{MAX_PAYLOAD - 2}")
        if strobe == STROBES["PSEN"]:
            if address < FETCH_START or address + length > FETCH_END:
                raise RequestRefused("BAD_ARGUMENT", "program reads must lie within 0x400-0xFFF")
        elif strobe == STROBES["MOVX_READ"]:
            if address + length > 0x100:
                raise RequestRefused("BAD_ARGUMENT", "MOVX reads must lie within 0x00-0xFF")
        else:
            raise RequestRefused("BAD_ARGUMENT", f"unknown strobe {strobe}")
        return cart

    def _read_slot(self, cart: Cartridge, p1: int, p2: int, strobe: int, address: int, length: int) -> bytes:
        """One pass over the addresses (checked by `_check_read`); unstable bits read anew every pass."""
        if strobe == STROBES["MOVX_READ"]:
            return bytes(cart.read(a, p1, p2) for a in range(address, address + length))
        start = address - FETCH_START
        data = cart.program_view(p1)[start : start + length]  # = fetch() for each address
        if not self.unstable:
            return bytes(data)
        data = bytearray(data)
        for a, mask in self.unstable.items():
            if address <= a < address + length:
                data[a - address] ^= mask & self._random.getrandbits(8)
        return bytes(data)

    def on_cart_write(self, p1: int, p2: int, address: int, value: int) -> dict[str, Any]:
        self._slot().write(address, value, p1, p2)
        return {}

    def on_upload_begin(self, mapper: int, size: int) -> dict[str, Any]:
        if self.emulated is not None:
            raise RequestRefused("BUSY", "switch emulation off before uploading")
        uploaded = registry().by_protocol_id(mapper)
        if uploaded is None:
            raise RequestRefused("BAD_ARGUMENT", f"unknown mapper id {mapper}")
        largest = registry().max_image_size  # the largest image of any mapper, as the firmware's buffer
        if not 0 < size <= largest:
            raise RequestRefused("BAD_ARGUMENT", f"image size {size} is not 1..{largest}")
        self.upload_buffer = bytearray(size)
        self.upload_mapper = uploaded.name
        return {}

    def on_upload_data(self, offset: int, data: bytes) -> dict[str, Any]:
        buffer = self.upload_buffer
        if buffer is None:
            raise RequestRefused("UPLOAD_STATE", "no upload in progress")
        if offset + len(data) > len(buffer):
            raise RequestRefused("BAD_ARGUMENT", "data beyond the end of the image")
        buffer[offset : offset + len(data)] = data
        return {"offset": offset, "length": len(data)}

    def on_upload_end(self) -> dict[str, Any]:
        if self.upload_buffer is None:
            raise RequestRefused("UPLOAD_STATE", "no upload in progress")
        return {"size": len(self.upload_buffer), "crc32": zlib.crc32(self.upload_buffer)}

    def on_emulation(self, enable: int) -> dict[str, Any]:
        if enable and self.emulated is None:
            if self.upload_buffer is None:
                raise RequestRefused("UPLOAD_STATE", "upload an image first")
            try:
                self.emulated = load_cartridge(bytes(self.upload_buffer), self.upload_mapper, name="upload")
            except HilbridgeError as error:
                raise RequestRefused("BAD_ARGUMENT", error.message) from None
        elif not enable:
            self.emulated = None
        cart = self.emulated
        return {
            "enabled": int(cart is not None),
            "mapper": (registry().protocol_ids.get(cart.mapper) or 0) if cart else 0,
            "size": len(cart.image) if cart else 0,
            "crc32": zlib.crc32(cart.image) if cart else 0,
        }

    def on_capture_start(self, what: int) -> dict[str, Any]:
        from hilbridge.sim.capture import CaptureStream

        cart = self.emulated or self.cartridge
        if cart is None:
            raise RequestRefused("NO_CARTRIDGE", "nothing to run: the slot is empty and emulation is off")
        if self.capture is not None:
            raise RequestRefused("BUSY", "a capture is already running")
        factory = {"console": self.console_factory} if self.console_factory else {}
        self.capture = CaptureStream(cart, what, self.console.region, self.console.movie, **factory)
        return {"what": what}

    def on_capture_stop(self) -> dict[str, Any]:
        capture, self.capture = self.capture, None
        if capture is None:
            return {"chunks": 0, "records": 0, "dropped": 0}
        return {"chunks": capture.chunks, "records": capture.records, "dropped": capture.dropped}
