"""SerialTransport on a real pseudo-terminal: what the pty benchmark and `sim serve --pty` rely on; and
InProcessTransport, which waits for an idle simulated adapter without polling it."""

from __future__ import annotations

import os
import threading
import time
import tty

import pytest

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.adapter import Adapter
from hilbridge.link.errors import LinkDisconnected
from hilbridge.link.protocol import MESSAGES, PROTOCOL_VERSION, encode_frame
from hilbridge.link.transport import InProcessTransport, SerialTransport
from hilbridge.sim import build_endpoint
from hilbridge.sim.demo import demo_image


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


class _Polled:
    """An endpoint that never says it is `silent_until_written`, so InProcessTransport polls it (the
    plain path)."""

    silent_until_written = False

    def __init__(self, endpoint) -> None:
        self.endpoint = endpoint
        self.transmits = 0

    def receive(self, data: bytes) -> None:
        self.endpoint.receive(data)

    def transmit(self) -> bytes:
        self.transmits += 1
        return self.endpoint.transmit()


def test_an_idle_simulated_adapter_is_waited_for_without_polling():
    endpoint = build_endpoint("faults=drop=0.01")
    transmits = []
    real = endpoint.transmit
    endpoint.transmit = lambda: transmits.append(1) or real()  # type: ignore[method-assign]
    transport = InProcessTransport(endpoint)
    started = time.monotonic()
    assert transport.read(0.05) == b""
    assert time.monotonic() - started >= 0.05 and len(transmits) == 1
    polled = _Polled(build_endpoint("faults=drop=0.01"))
    assert InProcessTransport(polled).read(0.05) == b"" and polled.transmits > 1


def test_a_simulated_adapter_with_work_to_do_is_read_at_once():
    """A queued request or a running capture makes bytes: the read must not sleep through them."""
    endpoint = build_endpoint("")
    transport = InProcessTransport(endpoint)
    hello = MESSAGES["HELLO"]
    transport.write(encode_frame(hello.id, 1, hello.request_layout.pack({"host_protocol": PROTOCOL_VERSION})))
    assert endpoint.busy and not endpoint.silent_until_written
    assert transport.read(5.0)  # the reply, long before the timeout
    start = MESSAGES["CAPTURE_START"]
    transport.write(encode_frame(start.id, 2, start.request_layout.pack({"what": 1})))
    assert transport.read(5.0)  # the reply and the first frame's capture
    started = time.monotonic()
    assert transport.read(5.0) and time.monotonic() - started < 2.5  # the capture goes on


@pytest.mark.parametrize("polled", [False, True])
def test_a_noisy_dump_is_the_same_whether_the_idle_adapter_is_polled_or_not(tmp_path, polled):
    endpoint = build_endpoint("type=o2_ktaa&size=3072&faults=drop=0.01,corrupt=0.01,dup=0.01,seed=4")
    with Adapter(InProcessTransport(_Polled(endpoint) if polled else endpoint)) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin")
        assert adapter.link.stats.retransmits > 0
    assert result.verified and result.image == demo_image("o2_ktaa", 3072)


def test_a_reply_held_back_by_a_simulated_delay_is_read_when_it_is_due():
    """The device is idle once it answered, but the fault layer still holds the reply."""
    endpoint = build_endpoint("faults=delay=0.02")
    transport = InProcessTransport(endpoint)
    hello = MESSAGES["HELLO"]
    transport.write(encode_frame(hello.id, 1, hello.request_layout.pack({"host_protocol": PROTOCOL_VERSION})))
    started = time.monotonic()
    assert transport.read(5.0) or transport.read(5.0)
    assert time.monotonic() - started < 2.5
