"""The game-like wait-loop carts (fixtures/carts/wait_loops) on MAME and on the emulator, whose
idle skipping is at work in every one of them: the same MOVX accesses and the same pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool

from hilbridge.oracle.carts import CartSpec, build_cart, load_manifest
from hilbridge.oracle.emulator import run_emulator
from hilbridge.oracle.mame import run_mame
from hilbridge.oracle.trace import compare_runs

WAIT_LOOPS = Path(__file__).resolve().parents[2] / "fixtures" / "carts" / "wait_loops"
SPECS: dict[str, CartSpec] = {spec.name: spec for spec in load_manifest(WAIT_LOOPS)}
FRAMES = 60


@pytest.mark.mame
@pytest.mark.slow
@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_wait_loop_cart_equals_mame(name: str, region: str) -> None:
    require_tool("mame")
    spec = SPECS[name]
    image = build_cart(spec)
    options = {
        "frames": FRAMES,
        "slot": spec.slot,
        "reads": spec.reads,
        "pixels": spec.pixels,
        "inputs": spec.inputs,
    }
    theirs = run_mame(image, region=region, state=True, **options)
    ours = run_emulator(image, region=region, **options)
    expected, mismatch = compare_runs(ours.trace, theirs.trace)
    assert mismatch is None, f"{name} {region}: {mismatch.report()}"
    assert len(expected) > FRAMES * 4
    for frame in range(FRAMES if spec.pixels else 0):
        assert np.array_equal(ours.frame_pixels(frame), theirs.frame_pixels(frame)), (name, region, frame)
