"""SerialTransport on a real pseudo-terminal: what the pty benchmark and `sim serve --pty` rely on."""

from __future__ import annotations

import os
import threading
import time
import tty

import pytest

from hilbridge.link.errors import LinkDisconnected
from hilbridge.link.transport import SerialTransport


class _Pty:
    """A pty pair: the master end as the adapter side, SerialTransport on the slave as the host side."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)
        self.transport = SerialTransport(os.ttyname(self._slave))

    def hang_up(self) -> None:
        os.close(self.master)
        self.master = -1

    def close(self) -> None:
        self.transport.close()
        os.close(self._slave)
        if self.master >= 0:
            os.close(self.master)


@pytest.fixture
def pty_pair():
    pair = _Pty()
    yield pair
    pair.close()


def test_reads_deliver_bursts_longer_than_one_tty_read_intact(pty_pair):
    master, transport = pty_pair.master, pty_pair.transport
    data = os.urandom(100_000)  # a tty read returns at most 4095 bytes; the pty holds less than this
    writer = threading.Thread(target=os.write, args=(master, data), daemon=True)
    writer.start()
    received = bytearray()
    deadline = time.monotonic() + 10
    while len(received) < len(data) and time.monotonic() < deadline:
        received += transport.read(0.5)
    writer.join(1)
    assert bytes(received) == data
    assert transport.read(0) == b""


def test_silence_times_out_with_nothing(pty_pair):
    transport = pty_pair.transport
    assert transport.read(0.02) == b""


def test_a_large_write_is_delivered_whole_while_the_other_side_reads(pty_pair):
    master, transport = pty_pair.master, pty_pair.transport
    data = os.urandom(200_000)  # far more than a pty holds: the write must wait for the reader
    received = bytearray()

    def drain() -> None:
        while len(received) < len(data):
            received.extend(os.read(master, 65536))

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    transport.write(data)
    reader.join(10)
    assert bytes(received) == data


def test_a_hung_up_pty_is_a_disconnect_not_silence(pty_pair):
    pty_pair.hang_up()
    with pytest.raises(LinkDisconnected):
        pty_pair.transport.read(0.5)
