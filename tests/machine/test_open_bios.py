"""Issue 13: the open BIOS. Its image rebuilds byte for byte, every entry point sits at its documented
address, and each routine keeps its contract (docs/bios.md) on our emulator."""

from __future__ import annotations

import re
import warnings
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_bios_support import BIOS_FIXTURES, bios_cart, code, run_to_done

from hilbridge.machine.bios import (
    BUILTIN_BIOSES,
    UnimplementedBiosRoutineWarning,
    build_bios,
    builtin_bios,
    default_bios,
    entry_points,
    open_bios,
    read_bios,
)
from hilbridge.machine.bios_cycles import SETUPS, bios_markdown, call_routine
from hilbridge.machine.console import KEYBOARD, Console
from hilbridge.toolchain.assembler import assemble_text

ENTRIES = {entry.name: entry for entry in entry_points()}


def test_open_bios_rebuilds_identically_with_our_assembler():
    assert build_bios("open") == open_bios().image


def test_open_bios_is_the_default_and_the_stub_stays_reachable_by_name():
    assert default_bios().image == open_bios().image
    assert read_bios("boot").image == builtin_bios("boot").image != open_bios().image
    assert Console(bytes(2048)).bios.name == BUILTIN_BIOSES["open"].title


def test_every_entry_point_of_the_toolchain_table_is_in_ours_at_the_same_address():
    text = (BIOS_FIXTURES.parents[1] / "hilbridge" / "toolchain" / "bios_symbols.tsv").read_text()
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")][1:]
    ours = {entry.address for entry in entry_points()}
    assert {int(address, 16) for address, _name, _purpose in rows} == ours


def test_entry_points_match_the_shared_reference(shared_reference):
    text = (shared_reference / "data" / "bios_entry_points.tsv").read_text()
    documented = {int(line.split("\t")[0][:4], 16) for line in text.splitlines()[1:] if line}
    assert documented == {entry.address for entry in entry_points()}


def test_implemented_routines_are_assembled_at_their_entry_points():
    source = (BIOS_FIXTURES.parents[1] / "hilbridge" / "machine" / "bios" / "open.asm").read_text()
    symbols = assemble_text(source, name="open.asm").symbols
    for entry in entry_points():
        if entry.implemented in ("yes", "trap", "internal") and entry.address >= 9:
            assert symbols[entry.name.upper()] == entry.address, entry.name


def test_traps_hold_jmp_to_themselves():
    image = open_bios().image
    for entry in entry_points():
        if entry.implemented == "trap":
            address = entry.address
            assert image[address] == 0x04 | (address >> 3) & 0xE0 and image[address + 1] == address & 0xFF


def test_the_include_names_the_entry_points_at_their_addresses():
    text = (BIOS_FIXTURES / "bios.inc").read_text()
    for name, value in re.findall(r"^(\w+)\s+equ\s+([0-9A-F]+)h", text, re.MULTILINE):
        assert ENTRIES[name].address == int(value, 16), name


def test_a_call_to_an_unimplemented_routine_warns_once_naming_it():
    """Every routine of the open BIOS is implemented now, so the trap is made: doclock as `jmp $`."""
    image, _ = bios_cart(code("call doclock"))
    bios = open_bios()
    trapped = bytearray(bios.image)
    trapped[0x1B0:0x1B2] = bytes([0x24, 0xB0])  # jmp 1B0h
    console = Console(image, bios=replace(bios, image=bytes(trapped), traps=((0x1B0, "doclock"),)))
    with pytest.warns(UnimplementedBiosRoutineWarning, match=r"doclock \(01B0h\)"):
        console.run_frames(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        console.run_frames(2)
    assert console.cpu.pc == 0x1B0


# -- reset, init, selection of VDC and RAM ------------------------------------------------------------
def test_reset_and_interrupt_vectors_jump_to_the_cartridge():
    image = open_bios().image
    assert image[0:2] == bytes([0x84, 0x00])  # JMP 400h
    assert image[3:5] == bytes([0x84, 0x02])
    assert image[7:9] == bytes([0x84, 0x04])


def test_init_clears_vdc_characters_and_both_rams():
    def dirty(console):
        console.ram[:] = bytes([0x55]) * 128
        console.cpu.ram[0x20:0x40] = bytes([0xAA]) * 32

    console = run_to_done("", console_setup=dirty)
    registers = console.vdc.registers
    # every character's Y (a quad's four share the first one's) is below the picture
    assert bytes(registers[0x10:0x40:4]) + bytes(registers[0x40:0x80:16]) == bytes([0xF8]) * 16
    assert registers[0xA0] == 0 and registers[0xAA] == 0 and registers[0x80] == 0
    assert console.ram == bytes(128)
    assert console.cpu.ram[0x20:0x40] == bytes(32)
    assert console.p1 & 0x58 == 0x10  # VDC selected, RAM off, external bus on


def test_vdcenable_and_extramenable_switch_p1():
    assert run_to_done(code("call extramenable")).p1 & 0x58 == 0x08
    assert run_to_done(code("call extramenable", "call vdcenable")).p1 & 0x58 == 0x10


def test_gfxon_and_gfxoff_switch_the_objects_bit_only():
    on = run_to_done(code("mov r0,#0A0h", "mov a,#4Ah", "movx @r0,a", "mov r0,#77h", "call gfxon"))
    assert on.vdc.registers[0xA0] == 0x6A and on.cpu.register(0) == 0x77
    off = run_to_done(code("call gfxon", "call gfxoff"))
    assert off.vdc.registers[0xA0] == 0x00


# -- printing ---------------------------------------------------------------------------------------
def expected_char23(y: int, code: int, colour: int) -> tuple[int, int]:
    """A character shows glyph `code` when its 9-bit pointer is 8 * code - y / 2 (the pointer rule of
    hilbridge/machine/video.py)."""
    pointer = (8 * code - y // 2) & 0x1FF
    return pointer & 0xFF, (colour & 0x0E) | pointer >> 8


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 255), st.integers(0, 63), st.integers(0, 255))
def test_calcchar23(y, char, colour):
    console = run_to_done(code(f"mov r4,#{y}", f"mov r5,#{char}", f"mov r6,#{colour}", "call calcchar23"))
    assert (console.cpu.register(5), console.cpu.register(6)) == expected_char23(y, char, colour)
    assert console.cpu.register(4) == y


