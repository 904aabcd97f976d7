"""Firmware in the loop for tests: build the firmware into the firmware build cache, fetch the RP2040 boot
ROM into the user cache, and run `firmware/harness/harness.mjs` (rp2040js) around them.

Plain functions, not fixtures, so the link conformance suite can add the emulated firmware as one more
device without importing fixtures across test folders. Everything skips locally (and fails in CI) when
arm-none-eabi-gcc, node or the harness's `npm ci` are missing.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import IN_CI, PROJECT_ROOT, firmware_cache, require_tool

from hilbridge.firmware.harness_usb import HarnessUsbBackend

FIRMWARE = PROJECT_ROOT / "firmware"
HARNESS = FIRMWARE / "harness" / "harness.mjs"
STARTUP_TIMEOUT = 180.0
# Link timers for the emulated chip, which runs 10 to 30 times slower than a board (more on a loaded
# machine): the default 4 ms floor makes the host resend long reads the firmware is still executing,
# and every resent read is executed again, which slows it further. A loaded machine can also stall the
# emulator's process for many seconds, longer than the default 40 retries of a few round trips each
# cover (dumps failed with "no reply to CART_READ after 41 attempts" at load 16), so allow 200.
EMULATED_LINK = {"min_timeout": 0.1, "max_timeout": 5.0, "retries": 200}
# The serial number the firmware reports in the harness: "HB" and the flash's unique id (4Bh), which
# the harness's flash model holds as FLASH_UNIQUE_ID (firmware/harness/lib/boot.mjs).
FLASH_SERIAL = "HBE6603828432C5D2B"


def require_harness() -> str:
    """The node binary, once the harness's dependencies are installed (`npm ci` in firmware/harness)."""
    node = require_tool("node")
    if not (FIRMWARE / "harness" / "node_modules" / "rp2040js").is_dir():
        message = "rp2040js is not installed: run `npm ci` in firmware/harness (.ci/run does)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return node


@functools.cache
def _build() -> Path:
    from hilbridge.firmware.build import TARGET_NAME, cached_build

    return cached_build("rp2040", firmware_cache()) / f"{TARGET_NAME}.uf2"


def built_uf2() -> Path:
    """The UF2 built from this checkout, once per source hash into the firmware build cache."""
    require_tool("arm-none-eabi-gcc")
    return _build()


def bootrom() -> Path:
    """The verified RP2040 boot ROM image in the user cache (downloaded from PyPI the first time)."""
    from hilbridge.firmware.bootrom import bootrom_image

    return bootrom_image()


def cart_table(image: bytes, mapper: str, directory: Path | None = None) -> Path:
    """The table file the harness plays a cartridge from (hilbridge.firmware.cart_table)."""
    from hilbridge.firmware.cart_table import cart_table as make_table
    from hilbridge.machine.cartridge import load_cartridge

    directory = directory or Path(tempfile.mkdtemp(prefix="hilbridge-cart-"))
    path = directory / f"{mapper}-{len(image)}.tbl"
    path.write_bytes(make_table(load_cartridge(image, mapper)))
    return path


def demo_cart_table() -> Path:
    """The simulated adapter's demo cartridge, so the conformance suite expects the same bytes."""
    from hilbridge.sim.demo import DEMO_MAPPER, demo_image

    return cart_table(demo_image(), DEMO_MAPPER)


def _harness_command(uf2: Path, *arguments: str) -> list[str]:
    return [require_harness(), str(HARNESS), "--uf2", str(uf2), "--bootrom", str(bootrom()), *arguments]


