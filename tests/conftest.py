"""Shared fixtures: the reference material in ../shared, and external tools that CI must have."""

from __future__ import annotations

import os
import shutil
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
