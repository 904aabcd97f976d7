"""Shared by the check's tests: the fixture carts, and capture sources straight from the simulated
console (the same CaptureStream the simulated adapter runs, without the link in between)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from fixture_runs import SPECS, cart_image

from hilbridge.capture.sources import EventFrameSource, event_batches
from hilbridge.capture.stream import CaptureHeader, CaptureItem, FrameSync, expanded
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.protocol import CAPTURE_KINDS
from hilbridge.machine.cartridge import Cartridge, load_cartridge
from hilbridge.machine.console import Console
from hilbridge.sim.capture import CaptureStream
from hilbridge.sim.deviations import DeviantConsoleFactory, Deviation

ALL_KINDS = ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1")


@cache
def fixture_cart(name: str) -> Cartridge:
    spec = SPECS[name]
    return load_cartridge(cart_image(name), None if spec.slot == "o2_rom" else spec.slot, name=name)


def stream_events(stream: CaptureStream, frames: int) -> Iterator[tuple[int, bytes]]:
    """The adapter event frames of `frames` video frames of a simulated console."""
    for _ in range(frames):
        yield from stream.next_events()


def stream_items(stream: CaptureStream, frames: int) -> Iterator[CaptureItem]:
    """The items of `frames` video frames of a simulated console, decoded as an adapter source does."""
    return expanded(event_batches(stream_events(stream, frames)))


class SimulatedCapture(EventFrameSource):
    """A `CaptureSource` over the simulated console, deviating as `deviation` says (or not)."""

    def __init__(
        self,
        cart: Cartridge,
        *,
        frames: int,
        region: str = "ntsc",
        kinds: tuple[str, ...] = ALL_KINDS,
        deviation: Deviation | None = None,
    ) -> None:
        factory = DeviantConsoleFactory(deviation) if deviation else Console
        what = sum(1 << CAPTURE_KINDS[kind] for kind in kinds)
        self.stream = CaptureStream(cart, what, region, console=factory)
        self.frames = frames
        self.deviation = deviation
        header = CaptureHeader(
            source="sim", mapper=cart.mapper, region=region, kinds=kinds, ends_on_frame=True
        )
        super().__init__(header, stream_events(self.stream, frames))


@dataclass(frozen=True)
class RawDifference:
    cycle: int  # the first cycle at which the two streams differ
    frame_syncs: int  # FrameSync items of the plain stream before it
    irq_entries: int  # fetches of 0402h before it


def first_raw_difference(
    cart: Cartridge, deviation: Deviation, frames: int, region: str
) -> RawDifference | None:
    """Where the deviating console first differs from a plain one, found by comparing the two raw
    item streams in order (no frames, no windows, no tolerance)."""
    plain = stream_items(CaptureStream(cart, 0xF, region), frames)
    deviant = stream_items(CaptureStream(cart, 0xF, region, console=DeviantConsoleFactory(deviation)), frames)
    syncs = entries = 0
    for mine, theirs in zip(plain, deviant, strict=False):
        if mine != theirs:
            return RawDifference(min(mine.cycle, theirs.cycle), syncs, entries)
        syncs += isinstance(mine, FrameSync)
        entries += isinstance(mine, CaptureRecord) and mine.kind == "FETCH" and mine.address == 0x402
    return None
