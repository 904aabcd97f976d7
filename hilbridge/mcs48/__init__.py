"""The MCS-48 (Intel 8048) instruction set as data, shared by the CPU core, assembler and disassembler."""

from hilbridge.mcs48.table import INSTRUCTIONS, UNDEFINED_OPCODES, Instruction, by_opcode

__all__ = ["INSTRUCTIONS", "UNDEFINED_OPCODES", "Instruction", "by_opcode"]
