"""SerialTransport on a real pseudo-terminal: what the pty benchmark and `sim serve --pty` rely on."""

from __future__ import annotations

import contextlib
import os
import threading
import tty

import pytest

from hilbridge.link.errors import LinkDisconnected
from hilbridge.link.transport import SerialTransport


@pytest.fixture
def pty_pair():
    master, slave = os.openpty()
    tty.setraw(slave)
    transport = SerialTransport(os.ttyname(slave))
    yield master, transport
    transport.close()
    os.close(slave)
    with contextlib.suppress(OSError):
        os.close(master)


def test_reads_deliver_a_burst_longer_than_one_tty_read_intact(pty_pair):
    master, transport = pty_pair
    data = bytes(range(256)) * 48  # 12 KB: fits the pty's buffers without a reader
    assert os.write(master, data) == len(data)
    received = transport.read(1.0)
    while len(received) < len(data):
        received += transport.read(1.0)
    assert received == data
    assert transport.read(0) == b""


def test_silence_times_out_with_nothing(pty_pair):
    _, transport = pty_pair
    assert transport.read(0.02) == b""


def test_a_large_write_is_delivered_whole_while_the_other_side_reads(pty_pair):
    master, transport = pty_pair
    data = os.urandom(200_000)  # far more than a pty holds: the write must wait for the reader
    received = bytearray()

    def drain() -> None:
        while len(received) < len(data):
            received.extend(os.read(master, 65536))

    reader = threading.Thread(target=drain)
    reader.start()
    transport.write(data)
    reader.join(10)
    assert bytes(received) == data


def test_a_hung_up_pty_is_a_disconnect_not_silence(pty_pair):
    master, transport = pty_pair
    os.close(master)
    with pytest.raises(LinkDisconnected):
        transport.read(0.5)
