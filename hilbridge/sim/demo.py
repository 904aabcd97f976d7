"""The demo cartridge the simulated slot holds by default: our own bytes, generated here.

A 4 KB `o2_rom` image (two 2 KB banks, so a dump shows bank detection at work) holding `demo.asm`
in every bank: it shows a blue screen with a white grid and calls the VSYNC hook 0406h once per
frame; each bank carries a readable tag. The cartridge list knows it (`hilbridge_demo`).
The rest is a fixed pseudo-random fill so every byte of the dump is checked.
Images of the other mapper types, for tests and `sim serve --type`, come from `demo_image(mapper, size)`.
"""

from __future__ import annotations

import random
from functools import cache
from importlib import resources

from hilbridge.machine.cartridge import MAPPER_TYPES

DEMO_MAPPER = "o2_rom"
DEMO_SIZE = 4096

DEMO_SOURCE = "demo.asm"


@cache
def _program() -> bytes:
    """The demo program (demo.asm), CPU 0400h onwards; the same in every bank."""
    from hilbridge.toolchain.assembler import assemble_text

    source = resources.files(__package__).joinpath(DEMO_SOURCE).read_text(encoding="utf-8")
    result = assemble_text(source, name=DEMO_SOURCE)
    assert result.origin == 0x400
    return result.image


def filler_bytes(seed: int, size: int) -> bytes:
    """`size` bytes, each `random.Random(seed).getrandbits(8)` in turn, made at once: getrandbits(8)
    is the top byte of one 32-bit Mersenne Twister word, and getrandbits(32 * size) is `size` such
    words, least significant first. A byte at a time cost 0.4 ms per 4 KB image, and a simulated
    device is built per test example."""
    return random.Random(seed).getrandbits(32 * size).to_bytes(4 * size, "little")[3::4] if size else b""


@cache
def demo_image(mapper: str = DEMO_MAPPER, size: int = DEMO_SIZE, seed: int = 2600) -> bytes:
    """A deterministic image of `size` bytes for `mapper`, with a header in every 2 KB bank (kept:
    it is the same every time, and bytes cannot be changed by a caller)."""
    if mapper not in MAPPER_TYPES or size not in MAPPER_TYPES[mapper].sizes:
        raise ValueError(f"no demo image for {mapper} of {size} bytes")
    image = bytearray(filler_bytes(seed * 7919 + size, size))
    bank_size = MAPPER_TYPES[mapper].bank_size
    start = MAPPER_TYPES[mapper].program_offset
    for bank, base in enumerate(range(start, size, bank_size)):
        program = _program() + f"HILBRIDGE DEMO {mapper} BANK {bank}".encode("ascii")
        image[base : base + len(program)] = program
    return bytes(image)
