"""The demo cartridge the simulated slot holds by default: our own bytes, generated here.

A 4 KB `o2_rom` image (two 2 KB banks, so a dump shows bank detection at work) with the standard
header: 0400h jumps to a main loop, 0402h/0406h to `RETR`/`RET`, and each bank carries a readable tag.
The rest is a fixed pseudo-random fill so every byte of the dump is checked.
Images of the other mapper types, for tests and `sim serve --type`, come from `demo_image(mapper, size)`.
"""

from __future__ import annotations

import random

from hilbridge.machine.cartridge import MAPPER_TYPES

DEMO_MAPPER = "o2_rom"
DEMO_SIZE = 4096

_JMP = 0x04  # JMP addr11: opcode = 04h | (A10..A8 << 5), then A7..A0
_RET = 0x83
_RETR = 0x93
_NOP = 0x00


def _jmp(target: int) -> bytes:
    return bytes((_JMP | ((target >> 8) & 0x07) << 5, target & 0xFF))


def demo_image(mapper: str = DEMO_MAPPER, size: int = DEMO_SIZE, seed: int = 2600) -> bytes:
    """A deterministic image of `size` bytes for `mapper`, with a header in every 2 KB bank."""
    if mapper not in MAPPER_TYPES or size not in MAPPER_TYPES[mapper].sizes:
        raise ValueError(f"no demo image for {mapper} of {size} bytes")
    filler = random.Random(seed * 7919 + size)
    image = bytearray(filler.getrandbits(8) for _ in range(size))
    bank_size = MAPPER_TYPES[mapper].bank_size
    start = MAPPER_TYPES[mapper].program_offset
    for bank, base in enumerate(range(start, size, bank_size)):
        header = _jmp(0x408) + _jmp(0x40A) + bytes((_NOP, _NOP)) + _jmp(0x40B) + _jmp(0x408)
        header += bytes((_RETR, _RET)) + f"HILBRIDGE DEMO {mapper} BANK {bank}".encode("ascii")
        image[base : base + len(header)] = header
    return bytes(image)
