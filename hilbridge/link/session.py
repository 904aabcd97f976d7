"""Request/response over a transport: sequence numbers, pipelining, retransmission and timeouts.

The host numbers requests 1..255 (0 is for events) and may keep up to `window` of them in flight. The
adapter answers in order and remembers its recent replies by sequence number, so a retransmitted
request is answered from that memory (the firmware reads long reads again instead). A request is sent
again at once when a reply to a request sent after it arrives first (the adapter answers in order, so
the earlier request or its reply was lost), or when its reply is overdue, timed from when the adapter
could start it (after the requests before it), with room for the bytes it moves (its own and the
reply's). A request moving more bytes than any answered so far has no estimate of its time yet: it is
resent alone and nothing behind it is timed, since resending what merely waits behind a long read or
upload makes a slow adapter slower. Otherwise a late request is presumed lost, and the requests
behind it are timed as if it had not been sent: a burst of lost requests is resent together.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hilbridge.link.errors import DeviceError, LinkTimeout, ProtocolError
from hilbridge.link.protocol import (
    ERROR,
    ERROR_NAMES,
    MESSAGES,
    FrameDecoder,
    Message,
    encode_frame,
    parse_device_frame,
)
from hilbridge.link.transport import Transport

BACKOFF_FLOOR = 0.1  # seconds
LIVE_LINK_FACTOR = 10
"""A request at the full retry budget gets up to this many times the budget while the adapter keeps
answering other requests: on a noisy but live link a short frame can fail 40 times by bad luck."""
LONG_REQUEST = 256  # bytes moved (request and reply): requests moving this many teach the time per byte
LIVE_WINDOW = 5.0  # seconds since the last good reply within which the adapter counts as answering


@dataclass(slots=True)
class LinkStats:
    requests: int = 0
    retransmits: int = 0
    timeouts: int = 0
    bad_frames: int = 0
    stray_replies: int = 0
    bytes_in: int = 0
    bytes_out: int = 0


@dataclass(slots=True)
class _Pending:
    index: int
    message: Message
    wire: bytes
    size: int = 0  # bytes it moves, its payload and the reply's it asks for: its time at the adapter
    sent_at: float = 0.0
    attempts: int = 0
    transmission: int = 0
    live_from: int = 0  # the first transmission whose reply may still come (earlier ones were lost)
    live_sent_at: float = 0.0  # when that one was sent


class Link:
    """A numbered, retransmitting request channel to one adapter."""

    def __init__(
        self,
        transport: Transport,
        *,
        timeout: float = 0.1,
        min_timeout: float = 0.004,
        max_timeout: float = 2.0,
        retries: int = 40,
        window: int = 16,
        clock: Callable[[], float] = time.monotonic,
    ):
        """`clock` gives the time in seconds that timeouts are measured in: tests pass a simulated one
        so that a link's timing is counted in the time it would take, whatever the machine's load."""
        self.transport = transport
        self.clock = clock
        self.retries = retries
        self.window = window
        self.min_timeout = min_timeout
        self.max_timeout = max_timeout
        self._timeout = timeout
        self._srtt: float | None = None
        self._per_byte = 0.0  # smoothed seconds per byte moved beyond the round trip (long requests)
        self._largest = 0  # bytes moved by the largest request answered: larger ones have no estimate
        self._decoder = FrameDecoder()
        self._next_seq = 1
        self._transmissions = 0
        self._last_reply = 0.0
        self._replies_flowing = False  # the last complete frame was a reply, not an event or garbage
        self._outbox = bytearray()
        self.events: deque[tuple[Message, dict[str, Any]]] = deque()
        self.stats = LinkStats()

    @property
    def timeout(self) -> float:
        """Current retransmission timeout in seconds."""
        return self._timeout

    def request(self, name: str, **values: Any) -> dict[str, Any]:
        """Send one command and return its reply fields."""
        return self.transact([(name, values)])[0]

    def transact(
        self, requests: list[tuple[str, dict[str, Any]]], retries: int | None = None
    ) -> list[dict[str, Any]]:
        """Send commands pipelined (up to `window` in flight); replies in request order.

        The adapter executes them in order. An ERROR reply raises DeviceError after the batch drains;
        a request unanswered after `retries` retransmissions (default: the link's) raises LinkTimeout.
        """
        retries = self.retries if retries is None else retries
        results: list[dict[str, Any] | None] = [None] * len(requests)
        errors: list[DeviceError] = []
        pending: dict[int, _Pending] = {}
        queue = deque(enumerate(requests))
        refill = max(1, self.window // 2)
        read, decoder, stats, clock = self.transport.read, self._decoder, self.stats, self.clock
        while queue or pending:
            # Refill the window in batches, not one request per reply: one write (one USB transfer, one
            # wake-up of the adapter) carries half a window of requests.
            if queue and self.window - len(pending) >= min(refill, len(queue)):
                while queue and len(pending) < self.window:
                    index, (name, values) = queue.popleft()
                    message = MESSAGES[name]
                    seq = self._allocate_seq(pending)
                    payload = message.request_layout.pack(values)
                    wire = encode_frame(message.id, seq, payload)
                    pending[seq] = _Pending(index, message, wire, _bytes_moved(payload, values))
                    stats.requests += 1
                    self._send(pending[seq], retries)
            self._flush()
            data = read(min(self._timeout, 0.05))
            now = clock()
            if data:
                if self._receive(data, pending, results, errors, now, retries) and pending:
                    self._resend_oldest(pending, now, retries)
                # Replies still flowing in: anything missing among them is caught by fast retransmit. A
                # reply is overdue only in silence, or when nothing but events and garbage came for a
                # timeout, so a host that was itself descheduled does not resend what is waiting unread.
                # The bytes of a long reply (64 KB take milliseconds) count as flowing when they follow
                # a reply: the timeout, learnt from short round trips, must not expire in mid-frame. For
                # at most `max_timeout`: bytes trickling in without an end are not a reply.
                since_reply = now - self._last_reply
                if since_reply < self._timeout or (
                    self._replies_flowing and decoder.partial and since_reply < self.max_timeout
                ):
                    continue
            overdue = self._overdue(pending, now)
            if overdue:
                self.stats.timeouts += 1
                if not data:  # silence, not just loss: the adapter may be slow, so back off
                    self._timeout = min(self._timeout * 1.5, self._backoff_cap())
                for item in overdue:  # presumed lost when its time was estimated
                    self._send(item, retries, live=self._estimated(item))
        if errors:
            raise errors[0]
        return results  # type: ignore[return-value]

    def _overdue(self, pending: dict[int, _Pending], now: float) -> list[_Pending]:
        """The requests to send again because their replies are late.

        The adapter answers in order, so each request is timed from when it could start it: its last
        sending, or when the adapter should be done with the requests before it (the last reply, then
        the estimated time of each still in flight). A late request whose time was estimated is
        presumed lost: it took no time at the adapter, and the ones behind it are timed as if it had
        not been sent. Without an estimate (more bytes than any so far) the adapter may merely be
        slow: the request is resent if late, and the ones behind it are not timed until it is
        answered. `pending` is in order of first sending.
        """
        overdue = []
        ready = self._last_reply
        for item in pending.values():
            start = max(item.sent_at, ready)
            late = now - start >= self._deadline(item)
            if late:
                overdue.append(item)
            if not self._estimated(item):
                break
            if not late:
                ready = start + (self._srtt or 0.0) + 2 * self._per_byte * item.size
        return overdue

    def _estimated(self, item: _Pending) -> bool:
        """Whether the time the adapter takes for `item` can be estimated: it moves no more bytes than a
        request answered already (the round trip and the time per byte are learnt from those)."""
        return item.size <= self._largest

    def _deadline(self, item: _Pending) -> float:
        """The timeout plus twice the learnt time for the bytes it moves: a long read or upload takes
        longer than the round trip learnt from short ones; never more than `max_timeout`."""
        return min(self._timeout + 2 * self._per_byte * item.size, self.max_timeout)

    def _resend_oldest(self, pending: dict[int, _Pending], now: float, retries: int) -> None:
        """A damaged frame arrived: most likely the reply to the oldest request, so send that again now
        (unless it was sent again within the last half round trip). Only the new copy can still be
        answered: the adapter answers in order, so the damaged frame was the reply to an earlier copy
        or came after it."""
        oldest = min(pending.values(), key=lambda item: item.transmission)
        if now - oldest.sent_at > (self._srtt or 0.0) / 2:
            self._send(oldest, retries, live=True)

    def _backoff_cap(self) -> float:
        """Longest timeout: 8 round trips (at least BACKOFF_FLOOR), so a burst of losses on a fast link
        is retried quickly instead of waiting seconds; never more than `max_timeout`."""
        if self._srtt is None:
            return self.max_timeout
        return min(self.max_timeout, max(BACKOFF_FLOOR, 8 * self._srtt))

    def reset_backoff(self) -> None:
        """Drop the timeout back to the measured round trip (after losses that were not latency)."""
        if self._srtt is not None:
            self._timeout = min(max(4 * self._srtt + 0.002, self.min_timeout), self.max_timeout)

    def poll_events(self, timeout: float) -> None:
        """Read for up to `timeout` seconds and queue any events (capture chunks, sync, reset)."""
        deadline = self.clock() + timeout
        while True:
            data = self.transport.read(max(0.0, min(0.05, deadline - self.clock())))
            if data:
                self._receive(data, {}, [], [], self.clock(), self.retries)
            if self.clock() >= deadline:
                return

    def _allocate_seq(self, pending: dict[int, _Pending]) -> int:
        while True:
            seq = self._next_seq
            self._next_seq = self._next_seq % 255 + 1
            if seq not in pending:
                return seq

    def _send(self, item: _Pending, retries: int, *, live: bool = False) -> None:
        """Queue a copy of `item` for `_flush`; `live`: the earlier copies are known to be lost (or their
        replies), so only this one's reply can still come."""
        if item.attempts > retries and not self._still_answering(item, retries):
            raise LinkTimeout(
                f"{self.transport.name}: no reply to {item.message.name} after {item.attempts} attempts",
                hint="check the cable and that the adapter is powered; `hilbridge devices` lists adapters",
            )
        if item.attempts:
            self.stats.retransmits += 1
        item.attempts += 1
        self._transmissions += 1
        item.transmission = self._transmissions
        item.sent_at = self.clock()
        if live or item.attempts == 1:
            item.live_from, item.live_sent_at = item.transmission, item.sent_at
        self._outbox += item.wire
        self.stats.bytes_out += len(item.wire)

    def _still_answering(self, item: _Pending, retries: int) -> bool:
        """True while a full-budget request should keep trying: the adapter replied to something within
        LIVE_WINDOW and the request is under LIVE_LINK_FACTOR times its budget. Small budgets (the
        adaptive probes that shrink pieces) never get extended: they want a quick answer."""
        return (
            retries >= self.retries
            and item.attempts <= LIVE_LINK_FACTOR * retries
            and self._last_reply > 0.0
            and self.clock() - self._last_reply < LIVE_WINDOW
        )

    def _receive(self, data: bytes, pending, results, errors, now: float, retries: int) -> bool:
        """Decode `data` and dispatch its frames; True when it completed damaged frames (counted, and
        the last complete frame is then no reply).

        Most reads of a long reply hold no delimiter: the decoder only buffers them."""
        self.stats.bytes_in += len(data)
        decoder = self._decoder
        bad_before = decoder.bad
        for frame in decoder.feed(data):
            self._dispatch(frame, pending, results, errors, now, retries)
        damaged = decoder.bad - bad_before
        if damaged:
            self.stats.bad_frames += damaged
            self._replies_flowing = False
        return damaged > 0

    def _flush(self) -> None:
        """Write the frames queued by `_send` in one transport write (one USB transfer, one syscall)."""
        if self._outbox:
            data = bytes(self._outbox)
            self._outbox.clear()
            self.transport.write(data)

    def _dispatch(self, frame, pending, results, errors, now: float, retries: int) -> None:
        try:
            message, values = parse_device_frame(frame)
        except ProtocolError:
            self.stats.bad_frames += 1
            return
        if message.kind == "event":
            self._replies_flowing = False
            self.events.append((message, values))
            return
        self._replies_flowing = True
        item = pending.get(frame.seq)
        if item is None or (message is not ERROR and message is not item.message):
            self.stats.stray_replies += 1
            return
        del pending[frame.seq]
        previous_reply, self._last_reply = self._last_reply, now
        # Round trip from the last transmission, or from the reply before it when it waited behind
        # other requests: may be short when an earlier copy was answered, which costs at most a
        # spurious retransmission, while backing off forever on a lossy link costs more.
        rtt = now - max(item.sent_at, previous_reply)
        self._learn_per_byte(item, now, previous_reply)
        self._largest = max(self._largest, item.size)
        self._srtt = rtt if self._srtt is None else 0.875 * self._srtt + 0.125 * rtt
        self._timeout = min(max(4 * self._srtt + 0.002, self.min_timeout), self.max_timeout)
        if message is ERROR:
            code = values["code"]
            errors.append(DeviceError(code, ERROR_NAMES.get(code, "?"), values["detail"], item.message.name))
            results[item.index] = values
        else:
            results[item.index] = values
        # Requests sent before the first copy of this one that may have been answered should have been
        # answered before it: they were lost, and every copy of theirs sent so far. Not those sent
        # before a later copy only: the reply may be to the earlier copy, with the others still queued.
        for other in pending.values():
            if other.transmission < item.live_from:
                self._send(other, retries, live=True)

    def _learn_per_byte(self, item: _Pending, now: float, previous_reply: float) -> None:
        """Learn the time per byte moved beyond the round trip from long requests, at once when they
        take longer. A retransmitted request is timed from its earliest copy that may have been answered:
        the adapter may still have been executing it (the first long read after short ones times out
        and is resent). If that copy was lost, the time includes the wait for the timeout: too long,
        which costs slower recovery until quicker replies bring it down, while too short makes the
        requests waiting behind a long read look lost."""
        if item.size < LONG_REQUEST or self._srtt is None:
            return
        sample = max(0.0, now - max(item.live_sent_at, previous_reply) - self._srtt) / item.size
        if sample > self._per_byte:
            self._per_byte = sample
        else:
            self._per_byte = 0.875 * self._per_byte + 0.125 * sample


def _bytes_moved(payload: bytes, values: dict[str, Any]) -> int:
    """The bytes a request moves: its payload and the reply bytes a read asks for (`length` × `count`)."""
    return len(payload) + int(values.get("length", 0)) * int(values.get("count", 1))
