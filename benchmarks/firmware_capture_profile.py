"""Where the emulated firmware's CPU time goes during a capture, against the console's own pace.

The harness (`firmware/harness/harness.mjs --pc-profile`) counts the RP2040's CPU cycles per program
counter while it plays the reference emulator's bus accesses of the demo cartridge (2 frames) on the
GPIOs, `--console-slowdown` times slower than an NTSC console; this script captures FETCH and
MOVX_WRITE over emulated USB CDC, maps the PCs to the ELF's functions (arm-none-eabi-nm) and prints
the cycles per slot access of each function next to the budget the console leaves: 349.2 CPU cycles
(125 MHz) per NTSC machine cycle, times the slowdown; rp2040js counts nominal Cortex-M0+ cycles, with
no flash wait states. The decode path (sniff_drain, sniff_decoder_feed, sniff_access,
core_capture_access, add_record) runs once per access and must fit the budget with the sending.

Run: python benchmarks/firmware_capture_profile.py [--slowdown 4]   (needs arm-none-eabi-gcc, node,
npm ci in firmware/harness)
"""

from __future__ import annotations

import argparse
import bisect
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import write_bus_trace  # noqa: E402
from firmware_loop import EMULATED_LINK, RunningFirmware, _harness_command, built_uf2, cart_table  # noqa: E402

from hilbridge.link.adapter import Adapter  # noqa: E402
from hilbridge.link.transport import SerialTransport  # noqa: E402
from hilbridge.sim.demo import DEMO_MAPPER, demo_image  # noqa: E402

CPU_CYCLES_PER_MACHINE_CYCLE = 125e6 * 15 / 5_369_317  # NTSC


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


def profile(slowdown: int, folder: Path) -> tuple[dict, Counter, Counter]:
    image = demo_image()
    trace = write_bus_trace(image, DEMO_MAPPER, folder / "demo.trace", frames=2)
    table = cart_table(image, DEMO_MAPPER, folder)
    output = folder / "pc.json"
    uf2 = built_uf2()
    command = _harness_command(uf2, "--cart-table", str(table), "--console", str(trace))
    command += ["--console-slowdown", str(slowdown), "--pc-profile", str(output)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        running = RunningFirmware(process)
        with Adapter(SerialTransport(running.url), **EMULATED_LINK) as adapter:
            adapter.capture_start(("FETCH", "MOVX_WRITE"))
            done = running.wait_event("console-done", timeout=1800)
            time.sleep(0.5)
            totals = adapter.capture_stop()
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
    return {"accesses": done["accesses"], **totals}, by_function, by_pc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slowdown", type=int, default=4)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument(
        "--function", action="append", default=[], help="also list its cycles per instruction"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        counts, by_function, by_pc = profile(options.slowdown, Path(directory))
    accesses = counts["accesses"]
    budget = CPU_CYCLES_PER_MACHINE_CYCLE * options.slowdown
    total = sum(by_function.values())
    print(
        f"slowdown {options.slowdown}: {accesses} slot accesses played, {counts['records']} records sent, "
        f"{counts['dropped']} dropped; {total / accesses:.0f} CPU cycles per access while playing, "
        f"budget {budget:.0f} per machine cycle"
    )
    for name, cycles in by_function.most_common(options.top):
        print(f"  {name:32} {cycles / accesses:8.1f} cycles/access  {cycles / total:6.1%}")
    print(
        "(the main loop polls without sleeping, so the cycles per access fill the budget whatever the load)"
    )
    for name in options.function:
        print(f"{name}, cycles per access at each instruction:")
        for address, instruction in disassembly(built_uf2().with_suffix(".elf"), name).items():
            print(f"  {by_pc[address] / accesses:6.2f}  {address:08x}  {instruction}")


if __name__ == "__main__":
    main()
