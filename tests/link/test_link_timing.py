"""Retransmission timing against an adapter that takes time to execute requests: pipelined requests
wait behind each other there, long replies take longer than short ones, and a burst of requests may be
lost on the way. Time is simulated: it passes only while the host waits for bytes, so what the tests
count (retransmits, timeouts, seconds) does not depend on how busy the machine running them is."""

from __future__ import annotations

from collections import deque

import pytest

from hilbridge.link.protocol import DELIMITER
from hilbridge.link.session import Link
from hilbridge.sim import build_device


class _Clock:
    """Simulated seconds, advanced by the transport while the host waits."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _ServiceTimeAdapter:
    """The simulated adapter executing one request at a time: each takes `base` seconds plus
    `per_byte` seconds per byte of its request and reply, and its reply arrives when it is done. A
    retransmitted request costs as much as the first copy (the firmware reads again rather than keep
    long replies). The request frames the host sends with the numbers in `lost` (counting every frame
    from 0, retransmissions included) never arrive; the replies numbered in `damaged` arrive with a
    bad byte."""

    name = "service-time"

    def __init__(self, base: float, per_byte: float, lost: range = range(0), damaged: range = range(0)):
        self.clock = _Clock()
        self.device = build_device()
        self.base = base
        self.per_byte = per_byte
        self.lost = lost
        self.damaged = damaged
        self.frames = 0
        self.replies = 0
        self.executed = 0
        self._free_at = 0.0  # when the request being executed is done
        self._current: tuple[float, bytes] | None = None
        self._out = bytearray()
        self._request_bytes: deque[int] = deque()  # of each request delivered and not yet executed

    def write(self, data: bytes) -> None:
        now = self.clock.now
        self._advance(now)
        if self._current is None and not self.device.busy:
            self._free_at = now
        for frame in data.split(DELIMITER)[:-1]:
            if self.frames not in self.lost:
                self.device.receive(frame + DELIMITER)
                self._request_bytes.append(len(frame) + 1)
            self.frames += 1

    def read(self, timeout: float) -> bytes:
        deadline = self.clock.now + timeout
        while True:
            now = self.clock.now
            self._advance(now)
            if self._out or now >= deadline:
                data = bytes(self._out)
                self._out.clear()
                return data
            ready = self._current[0] if self._current else deadline
            self.clock.now = min(deadline, ready)

    def _advance(self, now: float) -> None:
        while True:
            if self._current is None:
                if not self.device.busy:
                    return
                reply = self.device.transmit(limit=1)
                self.executed += 1
                moved = self._request_bytes.popleft() + len(reply)
                self._current = (self._free_at + self.base + self.per_byte * moved, reply)
            ready, reply = self._current
            if ready > now:
                return
            if self.replies in self.damaged:
                reply = reply[:2] + bytes((reply[2] ^ 0x80,)) + reply[3:]
            self.replies += 1
            self._out += reply
            self._free_at, self._current = ready, None

    def close(self) -> None:
        pass


def _reads(count: int, length: int) -> list[tuple[str, dict]]:
    fields = {"p1": 0xFF, "p2": 0, "strobe": 0, "length": length}
    return [("CART_READ", {**fields, "address": 0x400 + (length * i) % 0xC00}) for i in range(count)]


def _link(transport: _ServiceTimeAdapter) -> Link:
    """A link whose timeout was learnt from four single short reads (3 ms round trips)."""
    link = Link(transport, timeout=0.005, min_timeout=0.004, clock=transport.clock)
    for read in _reads(4, 16):
        link.transact([read])
    return link


def test_long_replies_after_short_ones_are_not_resent_over_and_over():
    transport = _ServiceTimeAdapter(base=0.002, per_byte=0.00005)  # 1024 bytes: 53 ms
    link = _link(transport)
    replies = link.transact(_reads(48, 1024))
    assert [len(reply["data"]) for reply in replies] == [1024] * 48
    # the first long reply may be resent while the timeout backs off, nothing queued behind it is resent
    assert link.stats.retransmits <= 8
    assert transport.executed <= 4 + 48 + 8


def test_long_uploads_after_short_requests_are_not_resent_over_and_over():
    transport = _ServiceTimeAdapter(base=0.002, per_byte=0.00005)  # 1024 bytes: 53 ms
    link = _link(transport)
    link.request("UPLOAD_BEGIN", mapper=1, size=0x2000)
    pieces = [("UPLOAD_DATA", {"offset": 1024 * i, "data": bytes([i]) * 1024}) for i in range(8)] * 4
    replies = link.transact(pieces)
    assert [reply["length"] for reply in replies] == [1024] * 32
    assert transport.device.upload_buffer == b"".join(bytes([i]) * 1024 for i in range(8))
    # a long request takes as long as a long reply: what waits behind the first one is not resent
    assert link.stats.retransmits <= 8
    assert transport.executed <= 5 + 32 + 8


@pytest.mark.parametrize(
    ("count", "first", "burst"),
    [(16, 0, 16), (24, 16, 8)],  # a whole window; the last refill of a batch (nothing after it)
    ids=["window", "tail"],
)
def test_a_lost_burst_of_requests_is_recovered_in_about_one_timeout_not_one_each(count, first, burst):
    clean = _ServiceTimeAdapter(base=0.002, per_byte=0.00005)
    clean_link = _link(clean)
    started = clean.clock.now
    clean_link.transact(_reads(count, 64))
    clean_time = clean.clock.now - started
    transport = _ServiceTimeAdapter(base=0.002, per_byte=0.00005, lost=range(4 + first, 4 + first + burst))
    link = _link(transport)
    timeout, started = link.timeout, transport.clock.now
    replies = link.transact(_reads(count, 64))
    assert [reply["address"] for reply in replies] == [read[1]["address"] for read in _reads(count, 64)]
    assert link.stats.retransmits == burst  # each lost request is sent again once, nothing else
    # Two timeouts, not one each: the reads are longer than any answered before, so the oldest lost
    # one times out alone (the adapter might only be slow); once it is answered, the others together.
    assert link.stats.timeouts <= 2
    assert transport.clock.now - started <= clean_time + 4 * timeout


def test_requests_sent_before_the_copy_answered_after_a_damaged_reply_are_resent_at_once():
    transport = _ServiceTimeAdapter(base=0.002, per_byte=0.00005)
    link = _link(transport)
    transport.lost = range(transport.frames + 1, transport.frames + 4)  # the three after the first
    transport.damaged = range(transport.replies, transport.replies + 1)  # and the first one's reply
    replies = link.transact(_reads(4, 16))
    assert [reply["address"] for reply in replies] == [read[1]["address"] for read in _reads(4, 16)]
    # the damaged frame was the first request's reply: its copy is the only one that can be answered
    # now, so its reply shows the three sent before the copy were lost, with no timeout to wait for
    assert link.stats.bad_frames == 1 and link.stats.retransmits == 4
    assert link.stats.timeouts == 0
