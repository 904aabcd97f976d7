"""Instruction encodings for the assembler, derived from `hilbridge.mcs48.INSTRUCTIONS`.

There is no second opcode table here: every (mnemonic, operand pattern) -> opcode pair is read from
the shared instruction table. Operands are either literal register names (``A``, ``@R0``, ``BUS``,
``P4``...), an immediate (``#imm8``), or a jump target (``addr8`` in the current page, ``addr11``
within the 2K bank). The only extra spelling is asl's ``JB bit,target`` for ``JB0``...``JB7``.
"""

from __future__ import annotations

from dataclasses import dataclass

from hilbridge.mcs48 import INSTRUCTIONS

IMMEDIATE = "#imm8"
PAGE_TARGET = "addr8"
BANK_TARGET = "addr11"
_VALUE_PATTERNS = frozenset({IMMEDIATE, PAGE_TARGET, BANK_TARGET})


@dataclass(frozen=True, slots=True)
class Form:
    """One way to write an instruction: operand patterns and the opcode they encode to.

    `value_index` is the position of the operand that carries an expression (-1 for none) and
    `value_kind` its pattern (#imm8, addr8 or addr11).
    """

    opcode: int
    operands: tuple[str, ...]
    length: int
    value_index: int = -1
    value_kind: str | None = None


def _form(opcode: int, operands: tuple[str, ...], length: int) -> Form:
    for index, pattern in enumerate(operands):
        if pattern in _VALUE_PATTERNS:
            return Form(opcode, operands, length, index, pattern)
    return Form(opcode, operands, length)


def _build() -> tuple[dict[str, tuple[Form, ...]], frozenset[str]]:
    forms: dict[str, list[Form]] = {}
    literals: set[str] = set()
    for instruction in INSTRUCTIONS:
        if not instruction.defined:
            continue
        patterns = instruction.operands
        if instruction.mnemonic in ("JMP", "CALL") and instruction.opcode & 0xE0:
            # The eight JMP/CALL opcodes differ only in target bits 8-10; the base form encodes them.
            continue
        forms.setdefault(instruction.mnemonic, []).append(
            _form(instruction.opcode, patterns, instruction.length)
        )
        literals.update(pattern for pattern in patterns if pattern not in _VALUE_PATTERNS)
    return {name: tuple(rows) for name, rows in forms.items()}, frozenset(literals)


FORMS, LITERAL_OPERANDS = _build()
MNEMONICS = frozenset(FORMS) | {"JB"}
# Conditional jumps JB0..JB7 as asl's `JB bit,target`: opcode of JB0 plus bit * 0x20.
JB_BASE_OPCODE = FORMS["JB0"][0].opcode
# SEL MB0 / SEL MB1 opcodes, for the bank-select prefix the assembler inserts before far jumps.
SEL_MB = {bank: form.opcode for form in FORMS["SEL"] for bank in (0, 1) if form.operands == (f"MB{bank}",)}


def operand_shape(operand: str) -> str:
    """Classify one operand as written: a literal register name (upper-cased), '#', or '' (a value)."""
    upper = operand.upper()
    if upper in LITERAL_OPERANDS:
        return upper
    if operand.startswith("#"):
        return "#"
    return ""


def find_form(mnemonic: str, shapes: tuple[str, ...]) -> Form | None:
    """The form of `mnemonic` whose operand patterns match the classified operands, if any."""
    for form in FORMS.get(mnemonic, ()):
        if len(form.operands) != len(shapes):
            continue
        for pattern, shape in zip(form.operands, shapes, strict=True):
            if pattern == IMMEDIATE:
                if shape != "#":
                    break
            elif pattern in (PAGE_TARGET, BANK_TARGET):
                # Any expression, even one spelled like a register name (a label called f0).
                if shape == "#":
                    break
            elif pattern != shape:
                break
        else:
            return form
    return None


_RESOLVED: dict[tuple[str, tuple[str, ...]], Form | None] = {}


def resolve(mnemonic: str, arguments: tuple[str, ...]) -> Form | None:
    """`find_form` for operands as written, remembered per distinct spelling."""
    key = (mnemonic, arguments)
    try:
        return _RESOLVED[key]
    except KeyError:
        pass
    form = find_form(mnemonic, tuple(operand_shape(argument) for argument in arguments))
    if len(_RESOLVED) > 100_000:
        _RESOLVED.clear()
    _RESOLVED[key] = form
    return form
