"""Export a capture as VCD (PulseView, GTKWave, sigrok), CSV or JSON; all three stream item by item.

VCD: the slot's signals as 1-bit wires (A0–A11, D0–D7, /PSEN, /WR, E, P10, P11, P14) and marker
pulses (reset, frame_sync, gap). Time is in units of 10 ns, from the region's machine cycle (15 clocks).
Accesses stamped with the same cycle (an instruction's opcode and operand fetches) are spread over
that cycle in slots of 1/8 cycle; each strobe is active for half a slot. A MOVX access has only
A0–A7 on the record (A8–A11 come from P2, which the slot capture does not carry): A8–A11 are `x`.
Pin E is drawn active high during MOVX reads (what pin E carries on real consoles is not settled).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import asdict
from typing import TextIO

from vcd import VCDWriter

from hilbridge import __version__
from hilbridge.capture.file import header_json
from hilbridge.capture.stream import CaptureHeader, CaptureItem, FrameSync, Gap, ResetDetected
from hilbridge.link.adapter import CaptureRecord
from hilbridge.machine.timing import CLOCKS_PER_MACHINE_CYCLE, REGIONS

SLOTS_PER_CYCLE = 8
TIME_UNIT_NS = 10  # 10 ns: a machine cycle is ~280 units (PulseView gets a 100 MHz sample rate)
P1_PINS = {"P10": 0x01, "P11": 0x02, "P14": 0x10}
STROBES = {"FETCH": "PSEN_n", "MOVX_WRITE": "WR_n", "MOVX_READ": "E"}
ACTIVE = {"PSEN_n": 0, "WR_n": 0, "E": 1}
MARKERS = ("reset", "frame_sync", "gap")
MARKER_OF = {ResetDetected: "reset", FrameSync: "frame_sync", Gap: "gap"}


def cycle_ns(region: str) -> float:
    return CLOCKS_PER_MACHINE_CYCLE * 1e9 / REGIONS[region].cpu_clock_hz


def write_vcd(header: CaptureHeader, items: Iterable[CaptureItem], out: TextIO) -> int:
    """Write the VCD; returns the number of items written."""
    clock = REGIONS[header.region].cpu_clock_hz
    period = cycle_ns(header.region)
    slot = max(2, int(period / TIME_UNIT_NS) // SLOTS_PER_CYCLE)
    comment = (
        f"hilbridge {__version__} capture export; source {header.source}; "
        f"cart SHA-1 {header.cart_sha1 or '?'}; region {header.region}: machine cycle = {period:.3f} ns"
    )
    with VCDWriter(
        out, timescale=f"{TIME_UNIT_NS} ns", date="", comment=comment, version=f"hilbridge {__version__}"
    ) as vcd:
        wire = {}
        for name in [f"A{bit}" for bit in range(12)] + [f"D{bit}" for bit in range(8)]:
            wire[name] = vcd.register_var("slot", name, "wire", size=1, init="x")
        for name in STROBES.values():
            wire[name] = vcd.register_var("slot", name, "wire", size=1, init=1 - ACTIVE[name])
        for name in P1_PINS:
            wire[name] = vcd.register_var("slot", name, "wire", size=1, init="x")
        for name in MARKERS:
            wire[name] = vcd.register_var("markers", name, "wire", size=1, init=0)
        now = -slot  # time of the item before (none yet)
        last_cycle: int | None = None
        in_cycle = 0
        count = 0
        pending: list[str] = []  # strobes and markers to release half a slot after `now`
        for item in items:
            count += 1
            cycle = None if isinstance(item, Gap) else item.cycle
            if cycle is None:
                time = now + slot
            else:
                in_cycle = in_cycle + 1 if cycle == last_cycle else 0
                last_cycle = cycle
                time = cycle * CLOCKS_PER_MACHINE_CYCLE * 10**9 // (clock * TIME_UNIT_NS) + in_cycle * slot
            time = max(time, now + slot)
            for name in pending:
                vcd.change(wire[name], now + slot // 2, 1 - ACTIVE.get(name, 1))
            pending = []
            now = time
            if isinstance(item, CaptureRecord):
                pins = item.value if item.kind == "P1" else item.p1
                for name, mask in P1_PINS.items():
                    vcd.change(wire[name], time, int(bool(pins & mask)))
                if item.kind == "P1":
                    continue
                wide = 12 if item.kind == "FETCH" else 8
                for bit in range(12):
                    vcd.change(wire[f"A{bit}"], time, (item.address >> bit) & 1 if bit < wide else "x")
                for bit in range(8):
                    vcd.change(wire[f"D{bit}"], time, (item.value >> bit) & 1)
                name = STROBES[item.kind]
            else:
                name = MARKER_OF[type(item)]
            vcd.change(wire[name], time, ACTIVE.get(name, 1))
            pending.append(name)
        for name in pending:
            vcd.change(wire[name], now + slot // 2, 1 - ACTIVE.get(name, 1))
    return count


def item_json(item: CaptureItem) -> dict[str, object]:
    kind = {CaptureRecord: "record", ResetDetected: "reset", FrameSync: "frame_sync", Gap: "gap"}[type(item)]
    return {"item": kind, **asdict(item)}


def write_json(header: CaptureHeader, items: Iterable[CaptureItem], out: TextIO) -> int:
    """One JSON object {"header": ..., "items": [...]}, written item by item."""
    out.write('{"header": ' + json.dumps(header_json(header)) + ', "items": [')
    count = 0
    for item in items:
        out.write(("\n" if count == 0 else ",\n") + json.dumps(item_json(item)))
        count += 1
    out.write("\n]}\n")
    return count


CSV_COLUMNS = ("item", "cycle", "kind", "address", "value", "p1", "frame", "chunks", "records", "reason")


def write_csv(header: CaptureHeader, items: Iterable[CaptureItem], out: TextIO) -> int:
    """One row per item; address, value and p1 in hex like the trace format."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    count = 0
    for item in items:
        count += 1
        if isinstance(item, CaptureRecord):
            row = [
                "record",
                item.cycle,
                item.kind,
                f"{item.address:03X}",
                f"{item.value:02X}",
                f"{item.p1:02X}",
            ]
        elif isinstance(item, ResetDetected):
            row = ["reset", item.cycle]
        elif isinstance(item, FrameSync):
            row = ["frame_sync", item.cycle, "", "", "", "", item.frame]
        else:
            row = ["gap", "", "", "", "", "", "", item.chunks, item.records, item.reason]
        writer.writerow(row + [""] * (len(CSV_COLUMNS) - len(row)))
    return count
