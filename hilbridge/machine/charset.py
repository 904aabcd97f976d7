"""The VDC's character generator, read from `charset.txt` (our readable copy of the mask ROM)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

CHARACTERS = 64
ROWS = 8


def parse_charset(text: str) -> bytes:
    """512 ROM bytes from the text form: 'char XX name' headers, each followed by 8 rows of 8 '#'/'.'."""
    rom = bytearray(CHARACTERS * ROWS)
    code = -1
    row = ROWS
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("# "):
            continue
        if line.startswith("char "):
            code = int(line.split()[1], 16)
            row = 0
            continue
        if code < 0 or row >= ROWS or len(line) != 8 or set(line) - {"#", "."}:
            raise ValueError(f"charset.txt line {number}: expected a row of 8 '#'/'.' characters")
        rom[code * ROWS + row] = sum(0x80 >> bit for bit, pixel in enumerate(line) if pixel == "#")
        row += 1
    return bytes(rom)


@cache
def charset_rom() -> bytes:
    """The 512-byte ROM as the VDC addresses it: byte 8*code + row, bit 7 = leftmost pixel."""
    return parse_charset(files("hilbridge.machine").joinpath("charset.txt").read_text(encoding="utf-8"))
