"""Disassembler behaviour that does not need the assembler: decoding rules, names, errors, CLI."""

from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from hilbridge.cli.main import cli
from hilbridge.errors import HilbridgeError
from hilbridge.mcs48 import INSTRUCTIONS, UNDEFINED_OPCODES
from hilbridge.toolchain.disasm import bios_symbols, cartridge_bank, decode, disassemble

JC = 0xF6
JMP_PAGE0 = 0x04
CALL_PAGE2 = 0x54
MOV_A_IMMEDIATE = 0x23
SEL_MB0, SEL_MB1 = 0xE5, 0xF5
NOP = 0x00


@st.composite
def placed_images(draw) -> tuple[bytes, int]:
    image = draw(st.binary(min_size=1, max_size=600))
    origin = draw(st.integers(0, 0x1000 - len(image)))
    return image, origin


@given(placed_images())
def test_lines_cover_the_image_exactly(placed):
    image, origin = placed
    lines = decode(image, origin)
    assert b"".join(line.data for line in lines) == image
    address = origin
    for line in lines:
        assert line.address == address
        if line.instruction is None:
            assert line.reason
        else:
            assert line.instruction is INSTRUCTIONS[line.data[0]]
            assert len(line.data) == line.instruction.length
        address += len(line.data)


def test_undefined_opcodes_are_db():
    image = bytes(sorted(UNDEFINED_OPCODES))
    lines = decode(image)
    assert [line.mnemonic for line in lines] == ["db"] * len(image)
    assert all(line.reason == "undefined opcode" for line in lines)


def test_page_jump_at_page_end_lands_in_next_page():
    lines = decode(bytes([NOP, JC, 0x10, NOP]), origin=0x0FE)
    assert lines[1].address == 0x0FF
    assert lines[1].target == 0x110


def test_page_jump_inside_a_page_stays_in_it():
    [line] = decode(bytes([JC, 0x10]), origin=0x2F0)
    assert line.target == 0x210


def test_long_jump_takes_a11_from_its_own_half_and_a8_a10_from_the_opcode():
    assert decode(bytes([CALL_PAGE2, 0x34]), origin=0x900)[0].target == 0xA34
    assert decode(bytes([CALL_PAGE2, 0x34]), origin=0x100)[0].target == 0x234


def test_sel_mb_sets_a11_of_the_next_long_jump_only():
    lines = decode(bytes([SEL_MB1, JMP_PAGE0, 0x24, JMP_PAGE0, 0x30]), origin=0x100)
    assert [line.target for line in lines if line.target is not None] == [0x824, 0x030]


def test_data_or_the_half_boundary_cancels_a_pending_sel_mb():
    after_data = decode(bytes([SEL_MB1, 0x06, JMP_PAGE0, 0x24]), origin=0x100)
    assert after_data[-1].target == 0x024
    across_half = decode(bytes([SEL_MB0, NOP, JMP_PAGE0, 0x24]), origin=0x7FE)
    assert across_half[-1].target == 0x824


def test_operand_past_the_end_is_db():
    lines = decode(bytes([NOP, MOV_A_IMMEDIATE]))
    assert lines[-1].mnemonic == "db"
    assert "past the end" in lines[-1].reason


def test_two_byte_instruction_at_half_end_is_db():
    """Its operand would come from the start of the half (the PC wraps), not the next image byte."""
    lines = decode(bytes([MOV_A_IMMEDIATE, NOP]), origin=0x7FF)
    assert [line.mnemonic for line in lines] == ["db", "nop"]
    assert "0000h" in lines[0].reason


def test_long_jump_in_last_two_bytes_of_half_is_one_db():
    [line] = decode(bytes([JMP_PAGE0, 0x12]), origin=0xFFE)
    assert line.mnemonic == "db" and line.data == bytes([JMP_PAGE0, 0x12])
    assert line.operand_texts({}) == ["04h", "12h"]


def test_labels_name_line_starts_and_equate_other_targets():
    image = bytes([JMP_PAGE0, 0x04, MOV_A_IMMEDIATE, 0x00, JMP_PAGE0, 0x03, JC, 0x80])
    text = disassemble(image, origin=0, labels=True)
    assert "L0004:" in text  # a line start: labelled where it stands
    assert "jmp     L0004" in text
    assert "L0003           equ     0003h" in text  # inside `mov a,#0`: an equate
    assert "L0080           equ     0080h" in text  # outside the image
    assert "jmp     0004h" in disassemble(image, origin=0)


