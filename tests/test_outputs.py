"""The one overwrite rule, applied by every command that writes files (hilbridge.files.check_outputs)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hilbridge.cli.main import cli
from hilbridge.sim.demo import demo_image

SOURCE = "\torg 400h\n\tjmp 400h\n"


def _run(*arguments: str):
    return CliRunner().invoke(cli, list(arguments))


@pytest.fixture
def cart(tmp_path):
    path = tmp_path / "c.bin"
    path.write_bytes(demo_image())
    return path


def test_asm_refuses_to_write_its_source(tmp_path):
    source = tmp_path / "x.asm"
    source.write_text(SOURCE)
    result = _run("asm", str(source), "-o", str(source), "--force")
    assert result.exit_code == 2 and "would overwrite the input" in result.output
    assert source.read_text() == SOURCE


def test_asm_replaces_an_existing_output_only_with_force(tmp_path):
    source = tmp_path / "x.asm"
    source.write_text(SOURCE)
    out = tmp_path / "x.bin"
    out.write_bytes(b"keep me")
    refused = _run("asm", str(source), "-o", str(out))
    assert refused.exit_code == 2 and "use --force" in refused.output and out.read_bytes() == b"keep me"
    assert _run("asm", str(source), "-o", str(out), "--force").exit_code == 0
    assert len(out.read_bytes()) == 2048


def test_disasm_refuses_to_write_its_rom(cart):
    result = _run("disasm", str(cart), "-o", str(cart), "--force")
    assert result.exit_code == 2 and "input" in result.output
    assert cart.read_bytes() == demo_image()


@pytest.mark.parametrize("option", ["--trace", "--png", "--gif", "--wav"])
def test_emu_run_refuses_to_write_the_cartridge(cart, option):
    result = _run("emu", "run", str(cart), "--frames", "1", option, str(cart), "--force")
    assert result.exit_code == 2 and "input" in result.output
    assert cart.read_bytes() == demo_image()


def test_emu_run_refuses_one_file_for_two_outputs(cart, tmp_path):
    picture = tmp_path / "a.png"
    result = _run("emu", "run", str(cart), "--frames", "1", "--png", str(picture), "--gif", str(picture))
    assert result.exit_code == 2 and "--png and --gif name the same file" in result.output
    assert not picture.exists()


def test_dump_checks_a_missing_output_folder_before_reading(tmp_path):
    result = _run("dump", "-d", "sim", "-o", str(tmp_path / "nodir" / "x.bin"))
    assert result.exit_code == 2 and "no such folder" in result.output
    assert "adapter:" not in result.output  # nothing was read


def test_dump_refuses_an_existing_output_unless_forced(tmp_path):
    out = tmp_path / "x.bin"
    out.write_bytes(b"an earlier dump")
    refused = _run("dump", "-d", "sim", "-o", str(out))
    assert refused.exit_code == 2 and "use --force" in refused.output
    assert out.read_bytes() == b"an earlier dump"
    assert _run("dump", "-d", "sim", "-o", str(out), "--force").exit_code == 0
    assert out.read_bytes() == demo_image()


def test_game_new_checks_a_missing_output_folder(tmp_path):
    result = _run("game", "new", "conquest", str(tmp_path / "nodir" / "g.json"), "--players", "a,b")
    assert result.exit_code == 2 and "no such folder" in result.output
    assert "Traceback" not in result.output


def test_oracle_mame_checks_a_missing_output_folder_before_running_mame(cart, tmp_path, monkeypatch):
    import hilbridge.cli.oracle as oracle_cli

    def no_mame(*args, **kwargs):
        raise AssertionError("MAME was started although the output cannot be written")

    monkeypatch.setattr(oracle_cli, "run_mame", no_mame)
    result = _run("oracle", "mame", str(cart), "--out", str(tmp_path / "nodir" / "t.txt"))
    assert result.exit_code == 2 and "no such folder" in result.output