def boot_check(uf2: Path, cycles: int = 2_000_000) -> dict:
    """Run the chip from reset for `cycles` and report whether it reached the application."""
    result = subprocess.run(
        _harness_command(uf2, "--boot-check", str(cycles)), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return {"events": [e["event"] for e in events], **events[-1]}


class RunningFirmware:
    """The harness process: its socket:// URLs (the link, the USB control port), the USB descriptors it
    read, and the JSON events it prints.

    A thread reads the harness's lines as they come: a line that Python's pipe buffer took in with the
    one before would otherwise wait there unseen by `select` until the harness printed again."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.url = self.control_url = ""
        self.connected = False
        self.descriptors: dict = {}
        for event in self._events(timeout=STARTUP_TIMEOUT):
            if event["event"] == "listening":
                self.url, self.control_url = event["url"], event["control"]
            if event["event"] == "usb-connected":
                self.descriptors = event["descriptors"]
                self.connected = True
                break
        assert self.url and self.connected, "the harness ended before its USB device was up"

    def _read(self) -> None:
        try:
            for line in self.process.stdout:
                self._lines.put(line)
        except ValueError:  # the pipe was closed under the reader: the harness was stopped
            pass
        self._lines.put(None)  # the harness ended

    def join_reader(self) -> None:
        self._reader.join(timeout=10)

    def _events(self, timeout: float) -> Iterator[dict]:
        """The events printed from now until `timeout` seconds pass without one, or the harness ends."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return
            if line is None:
                self._lines.put(None)  # later reads see the end too
                return
            if line.startswith("{"):
                yield json.loads(line)

    def printed(self) -> list[dict]:
        """The events the harness has printed since the last read, without waiting for more."""
        return list(self._events(timeout=0.0))

    def usb_backend(self) -> HarnessUsbBackend:
        """A pyusb backend on the vendor interface (`--link vendor`) and the control port."""
        return HarnessUsbBackend(self.url, self.control_url, self.descriptors)

    def stop(self) -> list[dict]:
        """End the harness; the events it printed since the last one read (its exit report among them)."""
        self.process.terminate()
        self.process.wait(timeout=10)
        self.join_reader()
        return list(self._events(timeout=0.0))

    def _command(self, request: dict) -> None:
        assert self.process.stdin is not None, "the harness was started without a command pipe"
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()

    def reset(self, *arguments: str) -> dict:
        """Power the chip off and on again with these bus options (--cart-table, --console,
        --console-slowdown, --usb-frame-packets; others keep the harness's), in the same node process and
        on the same ports: a freshly booted chip for the next test without node's start-up. Returns the
        reset event (the last chip's bulk IN counts) once the new chip's USB device is up."""
        options = dict(zip(arguments[::2], arguments[1::2], strict=True))
        assert len(arguments) % 2 == 0 and all(name.startswith("--") for name in options), arguments
        self.printed()  # what the last chip printed is not this one's
        self._command({"command": "reset", **{name[2:]: value for name, value in options.items()}})
        reset = self.wait_event("reset", timeout=30)
        self.connected = False
        self.descriptors = self.wait_event("usb-connected", timeout=STARTUP_TIMEOUT)["descriptors"]
        self.connected = True
        return reset

    def bulk_in(self) -> dict:
        """The harness's bulk IN counts so far (the "usb-bulk-in" event), the harness still running."""
        self._command({"command": "bulk-in"})
        return self.wait_event("usb-bulk-in", timeout=30)

    def wait_event(self, name: str, timeout: float) -> dict:
        for event in self._events(timeout):
            if event["event"] == name:
                return event
        raise AssertionError(f"the harness sent no {name!r} event within {timeout} s")


@contextlib.contextmanager
def running_firmware(*arguments: str, uf2: Path | None = None) -> Iterator[RunningFirmware]:
    """The emulated adapter's link (USB CDC unless `--link` says otherwise) bridged to TCP, once USB is
    up; stopped afterwards."""
    process = subprocess.Popen(
        _harness_command(uf2 or built_uf2(), "--commands", *arguments),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    running = None
    try:
        running = RunningFirmware(process)
        yield running
    finally:
        process.terminate()
        process.wait(timeout=10)
        if running is not None:
            running.join_reader()
        process.stdout.close()
        process.stdin.close()


# Options a reset can change (the bus the chip sits on); any other option is the harness process's own.
RESET_OPTIONS = {"--cart-table", "--console", "--console-slowdown", "--usb-frame-packets"}


class _SharedHarness:
    """The one harness a process keeps for `firmware_chip`, and how to stop it."""

    def __init__(self) -> None:
        self.stack = contextlib.ExitStack()
        self.running: RunningFirmware | None = None
        atexit.register(self.stop)

    def stop(self) -> None:
        self.running = None
        self.stack.close()


_SHARED = _SharedHarness()


def stop_shared_firmware() -> None:
    """Stop the harness `firmware_chip` keeps: its emulated chip runs on between tests, so one left
    running after its module takes CPU from every later test in the process (tests/conftest.py)."""
    _SHARED.stop()


def firmware_chip(*arguments: str) -> RunningFirmware:
    """A freshly booted chip on the bus these options describe (only RESET_OPTIONS), from the one
    harness this process keeps for such tests: its first start, or a reset of it (see
    test_harness_reset.py), so a test pays the chip's boot but not node's start-up. The harness is
    stopped when the process ends; one that ended early is started again."""
    assert set(arguments[::2]) <= RESET_OPTIONS, arguments
    running = _SHARED.running
    if running is not None and running.process.poll() is None:
        running.reset(*arguments)
        return running
    _SHARED.stop()
    _SHARED.running = _SHARED.stack.enter_context(running_firmware(*arguments))
    return _SHARED.running


@contextlib.contextmanager
def served_firmware(*arguments: str, uf2: Path | None = None) -> Iterator[str]:
    """`running_firmware`, yielding only its socket:// URL."""
    with running_firmware(*arguments, uf2=uf2) as running:
        yield running.url
