"""Screen text from the bus: the characters the VDC shows, decoded from its registers.

The major system draws 12 characters (registers 10h-3Fh: Y, X, pointer, attribute) and 4 quads of
4 characters (40h-7Fh). A character's lines come from the character generator at
``(pointer9 + Y/2 + line) mod 512`` (pointer9: the pointer with bit 8 from attribute bit 0), for a
height the pointer sets (the quad's 4th character for a quad; video.py draws the same way). So what
a character *shows* is decided by comparing those rows with the 64 glyphs, not by the pointer
alone: a cartridge that offsets its pointers by Y/2 (as every Odyssey² program must) decodes
right, and a pointer into the middle of two glyphs decodes as unreadable.

The registers come from a live `Vdc`, or from a capture: `BusReplay` applies the captured MOVX
writes to the VDC (P1 bit 3 low) with the register map's masks, mirrors and locks, and mirrors the
external RAM (P1 bits 4 and 6 low) for records a cartridge stores there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from hilbridge.capture.stream import CaptureItem, FrameSync, Gap
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import CaptureRecord
from hilbridge.machine.charset import CHARACTERS, charset_rom
from hilbridge.machine.vdc import register_map

CONTROL = 0xA0
CONTROL_DISPLAY = 0x20
CONTROL_GRID = 0x08
LOCK_BITS = {"objects": CONTROL_DISPLAY, "grid": CONTROL_GRID, "": 0}
VISIBLE_LINES = 243
VISIBLE_WIDTH = 360
NTSC_HIDDEN_Y = 14  # the 8244 does not draw characters above this line (video.py)
GLYPH_ROWS = 7  # row 7 of every glyph is blank
UNREADABLE = "▒"
RAM_SIZE = 128
P1_VDC_DISABLE, P1_RAM_DISABLE, P1_EXTERNAL_DISABLE = 0x08, 0x10, 0x40


@cache
def glyph_texts() -> tuple[str, ...]:
    """The printed form of each of the 64 character codes (glyphs.tsv)."""
    texts = [""] * CHARACTERS
    source = files(__package__).joinpath("glyphs.tsv").read_text(encoding="utf-8")
    for line in source.splitlines():
        if not line or line.startswith("#") or line.startswith("code\t"):
            continue
        code, text, _name = line.split("\t")
        texts[int(code, 16)] = text
    if any(len(text) != 1 for text in texts):
        raise ValueError("glyphs.tsv must give one printed character for each of the 64 codes")
    return tuple(texts)


@cache
def _glyph_rows() -> dict[bytes, int]:
    """The 7 drawn rows of each glyph → its code (the first code, should two ever look alike)."""
    rom = charset_rom()
    table: dict[bytes, int] = {}
    for code in range(CHARACTERS):
        table.setdefault(rom[8 * code : 8 * code + GLYPH_ROWS], code)
    return table


@dataclass(frozen=True, slots=True)
class ScreenChar:
    """One character on screen: where (Y line, X in register units), what, and in which colour."""

    y: int
    x: int
    code: int | None  # None: the rows shown are no glyph (unreadable)
    colour: int  # palette index 8-15
    slot: str  # "char 3" or "quad 1.2": the registers it comes from

    @property
    def text(self) -> str:
        return UNREADABLE if self.code is None else glyph_texts()[self.code]


def _shown_code(y: int, pointer9: int, height_pointer: int) -> int | None:
    """The glyph whose rows the VDC draws for this cell, or None (video.character_cell's rows)."""
    height = 7 - (((y >> 1) + height_pointer) & 7) or 8
    rom = charset_rom()
    start = pointer9 + (y >> 1)
    rows = bytes(rom[(start + line) & 0x1FF] for line in range(min(height, GLYPH_ROWS)))
    if height < GLYPH_ROWS:
        rows += bytes(GLYPH_ROWS - height)  # lines below the cell are not drawn
    elif height > GLYPH_ROWS and rom[(start + GLYPH_ROWS) & 0x1FF]:
        return None  # an 8th lit row: no glyph has one
    return _glyph_rows().get(rows)


def _cells(registers: bytes | bytearray) -> Iterator[tuple[int, int, int, int, int, str]]:
    """(y, x, pointer9, attribute, height pointer, slot) of the 28 major characters."""
    for char in range(12):
        base = 0x10 + 4 * char
        y, x, pointer, attribute = registers[base : base + 4]
        yield y, x, pointer | (attribute & 1) << 8, attribute, pointer, f"char {char}"
    for quad in range(4):
        base = 0x40 + 16 * quad
        y, x = registers[base], registers[base + 1]
        height_pointer = registers[base + 14]
        for char in range(4):
            pointer, attribute = registers[base + 4 * char + 2], registers[base + 4 * char + 3]
            yield (
                y,
                x + 16 * char,
                pointer | (attribute & 1) << 8,
                attribute,
                height_pointer,
                f"quad {quad}.{char}",
            )


def screen_chars(registers: bytes | bytearray, region: str = "ntsc") -> list[ScreenChar]:
    """The visible characters of a VDC register file (256 bytes), top to bottom, left to right.

    Nothing is visible while the display is off (A0 bit 5). Cells right of or below the picture,
    and on NTSC (8244) cells above line 14, are not drawn and not listed."""
    if len(registers) < 0x80:
        raise HilbridgeError("a VDC register file has 256 registers")
    if not registers[CONTROL] & CONTROL_DISPLAY:
        return []
    shown = []
    for y, x, pointer9, attribute, height_pointer, slot in _cells(registers):
        if (x + 5) * 2 >= VISIBLE_WIDTH or y >= VISIBLE_LINES or (region == "ntsc" and y < NTSC_HIDDEN_Y):
            continue
        code = _shown_code(y, pointer9, height_pointer)
        shown.append(ScreenChar(y, x, code, 8 + (attribute >> 1 & 7), slot))
    shown.sort(key=lambda char: (char.y, char.x))
    return shown


def screen_text(registers: bytes | bytearray, region: str = "ntsc", *, blank_lines: bool = False) -> str:
    """The characters on screen as a text grid: one line per character row (Y), one column per 8 X
    units (a character's width). Where two characters share a column the left one wins."""
    rows: dict[int, dict[int, str]] = {}
    for char in screen_chars(registers, region):
        rows.setdefault(char.y, {}).setdefault(char.x // 8, char.text)
    lines = []
    for y in sorted(rows):
        columns = rows[y]
        text = "".join(columns.get(column, " ") for column in range(max(columns) + 1)).rstrip()
        if text or blank_lines:
            lines.append(f"{y:3d} |{text}")
    return "\n".join(lines)


@cache
def _write_rules() -> tuple[tuple[int, int | None, int], ...]:
    """Per MOVX address: (register written, write mask or None, lock bits in A0)."""
    return tuple(
        (info.canonical, None if info.canonical >= 0xF0 else info.write_mask, LOCK_BITS[info.lock])
        for info in register_map()
    )


class BusReplay:
    """The VDC registers and the external RAM as the captured MOVX writes leave them.

    Only writes change either, so a capture of the writes (and P1, which each record carries) is
    enough: the VDC takes a write when P1 bit 3 is low, the RAM when bits 4 and 6 are low."""

    def __init__(self) -> None:
        self.registers = bytearray(256)
        self.ram = bytearray(RAM_SIZE)
        self.frame = -1  # the last FrameSync seen
        self.gaps: list[str] = []

    def write(self, address: int, value: int, p1: int) -> None:
        address &= 0xFF
        if not p1 & P1_EXTERNAL_DISABLE and not p1 & P1_RAM_DISABLE and address < RAM_SIZE:
            self.ram[address] = value
        if not p1 & P1_VDC_DISABLE:
            register, mask, lock = _write_rules()[address]
            if mask is not None and not self.registers[CONTROL] & lock:
                self.registers[register] = value & mask

    def feed(self, item: CaptureItem) -> None:
        if isinstance(item, CaptureRecord):
            if item.kind == "MOVX_WRITE":
                self.write(item.address, item.value, item.p1)
        elif isinstance(item, FrameSync):
            self.frame = item.frame
        elif isinstance(item, Gap):
            self.gaps.append(item.reason)


def registers_at_frame(items: Iterable[CaptureItem], frame: int) -> BusReplay:
    """Replay a capture up to the FrameSync that starts `frame` (the screen the previous frame left)."""
    replay = BusReplay()
    for item in items:
        replay.feed(item)
        if isinstance(item, FrameSync) and item.frame == frame:
            return replay
    raise HilbridgeError(f"the capture ends before frame {frame} (its last frame is {replay.frame})")
