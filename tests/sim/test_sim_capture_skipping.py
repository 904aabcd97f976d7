"""The simulated adapter's bus capture runs whole blocks and keeps idle skipping on (`cpu.trace_blocks`,
`skip_traced`, the fetches merged by cycle): its records must be exactly those of a console stepping
every instruction, on every fixture cart, NTSC and PAL."""

from __future__ import annotations

from pathlib import Path

import pytest

from hilbridge.link.protocol import CAPTURE_KINDS
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.oracle.carts import build_cart, load_manifest
from hilbridge.sim.capture import CaptureStream

CARTS = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
SPECS = [*load_manifest(CARTS), *load_manifest(CARTS / "wait_loops")]
EVERY_KIND = sum(1 << bit for bit in CAPTURE_KINDS.values())


def captured(spec, region: str, frames: int, skipping: bool) -> list:
    cart = load_cartridge(build_cart(spec), None if spec.slot == "o2_rom" else spec.slot, name=spec.name)
    stream = CaptureStream(cart, EVERY_KIND, region=region)
    stream.console.cpu.skip_idle = skipping
    stream.console.cpu.trace_blocks = skipping  # the reference steps every instruction
    return [event for _ in range(frames) for event in stream.next_events()]


@pytest.mark.slow
@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize("spec", SPECS, ids=[spec.name for spec in SPECS])
def test_skipping_idle_loops_while_capturing_gives_the_records_of_stepping(spec, region: str) -> None:
    assert captured(spec, region, 8, skipping=True) == captured(spec, region, 8, skipping=False)


def test_the_capture_skips_idle_loops() -> None:
    """The comparison above is not trivial: capturing, the CPU does skip a waiting cart's loop."""
    spec = next(spec for spec in SPECS if spec.name == "wait_vsync")
    cart = load_cartridge(build_cart(spec), None if spec.slot == "o2_rom" else spec.slot, name=spec.name)
    stream = CaptureStream(cart, EVERY_KIND)
    for _ in range(4):
        stream.next_events()
    assert -1 in stream.console.cpu.anchor_failures.values()  # -1: an anchor that has skipped
