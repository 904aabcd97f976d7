"""Byte transports between host and adapter: a pyserial URL, and an in-process endpoint.

A transport only moves bytes; framing, sequence numbers and retransmission live in `session.Link`.
`UsbTransport` (pyusb) is in `hilbridge.link.usb`.
"""

from __future__ import annotations

import select
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
    """Any pyserial URL: a device node (/dev/ttyACM0), a pty, socket://, rfc2217:// or loop://.

    The port is opened non-blocking (timeout 0) so a read returns everything that has arrived; waiting
    for the first byte uses select() on the port's descriptor where it has one (device nodes, ptys,
    sockets) and short sleeps otherwise (loop://, rfc2217://).
    """

    READ_SIZE = 65536

    def __init__(self, url: str, baudrate: int = 115200):
        import serial

        self.name = url
        try:
            self._port = serial.serial_for_url(url, baudrate=baudrate, timeout=0, write_timeout=5)
        except (serial.SerialException, ValueError, OSError) as error:
            raise DeviceNotFound(
                f"cannot open {url}: {error}",
                hint="run `hilbridge devices` to list adapters; use -d sim for the simulated one",
            ) from None
        self._serial_exception = serial.SerialException
        try:
            self._fileno: int | None = self._port.fileno()
        except (AttributeError, NotImplementedError, self._serial_exception):
            self._fileno = None

    def write(self, data: bytes) -> None:
        try:
            self._port.write(data)
        except (self._serial_exception, OSError) as error:
            raise LinkDisconnected(f"{self.name}: {error}") from None

    def read(self, timeout: float) -> bytes:
        try:
            data = self._port.read(self.READ_SIZE)
            if data or timeout <= 0:
                return data
            if self._fileno is not None:
                if select.select([self._fileno], [], [], timeout)[0]:
                    data = self._port.read(self.READ_SIZE)
                    if not data:
                        raise LinkDisconnected(f"{self.name}: the port closed")
                    return data
                return b""
            deadline = time.monotonic() + timeout
            while not data and time.monotonic() < deadline:
                time.sleep(0.0005)
                data = self._port.read(self.READ_SIZE)
            return data
        except (self._serial_exception, OSError) as error:
            raise LinkDisconnected(f"{self.name}: {error}") from None

    def close(self) -> None:
        self._port.close()
