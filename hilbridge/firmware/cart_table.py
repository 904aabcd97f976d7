"""The cartridge the firmware harness plays, as lookup tables made by hilbridge's own cartridge model.

The harness (firmware/harness/lib/bus.mjs) answers the firmware's bus cycles from these tables instead
of a second implementation of the mappers, so a dump through the emulated firmware is compared with
exactly the model the simulated adapter and the emulator use. File layout (little-endian):

    "HBCT"  latch_rule:u8 (0 none, 1 Videopac+ latch)  latch_states:u8
    fetch[latch_states][4 (P11 P10)][4096 (A11-A0)]      byte a /PSEN fetch returns
    read[2 (P11)][16 (P23-P20)][256 (A7-A0)]             byte a MOVX read (pin E) returns, FFh = not driven

A latch write (MOVX /WR with A7 = 1 and P14 = 0, rule 1) stores the value; the fetch table row is
`latch AND (latch_states - 1)`. `python -m hilbridge.firmware.cart_table IMAGE MAPPER OUT`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hilbridge.machine.cartridge import Cartridge, load_cartridge

MAGIC = b"HBCT"
LATCH_NONE, LATCH_VIDEOPAC_PLUS = 0, 1


def cart_table(cartridge: Cartridge) -> bytes:
    latched = cartridge.type.bank_select == "latch_p10"
    states = max(1, len(cartridge.image) // cartridge.type.bank_size) if latched else 1
    out = bytearray(MAGIC + bytes([LATCH_VIDEOPAC_PLUS if latched else LATCH_NONE, states]))
    for latch in range(states):
        cartridge.latch = latch
        for bank in range(4):
            p1 = 0xFC | bank  # P14 high: a fetch, not a RAM select
            out += bytes(
                cartridge.fetch(address, p1, 0) if address >= 0x400 else 0xFF for address in range(4096)
            )
    cartridge.latch = 0
    for p11 in range(2):
        for p2 in range(16):
            out += bytes(cartridge.read(address, 0xFD | p11 << 1, p2) for address in range(256))
    return bytes(out)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m hilbridge.firmware.cart_table IMAGE MAPPER OUT", file=sys.stderr)
        return 2
    image, mapper, out = Path(argv[0]), argv[1], Path(argv[2])
    out.write_bytes(cart_table(load_cartridge(image.read_bytes(), mapper, name=str(image))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
