"""Issue 3 and 4 acceptance: our emulator against MAME 0.251 on every test cart, NTSC and PAL.

Every MOVX access (kind, cycle, address, value: writes and, where the cart traces them, reads)
must be equal for the cart's whole run (600 frames; 300 for the video carts), on video carts
every frame must equal MAME's screen pixel for pixel (as palette indices), and the sound cart's
samples must match MAME's -wavwrite recording within hilbridge.oracle.audio's tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
from fixture_runs import REGIONS, SPECS, compare_group, emulator_run, mame_run
from oracle_support import (  # noqa: F401 (mame_installed: an autouse fixture)
    emulator_audio,
    mame_audio,
    mame_installed,
)

from hilbridge.oracle.audio import match_audio
from hilbridge.oracle.trace import compare_runs

pytestmark = [pytest.mark.mame, pytest.mark.slow]


def carts_and_regions(names) -> list:
    """(name, region) parameters, each in its compare group: the tests of a cart and region share a run."""
    return [
        pytest.param(name, region, marks=compare_group(name, region))
        for name in sorted(names)
        for region in REGIONS
    ]


@pytest.mark.parametrize(("name", "region"), carts_and_regions(SPECS))
def test_movx_accesses_equal_mame(name, region):
    theirs = mame_run(name, region).trace
    ours = emulator_run(name, region).trace
    assert len(theirs.frames) == len(ours.frames) == SPECS[name].frames
    expected, mismatch = compare_runs(ours, theirs)
    assert mismatch is None, f"{name} {region}: {mismatch.report()}"
    assert len(expected) > SPECS[name].frames  # the cart really talks on the bus every frame


@pytest.mark.parametrize(
    ("name", "region"), carts_and_regions(name for name, spec in SPECS.items() if spec.pixels)
)
def test_frames_equal_mame_pixel_for_pixel(name, region):
    theirs = mame_run(name, region)
    ours = emulator_run(name, region)
    for frame in range(SPECS[name].frames):
        expected = theirs.frame_pixels(frame)
        got = ours.frame_pixels(frame)
        if not np.array_equal(got, expected):
            line, x = (int(v) for v in np.argwhere(got != expected)[0])
            count = int(np.count_nonzero(got != expected))
            pytest.fail(
                f"{name} {region} frame {frame}: {count} pixels differ, first at line {line} x {x}: "
                f"emulator colour {got[line, x]}, MAME {expected[line, x]}"
            )


@pytest.mark.parametrize(("name", "region"), carts_and_regions(["sound"]))
def test_sound_matches_mame_wavwrite(name, region):
    match = match_audio(emulator_audio(name, region), mame_audio(name, region))
    assert abs(match.lag) <= 3  # MAME's resampler delays by about 2 samples
    assert 0.9 < match.gain < 1.1  # same mixer gain as MAME's speaker
    assert match.within_tolerance, match
