"""`hilbridge emu run`: runs a cartridge, writes the trace, applies input scripts, rejects bad input."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from machine_doubles import assemble_cart

from hilbridge.cli.main import cli
from hilbridge.errors import HilbridgeError
from hilbridge.machine.inputs import parse_input_script

# Every frame: wait for VBL, then write joystick 0 and keyboard row 4 to VDC registers A3/80h.
PROGRAM = """
        org 400h
        mov a,#0B0h
        outl p1,a
        mov r0,#0A1h
wait:   movx a,@r0
        jb3 read
        jmp wait
read:   anl p2,#0F8h
        ins a,bus
        mov r1,#80h
        movx @r1,a
        orl p2,#04h
        in a,p2
        mov r1,#81h
        movx @r1,a
        jmp wait
"""


def test_emu_run_writes_a_trace_that_follows_the_input_script(tmp_path):
    cart = tmp_path / "cart.bin"
    cart.write_bytes(assemble_cart(PROGRAM))
    script = tmp_path / "input.txt"
    script.write_text("# test\n3 joy0 up+fire\n3 press A\n6 joy0 none\n6 release A\n")
    trace = tmp_path / "trace.txt"
    result = CliRunner().invoke(
        cli, ["emu", "run", str(cart), "--frames", "9", "--trace", str(trace), "--input", str(script)]
    )
    assert result.exit_code == 0, result.output
    writes = [line.split() for line in trace.read_text().splitlines() if line.startswith("W")]
    joystick = [int(fields[4], 16) for fields in writes if fields[3] == "80"]
    keyboard = [int(fields[4], 16) for fields in writes if fields[3] == "81"]
    assert joystick[:2] == [0xFF, 0xFF] and 0xEE in joystick and joystick[-1] == 0xFF
    assert 0x0C | 0xE0 in keyboard and keyboard[-1] == 0xFC


def test_emu_run_rejects_bad_files_with_exit_status_2(tmp_path):
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    odd = tmp_path / "odd.bin"
    odd.write_bytes(bytes(3000))
    bios = tmp_path / "bios.bin"
    bios.write_bytes(bytes(1000))
    good = tmp_path / "good.bin"
    good.write_bytes(bytes(2048))
    runner = CliRunner()
    for arguments, message in [
        ([str(empty)], "empty"),
        ([str(odd)], "odd.bin: error: not a cartridge image"),
        ([str(tmp_path / "missing.bin")], "cannot read"),
        ([str(good), "--bios", str(bios)], "1024 bytes"),
    ]:
        result = runner.invoke(cli, ["emu", "run", *arguments, "--frames", "1"])
        assert result.exit_code == 2 and message in result.output, arguments


def test_input_script_errors_point_at_line_and_column():
    with pytest.raises(HilbridgeError) as caught:
        parse_input_script("1 press A\n7 joy2 up\n", "in.txt")
    assert str(caught.value).startswith("in.txt:2:3: error: unknown action")
