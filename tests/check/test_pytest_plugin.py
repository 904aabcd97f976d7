"""The pytest plugin as a homebrew author uses it, in a separate pytest session (pytester); pytest loads
it through its `pytest11` entry point, as it does once hilbridge is installed."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_support import fixture_cart

pytest_plugins = ("pytester",)

AUTHORS_TESTS = """
def test_boots(emulator):
    emulator.run_frames(3)
    assert emulator.frame == 3

def test_console_is_a_capture_source(console):
    assert console.header.source == "sim"

def test_matches_the_emulator(check_frames):
    result = check_frames(4)
    assert result.frames_compared == 4
"""


@pytest.fixture
def cart_file(tmp_path: Path) -> Path:
    path = tmp_path / "homebrew.bin"
    path.write_bytes(fixture_cart("cpu_alu").image)
    return path


def test_the_fixtures_pass_on_an_equal_console(pytester: pytest.Pytester, cart_file: Path) -> None:
    pytester.makepyfile(AUTHORS_TESTS)
    result = pytester.runpytest("--hilbridge-cart", str(cart_file))
    result.assert_outcomes(passed=3)


def test_a_divergence_fails_the_test_with_its_report(pytester: pytest.Pytester, cart_file: Path) -> None:
    pytester.makepyfile(AUTHORS_TESTS)
    reports = pytester.path / "reports"
    result = pytester.runpytest(
        "--hilbridge-cart", str(cart_file),
        "--hilbridge-device", "sim?deviation=write_dropped&frame=2", "--hilbridge-report", str(reports),
        "-k", "matches",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*diverged in frame 2 at cycle*", "*report: *report.html"])
    assert (reports / "test_matches_the_emulator" / "report.html").is_file()


def test_a_conftest_can_name_the_cart(pytester: pytest.Pytester, cart_file: Path) -> None:
    pytester.makeconftest(f"""
import pytest

@pytest.fixture
def hilbridge_cart():
    return {str(cart_file)!r}
""")
    pytester.makepyfile(AUTHORS_TESTS)
    pytester.runpytest("-k", "boots").assert_outcomes(passed=1)


def test_without_a_cart_the_fixtures_say_what_is_missing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(AUTHORS_TESTS)
    result = pytester.runpytest("-k", "boots")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*pass --hilbridge-cart FILE or override the hilbridge_cart fixture*"])
