"""Bounded work: hostile sources end in a clean `file:line:col: error:` (exit 2), not a hang or a crash.

Each case runs `hilbridge asm` in a child process under a 1 GB address-space limit and a timeout, so
before the limits existed these ended in MemoryError, RecursionError or a timeout instead.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

MEMORY_LIMIT = 1 << 30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _assemble(source: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "hilbridge", "asm", str(source), "-o", str(source.with_suffix(".bin"))]
    return subprocess.run(
        [*command, *options], capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory
    )


CASES = {
    "4000-digit number": ("\torg 400h\n\tdb " + "1" * 4000 + "\n", "x.a48:2:5: error:", "digits"),
    "5000-digit number": ("\torg 400h\n\tdb " + "1" * 5000 + "\n", "x.a48:2:1: error:", "characters long"),
    "doubling set": (
        "\torg 400h\nv\tset 3\n" + "v\tset v*v\n" * 40 + "\tdb v\n",
        "x.a48:",
        "64 bits",
    ),
    "doubling string set": (
        '\torg 400h\ns\tset "ab"\n' + "s\tset s+s\n" * 40,
        "x.a48:",
        "characters",
    ),
    "nested dup": ("\torg 400h\n\tdb 65535 dup (65535 dup (0))\n", "x.a48:2:5: error:", "bytes"),
    "10 MB line": ("\torg 400h\n\tdb 1" + ",1" * 5_000_000 + "\n", "x.a48:2:1: error:", "characters long"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_sources_are_clean_errors(tmp_path, case):
    text, where, message = CASES[case]
    source = tmp_path / "x.a48"
    source.write_text(text)
    run = _assemble(source)
    assert run.returncode == 2, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    first = run.stderr.splitlines()[0]
    assert first.startswith(str(tmp_path / where)) and message in first, first[:300]


def test_a_600_file_include_chain_is_a_clean_error(tmp_path):
    for number in range(600):
        (tmp_path / f"inc{number}.inc").write_text(f'\tinclude "inc{number + 1}.inc"\n')
    (tmp_path / "inc600.inc").write_text("\tnop\n")
    source = tmp_path / "x.a48"
    source.write_text('\torg 400h\n\tinclude "inc0.inc"\n')
    run = _assemble(source)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert "error: includes nested more than" in run.stderr.splitlines()[0]


def test_a_5000_digit_define_is_a_clean_error(tmp_path):
    source = tmp_path / "x.a48"
    source.write_text("\torg 400h\n\tdb X\n")
    run = _assemble(source, "-D", "X=" + "9" * 5000)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "digits" in run.stderr and len(run.stderr) < 1000  # the number is not echoed back whole
