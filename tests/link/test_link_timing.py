"""Retransmission timing against an adapter that takes time to execute requests: pipelined requests
wait behind each other there, and long replies take longer than short ones."""

from __future__ import annotations

import time

from hilbridge.link.session import Link
from hilbridge.sim import build_device


class _ServiceTimeAdapter:
    """The simulated adapter executing one request at a time: each takes `base` seconds plus
    `per_byte` seconds per reply byte, and its reply is sent when it is done. A retransmitted request
    costs as much as the first copy (the firmware reads again rather than keep long replies)."""

    name = "service-time"

    def __init__(self, base: float, per_byte: float):
        self.device = build_device()
        self.base = base
        self.per_byte = per_byte
        self.executed = 0
        self._free_at = 0.0  # when the request being executed is done
        self._current: tuple[float, bytes] | None = None
        self._out = bytearray()

    def write(self, data: bytes) -> None:
        now = time.monotonic()
        self._advance(now)
        if self._current is None and not self.device.busy:
            self._free_at = now
        self.device.receive(data)

    def read(self, timeout: float) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            self._advance(now)
            if self._out or now >= deadline:
                data = bytes(self._out)
                self._out.clear()
                return data
            ready = self._current[0] if self._current else deadline
            time.sleep(max(0.0, min(deadline, ready) - now))

    def _advance(self, now: float) -> None:
        while True:
            if self._current is None:
                if not self.device.busy:
                    return
                reply = self.device.transmit(limit=1)
                self.executed += 1
                self._current = (self._free_at + self.base + self.per_byte * len(reply), reply)
            ready, reply = self._current
            if ready > now:
                return
            self._out += reply
            self._free_at, self._current = ready, None

    def close(self) -> None:
        pass


def _reads(count: int, length: int) -> list[tuple[str, dict]]:
    fields = {"p1": 0xFF, "p2": 0, "strobe": 0, "length": length}
    return [("CART_READ", {**fields, "address": 0x400 + (length * i) % 0xC00}) for i in range(count)]


def test_long_replies_after_short_ones_are_not_resent_over_and_over():
    transport = _ServiceTimeAdapter(base=0.002, per_byte=0.00005)  # 1024 bytes: 53 ms
    link = Link(transport, timeout=0.005, min_timeout=0.004)
    for read in _reads(4, 16):  # alone: the timeout is learnt from 3 ms round trips
        link.transact([read])
    replies = link.transact(_reads(48, 1024))
    assert [len(reply["data"]) for reply in replies] == [1024] * 48
    # the first long reply may be resent while the timeout backs off, nothing queued behind it is resent
    assert link.stats.retransmits <= 8
    assert transport.executed <= 4 + 48 + 8
