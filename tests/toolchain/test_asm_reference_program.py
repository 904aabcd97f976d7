"""An original program using most of the dialect assembles to exactly what asl 1.42 made of it.

`data/asm_dialect.a48` (written for this test) was assembled once with asl 1.42 (Bld 148) and
p2bin; `data/asm_dialect.bin` is that output. asl's own `bitfuncs.inc` was on asl's include path
there; here the program gets hilbridge's built-in one.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from hilbridge.cli.main import cli
from hilbridge.toolchain.assembler import assemble

DATA = Path(__file__).parent / "data"


def test_dialect_program_matches_asl():
    result = assemble(DATA / "asm_dialect.a48")
    expected = (DATA / "asm_dialect.bin").read_bytes()
    assert result.origin == 0x400
    assert len(result.image) == len(expected)
    for offset, (ours, theirs) in enumerate(zip(result.image, expected, strict=True)):
        assert ours == theirs, f"first difference at {result.origin + offset:04X}h"
    # asl adds SEL MB1/MB0 for the two plain cross-half jumps; the program's CALL macro avoids it.
    assert sum("inserted SEL MB" in warning for warning in result.warnings) == 2


def test_dialect_program_through_the_cli(tmp_path):
    out = tmp_path / "dialect.bin"
    result = CliRunner().invoke(cli, ["asm", str(DATA / "asm_dialect.a48"), "-o", str(out), "--plain"])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (DATA / "asm_dialect.bin").read_bytes()
