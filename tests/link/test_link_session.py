"""Link retransmission and windowing against the simulated adapter, with the host's reads shaped."""

from __future__ import annotations

import time

from hilbridge.link.session import Link
from hilbridge.sim import build_device


class _SlowReader:
    """An in-process link whose reads return at most `chunk` bytes, after one long stall of the host."""

    name = "slow-reader"

    def __init__(self, chunk: int, stall: float, delay: float = 0.0, cut_after: int = 0):
        self.device = build_device()
        self.chunk = chunk
        self.stall = stall
        self.delay = delay  # seconds each read that returns bytes takes (a slow link)
        self.cut_after = cut_after  # deliver this many bytes, then lose the rest of what was sent once
        self.trickle = 0.0  # after the cut, this many seconds of one garbage byte per read
        self.trickle_end = 0.0
        self.write_times: list[float] = []
        self.pending = bytearray()
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        self.write_times.append(time.monotonic())
        self.device.receive(data)

    def read(self, timeout: float) -> bytes:
        if time.monotonic() < self.trickle_end:
            time.sleep(0.001)
            return b"\x55"
        if self.stall:
            time.sleep(self.stall)  # the host process was descheduled; replies wait in its buffer
            self.stall = 0.0
        self.pending += self.device.transmit()
        if not self.pending:
            time.sleep(timeout)
            return b""
        chunk = min(self.chunk, self.cut_after) if self.cut_after else self.chunk
        data = bytes(self.pending[:chunk])
        del self.pending[:chunk]
        if self.cut_after:
            self.cut_after -= len(data)
            if not self.cut_after:
                self.pending.clear()
                self.trickle_end = time.monotonic() + self.trickle
        time.sleep(self.delay)
        return data

    def close(self) -> None:
        pass


def _reads(count: int) -> list[tuple[str, dict]]:
    fields = {"p1": 0xFF, "p2": 0, "strobe": 0, "length": 64}
    return [("CART_READ", {**fields, "address": 0x400 + 64 * (i % 48)}) for i in range(count)]


def test_replies_waiting_unread_after_a_host_stall_are_not_resent():
    transport = _SlowReader(chunk=100, stall=0.0)
    link = Link(transport, timeout=0.005, min_timeout=0.004)
    link.transact(_reads(16))  # measure the round trip
    transport.stall = 0.1  # 20 timeouts long
    replies = link.transact(_reads(16))
    assert [reply["address"] for reply in replies] == [0x400 + 64 * i for i in range(16)]
    assert link.stats.retransmits == 0


def test_the_window_is_refilled_in_batches_not_one_request_per_reply():
    transport = _SlowReader(chunk=100, stall=0.0)
    link = Link(transport, window=16)
    link.transact(_reads(160))
    # 160 requests: a first write of 16, then one write per 8 freed slots, not one per reply.
    assert len(transport.writes) <= 2 + 160 // 8
    assert link.stats.requests == 160


LONG_READ = (
    "CART_READ_REPEAT",
    {"p1": 0xFF, "p2": 0, "strobe": 0, "address": 0x400, "length": 0xC00, "count": 21},
)


def test_a_long_reply_arriving_for_many_timeouts_is_not_resent():
    transport = _SlowReader(chunk=4095, stall=0.0, delay=0.002)
    link = Link(transport, timeout=0.005, min_timeout=0.004)
    link.transact(_reads(1))  # a short round trip: the timeout becomes a few milliseconds
    reply = link.transact([LONG_READ])[0]  # 64 KB in 16 reads of 2 ms each
    assert len(reply["data"]) == 21 * 0xC00
    assert link.stats.retransmits == 0


def test_a_reply_cut_off_in_mid_frame_is_requested_again():
    transport = _SlowReader(chunk=4095, stall=0.0)
    link = Link(transport, timeout=0.005, min_timeout=0.004)
    link.transact(_reads(1))
    transport.cut_after = 20000  # the rest of the 64 KB reply never comes
    reply = link.transact([LONG_READ])[0]
    assert reply["data"] == transport.device.cartridge.program_view(0xFF) * 21
    assert link.stats.retransmits >= 1


def test_bytes_trickling_in_after_a_cut_reply_do_not_postpone_the_retransmission_for_ever():
    transport = _SlowReader(chunk=4095, stall=0.0)
    link = Link(transport, timeout=0.005, min_timeout=0.004, max_timeout=0.05)
    link.transact(_reads(1))
    transport.cut_after, transport.trickle = 20000, 0.5  # then 0.5 s of garbage without a delimiter
    sent = len(transport.write_times)
    reply = link.transact([LONG_READ])[0]
    assert reply["data"] == transport.device.cartridge.program_view(0xFF) * 21
    resent = transport.write_times[sent + 1 :]
    assert resent and resent[0] < transport.trickle_end - 0.3  # within ~max_timeout, not after the trickle
