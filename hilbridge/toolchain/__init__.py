"""MCS-48 toolchain: assembler and disassembler (asl dialect)."""

from hilbridge.toolchain.assembler import AssemblyError, AssemblyResult, assemble, assemble_text

__all__ = ["AssemblyError", "AssemblyResult", "assemble", "assemble_text"]
