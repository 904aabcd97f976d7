"""Byte transports between host and adapter: a pyserial URL, and an in-process endpoint.

A transport only moves bytes; framing, sequence numbers and retransmission live in `session.Link`.
`UsbTransport` (pyusb) is in `hilbridge.link.usb`.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from typing import Protocol

from hilbridge.link.errors import DeviceNotFound, LinkDisconnected

WRITE_TIMEOUT = 5.0
PORT_TIMEOUTS = {"timeout": 0, "write_timeout": WRITE_TIMEOUT}  # what SerialTransport opens ports with
SCHEME_TIMEOUTS = {
    # pyserial's RFC 2217 client refuses a write timeout (its socket's own 5 s timeout bounds a write
    # instead), and its read with timeout 0 returns one byte: a blocking read of what in_waiting
    # counts takes everything that has arrived without waiting.
    "rfc2217": {"timeout": None, "write_timeout": None},
}


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

    @property
    def silent_until_written(self) -> bool:
        """True when `transmit` gives nothing until `receive` is called again (the simulated adapter
        with nothing to do: it makes bytes only when asked, in the caller's thread); False for one
        whose bytes may arrive on their own (a process, a port)."""


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
        """What the endpoint sends, polling it until `timeout`; an endpoint whose
        `silent_until_written` is true (the simulated adapter with nothing to do: it makes bytes
        only when asked) cannot send anything before the next write, so the wait is one sleep
        instead of a poll every 0.2 ms (a noisy dump waits out hundreds of timeouts)."""
        deadline = time.monotonic() + timeout
        endpoint = self.endpoint
        while True:
            data = endpoint.transmit()
            remaining = deadline - time.monotonic()
            if data or remaining <= 0:
                return data
            if endpoint.silent_until_written:
                time.sleep(remaining)
                return b""
            time.sleep(0.0002)

    def close(self) -> None:
        self._closed = True


class SerialTransport:
    """Any pyserial URL: a device node (/dev/ttyACM0), a pty, socket://, rfc2217:// or loop://.

    pyserial opens device nodes and ptys non-blocking, so a read returns everything that has arrived.
    Where the port has such a descriptor, reads and writes go to it directly (one syscall per call, no
    per-call Python timeout bookkeeping: this path runs once per 4 KB at link speed) and waiting for
    the first byte uses select(); ports without one (loop://, rfc2217://) read what `in_waiting`
    counts, with short sleeps while it is 0.
    """

    READ_SIZE = 65536

    def __init__(self, url: str, baudrate: int = 115200):
        import serial

        self.name = url
        try:
            timeouts = SCHEME_TIMEOUTS.get(url.partition("://")[0], PORT_TIMEOUTS)
            self._port = serial.serial_for_url(url, baudrate=baudrate, **timeouts)
        except (serial.SerialException, ValueError, OSError) as error:
            raise DeviceNotFound(
                f"cannot open {url}: {error}",
                hint="run `hilbridge devices` to list adapters; use -d sim for the simulated one",
            ) from None
        self._serial_exception = serial.SerialException
        self._fileno: int | None = None
        with contextlib.suppress(AttributeError, NotImplementedError, OSError, self._serial_exception):
            fileno = self._port.fileno()
            if not os.get_blocking(fileno):
                self._fileno = fileno

    def write(self, data: bytes) -> None:
        try:
            if self._fileno is None:
                self._port.write(data)
                return
            view = memoryview(data)
            deadline = time.monotonic() + WRITE_TIMEOUT
            while view:
                try:
                    view = view[os.write(self._fileno, view) :]
                except BlockingIOError:
                    if not select.select([], [self._fileno], [], max(0.0, deadline - time.monotonic()))[1]:
                        raise LinkDisconnected(f"{self.name}: write timed out") from None
        except (self._serial_exception, OSError) as error:
            raise LinkDisconnected(f"{self.name}: {error}") from None

    def read(self, timeout: float) -> bytes:
        try:
            if self._fileno is None:
                return self._read_polling(timeout)
            data = self._read_ready()
            if data or timeout <= 0:
                return data
            if select.select([self._fileno], [], [], timeout)[0]:
                data = self._read_ready()
                if not data:
                    raise LinkDisconnected(f"{self.name}: the port closed")
            return data
        except (self._serial_exception, OSError) as error:
            raise LinkDisconnected(f"{self.name}: {error}") from None

    def _read_ready(self) -> bytes:
        """What has arrived; b"" if nothing (a tty with VMIN = 0 says so with an empty read, not EAGAIN,
        so only an empty read after select() reported the port readable means it hung up)."""
        try:
            return os.read(self._fileno, self.READ_SIZE)
        except BlockingIOError:
            return b""

    def _read_polling(self, timeout: float) -> bytes:
        data = self._read_waiting()
        deadline = time.monotonic() + timeout
        while not data and time.monotonic() < deadline:
            time.sleep(0.0005)
            data = self._read_waiting()
        return data

    def _read_waiting(self) -> bytes:
        """What `in_waiting` counts; a port that counted bytes but read none has closed (rfc2217://
        counts the end of its connection)."""
        waiting = self._port.in_waiting
        if not waiting:
            return b""
        data = self._port.read(waiting)
        if not data:
            raise LinkDisconnected(f"{self.name}: the port closed")
        return data

    def close(self) -> None:
        self._port.close()
