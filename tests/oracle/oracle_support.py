"""Shared by the oracle tests: the test carts, and one MAME / emulator run per cart and region.

Runs are cached for the whole test session (MAME takes seconds per run, the emulator longer), so
the intent checks and the emulator comparison share the same traces.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool

from hilbridge.oracle.carts import CartSpec, build_cart, load_manifest
from hilbridge.oracle.emulator import EmulatorRun, run_emulator
from hilbridge.oracle.mame import MameRun, run_mame

CARTS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
SPECS: dict[str, CartSpec] = {spec.name: spec for spec in load_manifest(CARTS_DIR)}
REGIONS = ("ntsc", "pal")
_MAME_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mame")  # threads start on first use


@cache
def cart_image(name: str) -> bytes:
    return build_cart(SPECS[name])


AUDIO_CARTS = frozenset({"sound"})
"""Carts whose sound is compared: their traced runs record it too, so MAME runs once per cart and region."""


def _traced_run_options(name: str) -> dict:
    """What a cart's spec asks both MAME and the emulator to record and feed in (same for both)."""
    spec = SPECS[name]
    return {
        "frames": spec.frames,
        "slot": spec.slot,
        "reads": spec.reads,
        "pixels": spec.pixels,
        "inputs": spec.inputs,
        "audio": name in AUDIO_CARTS,
    }


def _run_on_mame(name: str, region: str) -> MameRun:
    return run_mame(cart_image(name), region=region, state=True, **_traced_run_options(name))


@cache
def _mame_runs() -> dict[tuple[str, str], Future[MameRun]]:
    """Start every MAME run in a background thread: MAME is a separate process, so it runs on the
    second core while the emulator runs in this one (the tests then mostly wait for the emulator)."""
    return {
        (name, region): _MAME_POOL.submit(_run_on_mame, name, region)
        for name in sorted(SPECS)
        for region in REGIONS
    }


@pytest.fixture(scope="session", autouse=True)
def mame_installed() -> Iterator[None]:
    """Import into each MAME test module: skips (fails in CI) without MAME, and at the end of the
    session drops the MAME runs no test has asked for."""
    require_tool("mame")
    yield
    _MAME_POOL.shutdown(wait=False, cancel_futures=True)


_CLAIMED: dict[tuple[str, str], MameRun] = {}


def mame_run(name: str, region: str) -> MameRun:
    """The MAME run for a cart and region: from the background queue, or now if it has not started."""
    key = (name, region)
    if key not in _CLAIMED:
        future = _mame_runs()[key]
        _CLAIMED[key] = _run_on_mame(name, region) if future.cancel() else future.result()
    return _CLAIMED[key]


@cache
def emulator_run(name: str, region: str) -> EmulatorRun:
    return run_emulator(cart_image(name), region=region, **_traced_run_options(name))


def mame_audio(name: str, region: str) -> np.ndarray:
    """The sound of the cart's traced MAME run (no second MAME run for it)."""
    assert name in AUDIO_CARTS, f"add {name} to AUDIO_CARTS"
    audio = mame_run(name, region).audio
    assert audio is not None
    return audio


def emulator_audio(name: str, region: str) -> np.ndarray:
    assert name in AUDIO_CARTS, f"add {name} to AUDIO_CARTS"
    audio = emulator_run(name, region).audio
    assert audio is not None
    return audio
