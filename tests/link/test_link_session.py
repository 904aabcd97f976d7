"""Link retransmission and windowing against the simulated adapter, with the host's reads shaped."""

from __future__ import annotations

import time

from hilbridge.link.session import Link
from hilbridge.sim import build_device


class _SlowReader:
    """An in-process link whose reads return at most `chunk` bytes, after one long stall of the host."""

    name = "slow-reader"

    def __init__(self, chunk: int, stall: float):
        self.device = build_device()
        self.chunk = chunk
        self.stall = stall
        self.pending = bytearray()
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        self.device.receive(data)

    def read(self, timeout: float) -> bytes:
        if self.stall:
            time.sleep(self.stall)  # the host process was descheduled; replies wait in its buffer
            self.stall = 0.0
        self.pending += self.device.transmit()
        if not self.pending:
            time.sleep(timeout)
            return b""
        data = bytes(self.pending[: self.chunk])
        del self.pending[: self.chunk]
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
