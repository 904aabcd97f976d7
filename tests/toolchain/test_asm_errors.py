"""Every kind of user error goes through `hilbridge asm` as `file:line:col: error: ...`, exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from hilbridge.cli.main import cli

# (name, source, line, column, words the message must contain)
CASES = [
    ("bad syntax", "\tnop\n\tmov a,#(1+\n", 2, 12, "operand is expected"),
    ("wrong operands", "\tmov a,@r2\n", 1, 2, "not an MCS-48 instruction form"),
    ("unknown symbol", "\torg 0\n\tjmp nowhere\n", 2, 6, "'nowhere' is not defined"),
    ("unknown instruction", "\tfrobnicate a\n", 1, 2, "unknown instruction or macro 'frobnicate'"),
    ("unsupported directive", "\tstruct\n", 1, 2, "asl directive 'struct' is not supported"),
    ("page violation", "\torg 4f0h\n\tjz 510h\n", 2, 5, "outside the current page 0x0400-0x04ff"),
    ("djnz page violation", "\torg 4f0h\n\tdjnz r1,600h\n", 2, 10, "outside the current page"),
    ("immediate range", "\tmov a,#300\n", 1, 9, "out of range"),
    ("jump range", "\tjmp 1000h\n", 1, 6, "out of range"),
    ("bad hex number", "\tdb 0FGh\n", 1, 5, "bad number '0FGh'"),
    ("bad suffix", "\tdb 12xh\n", 1, 5, "bad number"),
    ("unterminated string", '\tdb "abc\n', 1, 5, "closing quote"),
    ("duplicate label", "x nop\nx nop\n", 2, 1, "'x' is already defined"),
    ("macro without endm", "m macro\n\tnop\n", 1, 3, "MACRO without ENDM"),
    ("if without endif", "\tnop\n\tif 1\n", 2, 2, "IF without ENDIF"),
    ("endif without if", "\tendif\n", 1, 2, "ENDIF without IF"),
    ("division by zero", "\tdb 1/0\n", 1, 5, "division by zero"),
    ("missing include", '\tinclude "nothere.h"\n', 1, 10, "cannot find include file 'nothere.h'"),
    ("error directive", '\terror "custom stop"\n', 1, 2, "custom stop"),
    ("recursive macro", "m macro\n\tm\n\tendm\n\tm\n", 2, None, "nested too deeply"),
    ("wrong cpu", "\tcpu z80\n", 1, 2, "not supported"),
]

PREFIX = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): error: ")


def run(tmp_path: Path, source: str, *options: str):
    path = tmp_path / "prog.a48"
    path.write_text(source)
    return path, CliRunner().invoke(cli, ["asm", str(path), "-o", str(tmp_path / "out.bin"), *options])


@pytest.mark.parametrize(("name", "source", "line", "column", "words"), CASES, ids=[c[0] for c in CASES])
def test_user_error_reports_file_line_column(tmp_path, name, source, line, column, words):
    path, result = run(tmp_path, source)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    first = result.stderr.splitlines()[0]
    match = PREFIX.match(first)
    assert match, first
    assert match["file"] == str(path)
    assert int(match["line"]) == line
    if column is not None:
        assert int(match["column"]) == column
    assert words in first
    assert not (tmp_path / "out.bin").exists()


def test_bank_violation_is_an_error_when_auto_select_is_off(tmp_path):
    _, result = run(tmp_path, "\torg 400h\n\tcall 900h\n", "--no-auto-bank")
    assert result.exit_code == 2
    assert re.match(r".*prog\.a48:2:7: error: target 0x0900 is outside the current 2K bank", result.stderr)


def test_circular_include_names_the_file(tmp_path):
    (tmp_path / "a.h").write_text('\tinclude "b.h"\n')
    (tmp_path / "b.h").write_text('\tinclude "a.h"\n')
    _, result = run(tmp_path, '\tinclude "a.h"\n')
    assert result.exit_code == 2
    assert re.match(r".*b\.h:1:10: error: circular include of 'a\.h'", result.stderr)


def test_error_inside_an_include_points_into_it(tmp_path):
    (tmp_path / "defs.h").write_text("\tnop\n\tmov a,#999\n")
    _, result = run(tmp_path, '\tinclude "defs.h"\n')
    assert result.exit_code == 2
    assert re.match(r".*defs\.h:2:9: error: immediate value", result.stderr)


def test_several_errors_are_reported_together(tmp_path):
    _, result = run(tmp_path, "\tjmp a1\n\tjmp a2\n\tjmp a3\n")
    lines = [line for line in result.stderr.splitlines() if ": error: " in line]
    assert [line.split(":")[1] for line in lines] == ["1", "2", "3"]


def test_bad_options_exit_2(tmp_path):
    _, result = run(tmp_path, "\tnop\n", "--fill", "300")
    assert result.exit_code == 2
    assert "--fill" in result.stderr
    _, result = run(tmp_path, "\tnop\n", "-D", "X=zz")
    assert result.exit_code == 2


def test_missing_source_file(tmp_path):
    result = CliRunner().invoke(cli, ["asm", str(tmp_path / "none.a48"), "-o", str(tmp_path / "x.bin")])
    assert result.exit_code == 2
    assert "none.a48: error: cannot read source" in result.stderr


def test_failed_assembly_keeps_the_old_output(tmp_path):
    (tmp_path / "out.bin").write_bytes(b"old")
    _, result = run(tmp_path, "\tjmp nowhere\n")
    assert result.exit_code == 2
    assert (tmp_path / "out.bin").read_bytes() == b"old"


def test_code_beyond_4k_is_an_error(tmp_path):
    # asl: "address overflow" for bytes past 0FFFh; the 8048 cannot fetch there.
    _, result = run(tmp_path, "\torg 0ffeh\n\tnop\n\tnop\n\tnop\n")
    assert result.exit_code == 2
    assert re.match(r".*prog\.a48:4:1: error: address 0x1000 is beyond the 8048's 4K", result.stderr)
