"""The check's outputs: JSON, the side-by-side PNG, the HTML page (rendered by headless Chromium),
the disassembly around the PC, and the CLI's exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from check_support import SimulatedCapture, fixture_cart
from click.testing import CliRunner, Result
from conftest import require_tool
from PIL import Image

from hilbridge.check import check
from hilbridge.check.report import disassembly_around, result_dict, side_by_side, text_report, write_report
from hilbridge.cli.main import cli
from hilbridge.sim.deviations import Deviation


@pytest.fixture(scope="module")
def diverged():
    cart = fixture_cart("video_objects")
    deviation = Deviation("vdc_bit_flip", 3, 3)
    return check(cart, SimulatedCapture(cart, frames=12, deviation=deviation), frames=6), deviation


def test_the_json_is_valid_and_names_the_divergence(diverged) -> None:
    result, deviation = diverged
    data = json.loads(json.dumps(result_dict(result)))
    assert data["verdict"] == "diverged"
    assert data["divergence"]["cycle"] == deviation.injected[1]
    assert data["divergence"]["kind"] == "write"
    assert len(data["divergence"]["expected_events"]) == 32
    assert any(line.startswith("=>") for line in data["divergence"]["disassembly"])
    assert data["divergence"]["pixels_differing"] > 0  # the flipped bit moved something on screen


def test_the_text_report_shows_pc_disassembly_and_both_event_windows(diverged) -> None:
    text = text_report(diverged[0])
    assert text.splitlines()[0].startswith("diverged in frame 3 at cycle")
    assert "emulator PC" in text and "<- first difference" in text


def test_side_by_side_marks_exactly_the_differing_pixels() -> None:
    expected = np.zeros((243, 360), np.uint8)
    actual = expected.copy()
    actual[10, 20] = 5
    image = np.asarray(side_by_side(expected, actual, scale=1))
    mask = image[:, 2 * 360 + 8 :]
    assert mask.shape[1] == 360
    assert [tuple(p) for p in np.argwhere(mask.any(axis=2))] == [(10, 20)]


def test_disassembly_marks_the_pc_in_its_instruction() -> None:
    program = bytes(0x400) + bytes([0x23, 0x10, 0x90, 0x04, 0x00]) + bytes(0xBFB)  # mov a,#10h; movx; jmp
    lines = disassembly_around(program, 0x402)
    assert [line for line in lines if line.startswith("=>")] == ["=> 402  90     movx @r0, a"]


@pytest.mark.slow
def test_the_html_report_renders_in_headless_chromium(diverged, tmp_path: Path) -> None:
    chromium = require_tool("chromium", "chromium-browser")
    page = write_report(diverged[0], tmp_path / "report", "video_objects")
    html = page.read_text(encoding="utf-8")
    assert "data:image/png;base64," in html and "<script" not in html  # self-contained, static
    assert json.loads((tmp_path / "report" / "report.json").read_text())["verdict"] == "diverged"
    assert Image.open(tmp_path / "report" / "pictures.png").size[0] > 360
    shot = tmp_path / "report.png"
    options = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--screenshot={shot}",
        "--window-size=1200,1600",
    ]
    subprocess.run([chromium, *options, page.as_uri()], check=True, capture_output=True, timeout=120)
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 1600)
    rgb = np.asarray(image, np.uint32)  # one int per pixel: np.unique over rows sorted for seconds
    colours = rgb[..., 0] << 16 | rgb[..., 1] << 8 | rgb[..., 2]
    assert len(np.unique(colours)) > 20  # text and the pictures were drawn, not a blank page


def run_cli(*arguments: str) -> Result:
    """`hilbridge check ARGUMENTS` in this process (a Python start per call cost seconds of the suite);
    an exception the CLI did not turn into its message fails the test here."""
    result = CliRunner().invoke(cli, ["check", *arguments])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_cli_exit_codes_equal_diverged_error(tmp_path: Path) -> None:
    cart = tmp_path / "cpu_alu.bin"
    cart.write_bytes(fixture_cart("cpu_alu").image)
    equal = run_cli(str(cart), "-d", "sim", "--frames", "4")
    assert equal.exit_code == 0, equal.stderr
    assert equal.stdout.startswith("frames 0–3 equal")
    diverged = run_cli(str(cart), "-d", "sim?deviation=write_dropped&frame=2", "--frames", "4", "--json")
    assert diverged.exit_code == 1
    assert json.loads(diverged.stdout)["divergence"]["frame"] == 2
    error = run_cli(str(cart), "-d", "sim?deviation=nonsense", "--frames", "4")
    assert error.exit_code == 2
    assert "unknown deviation" in error.stderr and "Traceback" not in error.stderr
    both = run_cli(str(cart))
    assert both.exit_code == 2 and "either -d DEVICE or --capture FILE" in both.stderr


def test_cli_checks_a_capture_file_offline(tmp_path: Path) -> None:
    cart = tmp_path / "video_objects.bin"
    cart.write_bytes(fixture_cart("video_objects").image)
    capture = tmp_path / "run.hbcap"
    made = CliRunner().invoke(
        cli,
        ["capture", "-d", "sim?deviation=vdc_bit_flip&frame=3&seed=1", "--serve", str(cart), "--frames", "8",
         "-o", str(capture)],
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    result = run_cli(str(cart), "--capture", str(capture), "--report", str(tmp_path / "out"))
    assert result.exit_code == 1, result.stdout + result.stderr
    assert result.stdout.startswith("diverged in frame 3")
    assert (tmp_path / "out" / "report.html").is_file()
    other = tmp_path / "other.bin"
    other.write_bytes(fixture_cart("cpu_alu").image)
    refused = run_cli(str(other), "--capture", str(capture))
    assert refused.exit_code == 2