def test_bios_symbols_name_jumps_into_the_bios():
    jump_selectgame = bytes([0x44, 0xC3])  # JMP 2C3h, how a cart starts at 0400h
    text = disassemble(jump_selectgame, origin=0x400, bios_names=True)
    assert "jmp     selectgame" in text
    assert "selectgame      equ     02C3h" in text
    assert bios_symbols()[0x2C3].purpose in text
    assert "jmp     02C3h" in disassemble(jump_selectgame, origin=0x400)


def test_target_in_the_other_half_is_written_in_this_half():
    text = disassemble(bytes([SEL_MB1, 0x14, 0x00]), origin=0x400, labels=True)
    assert "call    L0800-0800h" in text
    text = disassemble(bytes([SEL_MB0, 0x54, 0xC3]), origin=0x900, bios_names=True)
    assert "call    selectgame+0800h" in text


def test_listing_has_org_and_address_bytes_comments():
    text = disassemble(bytes([MOV_A_IMMEDIATE, 0xAB, 0x06]), origin=0x400)
    assert "org     0400h" in text
    assert "mov     a,#0ABh" in text and "; 0400: 23 AB" in text
    assert "db      06h" in text and "; 0402: 06  undefined opcode" in text


@pytest.mark.parametrize(
    ("image", "origin", "message"),
    [
        (b"", 0, "empty"),
        (bytes(0x1001), 0, "past the end"),
        (bytes(0x801), 0x800, "past the end"),
        (b"\x00", 0x1000, "outside"),
        (b"\x00", -1, "outside"),
    ],
)
def test_bad_images_are_user_errors(image, origin, message):
    with pytest.raises(HilbridgeError, match=message):
        decode(image, origin)


def test_bios_symbols_agree_with_the_reference(shared_reference):
    """Every entry point of the shared table is ours at the same address with the same name."""
    with (shared_reference / "data" / "bios_entry_points.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    ours = bios_symbols()
    assert len(ours) == len(rows) == 55
    for row in rows:
        address = int(row["address"].removesuffix("h"), 16)
        if row["name"].startswith("("):  # the three vectors have no name in the source; ours end in _vector
            assert ours[address].name.endswith("_vector")
        else:
            assert ours[address].name == row["name"]


def test_cli_disassembles_a_file(tmp_path):
    rom = tmp_path / "cart.bin"
    rom.write_bytes(bytes([0x44, 0xC3, MOV_A_IMMEDIATE, 0x01]))
    result = CliRunner().invoke(cli, ["disasm", str(rom), "--org", "0x400", "--bios-symbols"])
    assert result.exit_code == 0, result.output
    assert "org     0400h" in result.output and "jmp     selectgame" in result.output
    out = tmp_path / "cart.asm"
    result = CliRunner().invoke(cli, ["disasm", str(rom), "--org", "1024", "-o", str(out)])
    assert result.exit_code == 0
    assert "org     0400h" in out.read_text()


@pytest.mark.parametrize(
    ("content", "options", "message"),
    [
        (None, [], "cannot read"),
        (b"", [], "empty"),
        (bytes(0x0C01), ["--org", "0x400"], "past the end"),
        (b"\x00", ["--org", "0x4OO"], "not a number"),
    ],
)
def test_cli_bad_input_exits_2(tmp_path, content, options, message):
    rom = tmp_path / "rom.bin"
    if content is not None:
        rom.write_bytes(content)
    result = CliRunner().invoke(cli, ["disasm", str(rom), *options])
    assert result.exit_code == 2
    assert "error:" in result.output and message in result.output
    assert "Traceback" not in result.output


def test_cartridge_bank_slices_2k_banks():
    image = bytes([1] * 0x800 + [2] * 0x800)
    assert cartridge_bank(image, 1) == bytes([2] * 0x800)
    assert cartridge_bank(b"\x07" * 100, 0) == b"\x07" * 100
    with pytest.raises(HilbridgeError, match="bank 2 does not exist"):
        cartridge_bank(image, 2)
    with pytest.raises(HilbridgeError, match="whole number"):
        cartridge_bank(image + b"\x00", 0)


def test_cli_bank_option_disassembles_one_bank_at_0400h(tmp_path):
    rom = tmp_path / "banked.bin"
    rom.write_bytes(bytes([0x00] * 0x800 + [0x27] * 0x800))  # bank 1 is all CLR A
    result = CliRunner().invoke(cli, ["disasm", str(rom), "--bank", "1"])
    assert result.exit_code == 0, result.output
    assert "org     0400h" in result.output
    assert result.output.count("clr     a") == 0x800 and "nop" not in result.output
    result = CliRunner().invoke(cli, ["disasm", str(rom)])
    assert result.exit_code == 0 and "org     0000h" in result.output
