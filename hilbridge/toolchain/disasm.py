"""MCS-48 disassembler: a ROM image to asl-syntax source that assembles back to the same bytes.

Decoding is driven by `hilbridge.mcs48.INSTRUCTIONS`, so it cannot disagree with the assembler or the
CPU core about the instruction set. Anything that would not reassemble to the same bytes is written as
`db`: undefined opcodes, an instruction whose operand byte lies past the end of the image, and a
two-byte instruction in the last byte of a 2 KB half (the 8048 fetches its operand from the start of
that half, not from the next byte of the image). A JMP/CALL in the last two bytes of a half is also
written as `db`, because asl (and our assembler) refuse it there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from hilbridge.errors import HilbridgeError
from hilbridge.mcs48 import INSTRUCTIONS, Instruction

ADDRESS_SPACE = 0x1000
"""The 8048 program space is 4 KB (12 address bits)."""

HALF_SIZE = 0x800
"""PC increments wrap inside a 2 KB half, and JMP/CALL take A11 from the MB flag, not the operand."""

BIOS_END = 0x400
"""The console's internal BIOS ROM covers 0x000-0x3FF."""

PAGE_TARGET = "addr8"
LONG_TARGET = "addr11"
IMMEDIATE = "#imm8"


@dataclass(frozen=True, slots=True)
class BiosSymbol:
    address: int
    name: str
    purpose: str


@cache
def bios_symbols() -> dict[int, BiosSymbol]:
    """The Videopac BIOS entry points by address, from `bios_symbols.tsv`."""
    text = resources.files(__package__).joinpath("bios_symbols.tsv").read_text(encoding="utf-8")
    symbols: dict[int, BiosSymbol] = {}
    rows = [line for line in text.splitlines() if line and not line.startswith("#")]
    for row in rows[1:]:
        address, name, purpose = row.split("\t")
        symbols[int(address, 16)] = BiosSymbol(int(address, 16), name, purpose)
    return symbols


@dataclass(frozen=True, slots=True)
class Line:
    """One decoded item: an instruction, or bytes written as `db` (then `reason` says why)."""

    address: int
    data: bytes
    instruction: Instruction | None
    target: int | None = None
    reason: str = ""

    def operand_texts(self, names: Mapping[int, str]) -> list[str]:
        """The operands in asl spelling; a jump target uses `names[target]` if there is one."""
        if self.instruction is None:
            return [hex_number(byte, 2) for byte in self.data]
        texts = []
        for pattern in self.instruction.operands:
            if pattern == IMMEDIATE:
                texts.append("#" + hex_number(self.data[1], 2))
            elif pattern in (PAGE_TARGET, LONG_TARGET):
                assert self.target is not None
                text = names.get(self.target, hex_number(self.target, 4))
                if pattern == LONG_TARGET and (self.target ^ self.address) & HALF_SIZE:
                    # asl would insert a SEL MB (or refuse) for a target in the other half; an
                    # expression in this instruction's own half gives the same two bytes.
                    text += f"{'-' if self.target & HALF_SIZE else '+'}{hex_number(HALF_SIZE, 4)}"
                texts.append(text)
            else:
                texts.append(pattern.lower())
        return texts

    @property
    def mnemonic(self) -> str:
        return "db" if self.instruction is None else self.instruction.mnemonic.lower()


def hex_number(value: int, digits: int) -> str:
    """Intel-style hex that asl reads: always a leading digit, e.g. ``0ABh``, ``0400h``."""
    text = f"{value:0{digits}X}h"
    return text if text[0].isdigit() else f"0{text}"


def label_name(address: int) -> str:
    return f"L{address:04X}"


def check_image(image: bytes, origin: int) -> None:
    """Reject what cannot be an 8048 program image at `origin`."""
    if not 0 <= origin < ADDRESS_SPACE:
        raise HilbridgeError(f"origin {origin:#x} is outside the 8048's 4 KB program space")
    if not image:
        raise HilbridgeError("the image is empty")
    if origin + len(image) > ADDRESS_SPACE:
        raise HilbridgeError(
            f"{len(image)} bytes at origin {origin:#05x} run past the end of the 4 KB program space",
            hint="disassemble a bank-switched cartridge one 2 KB bank at a time (disasm --bank N)",
        )


SELECT_MEMORY_BANK = {0xE5: 0, 0xF5: 1}
"""SEL MB0 / SEL MB1: the opcodes that set the MB flag, which becomes A11 of the next JMP or CALL."""


CARTRIDGE_ORIGIN = 0x400
"""Where the console maps a cartridge bank: 0x400-0xBFF (0xC00-0xFFF mirrors 0x800-0xBFF)."""

BANK_SIZE = 0x800