def glyph_shown(registers: bytes | bytearray, address: int) -> int:
    """The character code a character register shows (its pointer read back through the pointer
    rule of hilbridge/machine/video.py)."""
    y, pointer = registers[address], registers[address + 2] | (registers[address + 3] & 1) << 8
    start = (pointer + y // 2) & 0x1FF
    assert start % 8 == 0
    return start // 8


def test_printchar_writes_a_character_and_moves_on():
    console = run_to_done(
        code("mov r0,#14h", "mov r3,#30h", "mov r4,#50h", "mov r5,#20h", "mov r6,#0Ah", "call printchar")
    )
    registers = console.vdc.registers
    assert registers[0x14] == 0x50 and registers[0x15] == 0x30 and registers[0x17] & 0x0E == 0x0A
    assert glyph_shown(registers, 0x14) == 0x20
    assert console.cpu.register(0) == 0x18 and console.cpu.register(3) == 0x38


def test_putchar23_writes_bytes_2_and_3():
    console = run_to_done(code("mov r0,#12h", "mov r4,#60h", "mov r5,#00h", "mov r6,#02h", "call putchar23"))
    # the pointer rule (hilbridge/machine/video.py): Y 60h, pointer D0h, attribute bit 0 set shows '0'
    assert console.vdc.registers[0x12] == 0xD0 and console.vdc.registers[0x13] == 0x03
    assert console.cpu.register(0) == 0x14


def test_clearchar_moves_every_character_below_the_picture():
    console = run_to_done(
        code("mov r0,#10h", "mov r3,#10h", "mov r4,#20h", "mov r5,#1", "call printchar", "call clearchar")
    )
    registers = console.vdc.registers
    assert bytes(registers[0x10:0x40:4]) + bytes(registers[0x40:0x80:16]) == bytes([0xF8]) * 16


def test_selectgame_shows_select_game_and_starts_the_game_with_the_key():
    source = code(
        'include "bios.inc"', "org 400h", "jmp selectgame", "jmp irq", "retr", "nop", "jmp vsyncirq",
        "jmp game", "jmp irqend", "game: jmp game",
    )  # fmt: skip
    result = assemble_text(source, name="sg.asm", include_dirs=[BIOS_FIXTURES])
    image = bytearray(b"\xff" * 2048)
    image[: len(result.image)] = result.image
    console = Console(bytes(image))
    console.run_frames(10)
    registers = console.vdc.registers
    codes = [glyph_shown(registers, 0x10 + 4 * n) for n in range(11)]
    text = "".join(charset_code_names()[code] for code in codes)
    assert text == "SELECT GAME"
    assert registers[0xA0] & 0x20
    console.set_key("4", True)
    console.run_frames(2)
    while console.cpu.pc != result.symbols["GAME"] or console.cpu.irq_in_progress:
        console.step()
    assert console.cpu.a == 4
    # the game starts on an initialised screen (g7kbios 2.5), graphics on, in register bank 1
    registers = console.vdc.registers
    assert all(registers[0x10 + 4 * n] == 0xF8 for n in range(12)), "SELECT GAME still shown"
    assert registers[0xA0] & 0x20
    assert console.cpu.psw & 0x10


def charset_code_names() -> dict[int, str]:
    """Character code -> glyph for the keys' glyphs: a key's code is row * 8 + bit
    (hilbridge/machine/keyboard.tsv)."""
    names = {row * 8 + bit: key for key, (row, bit) in KEYBOARD.items() if len(key) == 1}
    names[KEYBOARD["SPACE"][0] * 8 + KEYBOARD["SPACE"][1]] = " "
    return names


def test_docs_bios_md_is_generated_from_the_table_and_the_measured_cycles():
    generated = bios_markdown()
    assert (BIOS_FIXTURES.parents[1] / "docs" / "bios.md").read_text(encoding="utf-8") == generated
    assert all(f"`{entry.name}`" in generated for entry in entry_points())


@pytest.mark.parametrize("routine", sorted(SETUPS))
def test_routines_change_only_the_registers_their_row_names(routine):
    _cycles, before, after = call_routine(routine, SETUPS[routine])
    entry = ENTRIES[routine]
    named = {int(n) for n in re.findall(r"R(\d)", entry.clobbers + " " + entry.outputs)}
    if entry.clobbers == "everything":
        named = set(range(8))
    changed = {n for n in range(8) if before[n] != after[n]}
    assert changed <= named, f"{routine} changed R{sorted(changed - named)}"


def test_the_cli_runs_the_open_bios_by_default_and_the_stub_by_name(tmp_path):
    from click.testing import CliRunner

    from hilbridge.cli.main import cli

    cart = tmp_path / "cart.bin"
    cart.write_bytes(bios_cart(code("nop"))[0])
    for option, title in (((), "open"), (("--bios", "boot"), "boot")):
        result = CliRunner().invoke(cli, ["emu", "run", str(cart), "--frames", "2", *option])
        assert result.exit_code == 0, result.output
        assert f"hilbridge {title} BIOS" in result.output
