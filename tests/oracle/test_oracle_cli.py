"""`hilbridge oracle mame` and `hilbridge oracle compare` from the command line."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import require_tool
from fixture_runs import cart_image

from hilbridge.cli.main import cli
from hilbridge.oracle.trace import parse_trace


def test_missing_mame_is_a_user_error(tmp_path, monkeypatch):
    monkeypatch.setenv("MAME", "no-such-mame-binary")
    cart = tmp_path / "cart.bin"
    cart.write_bytes(cart_image("cpu_alu"))
    result = CliRunner().invoke(cli, ["oracle", "mame", str(cart), "--out", str(tmp_path / "t.txt")])
    assert result.exit_code == 2
    assert "apt-get install mame" in result.output
    assert not (tmp_path / "t.txt").exists()


def test_unreadable_cart_names_the_file(tmp_path):
    missing = tmp_path / "nope.bin"
    result = CliRunner().invoke(cli, ["oracle", "mame", str(missing), "--out", str(tmp_path / "t.txt")])
    assert result.exit_code == 2
    assert f"{missing}: error: cannot read cartridge image" in result.output


@pytest.mark.mame
def test_mame_command_writes_trace_and_frames(tmp_path):
    require_tool("mame")
    cart = tmp_path / "cart.bin"
    cart.write_bytes(cart_image("video_midframe"))
    out = tmp_path / "trace.txt"
    arguments = ["oracle", "mame", str(cart), "--frames", "20", "--out", str(out), "--region", "pal"]
    result = CliRunner().invoke(cli, [*arguments, "--reads", "--pixels", str(tmp_path / "px")])
    assert result.exit_code == 0, result.output
    trace = parse_trace(out.read_text(), str(out))
    assert trace.header["system"] == "videopac" and trace.complete
    assert len(trace.frames) == 20 and len(trace.pixel_frames) == 20
    assert trace.reads() and trace.writes()
    pictures = np.load(tmp_path / "px" / "frames.npy")
    assert pictures.shape[1:] == (243, 360) and max(trace.pixel_frames) == len(pictures) - 1


@pytest.mark.mame
def test_compare_command_reports_equal_accesses(tmp_path):
    require_tool("mame")
    cart = tmp_path / "cart.bin"
    cart.write_bytes(cart_image("cpu_addressing"))
    result = CliRunner().invoke(cli, ["oracle", "compare", str(cart), "--frames", "30", "--slot", "o2_rom"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("equal: ")


def test_compare_with_no_accesses_on_either_side_is_not_equal(tmp_path, monkeypatch):
    from types import SimpleNamespace

    import hilbridge.cli.oracle as oracle_cli
    import hilbridge.oracle.emulator as emulator
    from hilbridge.oracle.trace import FrameEnd, Trace

    def silent_run(*args, **kwargs):
        return SimpleNamespace(trace=Trace(frames=[FrameEnd(0, 14000, 0x400)], complete=True))

    monkeypatch.setattr(oracle_cli, "run_mame", silent_run)
    monkeypatch.setattr(emulator, "run_emulator", silent_run)
    cart = tmp_path / "cart.bin"
    cart.write_bytes(cart_image("cpu_alu"))
    result = CliRunner().invoke(cli, ["oracle", "compare", str(cart), "--frames", "1"])
    assert result.exit_code != 0
    assert "equal" not in result.output and "nothing compared" in result.output
