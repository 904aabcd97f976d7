"""The capture stream a real adapter sends, per fixture cart, against what a USB full-speed link carries.

For each cart the reference emulator runs `--frames` frames; its slot accesses are reduced as the
firmware reduces them (docs/protocol.md §4.1: every MOVX write, a fetch only where it is not the next
PC, every 0400h/0406h fetch, P1 changes), and the stream is encoded in protocol version 3's 9-byte
records and in version 4's words, framed as the firmware frames them (chunks of about 1 KB: header,
CRC, COBS and the delimiter). It prints records per second of NTSC console time, bytes per record,
the stream's bytes per second and its ratio to the link's capacity: bulk IN moves at most 19 packets
of 64 bytes per 1 ms frame (1.216 MB/s; CDC on a real host reaches about 1 MB/s). It also times the
host's decode of the two forms (v3: one frombuffer; v4: `RecordBatch.from_wire`) over the same records.

With --firmware it also captures each cart from the emulated firmware (rp2040js, the harness's USB
host taking 19 bulk IN packets per 1 ms frame) and prints what went over the link: bytes per second of
console time (chunks are shorter than full while the link has room), its ratio to the capacity, and
the records dropped (needs arm-none-eabi-gcc, node, npm ci in firmware/harness).

Run: python benchmarks/capture_stream_rate.py [--frames 20] [--kinds FETCH,MOVX_WRITE] [--cart NAME ...]
     [--firmware]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "firmware"))

from cart_fixtures import FIXTURES, image  # noqa: E402

from hilbridge.capture.stream import FIXED_DTYPE, RecordBatch  # noqa: E402
from hilbridge.link.capture_codec import RECORD_DTYPE, WORD_SIZE, encode_chunks  # noqa: E402
from hilbridge.link.protocol import CAPTURE_KINDS  # noqa: E402
from hilbridge.machine.bus import FETCH, READ, WRITE  # noqa: E402
from hilbridge.machine.cartridge import CART_P1_MASK, load_cartridge  # noqa: E402
from hilbridge.machine.console import Console  # noqa: E402
from hilbridge.oracle.carts import load_manifest  # noqa: E402
from hilbridge.sim.demo import DEMO_MAPPER, demo_image  # noqa: E402

MACHINE_CYCLES_PER_SECOND = 5_369_317 / 15  # NTSC 8048
LINK_BYTES_PER_SECOND = 19 * 64 * 1000  # USB full-speed bulk IN: 19 packets of 64 B per 1 ms frame
CHUNK_PAYLOAD = 1021  # the firmware's chunk payload (firmware/src/core/adapter_core.h), both versions
FRAME_OVERHEAD = 2 + 4 + 1 + 4  # type, seq, CRC, delimiter, COBS code bytes (4 per ~1 KB)
KINDS = {FETCH: CAPTURE_KINDS["FETCH"], READ: CAPTURE_KINDS["MOVX_READ"], WRITE: CAPTURE_KINDS["MOVX_WRITE"]}


def carts() -> dict[str, tuple[bytes, str]]:
    out = {"demo": (demo_image(), DEMO_MAPPER)}
    out.update({spec.name: (image(spec.name), spec.slot) for spec in load_manifest(FIXTURES)})
    return out


def adapter_stream(cart: bytes, mapper: str, frames: int, what: int) -> tuple[np.ndarray, int]:
    """The records the firmware sends for `frames` frames of the cart (docs/protocol.md §4.1), and
    the machine cycles they span."""
    accesses: list[tuple[int, int, int, int, int]] = []
    console = Console(load_cartridge(cart, mapper))
    console.add_bus_listener(lambda a: accesses.append(tuple(a)), fetches=True)
    start = console.cpu.cycle
    console.run_frames(frames)
    span = console.cpu.cycle - start
    rows, next_fetch, p1_seen = [], None, CART_P1_MASK
    for cycle, kind, address, value, p1 in accesses:
        if kind == FETCH:
            sequential = address == next_fetch
            next_fetch = (address & 0x800) | ((address + 1) & 0x7FF)
            if sequential and address not in (0x400, 0x406):
                continue
        slot = p1 & CART_P1_MASK
        if slot != p1_seen:
            p1_seen = slot
            if what >> CAPTURE_KINDS["P1"] & 1:
                rows.append((cycle, CAPTURE_KINDS["P1"], 0, slot, slot))
        if what >> KINDS[kind] & 1:
            rows.append((cycle, KINDS[kind], address, value, slot))
    out = np.empty(len(rows), RECORD_DTYPE)
    for column, name in enumerate(RECORD_DTYPE.names):
        out[name] = [row[column] for row in rows]
    out["cycle"] &= 0xFFFFFFFF
    return out, span


def v3_bytes(count: int) -> int:
    per_chunk = (CHUNK_PAYLOAD - 4) // 9
    chunks = -(-count // per_chunk)
    return count * 9 + chunks * (4 + FRAME_OVERHEAD)


def v4_chunks(rows: np.ndarray) -> list[tuple[int, int, bytes]]:
    return encode_chunks(rows, 0, CART_P1_MASK, (CHUNK_PAYLOAD - 9) // WORD_SIZE)


def decode_times(rows: np.ndarray, chunks: list[tuple[int, int, bytes]]) -> tuple[float, float]:
    """Seconds per record to decode the records as v3 chunks (9-byte records) and as v4 chunks."""
    fixed = np.empty(len(rows), FIXED_DTYPE)
    for name in FIXED_DTYPE.names:
        fixed[name] = rows[name]
    data = fixed.tobytes()
    per_chunk = (CHUNK_PAYLOAD - 4) // 9
    v3 = [data[at : at + per_chunk * 9] for at in range(0, len(data), per_chunk * 9)]
    timings = []
    for decode in (
        lambda: [RecordBatch.from_fixed(chunk) for chunk in v3],
        lambda: [RecordBatch.from_wire(words, cycle, p1) for cycle, p1, words in chunks],
    ):
        best = float("inf")
        for _ in range(5):
            begun = time.perf_counter()
            decode()
            best = min(best, time.perf_counter() - begun)
        timings.append(best / max(len(rows), 1))
    return timings[0], timings[1]


def firmware_stream(cart: bytes, mapper: str, frames: int, kinds: str, folder: Path) -> tuple[int, int, int]:
    """Bytes of CAPTURE_CHUNK frames the emulated firmware sent for the cart's `frames` frames at the
    console's full rate through a 19-packet link, the records and the records dropped."""
    from conftest import write_bus_trace
    from firmware_loop import EMULATED_LINK, built_uf2, cart_table, running_firmware

    from hilbridge.link.adapter import Adapter
    from hilbridge.link.protocol import MESSAGES, encode_frame
    from hilbridge.link.transport import SerialTransport

    trace = write_bus_trace(cart, mapper, folder / "cart.trace", frames=frames)
    table = cart_table(cart, mapper, folder)
    chunk = MESSAGES["CAPTURE_CHUNK"]
    arguments = ("--cart-table", str(table), "--console", str(trace), "--usb-frame-packets", "19")
    with (
        running_firmware(*arguments, uf2=built_uf2()) as running,
        Adapter(SerialTransport(running.url), **EMULATED_LINK) as adapter,
    ):
        adapter.capture_start(tuple(kinds.split(",")))
        running.wait_event("console-done", timeout=1800)
        time.sleep(0.5)
        events = adapter.capture_events(0.3)
        totals = adapter.capture_stop()
        events += adapter.capture_events(0.3)
    wire = sum(
        len(encode_frame(chunk.id, 0, chunk.response_layout.pack(values)))
        for name, values in events
        if name == "CAPTURE_CHUNK"
    )
    return wire, totals["records"], totals["dropped"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--kinds", default="FETCH,MOVX_WRITE")
    parser.add_argument("--cart", action="append", help="a fixture cart name or demo (default: all)")
    parser.add_argument("--firmware", action="store_true", help="also measure the emulated firmware's stream")
    arguments = parser.parse_args()
    what = sum(1 << CAPTURE_KINDS[kind] for kind in arguments.kinds.split(","))
    table = carts()
    names = arguments.cart or list(table)
    capacity = LINK_BYTES_PER_SECOND / 1e6
    print(f"{arguments.frames} frames, kinds {arguments.kinds}; link capacity {capacity:.3f} MB/s")
    print(
        f"{'cart':<18} {'records/s':>10} {'v3 B/rec':>8} {'v3 MB/s':>8} {'v3 ratio':>8} "
        f"{'v4 B/rec':>8} {'v4 MB/s':>8} {'v4 ratio':>8} {'decode v3':>10} {'decode v4':>10}"
    )
    worst = 0.0
    for name in names:
        cart, mapper = table[name]
        rows, span = adapter_stream(cart, mapper, arguments.frames, what)
        seconds = span / MACHINE_CYCLES_PER_SECOND
        chunks = v4_chunks(rows)
        v4 = sum(len(words) + 9 + FRAME_OVERHEAD for _, _, words in chunks)
        v3 = v3_bytes(len(rows))
        count = max(len(rows), 1)
        v3_rate, v4_rate = v3 / seconds, v4 / seconds
        worst = max(worst, v4_rate / LINK_BYTES_PER_SECOND)
        t3, t4 = decode_times(rows, chunks)
        print(
            f"{name:<18} {len(rows) / seconds:>10.0f} {v3 / count:>8.2f} {v3_rate / 1e6:>8.3f} "
            f"{v3_rate / LINK_BYTES_PER_SECOND:>8.2f} {v4 / count:>8.2f} {v4_rate / 1e6:>8.3f} "
            f"{v4_rate / LINK_BYTES_PER_SECOND:>8.2f} {t3 * 1e9:>8.0f}ns {t4 * 1e9:>8.0f}ns"
        )
    print(f"highest v4 stream / link capacity: {worst:.2f}")
    if arguments.firmware:
        import tempfile

        print("emulated firmware, the console at NTSC pace, link of 19 packets per 1 ms frame:")
        for name in names:
            cart, mapper = table[name]
            with tempfile.TemporaryDirectory() as folder:
                _, span = adapter_stream(cart, mapper, arguments.frames, what)
                wire, records, dropped = firmware_stream(
                    cart, mapper, arguments.frames, arguments.kinds, Path(folder)
                )
            rate = wire / (span / MACHINE_CYCLES_PER_SECOND)
            print(
                f"{name:<18} {records:>7} records {dropped:>5} dropped  {wire / max(records, 1):5.2f} B/rec  "
                f"{rate / 1e6:.3f} MB/s  ratio {rate / LINK_BYTES_PER_SECOND:.2f}"
            )


if __name__ == "__main__":
    main()
