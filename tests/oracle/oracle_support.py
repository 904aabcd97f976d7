"""Shared by the oracle tests: the test carts, and one MAME / emulator run per cart and region.

Runs are cached for the whole test session (MAME takes seconds per run, the emulator longer), so
the intent checks and the emulator comparison share the same traces.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from hilbridge.oracle.carts import CartSpec, build_cart, load_manifest
from hilbridge.oracle.emulator import EmulatorRun, run_emulator
from hilbridge.oracle.mame import MameRun, run_mame

CARTS_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
SPECS: dict[str, CartSpec] = {spec.name: spec for spec in load_manifest(CARTS_DIR)}
REGIONS = ("ntsc", "pal")


@cache
def cart_image(name: str) -> bytes:
    return build_cart(SPECS[name])


@cache
def mame_run(name: str, region: str) -> MameRun:
    spec = SPECS[name]
    return run_mame(
        cart_image(name),
        frames=spec.frames,
        region=region,
        slot=spec.slot,
        reads=spec.reads,
        pixels=spec.pixels,
        state=True,
    )


@cache
def emulator_run(name: str, region: str) -> EmulatorRun:
    spec = SPECS[name]
    return run_emulator(
        cart_image(name),
        frames=spec.frames,
        region=region,
        slot=spec.slot,
        reads=spec.reads,
        pixels=spec.pixels,
    )


@cache
def mame_audio(name: str, region: str) -> np.ndarray:
    audio = run_mame(cart_image(name), frames=SPECS[name].frames, region=region, audio=True).audio
    assert audio is not None
    return audio


@cache
def emulator_audio(name: str, region: str) -> np.ndarray:
    spec = SPECS[name]
    run = run_emulator(cart_image(name), frames=spec.frames, region=region, slot=spec.slot, audio=True)
    audio = run.audio
    assert audio is not None
    return audio
