"""Byte transports between host and adapter: a pyserial URL, and an in-process endpoint.

A transport only moves bytes; framing, sequence numbers and retransmission live in `session.Link`.
`UsbTransport` (pyusb) is in `hilbridge.link.usb`.
"""

from __future__ import annotations

import time
from typing import Protocol

from hilbridge.link.errors import DeviceNotFound, LinkDisconnected


class Transport(Protocol):
    """What `Link` needs from a byte channel."""

    name: str

    def write(self, data: bytes) -> None:
        """Send all of `data`; LinkDisconnected when the channel is gone."""

    def read(self, timeout: float) -> bytes:
        """Bytes that arrived, waiting up to `timeout` seconds for the first; b"" on timeout."""

    def close(self) -> None: ...


class Endpoint(Protocol):
    """The device side of an in-process transport (the simulated adapter, possibly with faults)."""

    def receive(self, data: bytes) -> None: ...

    def transmit(self) -> bytes: ...


class InProcessTransport:
    """Talks to a device object in the same process: writes call it, reads collect what it sent."""

    def __init__(self, endpoint: Endpoint, name: str = "in-process"):
        self.endpoint = endpoint
        self.name = name
        self._closed = False

    def write(self, data: bytes) -> None:
        if self._closed:
            raise LinkDisconnected(f"{self.name}: transport is closed")
        self.endpoint.receive(data)

    def read(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            data = self.endpoint.transmit()
            if data or time.monotonic() >= deadline:
                return data
            time.sleep(0.0002)

    def close(self) -> None:
        self._closed = True


class SerialTransport:
    """Any pyserial URL: a device node (/dev/ttyACM0), a pty, socket://, rfc2217:// or loop://."""

    def __init__(self, url: str, baudrate: int = 115200):
        import serial

        self.name = url
        try:
            self._port = serial.serial_for_url(url, baudrate=baudrate, timeout=0.05, write_timeout=5)
        except (serial.SerialException, ValueError, OSError) as error:
            raise DeviceNotFound(
                f"cannot open {url}: {error}",
                hint="run `hilbridge devices` to list adapters; use -d sim for the simulated one",
            ) from None
        self._timeout = 0.05
        self._serial_exception = serial.SerialException

    def write(self, data: bytes) -> None:
        try:
            self._port.write(data)
        except (self._serial_exception, OSError) as error:
            raise LinkDisconnected(f"{self.name}: {error}") from None

    def read(self, timeout: float) -> bytes:
        try:
            waiting = self._port.in_waiting
            if waiting:
                return self._port.read(waiting)
            if timeout != self._timeout:
                self._port.timeout = timeout
                self._timeout = timeout
            first = self._port.read(1)
            if not first:
                return b""
            waiting = self._port.in_waiting
            return first + self._port.read(waiting) if waiting else first
        except (self._serial_exception, OSError) as error:
            raise LinkDisconnected(f"{self.name}: {error}") from None

    def close(self) -> None:
        self._port.close()
