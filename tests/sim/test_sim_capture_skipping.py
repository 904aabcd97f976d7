"""The simulated adapter's bus capture runs whole blocks and keeps idle skipping on (`cpu.trace_blocks`,
`skip_traced`, the fetches merged by cycle): its records must be exactly those of a console stepping
every instruction, on every fixture cart, NTSC and PAL."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from hilbridge.link.protocol import CAPTURE_KINDS
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.oracle.carts import build_cart, load_manifest
from hilbridge.sim.capture import CaptureStream

CARTS = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
SPECS = [*load_manifest(CARTS), *load_manifest(CARTS / "wait_loops")]
EVERY_KIND = sum(1 << bit for bit in CAPTURE_KINDS.values())


@cache
def image_of(spec) -> bytes:
    """The spec's cartridge file, assembled once for all the captures compared."""
    return build_cart(spec)


def captured(spec, region: str, frames: int, skipping: bool, console_fetches: bool = False) -> list:
    cart = load_cartridge(image_of(spec), None if spec.slot == "o2_rom" else spec.slot, name=spec.name)
    stream = CaptureStream(cart, EVERY_KIND, region=region)
    if console_fetches:  # each fetch a BusAccess told to the listener, as any bus listener is told
        del stream.console.program_fetch
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
    cart = load_cartridge(image_of(spec), None if spec.slot == "o2_rom" else spec.slot, name=spec.name)
    stream = CaptureStream(cart, EVERY_KIND)
    for _ in range(4):
        stream.next_events()
    assert -1 in stream.console.cpu.anchor_failures.values()  # -1: an anchor that has skipped


@pytest.mark.parametrize("name", ["wait_vsync", "bank_o2rom_8k", "cpu_alu"])
def test_the_captures_own_fetch_recorder_records_what_the_bus_listener_does(name: str) -> None:
    """The stepping reference above records fetches with `CaptureStream._on_program_fetch`; it must
    give what the console's listener path (`Console.program_fetch` -> `_on_access`) gives."""
    spec = next(spec for spec in SPECS if spec.name == name)
    assert captured(spec, "ntsc", 4, skipping=False) == captured(
        spec, "ntsc", 4, skipping=False, console_fetches=True
    )


def test_the_captures_own_fetch_recorder_notes_p1_changes_and_markers_as_the_listener_does() -> None:
    """Fetches the carts above never make: P1's slot bits changed just before a fetch, markers, the
    internal ROM; the same calls on both paths give the same records."""
    from hilbridge.machine.console import Console

    spec = next(spec for spec in SPECS if spec.name == "cpu_alu")
    cart = load_cartridge(image_of(spec), None if spec.slot == "o2_rom" else spec.slot, name=spec.name)
    streams = [CaptureStream(cart, EVERY_KIND) for _ in range(2)]
    calls = [(0xFF, 0x400, 10), (0xFC, 0x401, 11), (0xEC, 0x406, 12), (0xEC, 0x3FF, 13), (0x13, 0x7FF, 14)]
    for p1, address, cycle in calls:
        for stream in streams:
            stream.console.p1 = p1
        streams[0].console.program_fetch(address, cycle)
        Console.program_fetch(streams[1].console, address, cycle)
    assert streams[0]._fetches == streams[1]._fetches
    assert sum(kind == CAPTURE_KINDS["P1"] for _, kind, *_ in streams[0]._fetches) >= 2
