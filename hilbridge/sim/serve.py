"""Serving the simulated adapter to other processes: over TCP (`socket://`) or a pseudo-terminal.

The device (its slot and emulation state) lives as long as the server; every connection gets fresh
fault injection, so `disconnect=N` cuts each connection after N bytes and a new one can resume.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import tty
from collections.abc import Callable

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


def _pump(endpoint, fileno: int, read: Callable[[], bytes], write: Callable[[bytes], None]) -> None:
    """Move bytes between one connection and the device until the connection or the device ends it."""
    while True:
        if select.select([fileno], [], [], BUSY_WAIT if endpoint.busy else IDLE_WAIT)[0]:
            data = read()
            if not data:
                return
            endpoint.receive(data)
        out = endpoint.transmit(REPLY_BATCH)
        if out:
            write(out)


def _serve_connection(connection: socket.socket, endpoint) -> None:
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with connection, contextlib.suppress(LinkDisconnected, ConnectionError):
        _pump(endpoint, connection.fileno(), lambda: connection.recv(65536), connection.sendall)


def serve_socket(
    device: SimulatedAdapter,
    port: int,
    plan: FaultPlan | None = None,
    host: str = "127.0.0.1",
    announce: Callable[[str], None] = print,
    connections: int | None = None,
) -> None:
    """Accept connections on host:port one at a time; `announce` gets the URL to connect to."""
    plan = plan or FaultPlan()
    with socket.create_server((host, port)) as server:
        announce(f"socket://{host}:{server.getsockname()[1]}")
        served = 0
        while connections is None or served < connections:
            connection, _ = server.accept()
            served += 1
            _serve_connection(connection, _endpoint(device, plan))


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
        _pump(_endpoint(device, plan), master, lambda: os.read(master, 65536), write)
    except (LinkDisconnected, OSError):
        pass  # closing the master hangs the pty up: the host sees the port vanish, like a pulled cable
    finally:
        os.close(master)
        os.close(slave)