def cartridge_bank(image: bytes, bank: int) -> bytes:
    """The 2 KB bank `bank` of a plain (`o2_rom`) cartridge image, as the CPU sees it at 0x400.

    A 2 KB image is its own single bank; larger images hold banks 0, 1, ... one after the other.
    """
    banks = max(1, len(image) // BANK_SIZE)
    if len(image) > BANK_SIZE and len(image) % BANK_SIZE:
        raise HilbridgeError(f"a {len(image)}-byte image is not a whole number of 2 KB banks")
    if not 0 <= bank < banks:
        raise HilbridgeError(f"bank {bank} does not exist: the image has {banks} bank(s) of 2 KB")
    return image[bank * BANK_SIZE : (bank + 1) * BANK_SIZE]


def _target(instruction: Instruction, address: int, operand: int, bank: int | None) -> int | None:
    if PAGE_TARGET in instruction.operands:
        # The page is that of the operand byte: an opcode at xFFh jumps into the next page.
        return ((address + 1) & 0xF00) | operand
    if LONG_TARGET in instruction.operands:
        half = address & HALF_SIZE if bank is None else bank * HALF_SIZE
        return half | ((instruction.opcode & 0xE0) << 3) | operand
    return None


def decode(image: bytes, origin: int = 0) -> list[Line]:
    """Decode `image` loaded at `origin` linearly, from its first byte to its last.

    The MB flag (A11 of JMP/CALL) is unknown statically. As d48 does, the first JMP or CALL after a
    SEL MBx in the same 2 KB half takes A11 from it, unless data (a `db`) comes between; every other
    one is assumed to stay in the half it runs in.
    """
    check_image(image, origin)
    lines: list[Line] = []
    position = 0
    bank: int | None = None
    while position < len(image):
        address = origin + position
        if address % HALF_SIZE == 0:
            bank = None  # straight-line code never crosses into the other half
        opcode = image[position]
        instruction = INSTRUCTIONS[opcode]
        reason = ""
        size = 1
        if not instruction.defined:
            reason = "undefined opcode"
        elif instruction.length == 2 and position + 1 >= len(image):
            reason = f"{instruction.mnemonic.lower()}: operand byte is past the end of the image"
        elif instruction.length == 2 and address % HALF_SIZE == HALF_SIZE - 1:
            start = address - (HALF_SIZE - 1)
            reason = (
                f"{instruction.mnemonic.lower()}: operand would be fetched from {hex_number(start, 4)} "
                "(PC wraps inside its 2 KB half)"
            )
        elif LONG_TARGET in instruction.operands and address % HALF_SIZE == HALF_SIZE - 2:
            reason = f"{instruction.mnemonic.lower()}: asl refuses JMP/CALL at the last 2 bytes of a 2K half"
            size = 2
        if reason:
            lines.append(Line(address, image[position : position + size], None, reason=reason))
            bank = None
            position += size
            continue
        data = image[position : position + instruction.length]
        target = _target(instruction, address, data[1], bank) if instruction.length == 2 else None
        if LONG_TARGET in instruction.operands:
            bank = None
        bank = SELECT_MEMORY_BANK.get(opcode, bank)
        lines.append(Line(address, data, instruction, target))
        position += instruction.length
    return lines


def _names(lines: list[Line], *, labels: bool, use_bios: bool) -> dict[int, str]:
    bios = bios_symbols() if use_bios else {}
    names: dict[int, str] = {}
    for line in lines:
        target = line.target
        if target is None or target in names:
            continue
        if target in bios and target < BIOS_END:
            names[target] = bios[target].name
        elif labels:
            names[target] = label_name(target)
    return names


COMMENT_COLUMN = 40


def _format(label: str, mnemonic: str, operands: list[str], comment: str) -> str:
    label_field = f"{label}:" if label else ""
    text = f"{label_field:<16}{mnemonic:<8}{','.join(operands)}"
    if len(label_field) >= 16:
        text = f"{label_field}\n{'':<16}{mnemonic:<8}{','.join(operands)}"
    padding = max(1, COMMENT_COLUMN - len(text.rsplit("\n", 1)[-1]))
    return f"{text}{' ' * padding}; {comment}"


def disassemble(
    image: bytes,
    origin: int = 0,
    *,
    labels: bool = False,
    bios_names: bool = False,
    title: str | None = None,
) -> str:
    """asl source for `image` at `origin`: `org`, labels (with `labels`), BIOS names (with
    `bios_names`), and a comment with address and bytes on every line.

    A target that is the start of a listed line gets its label there; any other named target
    (outside the image or inside an instruction) is defined with `equ` at the top.
    """
    lines = decode(image, origin)
    names = _names(lines, labels=labels, use_bios=bios_names)
    starts = {line.address for line in lines}
    bios = bios_symbols()
    out = [f"; {title or 'image'}: {len(image)} bytes at {hex_number(origin, 4)}, disassembled by hilbridge"]
    out.append(f"{'':<16}cpu     8048")
    for address in sorted(names):
        if address in starts:
            continue
        symbol = bios.get(address)
        purpose = symbol.purpose if symbol and names[address] == symbol.name else ""
        equate = f"{names[address]:<16}equ     {hex_number(address, 4)}"
        out.append(f"{equate}{' ' * max(1, COMMENT_COLUMN - len(equate))}; {purpose}".rstrip(" ;"))
    out.append(f"{'':<16}org     {hex_number(origin, 4)}")
    for line in lines:
        comment = f"{line.address:04X}: {line.data.hex(' ').upper()}"
        if line.reason:
            comment += f"  {line.reason}"
        out.append(_format(names.get(line.address, ""), line.mnemonic, line.operand_texts(names), comment))
    return "\n".join(out) + "\n"
