"""Where the emulated firmware's CPU time goes during a capture, and the capture rate it sustains
against the console's own.

The harness (`firmware/harness/harness.mjs --pc-profile`) counts the RP2040's CPU cycles per program
counter while it plays the reference emulator's bus accesses of the demo cartridge (or `--cart`, one
of fixtures/carts) for `--frames` frames on the GPIOs, `--slowdown` times slower than an NTSC console;
this script captures FETCH and MOVX_WRITE over emulated USB CDC, maps the PCs to the ELF's functions
(arm-none-eabi-nm) and prints the cycles per slot access of each function next to the budget the
console leaves: 349.2 CPU cycles (125 MHz) per NTSC machine cycle, times the slowdown; rp2040js
counts nominal Cortex-M0+ cycles, with no flash wait states. The main loop polls without sleeping, so
the cycles fill the budget whatever the load: what matters is the decode and record path
(sniff_decoder_feed_events, core_capture_sink, frame_writer_put_word: once per access or record) and
the sending (usb_write). The harness's USB host takes at most 19 bulk IN packets of 64 bytes per 1 ms
frame, as a full-speed host (--usb-frame-packets); the script prints the stream's bytes per second of
console time against that capacity (benchmarks/capture_stream_rate.py gives the same figure for every
fixture cart, from the firmware's rules without the harness).

Then (`--search N`, 0 to skip) it captures the console at NTSC pace with the CPU made slower (harness
--cpu-slowdown K: each instruction takes K times its cycles, PIO and the console keep theirs), doubling
K and then halving the step, N runs in all, to find the slowest CPU that still drops nothing: the
firmware's CPU sustains K times the console's record rate (every MOVX write plus the non-sequential
fetches, per second of NTSC console time), which it prints in records/s against the console's own.
The capture buffers (16 chunks of 253 record words, a 1,024-event ring) hold about a third of 2 frames'
records: use more frames for a figure less flattered by them. (A console played faster than NTSC
would not do: the sniff engine's PIO program, stepped at the CPU's clock, misses strobes at 2x.)

Run: python benchmarks/firmware_capture_profile.py [--slowdown 1] [--frames 2] [--cart NAME] [--search 4]
(needs arm-none-eabi-gcc, node, npm ci in firmware/harness)
"""

from __future__ import annotations

import argparse
import bisect
import json
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "firmware"))

from cart_fixtures import FIXTURES, image  # noqa: E402
from conftest import write_bus_trace  # noqa: E402
from firmware_loop import EMULATED_LINK, RunningFirmware, _harness_command, built_uf2, cart_table  # noqa: E402

from hilbridge.link.adapter import Adapter  # noqa: E402
from hilbridge.link.protocol import MESSAGES, encode_frame  # noqa: E402
from hilbridge.link.transport import SerialTransport  # noqa: E402
from hilbridge.oracle.carts import load_manifest  # noqa: E402
from hilbridge.sim.demo import DEMO_MAPPER, demo_image  # noqa: E402

CPU_CYCLES_PER_MACHINE_CYCLE = 125e6 * 15 / 5_369_317  # NTSC
LINK_PACKETS = 19  # the harness's default --usb-frame-packets: a full-speed host's bulk IN per 1 ms frame
LINK_BYTES_PER_SECOND = LINK_PACKETS * 64 * 1000


def functions(elf: Path) -> tuple[list[int], list[str]]:
    """Start addresses (Thumb bit cleared) and names of the ELF's functions, sorted."""
    lines = subprocess.run(["arm-none-eabi-nm", "-n", str(elf)], capture_output=True, text=True, check=True)
    starts, names = [], []
    for line in lines.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            starts.append(int(parts[0], 16) & ~1)
            names.append(parts[2])
    return starts, names


def disassembly(elf: Path, name: str) -> dict[int, str]:
    """The instructions of one function, by address, as arm-none-eabi-objdump prints them."""
    lines = subprocess.run(
        ["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", f"--disassemble={name}", str(elf)],
        capture_output=True,
        text=True,
        check=True,
    )
    out = {}
    for line in lines.stdout.splitlines():
        address, _, instruction = line.strip().partition(":\t")
        if instruction and all(c in "0123456789abcdef" for c in address):
            out[int(address, 16)] = instruction
    return out


def console_seconds(trace: bytes, slowdown: float) -> float:
    """How long the harness's console takes to play the trace: one machine cycle per access at least
    (the two fetches of a two-byte instruction share the trace's cycle), `slowdown` times NTSC's."""
    cycles = [struct.unpack_from("<I", trace, at)[0] for at in range(0, len(trace), 9)]
    slot = -1
    for cycle in cycles:
        slot = max(cycle - cycles[0], slot + 1)
    return (slot + 1) * CPU_CYCLES_PER_MACHINE_CYCLE * slowdown / 125e6


