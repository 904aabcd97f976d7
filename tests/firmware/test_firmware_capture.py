"""Captures of the emulated firmware equal the reference emulator's bus activity: the harness plays
the console from the emulator's own slot accesses (`write_bus_trace`), the firmware's sniff engine
and the protocol core stream them back over USB CDC, through a link that carries what a real
full-speed one does (19 bulk IN packets of 64 bytes per 1 ms frame, harness --usb-frame-packets)."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
from cart_fixtures import FIXTURES, image
from conftest import write_bus_trace
from firmware_loop import EMULATED_LINK, RunningFirmware, cart_table, firmware_chip

from hilbridge.link.adapter import Adapter, capture_records
from hilbridge.link.capture_codec import encode_chunks, rows_of
from hilbridge.link.protocol import CAPTURE_KINDS, MESSAGES, encode_frame
from hilbridge.link.transport import SerialTransport
from hilbridge.machine.cartridge import CART_P1_MASK
from hilbridge.oracle.carts import load_manifest
from hilbridge.sim.demo import DEMO_MAPPER, demo_image

pytestmark = pytest.mark.slow
# The console at the NTSC 8048's own pace: a capture equal to the emulator needs every record, and the
# firmware keeps up with it (benchmarks/firmware_capture_profile.py prints by how much).
SLOWDOWN = 1
FRAMES = 2
SETTLE = 0.5  # seconds without a chunk after the console's trace has been played: stop the capture
QUIET = 3.0  # seconds without a chunk after the stop: the adapter has nothing more to send
RESET, VSYNC_HOOK = 0x400, 0x406
# The demo cart and two fixture carts: the one with the most records per access (sound: as many as
# the demo) and a latch mapper's (bank_rally: its bank writes and P1 switching). The fixture carts
# do not go through the BIOS's VSYNC hook: no FRAME_SYNC.
CARTS = ("demo", "sound", "bank_rally")
LINK_PACKETS = 19  # bulk IN packets per 1 ms frame a full-speed host takes at most
V3_RECORD = struct.Struct("<IBHBB")  # protocol version 3's capture record
V3_CHUNK_RECORDS = 113  # the firmware's chunks in version 3 (1,021-byte payloads, as version 4's)
CHUNK_WORDS = 253  # version 4's (CORE_CHUNK_WORDS of firmware/src/core/adapter_core.h)
# Long enough that the capture buffers (16 chunks of about 1 KB) cannot hide a link that is too slow:
# the demo's stream fills them in about 4 frames on the link a 9-byte stream would need.
LONG_FRAMES = 8


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


def capture(running: RunningFirmware, timeout: float = 300.0) -> tuple[list, list, dict]:
    """Capture until the harness has played the console's trace and the chunks have settled, stop,
    then take the chunks the adapter still sends (CAPTURE_STOP's count says how many)."""
    with Adapter(SerialTransport(running.url), **EMULATED_LINK) as adapter:
        adapter.capture_start(("FETCH", "MOVX_WRITE"))
        events: list = []
        started = last = time.monotonic()
        played = False
        while time.monotonic() - started < timeout:
            arrived = adapter.capture_events(0.2)
            if arrived:
                last = time.monotonic()
            events += arrived
            played = played or any(event["event"] == "console-done" for event in running.printed())
            if played and time.monotonic() - last >= SETTLE:
                break
        totals = adapter.capture_stop()
        last = time.monotonic()
        while chunk_count(events) < totals["chunks"] and time.monotonic() - last < QUIET:
            arrived = adapter.capture_events(0.2)
            if arrived:
                last = time.monotonic()
            events += arrived
    chunks = [values for name, values in events if name == "CAPTURE_CHUNK"]
    records = [r for chunk in chunks for r in capture_records(chunk)]
    return records, events, totals


def chunk_count(events: list) -> int:
    return sum(name == "CAPTURE_CHUNK" for name, _ in events)


def capture_through_link(
    tmp_path, cart: str, frames: int, packets: int
) -> tuple[Path, list, list, dict, dict]:
    """The cart's capture over `frames` frames through a link of `packets` bulk IN packets per frame:
    the trace, records, events, CAPTURE_STOP totals and the harness's bulk IN counts."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    cart_image, mapper = cart_and_mapper(cart)
    trace_path = write_bus_trace(cart_image, mapper, tmp_path / "cart.trace", frames=frames)
    table = cart_table(cart_image, mapper, tmp_path)
    arguments = (
        "--cart-table",
        str(table),
        "--console",
        str(trace_path),
        "--console-slowdown",
        str(SLOWDOWN),
    )
    running = firmware_chip(*arguments, "--usb-frame-packets", str(packets))
    records, events, totals = capture(running)
    bulk_in = running.bulk_in()
    assert bulk_in["framePackets"] == packets
    return trace_path, records, events, totals, bulk_in


def version_4_wire_bytes(records: list) -> int:
    """The records in full CAPTURE_CHUNK frames of 253 words (the firmware's when the link is the
    bottleneck; an idle link gets shorter chunks, sent as soon as there is room)."""
    chunk = MESSAGES["CAPTURE_CHUNK"]
    rows = rows_of([(r.cycle, CAPTURE_KINDS[r.kind], r.address, r.value, r.p1) for r in records])
    return sum(
        len(encode_frame(chunk.id, 0, bytes(4) + cycle.to_bytes(4, "little") + bytes((p1,)) + words))
        for cycle, p1, words in encode_chunks(rows, 0, CART_P1_MASK, CHUNK_WORDS)
    )


def wire_bytes(events: list) -> int:
    """The CAPTURE_CHUNK frames' bytes on the link (COBS, CRC and delimiter included)."""
    chunk = MESSAGES["CAPTURE_CHUNK"]
    return sum(
        len(encode_frame(chunk.id, 0, chunk.response_layout.pack(values)))
        for name, values in events
        if name == "CAPTURE_CHUNK"
    )


def version_3_wire_bytes(records: list) -> int:
    """The same records as protocol version 3 sent them: 9-byte records, 113 to a chunk."""
    chunk = MESSAGES["CAPTURE_CHUNK"].id
    packed = [V3_RECORD.pack(r.cycle, CAPTURE_KINDS[r.kind], r.address, r.value, r.p1) for r in records]
    return sum(
        len(encode_frame(chunk, 0, bytes(4) + b"".join(packed[at : at + V3_CHUNK_RECORDS])))
        for at in range(0, len(packed), V3_CHUNK_RECORDS)
    )


@pytest.mark.parametrize("cart", CARTS)
def test_capture_equals_the_reference_emulators_bus_activity(tmp_path, cart):
    trace_path, records, events, totals, bulk_in = capture_through_link(tmp_path, cart, FRAMES, LINK_PACKETS)
    assert bulk_in["packets"] > 0
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


def test_the_word_stream_fits_a_full_speed_link_and_a_nine_byte_stream_would_not(tmp_path):
    """The demo cart at the console's full rate for LONG_FRAMES frames: through a link of 19 bulk IN
    packets per frame nothing is dropped. Version 3's 9-byte records of the same accesses are about
    2.2 times the bytes of the words (both in full chunks): through 19 packets they would load the
    link as the words load a link of 19 / 2.2 packets, and through that link the firmware drops
    records (and counts them)."""
    trace_path, records, events, totals, bulk_in = capture_through_link(
        tmp_path / "fits", "demo", LONG_FRAMES, LINK_PACKETS
    )
    assert totals["dropped"] == 0
    assert [(r.kind, r.address, r.value) for r in records] == expected_records(trace_path.read_bytes())
    assert bulk_in["packets"] * 64 >= wire_bytes(events)  # every chunk went through the limited link
    equivalent = int(LINK_PACKETS * version_4_wire_bytes(records) / version_3_wire_bytes(records))
    assert 0 < equivalent < LINK_PACKETS
    _, slow_records, _, slow_totals, slow_bulk_in = capture_through_link(
        tmp_path / "v3", "demo", LONG_FRAMES, equivalent
    )
    assert slow_totals["dropped"] > 0
    assert slow_bulk_in["mostWaiting"] >= 1 and len(slow_records) < len(records)
