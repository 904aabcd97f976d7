"""Every legal opcode assembles to the golden bytes of two independent assemblers.

Both tables live in ../shared (the `shared_reference` fixture skips where it is absent).
Spelling differences from asl, translated here:
- naken_asm's set (assembled by the SB-Cross-Assembler) writes operands in decimal and jump
  targets as absolute addresses, each instruction assembled alone at address 0: asl reads decimal
  the same way, so each line is assembled as `org 0` plus the instruction, unchanged.
- uz80as's listing uses `*` for the current address, `$0FF` for hex and `n` defined as 77: asl
  reads `$0FF` the same way; `*` is accepted by our assembler as the current address (asl's 8048
  mode only knows `$`), so it is kept; `n equ 77` is prepended. The listing is one program, so it is
  assembled whole and every instruction is checked at its listed address.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from hilbridge.mcs48 import INSTRUCTIONS
from hilbridge.toolchain.assembler import assemble_text


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
    return [row for row in csv.DictReader(lines, delimiter="\t") if row.get("bytes")]


def test_naken_encodings(shared_reference: Path):
    rows = _rows(shared_reference / "data" / "encodings_8048.tsv")
    assert len(rows) == 99
    for row in rows:
        result = assemble_text(f"\torg 0\n\t{row['instruction']}\n", "naken.asm")
        assert result.image.hex(" ").upper() == row["bytes"], row["instruction"]


def test_uz80as_listing_assembles_in_place(shared_reference: Path):
    rows = _rows(shared_reference / "data" / "encodings_8048_uz80as.tsv")
    assert len(rows) == 230
    source = "n\tequ\t77\n\torg\t0\n" + "".join(f"\t{row['instruction']}\n" for row in rows)
    result = assemble_text(source, "uz80as.asm")
    assert result.origin == 0
    for row in rows:
        address = int(row["address"], 16)
        expected = bytes.fromhex(row["bytes"])
        assert result.image[address : address + len(expected)] == expected, row["instruction"]
    covered = {bytes.fromhex(row["bytes"])[0] for row in rows}
    legal = {instruction.opcode for instruction in INSTRUCTIONS if instruction.defined}
    assert covered == legal


@pytest.mark.parametrize(
    "instruction", [i for i in INSTRUCTIONS if i.defined], ids=lambda i: f"{i.opcode:02X}"
)
def test_every_table_row_round_trips(instruction):
    """Write each opcode's canonical text (targets inside the page/bank) and get the opcode back."""
    operands = []
    for pattern in instruction.operands:
        if pattern == "#imm8":
            operands.append("#5Ah")
        elif pattern == "addr8":
            operands.append("$+12h")
        elif pattern == "addr11":
            operands.append(f"{(instruction.opcode >> 5) << 8 | 0x34:X}h".rjust(5, "0"))
        else:
            operands.append(pattern.lower())
    text = f"\torg 100h\n\t{instruction.mnemonic.lower()} {','.join(operands)}\n"
    image = assemble_text(text).image
    assert image[0] == instruction.opcode
    assert len(image) == instruction.length
    if "#imm8" in instruction.operands:
        assert image[1] == 0x5A
    if "addr8" in instruction.operands:
        assert image[1] == 0x12
    if "addr11" in instruction.operands:
        assert image[1] == 0x34
