"""Shared fixtures: the reference material in ../shared, and external tools that CI must have."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED = PROJECT_ROOT.parent / "shared"
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def shared_reference() -> Path:
    """`../shared/reference`, or a skip where it is absent (a user's clone has no shared/)."""
    path = SHARED / "reference"
    if not path.is_dir():
        if IN_CI:
            pytest.fail("../shared/reference is missing in CI")
        pytest.skip("../shared/reference is not present (only developers and CI have it)")
    return path


def require_tool(name: str, *candidates: str) -> str:
    """Path of an external program; skips locally when missing, but fails in CI (CI=true)."""
    search_path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/games"])
    for candidate in (name, *candidates):
        found = shutil.which(candidate, path=search_path)
        if found:
            return found
    message = f"{name} is not installed (.ci/run installs it with apt-get)"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def served_simulator(*arguments: str) -> Iterator[str]:
    """`hilbridge sim serve ARGUMENTS` in another process, as a user starts it; yields the address
    it announces (socket://, rfc2217:// or a pty path) and stops the process afterwards."""
    process = subprocess.Popen(
        [sys.executable, "-m", "hilbridge", "sim", "serve", *arguments],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("simulated adapter on "), line
        yield line.split()[3]
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()
