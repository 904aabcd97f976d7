"""Frame-by-frame check speed against the console's real time, and its memory over long runs.

Speed: for every fixture cart, the simulated console's capture stream (the adapter's event frames:
CAPTURE_CHUNK payloads, RESET_DETECTED, FRAME_SYNC) is recorded first; then the check is timed on
it: decoding the chunks into records, running the emulator, cutting, comparing. The ratio printed
is check frames/s over the console's frames/s (59.83 NTSC): at least 2 keeps up with a live console
with room to spare. Three capture contents are measured: `writes` (MOVX writes and P1), `movx` (and
MOVX reads, which also lets the check draw the console's picture) and `full` (also every cartridge
fetch: the branch trace; the emulator then reports every fetch, a compiled block or skipped idle
loop at a time).

Memory: the peak resident memory of a check over N frames against one over 10 N, each in a process
of its own, streamed live from the simulated console (nothing recorded): constant memory means a
ratio near 1 (`--long`: 3,600 against 36,000 frames, an NTSC console's 10 minutes).

Offline (`--offline`): the same, but the capture is written to a .hbcap file first and the check
reads it back (`hilbridge check CART --capture FILE`, what a user runs after recording a console).

    python benchmarks/check_speed.py [--frames 300] [--repeats 3] [--carts cpu_alu,sound] [--offline]
        [--memory] [--long]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from hilbridge.capture.file import write_capture
from hilbridge.capture.sources import EventFrameSource, open_capture
from hilbridge.capture.stream import CaptureHeader, CaptureSource
from hilbridge.check import check
from hilbridge.check.emulator import EmulatorCapture, EmulatorSide
from hilbridge.link.protocol import CAPTURE_KINDS
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
SLACK_FRAMES = 24  # the check looks ahead a little (marker probe, frame cut)


def stream_source(
    cart: Cartridge, kinds: tuple[str, ...], events: Iterable[tuple[int, bytes]]
) -> EventFrameSource:
    """The check's source over adapter event frames, decoded as the adapter source does live."""
    return EventFrameSource(CaptureHeader(source="sim", mapper=cart.mapper, kinds=kinds), events)


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


def speed(frames: int, names: str, contents: list[str], repeats: int, offline: bool = False) -> None:
    """Median check rates over `repeats` runs, by the wall clock and by the process's CPU time (the
    machine may be shared: the CPU-time rate is what the check would do with a core to itself);
    `offline`: the check reads the capture back from a .hbcap file."""
    real = float(REGIONS["ntsc"].frame_rate_hz)
    source = "a capture file" if offline else "the recorded adapter stream"
    print(
        f"check speed over {frames} frames from {source}, NTSC console: {real:.2f} frames/s"
        " (target: ratio >= 2)"
    )
    print(
        f"median of {repeats} runs; load average at the start: {os.getloadavg()[0]:.2f}, "
        f"{os.cpu_count()} CPUs"
    )
    print(f"{'cart':18} {'content':7} {'wall f/s':>9} {'ratio':>6} {'cpu f/s':>8} {'ratio':>6}  verdict")
    short = []  # (cart, content, CPU-time ratio) below the target
    for name, cart in carts(names):
        for content in contents:
            kinds = CONTENTS[content]
            events = recorded_events(cart, kinds, frames)
            folder = tempfile.TemporaryDirectory()
            path = Path(folder.name) / f"{name}.hbcap"
            if offline:
                source_items = stream_source(cart, kinds, events)
                write_capture(path, source_items.header, source_items.items())
            walls, cpus = [], []
            for _ in range(repeats):
                wall, cpu = time.perf_counter(), time.process_time()
                live = open_capture(str(path), cart) if offline else stream_source(cart, kinds, events)
                result = check(cart, live, frames=frames)
                walls.append(frames / (time.perf_counter() - wall))
                cpus.append(frames / (time.process_time() - cpu))
            rate, cpu_rate = statistics.median(walls), statistics.median(cpus)
            print(
                f"{name:18} {content:7} {rate:9.1f} {rate / real:6.2f} {cpu_rate:8.1f} {cpu_rate / real:6.2f}"
                f"  {result.verdict}"
            )
            folder.cleanup()
            if cpu_rate / real < 2:
                short.append(f"{name} {content} {cpu_rate / real:.2f}")
    print(f"below 2x by CPU time: {', '.join(short) if short else 'none'}")


def peak_rss(frames: int, name: str, source: str) -> tuple[int, str]:
    """Peak resident memory (bytes) of a check of `frames` frames streamed live from `source`, run
    in a fresh process so that its peak is its own."""
    command = [sys.executable, __file__, "--memory-run", str(frames), "--carts", name, "--source", source]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout.split()
    return int(output[0]), output[1]


def memory_run(frames: int, names: str, source: str) -> None:
    """One check streamed live: from the simulated console's adapter event frames (`sim`), or from
    the emulator as a capture source (`emulator`: no fetch tracing, so long runs are affordable)."""
    cart = carts(names or "cpu_alu")[0][1]
    kinds = CONTENTS["movx"]
    if source == "sim":
        live: CaptureSource = stream_source(cart, kinds, live_events(cart, kinds))
    else:
        side = EmulatorSide(
            cart, kinds=kinds, pictures=False, p1_mask=0xFF, copies=True
        )  # as "emulator" sources report
        live = EmulatorCapture(side, frames + SLACK_FRAMES)
    result = check(cart, live, frames=frames)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, result.verdict)


def memory(frames: int, names: str, source: str) -> None:
    name = (names or "cpu_alu").split(",")[0]
    peaks = []
    print(f"memory: {name}, MOVX content, streamed live from {source}")
    for count in (frames, 10 * frames):
        started = time.perf_counter()
        peak, verdict = peak_rss(count, name, source)
        peaks.append(peak)
        print(
            f"{name}: {count} frames ({verdict}, {time.perf_counter() - started:.0f} s): "
            f"peak RSS {peak / 1e6:.1f} MB"
        )
    print(f"peak ratio {10 * frames} / {frames} frames: {peaks[1] / peaks[0]:.3f} (target: within 1.10)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300, help="frames per speed run")
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs per cart and content (the median is shown)"
    )
    parser.add_argument("--carts", default="", help="comma-separated cart names (default: all)")
    parser.add_argument("--contents", default=",".join(CONTENTS), help="comma-separated: writes, movx, full")
    parser.add_argument("--offline", action="store_true", help="check from a .hbcap file written first")
    parser.add_argument("--memory", action="store_true", help="also measure peak memory (360 vs 3,600)")
    parser.add_argument("--long", action="store_true", help="memory over 3,600 vs 36,000 frames")
    parser.add_argument("--memory-only", action="store_true", help="skip the speed runs")
    parser.add_argument(
        "--source", choices=("sim", "emulator"), default="sim", help="the memory runs' source"
    )
    parser.add_argument("--memory-run", type=int, help=argparse.SUPPRESS)  # one memory run (a child process)
    options = parser.parse_args()
    if options.memory_run:
        memory_run(options.memory_run, options.carts, options.source)
        return
    if not options.memory_only:
        speed(options.frames, options.carts, options.contents.split(","), options.repeats, options.offline)
    if options.memory or options.long or options.memory_only:
        memory(3600 if options.long else 360, options.carts, options.source)


if __name__ == "__main__":
    main()
