"""Emulator speed in frames per second, with and without picture output (Vdc draw=True/False).

Runs the self-contained oracle test cartridges (fixtures/carts) on the NTSC console. The reference,
measured in the same run, is MAME 0.251 on the same cartridge when it is installed (`-video none
-nothrottle`, bus trace of writes, process start included; hilbridge.oracle.mame.measure_speed);
the ratio printed is our frames/s divided by MAME's. Without MAME only frames/s are printed. The
target is 600 NTSC frames/s overall.

    python benchmarks/emu_speed.py [--frames 300] [--carts cpu_alu,video_objects,sound]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hilbridge.errors import HilbridgeError
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.timing import NTSC
from hilbridge.machine.vdc import Vdc
from hilbridge.oracle.carts import build_cart, load_manifest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "carts"


def frames_per_second(cart: bytes, slot: str | None, frames: int, draw: bool) -> float:
    console = Console(load_cartridge(cart, slot), region="ntsc", vdc=Vdc(NTSC, draw=draw))
    console.run_frames(5)  # warm-up: code generation, first pictures
    started = time.perf_counter()
    console.run_frames(frames)
    return frames / (time.perf_counter() - started)


def mame_frames_per_second(cart: bytes, slot: str | None, frames: int) -> float | None:
    try:
        from hilbridge.oracle.mame import measure_speed

        return measure_speed(cart, region="ntsc", frames=max(frames, 600), slot=slot)
    except HilbridgeError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--carts", default="cpu_alu,video_objects,video_midframe,sound")
    args = parser.parse_args()
    specs = {spec.name: spec for spec in load_manifest(FIXTURES)}
    print(f"{'cartridge':16} {'draw fps':>9} {'no-draw fps':>12} {'MAME fps':>9} {'ratio':>6}")
    for name in args.carts.split(","):
        spec = specs[name]
        cart = build_cart(spec)
        drawn = frames_per_second(cart, spec.slot, args.frames, draw=True)
        plain = frames_per_second(cart, spec.slot, args.frames, draw=False)
        mame = mame_frames_per_second(cart, spec.slot, args.frames)
        ratio = f"{drawn / mame:6.2f}" if mame else "     -"
        mame_text = f"{mame:9.0f}" if mame else "        -"
        print(f"{name:16} {drawn:9.0f} {plain:12.0f} {mame_text} {ratio}")


if __name__ == "__main__":
    main()
