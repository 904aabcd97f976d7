"""Frame-by-frame check speed against the console's real time, and its memory over long runs.

Speed: for every fixture cart, the simulated console's capture stream (the adapter's event frames:
CAPTURE_CHUNK payloads, RESET_DETECTED, FRAME_SYNC) is recorded first; then the check is timed on
it: decoding the chunks into records, running the emulator, cutting, comparing. The ratio printed
is check frames/s over the console's frames/s (59.83 NTSC): at least 2 keeps up with a live console
with room to spare. Three capture contents are measured: `writes` (MOVX writes and P1), `movx` (and
MOVX reads, which also lets the check draw the console's picture) and `full` (also every cartridge
fetch: the branch trace; the emulator then runs instruction by instruction).

Memory: the peak traced allocation (tracemalloc) of a check over N frames against one over 10 N,
streamed live from the simulated console (nothing recorded): constant memory means a ratio near 1.

    python benchmarks/check_speed.py [--frames 300] [--carts cpu_alu,sound] [--memory] [--long]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from hilbridge.capture.stream import CaptureHeader, CaptureItem, FrameSync, ResetDetected
from hilbridge.check import check
from hilbridge.link.adapter import capture_records
from hilbridge.link.protocol import CAPTURE_KINDS, MESSAGES
from hilbridge.machine.cartridge import Cartridge, load_cartridge
from hilbridge.machine.timing import REGIONS
from hilbridge.oracle.carts import build_cart, load_manifest
from hilbridge.sim.capture import CaptureStream

CARTS = Path(__file__).resolve().parent.parent / "fixtures" / "carts"
CONTENTS = {
    "writes": ("MOVX_WRITE", "P1"),
    "movx": ("MOVX_WRITE", "MOVX_READ", "P1"),
    "full": ("FETCH", "MOVX_WRITE", "MOVX_READ", "P1"),
}
CHUNK, RESET, SYNC = (MESSAGES[name].id for name in ("CAPTURE_CHUNK", "RESET_DETECTED", "FRAME_SYNC"))
SLACK_FRAMES = 24  # the check looks ahead a little (marker probe, frame cut)


def decode(events: Iterator[tuple[int, bytes]]) -> Iterator[CaptureItem]:
    """Adapter event frames to capture items, as the adapter source does live."""
    for frame_type, payload in events:
        if frame_type == CHUNK:
            yield from capture_records(payload[4:])
        elif frame_type == RESET:
            yield ResetDetected(int.from_bytes(payload[:4], "little"))
        elif frame_type == SYNC:
            yield FrameSync(int.from_bytes(payload[:4], "little"), int.from_bytes(payload[4:8], "little"))


class StreamSource:
    """A capture source over adapter event frames (recorded, or produced live by the simulator)."""

    def __init__(self, cart: Cartridge, kinds: tuple[str, ...], events: Iterator[tuple[int, bytes]]) -> None:
        self.header = CaptureHeader(source="sim", cart_sha1="", mapper=cart.mapper, kinds=kinds)
        self.events = events

    def items(self) -> Iterator[CaptureItem]:
        return decode(self.events)

    def close(self) -> None:
        pass


def live_events(cart: Cartridge, kinds: tuple[str, ...]) -> Iterator[tuple[int, bytes]]:
    stream = CaptureStream(cart, sum(1 << CAPTURE_KINDS[kind] for kind in kinds))
    while True:
        yield from stream.next_events()


def recorded_events(cart: Cartridge, kinds: tuple[str, ...], frames: int) -> list[tuple[int, bytes]]:
    stream = CaptureStream(cart, sum(1 << CAPTURE_KINDS[kind] for kind in kinds))
    events: list[tuple[int, bytes]] = []
    for _ in range(frames + SLACK_FRAMES):
        events += stream.next_events()
    return events


def carts(names: str) -> list[tuple[str, Cartridge]]:
    chosen = []
    for spec in load_manifest(CARTS):
        if names and spec.name not in names.split(","):
            continue
        mapper = None if spec.slot == "o2_rom" else spec.slot
        chosen.append((spec.name, load_cartridge(build_cart(spec), mapper, name=spec.name)))
    return chosen


def speed(frames: int, names: str, contents: list[str]) -> None:
    real = float(REGIONS["ntsc"].frame_rate_hz)
    print(f"check speed over {frames} frames, NTSC console: {real:.2f} frames/s (target: ratio >= 2)")
    print(f"{'cart':18} {'content':7} {'frames/s':>9} {'ratio':>6}  verdict")
    for name, cart in carts(names):
        for content in contents:
            kinds = CONTENTS[content]
            events = recorded_events(cart, kinds, frames)
            started = time.perf_counter()
            result = check(cart, StreamSource(cart, kinds, iter(events)), frames=frames)
            rate = frames / (time.perf_counter() - started)
            print(f"{name:18} {content:7} {rate:9.1f} {rate / real:6.2f}  {result.verdict}")


def memory(frames: int, names: str) -> None:
    name, cart = carts(names or "cpu_alu")[0]
    kinds = CONTENTS["movx"]
    peaks = []
    for count in (frames, 10 * frames):
        tracemalloc.start()
        result = check(cart, StreamSource(cart, kinds, live_events(cart, kinds)), frames=count)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        print(f"{name}: {count} frames ({result.verdict}): peak {peaks[-1] / 1e6:.2f} MB")
    print(f"peak ratio {10 * frames} / {frames} frames: {peaks[1] / peaks[0]:.3f} (target: within 1.10)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300, help="frames per speed run")
    parser.add_argument("--carts", default="", help="comma-separated cart names (default: all)")
    parser.add_argument("--contents", default=",".join(CONTENTS), help="comma-separated: writes, movx, full")
    parser.add_argument("--memory", action="store_true", help="also measure peak memory (360 vs 3,600)")
    parser.add_argument("--long", action="store_true", help="memory over 3,600 vs 36,000 frames")
    options = parser.parse_args()
    speed(options.frames, options.carts, options.contents.split(","))
    if options.memory or options.long:
        memory(3600 if options.long else 360, options.carts)


if __name__ == "__main__":
    main()
