"""MCS-48 toolchain: assembler and disassembler (asl dialect)."""
