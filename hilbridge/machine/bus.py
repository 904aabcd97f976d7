"""The bus-access record: what the emulator reports for every MOVX access and cartridge fetch.

It is the same record the cartridge-port adapter captures on real hardware, so emulator runs and
hardware runs can be compared record by record.
"""

from __future__ import annotations

from typing import NamedTuple

READ = "R"  # MOVX read
WRITE = "W"  # MOVX write
FETCH = "F"  # program fetch from the cartridge (0400h-0FFFh), opcode or operand or MOVP/JMPP table


class BusAccess(NamedTuple):
    cycle: int  # machine cycle at the end of the instruction (MAME's stamp); fetches: its start
    kind: str  # READ, WRITE or FETCH
    address: int  # MOVX: 00h-FFh; fetch: 0400h-0FFFh
    value: int
    p1: int  # port 1 latch at the time of the access: it decides who answers (docs/hardware.md, "Glue logic")

    @property
    def target(self) -> str:
        """Who a MOVX access selects, from P1: VDC, external RAM, or the cartridge only (EXT)."""
        if self.kind == FETCH:
            return "CART"
        if not self.p1 & 0x08:
            return "VDC"
        if not self.p1 & 0x50 and self.address < 0x80:
            return "RAM"
        return "EXT"
