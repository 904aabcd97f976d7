"""pytest plugin for homebrew authors: check a cartridge on a console against the emulator in a test.

Installed with hilbridge (entry point `pytest11`). Options: `--hilbridge-cart FILE` (or override the
`hilbridge_cart` fixture), `--hilbridge-device DEVICE` (default `sim`), `--hilbridge-region`,
`--hilbridge-report DIR`. Fixtures:

- `emulator`: our emulator (`Console`) on the cart, to script and inspect;
- `console`: the device as a capture source (`CaptureSource`), serving the cart;
- `check_frames(frames, ...)`: checks the device against the emulator frame by frame and fails the
  test with the first divergence, writing the HTML report and attaching its path to the test.

    def test_my_cart_matches_the_emulator(check_frames):
        check_frames(600)

docs/check.md has a worked example.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hilbridge.capture.sources import open_capture
from hilbridge.capture.stream import CaptureSource
from hilbridge.check import check
from hilbridge.check.engine import CheckResult
from hilbridge.check.report import text_report, write_report
from hilbridge.machine.cartridge import Cartridge, read_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import NO_INPUT, InputMovie

CheckFrames = Callable[..., CheckResult]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hilbridge", "hilbridge frame-by-frame check")
    group.addoption(
        "--hilbridge-cart", help="Cartridge image for the emulator, console and check_frames fixtures."
    )
    group.addoption("--hilbridge-device", default="sim", help="The console: sim[?...], mame, usb, a port.")
    group.addoption("--hilbridge-region", default="ntsc", choices=("ntsc", "pal"), help="Console region.")
    group.addoption("--hilbridge-report", help="Directory for the reports of failed checks (default: tmp).")


@pytest.fixture
def hilbridge_cart(request: pytest.FixtureRequest) -> Cartridge:
    """The cartridge under test: --hilbridge-cart, unless a conftest overrides this fixture (it may
    return a path or a `Cartridge`)."""
    path = request.config.getoption("--hilbridge-cart")
    if not path:
        pytest.fail(
            "no cartridge: pass --hilbridge-cart FILE or override the hilbridge_cart fixture", pytrace=False
        )
    return read_cartridge(path)


def _cartridge(cart: Cartridge | str | Path) -> Cartridge:
    return cart if isinstance(cart, Cartridge) else read_cartridge(cart)


@pytest.fixture
def hilbridge_region(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--hilbridge-region")


@pytest.fixture
def emulator(hilbridge_cart: Cartridge | str | Path, hilbridge_region: str) -> Console:
    """The reference emulator on the cart, at power-on."""
    return Console(_cartridge(hilbridge_cart), region=hilbridge_region)


@pytest.fixture
def console(
    request: pytest.FixtureRequest, hilbridge_cart: Cartridge | str | Path, hilbridge_region: str
) -> Iterator[CaptureSource]:
    """The device from --hilbridge-device serving the cart, as a capture source (closed afterwards)."""
    device = request.config.getoption("--hilbridge-device")
    source = open_capture(device, _cartridge(hilbridge_cart), region=hilbridge_region, serve=True)
    yield source
    source.close()


@pytest.fixture
def check_frames(
    request: pytest.FixtureRequest,
    hilbridge_cart: Cartridge | str | Path,
    hilbridge_region: str,
    tmp_path: Path,
) -> CheckFrames:
    """`check_frames(frames, *, device=None, inputs=None, tolerance=0, pictures="auto")`: the check
    result when every frame is equal; otherwise the test fails with the first divergence and the
    path of its HTML report (also in the test's `user_properties` as `hilbridge_report`)."""
    cart = _cartridge(hilbridge_cart)

    def run(
        frames: int = 600,
        *,
        device: str | None = None,
        inputs: InputMovie = NO_INPUT,
        tolerance: int = 0,
        pictures: str = "auto",
    ) -> CheckResult:
        chosen = device or request.config.getoption("--hilbridge-device")
        source = open_capture(chosen, cart, region=hilbridge_region, inputs=inputs, serve=True)
        result = check(
            cart,
            source,
            frames=frames,
            region=hilbridge_region,
            inputs=inputs,
            tolerance=tolerance,
            pictures=pictures,
        )
        if result.verdict != "equal":
            base = request.config.getoption("--hilbridge-report")
            folder = (
                Path(base) / re.sub(r"[^\w.-]+", "_", request.node.name) if base else tmp_path / "hilbridge"
            )
            page = write_report(result, folder, request.node.nodeid)
            request.node.user_properties.append(("hilbridge_report", str(page)))
            pytest.fail(f"{text_report(result)}\nreport: {page}", pytrace=False)
        return result

    return run