def profile(
    slowdown: float, trace: Path, table: Path, folder: Path, cpu_slowdown: float = 1.0
) -> tuple[dict, Counter, Counter]:
    output = folder / "pc.json"
    uf2 = built_uf2()
    command = _harness_command(uf2, "--cart-table", str(table), "--console", str(trace))
    command += ["--console-slowdown", str(slowdown), "--pc-profile", str(output)]
    command += ["--cpu-slowdown", str(cpu_slowdown)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        running = RunningFirmware(process)
        with Adapter(SerialTransport(running.url), **EMULATED_LINK) as adapter:
            adapter.capture_start(("FETCH", "MOVX_WRITE"))
            done = running.wait_event("console-done", timeout=1800)
            time.sleep(0.5)
            totals = adapter.capture_stop()
            chunk = MESSAGES["CAPTURE_CHUNK"]
            wire = sum(
                len(encode_frame(chunk.id, 0, chunk.response_layout.pack(values)))
                for name, values in adapter.capture_events(0.3)
                if name == "CAPTURE_CHUNK"
            )
        bulk_in = next((e for e in running.stop() if e["event"] == "usb-bulk-in"), {})
    finally:
        process.terminate()
        process.wait(timeout=30)
    starts, names = functions(uf2.with_suffix(".elf"))
    by_function: Counter = Counter()
    by_pc: Counter = Counter()
    for pc, cycles in json.loads(output.read_text()):
        name = "(asleep in WFI)" if pc < 0 else names[max(0, bisect.bisect_right(starts, pc & ~1) - 1)]
        by_function[name] += cycles
        by_pc[pc & ~1] += cycles
    counts = {"accesses": done["accesses"], "wire_bytes": wire, "bulk_in": bulk_in, **totals}
    return counts, by_function, by_pc


def slowest_cpu_without_drops(trace: Path, table: Path, folder: Path, steps: int) -> float | None:
    """The largest --cpu-slowdown at which the capture of the console at NTSC pace drops nothing, to
    within the last step (doubling from 1, then halving the step); None if even 1 drops."""
    good, bad = None, None
    factor = 1.0
    for _ in range(steps + 1):
        counts, _, _ = profile(1.0, trace, table, folder, cpu_slowdown=factor)
        dropped, offered = counts["dropped"], counts["records"] + counts["dropped"]
        print(f"  CPU {factor:.2f}x slower: {dropped} of {offered} records dropped")
        if dropped == 0:
            good = factor
        elif good is None:
            return None
        else:
            bad = factor
        factor = factor * 2 if bad is None else (good + bad) / 2
    return good


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slowdown", type=float, default=1.0)
    parser.add_argument("--frames", type=int, default=2)
    parser.add_argument("--cart", default="demo", help="demo, or a fixture cart of fixtures/carts/carts.tsv")
    parser.add_argument("--search", type=int, default=4, help="steps of the zero-drop search (0: none)")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--function", action="append", default=[], help="also list its cycles per instruction"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        if options.cart == "demo":
            cart, mapper = demo_image(), DEMO_MAPPER
        else:
            cart, mapper = (
                image(options.cart),
                {s.name: s.slot for s in load_manifest(FIXTURES)}[options.cart],
            )
        trace = write_bus_trace(cart, mapper, folder / "cart.trace", frames=options.frames)
        table = cart_table(cart, mapper, folder)
        counts, by_function, by_pc = profile(options.slowdown, trace, table, folder)
        accesses = counts["accesses"]
        budget = CPU_CYCLES_PER_MACHINE_CYCLE * options.slowdown
        total = sum(by_function.values())
        print(
            f"slowdown {options.slowdown:g}, {options.cart} cart, {options.frames} frames: {accesses} slot "
            f"accesses played, {counts['records']} records sent, {counts['dropped']} dropped; "
            f"{total / accesses:.0f} CPU cycles per access while playing, budget {budget:.0f} per machine "
            "cycle"
        )
        seconds = console_seconds(trace.read_bytes(), 1.0)
        rate = counts["wire_bytes"] / seconds
        print(
            f"stream: {counts['wire_bytes']:,} bytes of CAPTURE_CHUNK frames, {rate / 1e6:.3f} MB/s of NTSC "
            f"console time; link capacity {LINK_BYTES_PER_SECOND / 1e6:.3f} MB/s ({LINK_PACKETS} x 64 B per "
            f"1 ms frame); ratio {rate / LINK_BYTES_PER_SECOND:.2f}; harness bulk IN: {counts['bulk_in']}"
        )
        for name, cycles in by_function.most_common(options.top):
            print(f"  {name:32} {cycles / accesses:8.1f} cycles/access  {cycles / total:6.1%}")
        for name in options.function:
            print(f"{name}, cycles per access at each instruction:")
            for address, instruction in disassembly(built_uf2().with_suffix(".elf"), name).items():
                print(f"  {by_pc[address] / accesses:6.2f}  {address:08x}  {instruction}")
        if options.search:
            print("zero-drop search, the console at NTSC pace, the CPU made slower (harness --cpu-slowdown):")
            records = counts["records"] + counts["dropped"]
            own = records / console_seconds(trace.read_bytes(), 1.0)
            factor = slowest_cpu_without_drops(trace, table, folder, options.search)
            if factor is None:
                print(f"the console's own rate, {own:,.0f} records/s, is not sustained: records are dropped")
            else:
                print(
                    f"sustained with zero drops: {own * factor:,.0f} records/s of console time (a CPU "
                    f"{factor:.2f}x slower still keeps up) against the console's own {own:,.0f} records/s: "
                    f"ratio {factor:.2f}"
                )


if __name__ == "__main__":
    main()
