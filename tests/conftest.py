"""Shared fixtures: the reference material in ../shared, and external tools that CI must have; and
which tests pytest-xdist keeps on one worker."""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from hilbridge.firmware.bootrom import default_cache
from hilbridge.oracle.run_cache import use_default_folder

# No time limit per example: on a loaded two-core machine a first call can take 300 ms where it
# usually takes 1 ms, and speed is what benchmarks/ measures, never a unit test (DeadlineExceeded
# failed tests/firmware/test_uf2.py that way).
settings.register_profile("hilbridge", deadline=None)
settings.load_profile("hilbridge")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED = PROJECT_ROOT.parent / "shared"
IN_CI = os.environ.get("CI", "").lower() == "true"

# MAME runs are kept on disk between sessions and shared by the xdist workers, keyed by every input
# of a run (hilbridge.oracle.run_cache); `HILBRIDGE_MAME_CACHE= pytest ...` runs MAME every time.
use_default_folder()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that must share a worker for `--dist loadgroup` (pyproject.toml's addopts).

    Tests that use a module- or class-scoped fixture (a served simulator, a firmware program...) form
    one group per module, so the fixture is set up once, as in a one-process run; a test can name its
    own group (tests/fixture_runs.py's `compare_group`). Every other test is handed out on
    its own.
    """
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = _worker_group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
        if getattr(config.option, "loadgroup", False):
            _name_the_group_in_the_id(item)


def _name_the_group_in_the_id(item: pytest.Item) -> None:
    """pytest-xdist (3.8) hands out a group by the "@group" it appends to the test's id, through
    `item._nodeid`, which pytest 9.2 no longer has (the id is `item._id`): there the assignment is
    lost, every test is handed out on its own and a module's fixtures are set up on both workers. So
    where `_nodeid` is missing, the id is rewritten here as xdist would (its hook runs after this one)."""
    marker = item.get_closest_marker("xdist_group")
    if marker is None or hasattr(item, "_nodeid"):
        return
    from _pytest.nodeid import coerce_node_id

    group = marker.args[0] if marker.args else marker.kwargs.get("name", "default")
    item._id = coerce_node_id(f"{item.nodeid}@{group}")  # type: ignore[attr-defined]


def _worker_group(item: pytest.Item) -> str | None:
    fixture_definitions = item._fixtureinfo.name2fixturedefs  # type: ignore[attr-defined]
    for definitions in fixture_definitions.values():
        if definitions[-1].scope in ("module", "class"):
            return item.nodeid.split("::")[0]
    return None


def quick_few(values: Iterable, quick: Iterable) -> list:
    """`values` (names, or tuples of a test's arguments) as test parameters, each not in `quick` marked
    slow: for tests that check every cart, the development loop (`pytest -m "not slow"`) checks the few
    `quick` ones, the whole suite all."""
    chosen = set(quick)
    return [
        pytest.param(
            *(value if isinstance(value, tuple) else (value,)),
            marks=[] if value in chosen else pytest.mark.slow,
        )
        for value in sorted(values)
    ]


def stop_the_shared_firmware() -> None:
    """Stop the emulated adapter `firmware_loop.firmware_chip` shares between a module's tests, if
    this process started one (without importing firmware_loop, which imports this module)."""
    loop = sys.modules.get("firmware_loop")
    if loop is not None:
        loop.stop_shared_firmware()


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """The shared emulated adapter's chip keeps running between tests: left on after its module, it
    took CPU from every later test of that worker. A hook, not an autouse module fixture, which would
    put every module in an xdist group of its own (`_worker_group`)."""
    if nextitem is None or nextitem.path != item.path:
        stop_the_shared_firmware()


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


def firmware_cache() -> Path:
    """Where firmware builds are kept between test runs, one directory per source hash."""
    return default_cache() / "firmware-build"


_firmware_build: dict[str, Path | str] = {}


def firmware_host_build() -> Path:
    """`make -C firmware host` (once per source hash, shared by every test process): the host programs
    of the firmware's protocol core. A failing build skips locally but fails in CI, as a missing tool
    does."""
    from hilbridge.errors import HilbridgeError
    from hilbridge.firmware.build import cached_build

    require_tool("gcc")
    if not _firmware_build:
        try:
            _firmware_build["done"] = cached_build("host", firmware_cache()) / "host"
        except HilbridgeError as error:
            _firmware_build["error"] = str(error)
    if "error" in _firmware_build:
        message = str(_firmware_build["error"])[-2000:]
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return Path(_firmware_build["done"])


BUS_TRACE_RECORD = struct.Struct("<IBHBB")
"""A record of hilbridge-fw-host's --bus-trace and the harness's --console trace."""


def write_bus_trace(image: bytes, mapper: str, path: Path, frames: int = 8) -> Path:
    """The reference emulator's cartridge bus accesses over `frames` video frames, as the 9-byte
    records (cycle, kind 0/1/2 = fetch/MOVX read/MOVX write, address, value, P1) that
    hilbridge-fw-host --bus-trace plays into a capture."""
    from hilbridge.link.protocol import CAPTURE_KINDS
    from hilbridge.machine.bus import FETCH, READ, WRITE
    from hilbridge.machine.cartridge import load_cartridge
    from hilbridge.machine.console import Console

    kinds = {
        FETCH: CAPTURE_KINDS["FETCH"],
        READ: CAPTURE_KINDS["MOVX_READ"],
        WRITE: CAPTURE_KINDS["MOVX_WRITE"],
    }
    records: list[bytes] = []
    console = Console(load_cartridge(image, mapper))
    console.add_bus_listener(
        lambda a: records.append(
            BUS_TRACE_RECORD.pack(a.cycle & 0xFFFFFFFF, kinds[a.kind], a.address, a.value, a.p1)
        ),
        fetches=True,
    )
    console.run_frames(frames)
    path.write_bytes(b"".join(records))
    return path


@contextlib.contextmanager
def served_firmware_host(*arguments: str) -> Iterator[str]:
    """The host build of the firmware core (`hilbridge-fw-host --pty ARGUMENTS`) in another process;
    yields the pty path it announces and stops the process afterwards."""
    program = firmware_host_build() / "hilbridge-fw-host"
    process = subprocess.Popen([str(program), "--pty", *arguments], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("firmware core on "), line
        yield line.split()[3]
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()


class CoreTestProgram:
    """`hb-core-test`, the core's building blocks behind a line protocol (firmware/src/host/core_test.c):
    one request line in, one answer line out."""

    def __init__(self) -> None:
        program = firmware_host_build() / "hb-core-test"
        self.process = subprocess.Popen(
            [str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )

    def ask(self, *words: object) -> str:
        self.process.stdin.write(" ".join(str(word) for word in words) + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().rstrip("\n")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.process.stdout.close()


@pytest.fixture(scope="module")
def core_test() -> Iterator[CoreTestProgram]:
    program = CoreTestProgram()
    yield program
    program.close()
