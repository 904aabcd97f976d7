"""Serving the simulated adapter to other processes: over TCP (`socket://` or `rfc2217://`) or a pty.

The device (its slot) lives as long as the server; every connection gets fresh fault injection, so
`disconnect=N` cuts each connection after N bytes and a new one can resume. One client at a time
uses the device, as one host uses a USB adapter: a second one gets BUSY to its requests and is
closed; when a client leaves, whatever it left running (emulation, a capture, an upload) is stopped
so the next one starts from the same state. A client that sends nothing for `idle_timeout` seconds
is dropped. An error in one connection ends that connection only, and is reported.

With `rfc2217=True` each TCP connection speaks RFC 2217 (Telnet COM port control) through pyserial's
own `serial.rfc2217.PortManager`, which negotiates the Telnet options, answers the client's line
settings and escapes IAC bytes; the adapter's byte stream is the data of that Telnet stream.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import sys
import threading
import time
import tty
from collections.abc import Callable

import serial
from serial.rfc2217 import PortManager

from hilbridge.errors import HilbridgeError
from hilbridge.link.errors import LinkDisconnected
from hilbridge.link.protocol import Frame
from hilbridge.sim.device import SimulatedAdapter
from hilbridge.sim.faults import FaultPlan, FaultyEndpoint

IDLE_WAIT = 0.02  # seconds to wait for host bytes when the device has nothing of its own to send
BUSY_WAIT = 0.0
REPLY_BATCH = 16384
"""Reply bytes computed per write: about what a pty buffers, so the device computes the next reply while
the host reads this one (a whole window of replies computed first would leave the host waiting)."""
SEND_BUFFER = REPLY_BATCH
"""The TCP send buffer asked for: about one batch, as a pty holds, so a capture's console pauses once
the host falls behind instead of running ahead into megabytes of socket buffers (that the host must
read before the reply to CAPTURE_STOP: 4 s of pyserial's rfc2217 client, which handles each byte)."""


IDLE_TIMEOUT = 60.0  # seconds without a byte from the client before the server drops it
WAIT_FOR_DEVICE = 1.0  # seconds a new client waits for the previous one to finish before BUSY
BUSY_LINGER = 2.0  # seconds a refused client is answered BUSY before its connection is closed


class ClientIdle(Exception):
    """The client sent nothing for the idle timeout."""


class BusyAdapter(SimulatedAdapter):
    """Answers every request with ERROR BUSY: the device is serving another client."""

    def __init__(self, message: str):
        super().__init__(None)
        self.message = message

    def _answer(self, frame: Frame) -> bytes:
        self.counters["frames_out"] += 1
        return self._error_wire(frame.seq, "BUSY", self.message)


def _report_to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _endpoint(device: SimulatedAdapter, plan: FaultPlan) -> SimulatedAdapter | FaultyEndpoint:
    return FaultyEndpoint(device, plan) if plan.active else device


def _pump(
    endpoint,
    fileno: int,
    read: Callable[[], bytes | None],
    write: Callable[[bytes], None],
    idle_timeout: float | None = None,
) -> None:
    """Move bytes between one connection and the device until the connection or the device ends it.

    `read` returns None when the connection has ended, b"" when what arrived was not for the device.
    With `idle_timeout`, ClientIdle is raised after that many seconds without a byte from the client.
    """
    last_heard = time.monotonic()
    while True:
        if select.select([fileno], [], [], BUSY_WAIT if endpoint.busy else IDLE_WAIT)[0]:
            data = read()
            if data is None:
                return
            last_heard = time.monotonic()
            if data:
                endpoint.receive(data)
        elif idle_timeout is not None and time.monotonic() - last_heard > idle_timeout:
            raise ClientIdle(f"nothing received for {idle_timeout:g} s")
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


def _serve_connection(connection: socket.socket, endpoint, rfc2217: bool, idle_timeout: float | None) -> None:
    """Serve one connection until it ends; the client's errors end it (raised to the caller)."""
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
    connection.settimeout(idle_timeout)  # a client that stops reading cannot block a send for ever
    with connection, contextlib.suppress(LinkDisconnected, ConnectionError):
        if rfc2217:
            telnet = _Rfc2217Connection(connection)
            _pump(endpoint, connection.fileno(), telnet.read, telnet.send, idle_timeout)
        else:
            receive = lambda: connection.recv(65536) or None  # noqa: E731
            _pump(endpoint, connection.fileno(), receive, connection.sendall, idle_timeout)


class _Server:
    """Hands each accepted connection to a thread: the device's client, or a BUSY refusal."""

    def __init__(self, device, plan, url, rfc2217, idle_timeout, report):
        self.device = device
        self.plan = plan
        self.url = url
        self.rfc2217 = rfc2217
        self.idle_timeout = idle_timeout
        self.report = report
        self.in_use = threading.Lock()

    def handle(self, connection: socket.socket, peer: str) -> None:
        if not self.in_use.acquire(timeout=WAIT_FOR_DEVICE):
            self._refuse(connection, peer)
            return
        try:
            self._run(connection, _endpoint(self.device, self.plan), peer)
        finally:
            self.device.end_session()
            self.in_use.release()

    def _refuse(self, connection: socket.socket, peer: str) -> None:
        message = f"the simulated adapter on {self.url} is serving another client; try again when it is done"
        self.report(f"{peer}: refused with BUSY (another client is connected)")
        self._run(connection, BusyAdapter(message), peer, BUSY_LINGER)

    def _run(self, connection: socket.socket, endpoint, peer: str, timeout: float | None = None) -> None:
        try:
            _serve_connection(connection, endpoint, self.rfc2217, timeout or self.idle_timeout)
        except (ClientIdle, TimeoutError) as error:
            self.report(f"{peer}: connection ended, client idle ({error or 'send timed out'})")
        except Exception as error:  # one client's bad bytes must not stop the server for the others
            self.report(f"{peer}: connection ended: {type(error).__name__}: {error}")


def serve_socket(
    device: SimulatedAdapter,
    port: int,
    plan: FaultPlan | None = None,
    host: str = "127.0.0.1",
    announce: Callable[[str], None] = print,
    connections: int | None = None,
    rfc2217: bool = False,
    idle_timeout: float | None = IDLE_TIMEOUT,
    report: Callable[[str], None] = _report_to_stderr,
) -> None:
    """Accept connections on host:port; `announce` gets the URL to connect to, `report` what happened.

    `rfc2217`: speak RFC 2217 (for `rfc2217://` clients) instead of raw bytes (`socket://`).
    `connections`: return after that many connections have been accepted and have ended.
    A port in use is a HilbridgeError.
    """
    plan = plan or FaultPlan()
    scheme = "rfc2217" if rfc2217 else "socket"
    try:
        server_socket = socket.create_server((host, port))
    except OSError as error:
        raise HilbridgeError(
            f"cannot serve on {host}:{port}: {error.strerror or error}"
            + (" (the port is in use)" if error.errno == errno.EADDRINUSE else ""),
            hint="choose another --port, or --port 0 for any free one",
        ) from None
    with server_socket:
        url = f"{scheme}://{host}:{server_socket.getsockname()[1]}"
        server = _Server(device, plan, url, rfc2217, idle_timeout, report)
        announce(url)
        threads: list[threading.Thread] = []
        while connections is None or len(threads) < connections:
            connection, address = server_socket.accept()
            peer = f"{address[0]}:{address[1]}"
            thread = threading.Thread(target=server.handle, args=(connection, peer), daemon=True)
            thread.start()
            threads.append(thread)
            threads = [t for t in threads if t.is_alive()] if connections is None else threads
        for thread in threads:
            thread.join()


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
