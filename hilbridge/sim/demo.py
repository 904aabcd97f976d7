"""The demo cartridge the simulated slot holds by default: our own bytes, generated here.

A 4 KB `o2_rom` image (two 2 KB banks, so a dump shows bank detection at work) with the standard
header: 0400h starts a main loop that enables the VDC interrupt, 0402h acknowledges it and calls the
VSYNC hook 0406h once per frame, and each bank carries a readable tag.
The rest is a fixed pseudo-random fill so every byte of the dump is checked.
Images of the other mapper types, for tests and `sim serve --type`, come from `demo_image(mapper, size)`.
"""

from __future__ import annotations

import random

from hilbridge.machine.cartridge import MAPPER_TYPES

DEMO_MAPPER = "o2_rom"
DEMO_SIZE = 4096

# CPU 0400h onwards, the same in every bank. The boot BIOS enters at 0400h (reset) and 0402h (/INT).
_HEADER = bytes.fromhex(
    "840C"  # 0400 JMP 040Ch      reset: to main
    "8411"  # 0402 JMP 0411h      /INT: to irq
    "0000"  # 0404 NOP, NOP       (timer interrupt unused)
    "83"  # 0406 RET              VSYNC hook, called once per frame (what FRAME_SYNC watches)
    "0000000000"  # 0407-040B
    "99B7"  # 040C ANL P1,#0B7h   main: VDC and external bus enabled (P13 = P16 = 0), bank kept
    "05"  # 040E EN I
    "840F"  # 040F JMP 040Fh      idle
    "B8A1"  # 0411 MOV R0,#0A1h   irq: read the VDC status, which acknowledges /INT
    "80"  # 0413 MOVX A,@R0
    "9406"  # 0414 CALL 0406h
    "93"  # 0416 RETR
)


def demo_image(mapper: str = DEMO_MAPPER, size: int = DEMO_SIZE, seed: int = 2600) -> bytes:
    """A deterministic image of `size` bytes for `mapper`, with a header in every 2 KB bank."""
    if mapper not in MAPPER_TYPES or size not in MAPPER_TYPES[mapper].sizes:
        raise ValueError(f"no demo image for {mapper} of {size} bytes")
    filler = random.Random(seed * 7919 + size)
    image = bytearray(filler.getrandbits(8) for _ in range(size))
    bank_size = MAPPER_TYPES[mapper].bank_size
    start = MAPPER_TYPES[mapper].program_offset
    for bank, base in enumerate(range(start, size, bank_size)):
        program = _HEADER + f"HILBRIDGE DEMO {mapper} BANK {bank}".encode("ascii")
        image[base : base + len(program)] = program
    return bytes(image)
