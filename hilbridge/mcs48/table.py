"""Loads `instructions.tsv`, the one place where the 8048 opcode map is written down.

The CPU core takes lengths and cycle counts from here, the assembler its encodings and the
disassembler its decodings, so the three can never disagree about the instruction set.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

UNDEFINED = "(undefined)"


@dataclass(frozen=True, slots=True)
class Instruction:
    """One opcode: its mnemonic, operand pattern (tuple of pattern strings), length and cycles."""

    opcode: int
    mnemonic: str
    operands: tuple[str, ...]
    length: int
    cycles: int

    @property
    def defined(self) -> bool:
        return self.mnemonic != UNDEFINED

    @property
    def text(self) -> str:
        """The canonical Intel spelling with pattern placeholders, e.g. ``MOV A,#imm8``."""
        if not self.operands:
            return self.mnemonic
        return f"{self.mnemonic} {','.join(self.operands)}"


def _load() -> tuple[Instruction, ...]:
    text = resources.files(__package__).joinpath("instructions.tsv").read_text(encoding="utf-8")
    rows: list[Instruction] = []
    header_seen = False
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if not header_seen:
            header_seen = True
            continue
        opcode, mnemonic, operands, length, cycles = line.split("\t")
        rows.append(
            Instruction(
                opcode=int(opcode, 16),
                mnemonic=mnemonic,
                operands=() if operands == "-" else tuple(operands.split(",")),
                length=int(length),
                cycles=int(cycles),
            )
        )
    if [row.opcode for row in rows] != list(range(256)):
        raise RuntimeError("instructions.tsv must list opcodes 00-FF once each, in order")
    return tuple(rows)


INSTRUCTIONS: tuple[Instruction, ...] = _load()
UNDEFINED_OPCODES: frozenset[int] = frozenset(i.opcode for i in INSTRUCTIONS if not i.defined)


def by_opcode(opcode: int) -> Instruction:
    return INSTRUCTIONS[opcode]
