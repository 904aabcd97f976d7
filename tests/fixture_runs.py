"""The fixture carts' MAME and emulator runs, one per cart and region, shared by every test that
compares the two (the oracle's and the check's).

MAME runs are cached on disk (tests/conftest.py sets $HILBRIDGE_MAME_CACHE: hilbridge.oracle.run_cache),
so every worker and every later session reads a run MAME made once; each process keeps the runs it
has read, and its emulator runs, for the session. `compare_group` keeps the tests of one cart and
region on one worker, so the emulator runs once for them.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path

import pytest

from hilbridge.oracle.carts import CartSpec, build_cart, load_manifest
from hilbridge.oracle.emulator import EmulatorRun, run_emulator
from hilbridge.oracle.mame import MameRun, run_mame

CARTS_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "carts"
SPECS: dict[str, CartSpec] = {spec.name: spec for spec in load_manifest(CARTS_DIR)}
REGIONS = ("ntsc", "pal")


@cache
def built_cart(spec: CartSpec) -> bytes:
    """A fixture cart's image (from any fixture manifest), assembled once per process: tests run one
    cart in several ways (fast and stepped, both regions, traced and not)."""
    return build_cart(spec)


def cart_image(name: str) -> bytes:
    return built_cart(SPECS[name])


AUDIO_CARTS = frozenset({"sound"})
"""Carts whose sound is compared: their traced runs record it too, so MAME runs once per cart and region."""


def traced_run_options(name: str) -> dict:
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


KEPT_RUNS = 6
"""Runs a process keeps in memory (a traced run holds up to half a million accesses): enough for a
cart's tests, which run together (its xdist group, or the order of a module)."""


@lru_cache(maxsize=KEPT_RUNS)
def mame_run(name: str, region: str) -> MameRun:
    """The MAME run for a cart and region (traced state; sound for the AUDIO_CARTS)."""
    return run_mame(cart_image(name), region=region, state=True, **traced_run_options(name))


def compare_group(name: str, region: str) -> pytest.MarkDecorator:
    """The xdist group of the tests that compare one cart and region: one worker, one emulator run."""
    return pytest.mark.xdist_group(f"oracle-{name}-{region}")


@lru_cache(maxsize=KEPT_RUNS)
def emulator_run(name: str, region: str) -> EmulatorRun:
    return run_emulator(cart_image(name), region=region, **traced_run_options(name))
