"""The README's three lines of the check do what they say: capture, check, open the report it names."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner
from conftest import PROJECT_ROOT

from hilbridge.cli.main import cli
from hilbridge.oracle.carts import build_cart, load_manifest


def readme_block(heading: str) -> list[str]:
    """The command lines (comments dropped) of the first sh block after `heading` in README.md."""
    text = (PROJECT_ROOT / "README.md").read_text()
    section = text[text.index(heading) :]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, f"no sh block after {heading!r}"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_check_lines_capture_check_and_name_the_report_they_write(tmp_path: Path, monkeypatch):
    capture, check, opened = readme_block("## Record a console and check it against the emulator")
    monkeypatch.chdir(tmp_path)
    specs = {spec.name: spec for spec in load_manifest(PROJECT_ROOT / "fixtures" / "carts")}
    Path("game.bin").write_bytes(build_cart(specs["video_objects"]))
    words = shlex.split(capture)[1:]
    words[words.index("-d") + 1] = "sim"  # no console here: the simulated one
    words[words.index("--seconds") + 1] = "0.1"
    made = CliRunner().invoke(cli, words)
    assert made.exit_code == 0, made.output
    checked = CliRunner().invoke(cli, shlex.split(check)[1:])
    assert checked.exit_code == 0, checked.output
    target = shlex.split(opened)[-1]
    assert Path(target).is_file(), f"the README opens {target}, the check wrote {sorted(Path().rglob('*'))}"
