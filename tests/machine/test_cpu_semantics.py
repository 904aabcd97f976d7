"""The declared effects of each instruction form (instruction_effects.tsv) agree with its statements."""

from __future__ import annotations

import re
import warnings

import pytest

from hilbridge.machine.bios import UnknownBiosWarning
from hilbridge.machine.blocks import FALLS_THROUGH, MOVES_STOP
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.semantics import EFFECTS, NEXT, SEMANTICS, form_of
from hilbridge.mcs48 import INSTRUCTIONS

# what a statement does -> the effect a form doing it must declare
WITNESSES = {
    "board": r"\bB\.",
    "stop": r"C\.stop\b",
    "timer": r"C\.(timer_value|set_timer|start_timer|start_counter|stop_timer)\(",
    "t1": r"B\.t1\(",
    "irq": r"B\.irq\(",
    "timer_flag": r"C\.timer_flag\b",
    "irq_state": r"C\.irq_in_progress\b",
    # a RAM write at the pointer, or through a local that holds it
    "pointer_write": r"(?s)M\[\(M\[C\.rb \| \{i\}\] & 0x3F\)\] =|r = \(M\[C\.rb \| \{i\}\].*M\[r\] =",
}


@pytest.mark.parametrize("form", sorted(SEMANTICS))
def test_a_form_declares_every_effect_its_statements_have(form):
    body = SEMANTICS[form]
    for effect, witness in WITNESSES.items():
        if re.search(witness, body):
            assert effect in EFFECTS[form], f"{form} does not declare {effect!r}"
    falls_through = body.count("return") == 1 and body.splitlines()[-1] in ("return pc", NEXT)
    assert ("branch" in EFFECTS[form]) == (not falls_through)


def test_blocks_test_the_stop_after_every_instruction_that_may_move_it():
    for opcode, instruction in enumerate(INSTRUCTIONS):
        body = SEMANTICS[form_of(instruction)[0]]
        if re.search(r"\bB\.|C\.stop\b|C\.\w+\(", body):
            assert MOVES_STOP[opcode], instruction.text
        assert FALLS_THROUGH[opcode] == (body.splitlines()[-1] in ("return pc", NEXT)), instruction.text


def test_the_expander_and_timer_methods_are_declared_as_board_and_timer_effects():
    assert {"board"} <= EFFECTS["MOVD A,Pp"]
    assert {"timer", "stop"} <= EFFECTS["STRT T"]
    assert "t1" in EFFECTS["JNT1 addr8"] and "irq" in EFFECTS["JNI addr8"]


@pytest.mark.parametrize("opcode", range(256))
def test_an_instruction_that_changes_the_stack_pointer_declares_it(opcode):
    """Blocks know the stack pointer at compile time and follow CALL and RET: any other change of
    PSW bits 0-2 must be declared (`stack_pointer`), or their code would use a wrong stack address."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        console = Console(load_cartridge(bytes(2048), "o2_rom"))
    cpu = console.cpu
    form = form_of(INSTRUCTIONS[opcode])[0]
    for a, psw in ((0x00, 0x03), (0xFF, 0x04), (0x5A, 0x17), (0xA5, 0xF8)):
        cpu.a, cpu.psw, cpu.rb = a, psw, 24 if psw & 0x10 else 0
        cpu.ram[:] = bytes(range(0x40, 0x80))
        cpu.handlers[opcode](0x401, 100)
        if (cpu.psw ^ psw) & 7:
            assert "stack_pointer" in EFFECTS[form], form


@pytest.mark.parametrize("mnemonic", ["ADD", "ADDC"])
def test_add_sets_carry_and_auxiliary_carry_as_the_8048_defines_them(mnemonic):
    """For every A, operand and carry in: C is set by a sum above FFh, AC by a carry out of the
    low nibble (the statements look both up in `ADD_FLAGS` by A ^ operand ^ sum)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        console = Console(load_cartridge(bytes(2048), "o2_rom"))
    cpu = console.cpu
    [opcode] = [op for op, instruction in enumerate(INSTRUCTIONS) if instruction.text == f"{mnemonic} A,R2"]
    handler = cpu.handlers[opcode]
    for carry in (0, 1) if mnemonic == "ADDC" else (0,):
        for a in range(256):
            for operand in range(256):
                cpu.a, cpu.psw, cpu.rb = a, 0x25 | carry << 7, 0
                cpu.ram[2] = operand
                handler(0x401, 100)
                total = a + operand + carry
                half = (a & 15) + (operand & 15) + carry
                expected = 0x25 | (0x80 if total > 0xFF else 0) | (0x40 if half > 15 else 0)
                assert (cpu.a, cpu.psw) == (total & 0xFF, expected), (a, operand, carry)


@pytest.mark.parametrize(
    ("text", "change"), [("INC R2", 1), ("INC @R1", 1), ("DEC R2", -1), ("DJNZ R2,addr8", -1)]
)
def test_register_increments_and_decrements_wrap_as_bytes(text, change):
    """For every value: INC, DEC and DJNZ leave the byte plus or minus one, wrapped (the statements
    look it up in `INCREMENTED` / `DECREMENTED`); DJNZ branches unless it reached zero."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        console = Console(load_cartridge(bytes([0x00, 0x37] * 1024), "o2_rom"))
    cpu = console.cpu
    [opcode] = [op for op, instruction in enumerate(INSTRUCTIONS) if instruction.text == text]
    address = 0x20 if "@" in text else 2
    for value in range(256):
        cpu.a, cpu.psw, cpu.rb = 0x5A, 0, 0
        cpu.ram[1], cpu.ram[address] = 0x20, value
        following = cpu.handlers[opcode](0x401, 100)
        expected = (value + change) & 0xFF
        assert (cpu.ram[address], cpu.a) == (expected, 0x5A), value
        if text.startswith("DJNZ"):
            assert following == (0x437 if expected else 0x402), value
