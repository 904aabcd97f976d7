"""The suite's xdist groups reach the scheduler: tests/conftest.py writes a test's group into its id
where pytest-xdist's own hook cannot (pytest 9.2 keeps the id where xdist 3.8 does not write), and a
lost group silently spreads a module's tests, and its fixtures, over every worker."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

GROUP = "xdist-groups-check"


@pytest.mark.xdist_group(GROUP)
def test_a_grouped_test_carries_its_group_in_its_id(request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("only under `-n N --dist loadgroup` (the suite's default)")
    assert request.node.nodeid.endswith(f"@{GROUP}"), request.node.nodeid


def test_a_test_without_a_module_fixture_is_handed_out_on_its_own(request: pytest.FixtureRequest) -> None:
    """Only module- and class-scoped fixtures group a module's tests: an autouse one in conftest.py
    would group every module of the suite, and a large module would then run on one worker."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("only under `-n N --dist loadgroup` (the suite's default)")
    assert "@" not in request.node.nodeid, request.node.nodeid


CRASHING_SUITE = {
    "conftest.py": """
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if "shared" in item.fixturenames:
            item.add_marker(pytest.mark.xdist_group("shared"))
""",
    "test_crash.py": """
import os
import pytest

@pytest.fixture(scope="module")
def shared():
    return 1

def test_before(shared):
    pass

def test_worker_dies(shared):
    os._exit(1)

def test_after(shared):
    pass
""",
    "test_elsewhere.py": """
import time

def test_one():
    time.sleep(1)

def test_two():
    time.sleep(1)

def test_three():
    time.sleep(1)
""",
}


def test_a_worker_that_dies_fails_the_run_naming_its_test_instead_of_hanging_it(tmp_path) -> None:
    """pytest-xdist 3.8 with `--dist loadgroup` hands a crashed worker's group to a replacement that
    never runs it, and the run hangs at the end (CI would sit until its own time-out, telling
    nothing). The suite's options must end such a run with the crashed test named."""
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    for name, text in CRASHING_SUITE.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = {options['addopts']}\n")
    try:
        run = subprocess.run(
            # (without the project's own plugin: it is not what this checks, and costs a second a worker)
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hilbridge", "-n", "2"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the run hung after its worker died")
    assert run.returncode == 1, run.stdout
    assert "crashed while running 'test_crash.py::test_worker_dies'" in run.stdout, run.stdout
