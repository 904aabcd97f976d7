"""Round trips through our assembler: disassembly must assemble back to the very same bytes.

(1) random byte images -> disasm -> asm give the image back, with every option combination;
(2) random valid programs -> asm -> disasm -> asm give the same image, and disassembling that again
gives the same text.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.mcs48 import INSTRUCTIONS
from hilbridge.toolchain.assembler import assemble_text
from hilbridge.toolchain.disasm import bios_symbols, disassemble

DEFINED = [instruction for instruction in INSTRUCTIONS if instruction.defined]
HALF = 0x800


@st.composite
def placed_images(draw) -> tuple[bytes, int]:
    image = draw(st.binary(min_size=1, max_size=900))
    origin = draw(st.integers(0, 0x1000 - len(image)))
    return image, origin


@settings(max_examples=60, deadline=None)
@given(placed_images(), st.booleans(), st.booleans())
def test_any_image_reassembles_to_itself(placed, labels, bios_names):
    image, origin = placed
    text = disassemble(image, origin, labels=labels, bios_names=bios_names)
    result = assemble_text(text, "disassembly.asm")
    assert (result.origin, result.image) == (origin, image)
    assert result.warnings == []


@pytest.mark.slow
def test_every_opcode_at_the_end_of_a_half_and_of_a_page():
    """Each opcode with an operand byte at 7FDh-7FFh and at x0FEh-x0FFh, the places with rules."""
    filler = bytes(16)
    for opcode in range(256):
        for origin in (0x7ED, 0x7EE, 0x7EF, 0x0EF, 0x8EF):  # opcode at origin + 16
            image = filler + bytes([opcode, 0x5A]) + filler[: 0x1000 - origin - 18]
            for labels in (False, True):
                text = disassemble(image, origin, labels=labels, bios_names=True)
                result = assemble_text(text, "edge.asm")
                assert (result.origin, result.image) == (origin, image), f"{opcode:02X} at {origin + 16:04X}"


def test_sel_mb_then_long_jump_from_either_half():
    """A JMP/CALL into the other half (after SEL MBx) reassembles without a SEL MB inserted."""
    long_jumps = [i.opcode for i in DEFINED if "addr11" in i.operands]
    for select in (0xE5, 0xF5):
        for opcode in long_jumps:
            for origin in (0x100, 0x900):
                image = bytes([select, opcode, 0x21, 0x00])
                for labels in (False, True):
                    text = disassemble(image, origin, labels=labels, bios_names=True)
                    result = assemble_text(text, "bank.asm")
                    assert result.image == image and result.warnings == [], text


@st.composite
def programs(draw) -> str:
    """asl text of a random valid program: every defined instruction, with labels and real targets."""
    origin = draw(st.integers(0, 0xF00))
    chosen = draw(st.lists(st.sampled_from(DEFINED), min_size=1, max_size=120))
    addresses = []
    address = origin
    for instruction in chosen:
        addresses.append(address)
        address += instruction.length
    if address > 0x1000:
        chosen, addresses = chosen[:1], addresses[:1]
    lines = [" cpu 8048", f" org {origin:04X}h"]
    for index, (instruction, address) in enumerate(zip(chosen, addresses, strict=True)):
        at_half_end = address % HALF == HALF - 1 or (
            "addr11" in instruction.operands and address % HALF == HALF - 2
        )
        if at_half_end and instruction.length == 2:
            lines.append(f"X{index}: nop")
            continue
        operands = []
        for pattern in instruction.operands:
            if pattern == "#imm8":
                operands.append(f"#{draw(st.integers(0, 255))}")
            elif pattern == "addr8":
                page = (address + 1) & 0xF00
                candidates = [i for i, a in enumerate(addresses) if a & 0xF00 == page]
                if candidates and draw(st.booleans()):
                    operands.append(f"X{draw(st.sampled_from(candidates))}")
                else:
                    operands.append(f"{page | draw(st.integers(0, 255)):04X}h")
            elif pattern == "addr11":
                half = address & HALF
                candidates = [i for i, a in enumerate(addresses) if a & HALF == half]
                if candidates and draw(st.booleans()):
                    operands.append(f"X{draw(st.sampled_from(candidates))}")
                else:
                    operands.append(f"{half | draw(st.integers(0, 0x7FF)):04X}h")
            else:
                operands.append(pattern)
        lines.append(f"X{index}: {instruction.mnemonic} {','.join(operands)}".rstrip())
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None)
@given(programs(), st.booleans(), st.booleans())
def test_valid_programs_survive_asm_disasm_asm(program, labels, bios_names):
    first = assemble_text(program, "program.asm")
    listing = disassemble(first.image, first.origin, labels=labels, bios_names=bios_names)
    second = assemble_text(listing, "listing.asm")
    assert (second.origin, second.image) == (first.origin, first.image)
    assert disassemble(second.image, second.origin, labels=labels, bios_names=bios_names) == listing


def test_every_bios_name_assembles():
    """Calls to all BIOS entry points, named, assemble back (no name clashes with asl keywords)."""
    addresses = sorted(bios_symbols())
    image = b"".join(bytes([0x14 | (address >> 3) & 0xE0, address & 0xFF]) for address in addresses)
    text = disassemble(image, 0x400, bios_names=True)
    for address in addresses:
        assert f"call    {bios_symbols()[address].name}" in text
    result = assemble_text(text, "bios_calls.asm")
    assert result.image == image and result.warnings == []
