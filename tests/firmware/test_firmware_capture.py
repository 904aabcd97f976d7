"""Captures of the emulated firmware equal the reference emulator's bus activity: the harness plays
the console from the emulator's own slot accesses (`write_bus_trace`), the firmware's sniff engine
and the protocol core stream them back over USB CDC."""

from __future__ import annotations

import struct
import time

import pytest
from cart_fixtures import FIXTURES, image
from conftest import write_bus_trace
from firmware_loop import EMULATED_LINK, built_uf2, cart_table, served_firmware

from hilbridge.link.adapter import Adapter, capture_records
from hilbridge.link.protocol import CAPTURE_KINDS
from hilbridge.link.transport import SerialTransport
from hilbridge.oracle.carts import load_manifest
from hilbridge.sim.demo import DEMO_MAPPER, demo_image

pytestmark = pytest.mark.slow
# The console at the NTSC 8048's own pace: a capture equal to the emulator needs every record, and the
# firmware keeps up with it (benchmarks/firmware_capture_profile.py prints by how much).
SLOWDOWN = 1
FRAMES = 2
QUIET = 3.0  # seconds without a chunk: the console's trace has been played
RESET, VSYNC_HOOK = 0x400, 0x406
# The demo cart and two fixture carts: the one with the most records per access (sound: as many as
# the demo) and a latch mapper's (bank_rally: its bank writes and P1 switching). The fixture carts
# do not go through the BIOS's VSYNC hook: no FRAME_SYNC.
CARTS = ("demo", "sound", "bank_rally")


def cart_and_mapper(name: str) -> tuple[bytes, str]:
    if name == "demo":
        return demo_image(), DEMO_MAPPER
    return image(name), {spec.name: spec.slot for spec in load_manifest(FIXTURES)}[name]


def expected_records(trace: bytes) -> list[tuple[str, int, int]]:
    """What docs/protocol.md's capture of FETCH and MOVX_WRITE holds for these accesses: every write,
    and a fetch only where the program did not just step to the next address (within its 2 KB half,
    as the 8048's program counter increments), plus every fetch of 0400h and 0406h."""
    names = {value: name for name, value in CAPTURE_KINDS.items()}
    out, next_fetch = [], None
    for offset in range(0, len(trace), 9):
        _, kind, address, value, _ = struct.unpack_from("<IBHBB", trace, offset)
        name = names[kind]
        if name == "FETCH":
            sequential = address == next_fetch
            next_fetch = (address & 0x800) | ((address + 1) & 0x7FF)
            if sequential and address not in (RESET, VSYNC_HOOK):
                continue
        elif name != "MOVX_WRITE":
            continue
        out.append((name, address, value))
    return out


def capture(url: str, timeout: float = 240.0) -> tuple[list, list, dict]:
    with Adapter(SerialTransport(url), **EMULATED_LINK) as adapter:
        adapter.capture_start(("FETCH", "MOVX_WRITE"))
        events: list = []
        started = last = time.monotonic()
        while time.monotonic() - last < QUIET and time.monotonic() - started < timeout:
            arrived = adapter.capture_events(0.2)
            if arrived:
                last = time.monotonic()
            events += arrived
        totals = adapter.capture_stop()
        events += adapter.capture_events(0.3)
    chunks = [values for name, values in events if name == "CAPTURE_CHUNK"]
    records = [r for chunk in chunks for r in capture_records(chunk)]
    return records, events, totals


@pytest.mark.parametrize("cart", CARTS)
def test_capture_equals_the_reference_emulators_bus_activity(tmp_path, cart):
    cart_image, mapper = cart_and_mapper(cart)
    trace_path = write_bus_trace(cart_image, mapper, tmp_path / "cart.trace", frames=FRAMES)
    table = cart_table(cart_image, mapper, tmp_path)
    arguments = (
        "--cart-table",
        str(table),
        "--console",
        str(trace_path),
        "--console-slowdown",
        str(SLOWDOWN),
    )
    with served_firmware(*arguments, uf2=built_uf2()) as url:
        records, events, totals = capture(url)
    expected = expected_records(trace_path.read_bytes())
    assert totals["dropped"] == 0
    assert [(r.kind, r.address, r.value) for r in records] == expected
    cycles = [r.cycle for r in records]
    assert cycles == sorted(cycles) and len(set(cycles)) == len(cycles)
    chunk_numbers = [values["chunk_seq"] for name, values in events if name == "CAPTURE_CHUNK"]
    assert chunk_numbers == list(range(len(chunk_numbers))) == list(range(totals["chunks"]))
    names = [name for name, _ in events]
    assert names.count("RESET_DETECTED") == sum(1 for e in expected if e[:2] == ("FETCH", RESET))
    frame_syncs = sum(1 for e in expected if e[:2] == ("FETCH", VSYNC_HOOK))
    assert names.count("FRAME_SYNC") == frame_syncs
    assert frame_syncs > 0 or cart != "demo"  # the demo runs the BIOS, which fetches 0406h every frame
