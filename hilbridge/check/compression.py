"""The adapter firmware's fetch compression, so the emulator side can be compressed the same way.

The firmware's sniff decoder (firmware/src/bus/sniff_decode.c) leaves sequential fetches out: a FETCH
record only when the address is not the previous fetch's next PC (the 8048 increments within a 2 KB
half, so A11 is kept), except 0400h and 0406h, which always pass (they make RESET_DETECTED and
FRAME_SYNC). The protocol core (firmware/src/core/adapter_core.c) sees only the accesses that pass,
so a P1 change first seen at a left-out fetch is reported at the next access that passes, with that
access's cycle and P1. The adapter stamps each access at its own bus cycle, where the emulator
stamps all fetches of an instruction at the instruction's start: a second fetch that passes (the
table byte of MOVP and JMPP) is one cycle later on the adapter. Stamps count from the first access
the adapter saw; the check aligns both sides at the reset fetch, so that needs nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass

from hilbridge.check.emulator import FETCH, P1, RESET_ADDRESS, VSYNC_HOOK, Event

NO_FETCH = 0xFFFF
FETCHES_ALL = "all"
FETCHES_COMPRESSED = "compressed"
FETCH_MODES = (FETCHES_ALL, FETCHES_COMPRESSED)


def next_fetch(address: int) -> int:
    """The address a sequential fetch after `address` has: A11 kept, A0-A10 incremented."""
    return (address & 0x800) | ((address + 1) & 0x7FF)


@dataclass(slots=True)
class FetchCompressor:
    """The firmware's rule over a stream of events in bus order, frame after frame (it keeps state).

    A P1 change that waits for an access that passes is reported there with that access's cycle and
    p1 field, and not at all when P1 is back to the bits last reported by then."""

    expected_next: int = NO_FETCH
    held: Event | None = None  # a P1 change seen at a left-out fetch, waiting for an access that passes
    reported: int | None = None  # the P10/P11/P14 bits of the last P1 record (None: none yet)
    last_fetch_cycle: int = -1  # the emulator's stamp of the previous fetch

    def _on_the_bus(self, fetch: Event) -> Event:
        """`fetch` stamped at its bus cycle: one later when the previous fetch shares its stamp."""
        cycle = fetch[0]
        second = cycle == self.last_fetch_cycle
        self.last_fetch_cycle = cycle
        return (cycle + 1, *fetch[1:]) if second else fetch

    def passes(self, address: int) -> bool:
        """Whether a fetch of `address` makes a record; updates the previous fetch."""
        passing = address != self.expected_next or address in (RESET_ADDRESS, VSYNC_HOOK)
        self.expected_next = next_fetch(address)
        return passing

    def compress(self, events: list[Event]) -> list[Event]:
        """The events the adapter would report: sequential fetches left out, P1 changes moved."""
        kept: list[Event] = []
        count = len(events)
        index = 0
        while index < count:
            event = events[index]
            kind = event[1]
            if kind == P1:
                following = events[index + 1] if index + 1 < count else None
                if following is not None and following[1] == FETCH and following[0] == event[0]:
                    following = self._on_the_bus(following)
                    if not self.passes(following[2]):
                        self.held = event  # its access is left out: the next one that passes reports it
                        index += 2
                        continue
                    self._report(kept, (following[0], *event[1:]))
                    kept.append(following)
                    index += 2
                    continue
                self._report(kept, event)
            elif kind == FETCH:
                event = self._on_the_bus(event)
                if self.passes(event[2]):
                    self._release(kept, event)
                    kept.append(event)
            else:
                if self.held is not None and kind < 8:  # a MOVX access (not a reset or frame marker)
                    self._release(kept, event)
                kept.append(event)
            index += 1
        return kept

    def _report(self, kept: list[Event], event: Event) -> None:
        """A P1 change at an access that passes: it replaces one still held (the later value wins)."""
        self.held = None
        self.reported = event[3]
        kept.append(event)

    def _release(self, kept: list[Event], access: Event) -> None:
        """The held P1 change, reported at `access` (its cycle and P1)."""
        held, self.held = self.held, None
        if held is not None and held[3] != self.reported:
            self.reported = held[3]
            kept.append((access[0], P1, 0, held[3], access[4]))
