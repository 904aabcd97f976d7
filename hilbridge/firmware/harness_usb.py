"""A pyusb backend for the emulated firmware's vendor bulk interface, so `UsbTransport` runs unchanged.

The harness (`firmware/harness`, `--link vendor`) enumerates the firmware in rp2040js through real
control transfers, prints the raw device and configuration descriptors it read (a Linux host keeps
those from enumeration too, and libusb answers the descriptor getters from them), bridges the vendor
interface's bulk endpoints to one TCP port and the control endpoint to another. This backend
(`hilbridge.firmware.usb_device`: a Linux host's view, the vendor interface's endpoints only) carries
bulk transfers to the first port and every control transfer to the second, where the harness runs it
on the emulated chip: what the host reads back is what the firmware answered, a STALL included.

A control transfer's timeout is stretched `slowdown` times: pyusb's defaults (1 s) are for a board, and
the emulated chip runs 10 to 30 times slower (more on a loaded machine). Bulk reads keep theirs, which
the link layer chooses and adapts.

The control port speaks JSON lines: {"id": N, "setup": HEX, "data": HEX} (the 8-byte SETUP packet and
an OUT data stage) is answered by {"id": N, "status": "ack" | "stall", "data": HEX} (the IN data stage).
"""

from __future__ import annotations

import errno
import json
import select
import socket
import time
from typing import Any

import usb.core

from hilbridge.firmware.usb_device import DescriptorBackend, Stalled, timeout_error

EMULATED_SLOWDOWN = 30.0


def _connect(url: str) -> socket.socket:
    host, _, port = url.removeprefix("socket://").rpartition(":")
    connection = socket.create_connection((host, int(port)))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def _link_error(what: str) -> usb.core.USBError:
    return usb.core.USBError(f"harness link: {what}", errno=errno.ENODEV)


def _wait_readable(connection: socket.socket, timeout: float | None) -> None:
    ready, _, _ = select.select([connection], [], [], None if timeout is None else max(0.0, timeout))
    if not ready:
        raise timeout_error()


class HarnessUsbBackend(DescriptorBackend):
    """One device: the descriptors the harness read from the firmware, its bulk and control ports."""

    def __init__(
        self,
        url: str,
        control_url: str,
        descriptors: dict[str, Any],
        slowdown: float = EMULATED_SLOWDOWN,
        bus: int = 1,
        address: int = 1,
    ):
        super().__init__(
            bytes.fromhex(descriptors["device"]), bytes.fromhex(descriptors["configuration"]), bus, address
        )
        self.slowdown = slowdown
        self.socket = _connect(url)
        self.control_socket = _connect(control_url)
        self._control_lines = bytearray()
        self._next_id = 0

    def close_device(self, dev_handle):
        self.socket.close()
        self.control_socket.close()

    def control(self, setup: bytes, data: bytes, timeout: float | None) -> bytes:
        self._next_id += 1
        request = {"id": self._next_id, "setup": setup.hex(), "data": data.hex()}
        try:
            self.control_socket.sendall(json.dumps(request).encode() + b"\n")
        except OSError as error:
            raise _link_error(str(error)) from None
        deadline = None if timeout is None else time.monotonic() + timeout * self.slowdown
        answer = self._control_answer(deadline)
        while answer["id"] != self._next_id:  # answers to requests that timed out before; skip them
            answer = self._control_answer(deadline)
        if answer["status"] == "stall":
            raise Stalled("the firmware stalled the request")
        return bytes.fromhex(answer["data"])

    def _control_answer(self, deadline: float | None) -> dict[str, Any]:
        while b"\n" not in self._control_lines:
            _wait_readable(self.control_socket, None if deadline is None else deadline - time.monotonic())
            try:
                chunk = self.control_socket.recv(4096)
            except OSError as error:
                raise _link_error(str(error)) from None
            if not chunk:
                raise _link_error("the harness closed the control port")
            self._control_lines += chunk
        line, _, rest = bytes(self._control_lines).partition(b"\n")
        self._control_lines[:] = rest
        return json.loads(line)

    def send(self, data: bytes, timeout: float | None) -> None:
        try:
            self.socket.sendall(data)
        except OSError as error:
            raise _link_error(str(error)) from None

    def receive(self, size: int, timeout: float | None) -> bytes:
        _wait_readable(self.socket, timeout)
        try:
            chunk = self.socket.recv(size)
        except OSError as error:
            raise _link_error(str(error)) from None
        if not chunk:
            raise _link_error("the harness closed the link")
        return chunk
