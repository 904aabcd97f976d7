"""Serving the simulated adapter to other processes: over TCP (`socket://` or `rfc2217://`) or a pty.

The device (its slot and emulation state) lives as long as the server; every connection gets fresh
fault injection, so `disconnect=N` cuts each connection after N bytes and a new one can resume.

With `rfc2217=True` each TCP connection speaks RFC 2217 (Telnet COM port control) through pyserial's
own `serial.rfc2217.PortManager`, which negotiates the Telnet options, answers the client's line
settings and escapes IAC bytes; the adapter's byte stream is the data of that Telnet stream.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import tty
from collections.abc import Callable

import serial
from serial.rfc2217 import PortManager

from hilbridge.link.errors import LinkDisconnected
from hilbridge.sim.device import SimulatedAdapter
from hilbridge.sim.faults import FaultPlan, FaultyEndpoint

IDLE_WAIT = 0.02  # seconds to wait for host bytes when the device has nothing of its own to send
BUSY_WAIT = 0.0
REPLY_BATCH = 16384
"""Reply bytes computed per write: about what a pty buffers, so the device computes the next reply while
the host reads this one (a whole window of replies computed first would leave the host waiting)."""


def _endpoint(device: SimulatedAdapter, plan: FaultPlan) -> SimulatedAdapter | FaultyEndpoint:
    return FaultyEndpoint(device, plan) if plan.active else device


def _pump(endpoint, fileno: int, read: Callable[[], bytes | None], write: Callable[[bytes], None]) -> None:
    """Move bytes between one connection and the device until the connection or the device ends it.

    `read` returns None when the connection has ended, b"" when what arrived was not for the device.
    """
    while True:
        if select.select([fileno], [], [], BUSY_WAIT if endpoint.busy else IDLE_WAIT)[0]:
            data = read()
            if data is None:
                return
            if data:
                endpoint.receive(data)
        out = endpoint.transmit(REPLY_BATCH)
        if out:
            write(out)


class SimulatedLine(serial.SerialBase):
    """The serial port behind `PortManager`: it keeps (and validates) what the client sets.

    The adapter is a USB CDC device, whose line coding changes nothing (so does the real one's): baud
    rate, framing, flow control, DTR/RTS and break are accepted and reported back. Its modem lines say
    a device is there. Nothing is buffered between the network and the device (each reply is written
    to the socket as soon as it is computed), so a purge has nothing to discard.
    """

    cts = dsr = cd = True
    ri = False

    def reset_input_buffer(self) -> None:
        """Nothing from the device waits here to be sent."""

    def reset_output_buffer(self) -> None:
        """Nothing from the network waits here to reach the device."""


class _Rfc2217Connection:
    """One TCP connection seen through `PortManager`: device bytes in, device bytes out."""

    def __init__(self, connection: socket.socket):
        self._socket = connection
        self.manager = PortManager(SimulatedLine(), self)  # sends the server's Telnet option requests

    def write(self, data: bytes) -> None:
        """Called by PortManager with Telnet commands (already escaped)."""
        self._socket.sendall(data)

    def read(self) -> bytes | None:
        data = self._socket.recv(65536)
        return b"".join(self.manager.filter(data)) if data else None

    def send(self, data: bytes) -> None:
        self._socket.sendall(b"".join(self.manager.escape(data)))


def _serve_connection(connection: socket.socket, endpoint, rfc2217: bool = False) -> None:
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with connection, contextlib.suppress(LinkDisconnected, ConnectionError):
        if rfc2217:
            telnet = _Rfc2217Connection(connection)
            _pump(endpoint, connection.fileno(), telnet.read, telnet.send)
        else:
            _pump(endpoint, connection.fileno(), lambda: connection.recv(65536) or None, connection.sendall)


def serve_socket(
    device: SimulatedAdapter,
    port: int,
    plan: FaultPlan | None = None,
    host: str = "127.0.0.1",
    announce: Callable[[str], None] = print,
    connections: int | None = None,
    rfc2217: bool = False,
) -> None:
    """Accept connections on host:port one at a time; `announce` gets the URL to connect to.

    `rfc2217`: speak RFC 2217 (for `rfc2217://` clients) instead of raw bytes (`socket://`).
    """
    plan = plan or FaultPlan()
    scheme = "rfc2217" if rfc2217 else "socket"
    with socket.create_server((host, port)) as server:
        announce(f"{scheme}://{host}:{server.getsockname()[1]}")
        served = 0
        while connections is None or served < connections:
            connection, _ = server.accept()
            served += 1
            _serve_connection(connection, _endpoint(device, plan), rfc2217)


def serve_pty(
    device: SimulatedAdapter, plan: FaultPlan | None = None, announce: Callable[[str], None] = print
) -> None:
    """Serve on a new pseudo-terminal; `announce` gets the device path (e.g. /dev/pts/5) to open."""
    plan = plan or FaultPlan()
    master, slave = os.openpty()
    tty.setraw(slave)  # no echo, no newline translation: a byte pipe like a USB CDC port
    announce(os.ttyname(slave))

    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(master, view) :]

    try:
        _pump(_endpoint(device, plan), master, lambda: os.read(master, 65536) or None, write)
    except (LinkDisconnected, OSError):
        pass  # closing the master hangs the pty up: the host sees the port vanish, like a pulled cable
    finally:
        os.close(master)
        os.close(slave)
