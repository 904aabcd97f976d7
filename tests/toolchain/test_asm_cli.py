"""`hilbridge asm` outputs: binary, Intel HEX, listing, symbols, -I, -D, --fill, --range."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from hilbridge.cli.main import cli

SOURCE = """\
\tcpu\t8048
\torg\t402h
\tinclude\t"defs.h"
start:\tmov\ta,#value
\tjmp\tstart
\tifdef\tdebug
\tdb\t0eeh
\tendif
"""


def make(tmp_path: Path) -> Path:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "defs.h").write_text("value\tequ\t5\n")
    source = tmp_path / "prog.a48"
    source.write_text(SOURCE)
    return source


def invoke(*arguments: str):
    return CliRunner().invoke(cli, ["asm", *arguments])


def test_binary_with_include_dir_and_define(tmp_path):
    source = make(tmp_path)
    out = tmp_path / "prog.bin"
    result = invoke(str(source), "-o", str(out), "--plain", "-I", str(tmp_path / "inc"), "-D", "DEBUG=1")
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == bytes([0x23, 0x05, 0x84, 0x02, 0xEE])


def test_define_without_value_is_one(tmp_path):
    source = make(tmp_path)
    out = tmp_path / "prog.bin"
    assert (
        invoke(str(source), "-o", str(out), "--plain", "-I", str(tmp_path / "inc"), "-D", "debug").exit_code
        == 0
    )
    assert out.read_bytes()[-1] == 0xEE


def test_range_and_fill_like_p2bin(tmp_path):
    source = make(tmp_path)
    out = tmp_path / "prog.bin"
    result = invoke(
        str(source), "-o", str(out), "-I", str(tmp_path / "inc"), "--range", "400h-407h", "--fill", "0"
    )
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == bytes([0, 0, 0x23, 0x05, 0x84, 0x02, 0, 0])


def test_intel_hex(tmp_path):
    source = make(tmp_path)
    out = tmp_path / "prog.hex"
    assert invoke(str(source), "-o", str(out), "--plain", "-I", str(tmp_path / "inc"), "--hex").exit_code == 0
    lines = out.read_text().splitlines()
    assert lines[0] == ":040402002305840248"
    assert lines[-1] == ":00000001FF"
    record = bytes.fromhex(lines[0][1:])
    assert sum(record) & 0xFF == 0


def test_listing_and_symbols(tmp_path):
    source = make(tmp_path)
    listing, symbols = tmp_path / "prog.lst", tmp_path / "prog.sym"
    result = invoke(
        str(source), "-o", str(tmp_path / "p.bin"), "-I", str(tmp_path / "inc"),
        "--listing", str(listing), "--symbols", str(symbols),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = listing.read_text()
    assert "0402  23 05" in text and "start:\tmov\ta,#value" in text
    assert "START\t0402" in symbols.read_text().splitlines()
    assert "VALUE\t0005" in symbols.read_text().splitlines()


def test_warnings_go_to_stderr_and_do_not_fail(tmp_path):
    source = tmp_path / "bank.a48"
    source.write_text("\torg 400h\n\tcall 900h\n")
    result = invoke(str(source), "-o", str(tmp_path / "b.bin"), "--plain")
    assert result.exit_code == 0
    assert "bank.a48:2:1: warning:" in result.stderr
    assert (tmp_path / "b.bin").read_bytes() == bytes([0xF5, 0x34, 0x00])


def test_share_file_exports_shared_symbols_as_equs(tmp_path):
    source = tmp_path / "bank0.a48"
    source.write_text("\torg 0a76h\ntune\tnop\nlevel\tequ\t12\n\tshared\ttune,level\n")
    share = tmp_path / "bank0.inc"
    result = invoke(str(source), "-o", str(tmp_path / "b.bin"), "--share-file", str(share))
    assert result.exit_code == 0, result.output
    lines = share.read_text().splitlines()
    assert lines[1:] == ["tune equ 0A76H", "level equ 0CH"]
    other = tmp_path / "bank1.a48"
    other.write_text('\tinclude "bank0.inc"\n\torg 0\n\tdw tune\n\tdb level\n')
    assert invoke(str(other), "-o", str(tmp_path / "c.bin")).exit_code == 0
    assert (tmp_path / "c.bin").read_bytes() == bytes([0x76, 0x0A, 12])


def test_range_with_open_start_like_p2bin(tmp_path):
    source = make(tmp_path)
    out = tmp_path / "prog.bin"
    result = invoke(str(source), "-o", str(out), "-I", str(tmp_path / "inc"), "--range", "$-$407")
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == bytes([0x23, 0x05, 0x84, 0x02, 0xFF, 0xFF])


def test_a_range_that_would_drop_assembled_bytes_is_an_error(tmp_path):
    source = make(tmp_path)
    out = tmp_path / "prog.bin"
    result = invoke(str(source), "-o", str(out), "-I", str(tmp_path / "inc"), "--range", "400h-403h")
    assert result.exit_code == 2
    assert "error:" in result.output and "0404h-0405h" in result.output and "--range" in result.output
    assert not out.exists()


def test_a_cartridge_source_gets_a_cartridge_sized_image_from_0400h_by_default(tmp_path):
    source = make(tmp_path)
    out = tmp_path / "prog.bin"
    result = invoke(str(source), "-o", str(out), "-I", str(tmp_path / "inc"))
    assert result.exit_code == 0, result.output
    image = out.read_bytes()
    assert len(image) == 2048 and image[:6] == bytes([0xFF, 0xFF, 0x23, 0x05, 0x84, 0x02])
    assert set(image[6:]) == {0xFF}
    assert "2048 bytes" in result.stderr and "0400h-0BFFh" in result.stderr and "--plain" in result.stderr
    from hilbridge.machine.cartridge import read_cartridge

    assert read_cartridge(out).mapper == "o2_rom"


def test_a_source_below_0400h_keeps_the_plain_image(tmp_path):
    source = tmp_path / "bios.a48"
    source.write_text("\torg 0\n\tjmp 0\n")
    out = tmp_path / "bios.bin"
    assert invoke(str(source), "-o", str(out)).exit_code == 0
    assert out.read_bytes() == bytes([0x04, 0x00])
