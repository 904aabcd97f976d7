"""Emulated frames per second of our emulator and, measured in the same run on the same cartridges,
of MAME 0.251 (`-video none -sound none -nothrottle`), and their ratio.

    python benchmarks/emu_speed.py [--frames N] [--region ntsc|pal|both] [--repeat 3] [--no-mame]
                                   [CART_NAME ...]

Cartridges: the oracle test carts (fixtures/carts), the game-like wait loops
(fixtures/carts/wait_loops) and `poll_vbl`, a minimal loop that waits for VBL by polling A1 and
updates a few VDC registers per frame. MAME's start-up time is cancelled by timing two runs of
different lengths (the short one `START_SECONDS` of emulated time), and ours is timed after running
that same first stretch, so both figures count the frames after it. By default ours runs as many
frames as MAME's long run adds (`MAME_SECONDS`): both sides are timed over seconds of wall time,
so a burst of load on this shared machine strikes both alike, not only the shorter one. When the
long run is not clearly longer than the short one (MAME too fast to tell from its start-up noise)
its speed and the ratio are "n/a", not an invented figure.

Each cart is measured in `--repeat` rounds, a run of ours then MAME's pair in each, so that a change
of the machine's load strikes both sides of a round alike: the figures printed are the medians of
ours, of MAME's and of the rounds' ratios. The targets (docs/emulator.md): ours/MAME >= 0.5 and
ours >= 10x real time (600 NTSC / 500 PAL frames/s) on every cart. The machine's load average is
printed first and last: figures taken under load are only comparable within the run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hilbridge.machine.bios import boot_bios
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.charset import charset_rom
from hilbridge.machine.console import Console
from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import Vdc
from hilbridge.toolchain.assembler import assemble_text

ROOT = Path(__file__).resolve().parent.parent
MAME_SYSTEMS = {"ntsc": "odyssey2", "pal": "videopac"}
REAL_TIME_FLOOR = 10
MAME_SECONDS = 60.0
"""Emulated seconds MAME's long run adds at least to its short one: 1-4 s of wall time at MAME's speed
on these carts, long beside the variation of its start-up time (which the median of rounds damps)."""
START_SECONDS = 1.0
"""Emulated seconds from power-on that neither figure counts: MAME's short run, whose time is
subtracted from its long one, and the frames ours runs before its clock starts (the BIOS start and
the first compiling of blocks, which MAME's short run holds too)."""

POLL_VBL = """
        cpu 8048
        org 400h
        dis i
        mov a,#0B4h
        outl p1,a
frame:  mov r0,#0A1h
wait:   movx a,@r0
        jb3 vbl
        jmp wait
vbl:    inc r6
        clr a
        mov r1,#0A0h
        movx @r1,a
        mov a,r6
        mov r1,#0A3h
        movx @r1,a
        mov r1,#00h
        movx @r1,a
        mov a,#28h
        mov r1,#0A0h
        movx @r1,a
        jmp frame
"""


def poll_vbl_cart() -> bytes:
    result = assemble_text(POLL_VBL, name="poll_vbl.asm")
    image = bytearray(2048)
    image[result.origin - 0x400 : result.origin - 0x400 + len(result.image)] = result.image
    return bytes(image)


def carts(names: list[str]) -> list[tuple[str, bytes, str | None]]:
    found: list[tuple[str, bytes, str | None]] = [("poll_vbl", poll_vbl_cart(), "o2_rom")]
    try:
        from hilbridge.oracle.carts import build_cart, load_manifest

        for folder in (ROOT / "fixtures" / "carts", ROOT / "fixtures" / "carts" / "wait_loops"):
            for spec in load_manifest(folder):
                found.append((spec.name, build_cart(spec), spec.slot))
    except (ImportError, OSError) as error:
        print(f"(oracle test carts unavailable: {error})", file=sys.stderr)
    return [cart for cart in found if not names or cart[0] in names]


def ours(image: bytes, slot: str | None, region: str, frames: int, draw: bool = True) -> float:
    """Our frames/s over `frames` frames after the first `START_SECONDS`, as MAME's is measured."""
    console = Console(load_cartridge(image, slot), region=region, vdc=Vdc(REGIONS[region], draw=draw))
    console.run_frames(round(START_SECONDS * float(REGIONS[region].frame_rate_hz)))
    started = time.perf_counter()
    console.run_frames(frames)
    return frames / (time.perf_counter() - started)


def mame_wall(mame: str, work: Path, system: str, image: bytes, seconds: float) -> float:
    roms = work / "roms"
    for folder in (system, "i8244"):
        (roms / folder).mkdir(parents=True, exist_ok=True)
    (roms / system / "o2bios.rom").write_bytes(boot_bios().image)
    (roms / "i8244" / "charset_i8244.bin").write_bytes(charset_rom())
    (work / "cart.bin").write_bytes(image)
    command = [
        mame, system, "-noreadconfig", "-rompath", str(roms), "-cart", str(work / "cart.bin"),
        "-video", "none", "-sound", "none", "-nothrottle", "-skip_gameinfo", "-nomouse",
        "-cfg_directory", str(work / "cfg"), "-nvram_directory", str(work / "nvram"),
        "-homepath", str(work), "-seconds_to_run", str(seconds),
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, cwd=work, capture_output=True, timeout=600, check=True)
    return time.perf_counter() - started


def mame_fps(mame: str, image: bytes, region: str, frames: int) -> float | None:
    """MAME's emulated frames/s, start-up cancelled: (long − short) frames / (long − short) wall
    time; None when the two runs are too close to measure."""
    system = MAME_SYSTEMS[region]
    rate = float(REGIONS[region].frame_rate_hz)
    short, long = START_SECONDS, START_SECONDS + max(frames / rate, MAME_SECONDS)
    with tempfile.TemporaryDirectory(prefix="hilbridge-bench-") as scratch:
        walls = [mame_wall(mame, Path(scratch) / str(index), system, image, seconds)
                 for index, seconds in enumerate((short, long))]  # fmt: skip
    if walls[1] - walls[0] < 0.1 * walls[0]:  # too fast to tell from start-up noise
        return None
    return (long - short) * rate / (walls[1] - walls[0])


def measure_round(
    mame: str | None, image: bytes, slot: str | None, region: str, frames: int
) -> tuple[float, float | None]:
    """One round: our frames/s, then MAME's (None without MAME, or when too fast to measure)."""
    speed = ours(image, slot, region, frames)
    return speed, (mame_fps(mame, image, region, frames) if mame else None)


def load() -> str:
    one, five, _fifteen = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="only these carts")
    parser.add_argument(
        "--frames", type=int, help="frames of ours to time (default: MAME's timed stretch, MAME_SECONDS)"
    )
    parser.add_argument("--region", choices=[*sorted(MAME_SYSTEMS), "both"], default="both")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per cart (ours and MAME's)")
    parser.add_argument("--no-mame", action="store_true", help="skip the MAME reference")
    parser.add_argument("--no-picture", action="store_true", help="also time the VDC with drawing off")
    options = parser.parse_args()
    mame = None if options.no_mame else shutil.which("mame", path="/usr/games:/usr/bin:/usr/local/bin")
    regions = sorted(MAME_SYSTEMS) if options.region == "both" else [options.region]
    print(load())
    for region in regions:
        rate = float(REGIONS[region].frame_rate_hz)
        frames = options.frames or round(MAME_SECONDS * rate)
        floor = REAL_TIME_FLOOR * rate
        print(f"{frames} frames, {region}; floor {floor:.0f} frames/s (10x real time)", end="")
        print(f"; medians of {options.repeat} rounds (ours, MAME's, and their ratio per round)")
        print(f"{'cart':16s} {'ours f/s':>9s} {'MAME f/s':>9s} {'ours/MAME':>9s}  floor", end="")
        print(f"  {'no picture':>10s}" if options.no_picture else "")
        for name, image, slot in carts(options.names):
            runs_in_mame = bool(mame) and slot != "o2_ktaa"
            rounds = [measure_round(mame if runs_in_mame else None, image, slot, region, frames)
                      for _ in range(options.repeat)]  # fmt: skip
            speed = statistics.median(run for run, _ in rounds)
            references = [reference for _, reference in rounds if reference]
            plain = ours(image, slot, region, frames, draw=False) if options.no_picture else None
            if runs_in_mame and len(references) == len(rounds):
                ratios = [run / reference for run, reference in rounds if reference]
                shown = f"{statistics.median(references):9.0f}"
                ratio = f"{statistics.median(ratios):9.3f}"
            else:
                shown = ratio = f"{'n/a' if runs_in_mame else '-':>9s}"
            verdict = "ok   " if speed >= floor else "BELOW"
            extra = f" {plain:10.0f}" if plain else ""
            print(f"{name:16s} {speed:9.0f} {shown} {ratio}  {verdict}{extra}", flush=True)
    print(load())


if __name__ == "__main__":
    main()
