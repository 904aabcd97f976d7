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


def demo_image(mapper: str = DEMO_MAPPER, size: int = DEMO_SIZE, seed: int = 2600) -> bytes:
    """A deterministic image of `size` bytes for `mapper`, with a header in every 2 KB bank."""
    if mapper not in MAPPER_TYPES or size not in MAPPER_TYPES[mapper].sizes:
        raise ValueError(f"no demo image for {mapper} of {size} bytes")
    filler = random.Random(seed * 7919 + size)
    image = bytearray(filler.getrandbits(8) for _ in range(size))
    bank_size = MAPPER_TYPES[mapper].bank_size
    start = MAPPER_TYPES[mapper].program_offset
    for bank, base in enumerate(range(start, size, bank_size)):
        program = _program() + f"HILBRIDGE DEMO {mapper} BANK {bank}".encode("ascii")
        image[base : base + len(program)] = program
    return bytes(image)
