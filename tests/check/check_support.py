"""Shared by the check's tests: the fixture carts, and capture sources straight from the simulated
console (the same CaptureStream the simulated adapter runs, without the link in between)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import chain

import numpy as np
from fixture_runs import SPECS, cart_image

from hilbridge.capture.sources import EventFrameSource, event_batches
from hilbridge.capture.stream import CaptureHeader, FrameSync, RecordBatch, expanded
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.protocol import CAPTURE_KINDS
from hilbridge.machine.cartridge import Cartridge, load_cartridge
from hilbridge.machine.console import Console
from hilbridge.sim.capture import CaptureStream
from hilbridge.sim.deviations import DeviantConsoleFactory, Deviation

ALL_KINDS = ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1")
ALL_KINDS_MASK = sum(1 << CAPTURE_KINDS[kind] for kind in ALL_KINDS)
FETCH_KIND = CAPTURE_KINDS["FETCH"]


@cache
def fixture_cart(name: str) -> Cartridge:
    spec = SPECS[name]
    return load_cartridge(cart_image(name), None if spec.slot == "o2_rom" else spec.slot, name=name)


class MadeOnce:
    """A simulated console's event frames, run on demand and kept, so that several readers (the
    check, and the raw comparison beside it) see one run instead of making their own."""

    def __init__(self, stream: CaptureStream, frames: int) -> None:
        self.stream = stream
        self.frames = frames
        self.made: list[list[tuple[int, bytes]]] = []

    def events(self, frames: int | None = None) -> Iterator[tuple[int, bytes]]:
        """The event frames of the first `frames` video frames (None: all `self.frames`)."""
        for frame in range(self.frames if frames is None else frames):
            if frame == len(self.made):
                self.made.append(self.stream.next_events())
            yield from self.made[frame]


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
        self.cart = cart
        self.stream = CaptureStream(cart, what, region, console=factory)
        self.frames = frames
        self.deviation = deviation
        header = CaptureHeader(
            source="sim", mapper=cart.mapper, region=region, kinds=kinds, ends_on_frame=True
        )
        self.made = MadeOnce(self.stream, frames)
        super().__init__(header, self.made.events())


@dataclass(frozen=True)
class RawDifference:
    cycle: int  # the first cycle at which the two streams differ
    frame_syncs: int  # FrameSync items of the plain stream before it
    irq_entries: int  # fetches of 0402h before it


@cache
def plain_run(cart: Cartridge, region: str) -> MadeOnce:
    """A plain console with every kind captured, the same for each deviation of a cart and region:
    its frames are made as a comparison first reads them and kept, so it runs only as far as the
    furthest comparison read (a deviating console is compared up to where its check stopped, often
    well short of its frame limit)."""
    return MadeOnce(CaptureStream(cart, ALL_KINDS_MASK, region), 0)


def first_raw_difference(source: SimulatedCapture, frames: int | None = None) -> RawDifference | None:
    """Where a deviating simulated console first differs from a plain one in its first `frames`
    video frames (None: all it makes), found by comparing the two raw item streams in order (no
    frames, no windows, no tolerance).

    Event frames that are equal byte for byte hold equal items, so only their FrameSyncs and 0402h
    fetches are counted (in bulk); items are compared one by one from the first differing frame on.
    """
    assert source.stream.what == ALL_KINDS_MASK, "the raw comparison needs every kind captured"
    header = source.header
    plain = plain_run(source.cart, header.region).events(source.made.frames)  # made as far as read
    deviant = source.made.events(frames)
    syncs = entries = 0
    for mine, theirs in zip(plain, deviant, strict=False):
        if mine != theirs:
            plain, deviant = chain([mine], plain), chain([theirs], deviant)
            break
        for item in event_batches([mine]):
            if type(item) is RecordBatch:
                rows = item.rows
                entries += int(np.count_nonzero((rows["kind"] == FETCH_KIND) & (rows["address"] == 0x402)))
            else:
                syncs += isinstance(item, FrameSync)
    else:
        return None
    for mine, theirs in zip(expanded(event_batches(plain)), expanded(event_batches(deviant)), strict=False):
        if mine != theirs:
            return RawDifference(min(mine.cycle, theirs.cycle), syncs, entries)
        syncs += isinstance(mine, FrameSync)
        entries += isinstance(mine, CaptureRecord) and mine.kind == "FETCH" and mine.address == 0x402
    return None


def assert_same_frames(ours: list[np.ndarray], reference: list[np.ndarray]) -> None:
    """Each frame's event rows equal to the reference's, compared as arrays (as tuples, a run's
    hundreds of thousands of events cost more to make than the emulator to run); a difference is
    named by its frame and first differing event."""
    assert len(ours) == len(reference), (len(ours), len(reference))
    for number, (mine, theirs) in enumerate(zip(ours, reference, strict=True)):
        if mine.shape == theirs.shape and np.array_equal(mine, theirs):
            continue
        common = min(len(mine), len(theirs))
        differs = np.flatnonzero((mine[:common] != theirs[:common]).any(axis=1))
        at = int(differs[0]) if differs.size else common
        raise AssertionError(
            f"frame {number}, event {at} of {len(mine)} and {len(theirs)}: "
            f"{mine[at : at + 1].tolist()} != {theirs[at : at + 1].tolist()}"
        )
