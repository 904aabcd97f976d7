"""Adapter calls whose requests adapt to the link (piece sizes), against the simulated adapter."""

from __future__ import annotations

import threading

from hilbridge.link.adapter import MIN_PIECE, Adapter
from hilbridge.link.errors import LinkTimeout
from hilbridge.link.transport import InProcessTransport
from hilbridge.sim import build_device


class _FallsSilent:
    """The simulated adapter, which stops answering once `silent` is set (a pulled cable, a hung board)."""

    def __init__(self) -> None:
        self.device = build_device()
        self.silent = False

    def receive(self, data: bytes) -> None:
        if not self.silent:
            self.device.receive(data)

    def transmit(self) -> bytes:
        return b"" if self.silent else self.device.transmit()

    @property
    def silent_until_written(self) -> bool:
        return self.silent or self.device.silent_until_written


def test_repeated_short_reads_on_a_dead_link_end_in_a_timeout():
    # Passes of 4 bytes still fit 4 to a request at the smallest piece size: the batch must then get
    # the full retry budget and fail, not halve the piece size (already the smallest) for ever.
    endpoint = _FallsSilent()
    adapter = Adapter(InProcessTransport(endpoint), retries=3, max_timeout=0.01)
    assert adapter.read_repeated(0x400, 4, 3) == [endpoint.device.cartridge.program_view(0xFF)[:4]] * 3
    endpoint.silent = True
    adapter.piece_size = MIN_PIECE
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            adapter.read_repeated(0x400, 4, 8)
        except BaseException as error:  # handed to the test thread
            outcome.append(error)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "read_repeated kept retrying a dead link"
    assert len(outcome) == 1 and isinstance(outcome[0], LinkTimeout)
