"""Bus capture for the simulated adapter: the reference emulator runs the cartridge and reports what a
real adapter would see on the slot (docs/hardware.md, "The bus engines and their timing"): cartridge
fetches, MOVX reads and writes, P1 changes, plus RESET_DETECTED (fetch of 0400h) and FRAME_SYNC (fetch
of the VSYNC hook 0406h) events.

The console is a copy of the cartridge, so capturing never disturbs the slot the dumper reads. The
simulated console pauses while the host is behind (a real one cannot, so the firmware counts drops).
"""

from __future__ import annotations

from collections.abc import Callable

from hilbridge.link.protocol import CAPTURE_KINDS, CAPTURE_RECORD, MESSAGES
from hilbridge.machine.bus import FETCH, READ, WRITE, BusAccess
from hilbridge.machine.cartridge import CART_P1_MASK, Cartridge, load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import NO_INPUT, InputMovie

ConsoleFactory = Callable[..., Console]
"""Makes the simulated console from the cartridge and `region=`: `Console`, or one that deviates
from the emulator (`hilbridge.sim.deviations`)."""

CHUNK_PAYLOAD = 4096  # capture chunks stay short so events reach the host soon after they happen
RECORDS_PER_CHUNK = (CHUNK_PAYLOAD - 4) // CAPTURE_RECORD.size
RESET_ADDRESS = 0x400
VSYNC_HOOK = 0x406
_KIND_BITS = {
    FETCH: CAPTURE_KINDS["FETCH"],
    READ: CAPTURE_KINDS["MOVX_READ"],
    WRITE: CAPTURE_KINDS["MOVX_WRITE"],
}
_P1_BIT = CAPTURE_KINDS["P1"]
_CHUNK = MESSAGES["CAPTURE_CHUNK"].id
_RESET = MESSAGES["RESET_DETECTED"].id
_SYNC = MESSAGES["FRAME_SYNC"].id


class CaptureStream:
    """Runs the console one frame per call of `next_events` and returns the event frames it produced."""

    def __init__(
        self,
        cart: Cartridge,
        what: int,
        region: str = "ntsc",
        movie: InputMovie = NO_INPUT,
        console: ConsoleFactory = Console,
    ):
        self.console = console(load_cartridge(cart.image, cart.mapper, name=cart.name), region=region)
        self.movie = movie
        self.what = what
        self.chunks = 0
        self.records = 0
        self.dropped = 0
        self.resets = 0
        self.frames = 0
        self._pending: list[bytes] = []
        self._events: list[tuple[int, bytes]] = []
        self._p1 = self.console.p1 & CART_P1_MASK
        self.console.add_bus_listener(self._on_access, fetches=True)
        # idle loops stay skipped: the CPU reports the skipped iterations' fetches and reads in order
        self.console.cpu.skip_traced = True

    def _record(self, cycle: int, kind: int, address: int, value: int, p1: int) -> None:
        if self.what >> kind & 1:
            self._pending.append(CAPTURE_RECORD.pack(cycle & 0xFFFFFFFF, kind, address, value, p1))
            if len(self._pending) >= RECORDS_PER_CHUNK:
                self._flush()

    def _on_access(self, access: BusAccess) -> None:
        p1 = access.p1 & CART_P1_MASK
        if p1 != self._p1:
            self._p1 = p1
            self._record(access.cycle, _P1_BIT, 0, p1, access.p1)
        self._record(access.cycle, _KIND_BITS[access.kind], access.address, access.value, access.p1)
        if access.kind == FETCH and access.address in (RESET_ADDRESS, VSYNC_HOOK):
            self._flush()
            cycle = (access.cycle & 0xFFFFFFFF).to_bytes(4, "little")
            if access.address == RESET_ADDRESS:
                self.resets += 1
                self._events.append((_RESET, cycle))
            else:
                self._events.append((_SYNC, self.frames.to_bytes(4, "little") + cycle))
                self.frames += 1

    def _flush(self) -> None:
        if self._pending:
            payload = self.chunks.to_bytes(4, "little") + b"".join(self._pending)
            self._events.append((_CHUNK, payload))
            self.chunks += 1
            self.records += len(self._pending)
            self._pending.clear()

    def next_events(self) -> list[tuple[int, bytes]]:
        """Run one more video frame (its inputs applied first); the (frame type, payload) events it
        produced, in bus order."""
        self.movie.apply(self.console, self.console.frame)
        self.console.run_frames(1)
        self._flush()
        events, self._events = self._events, []
        return events
