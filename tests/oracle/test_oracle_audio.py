"""The audio comparison: finds MAME's resampler lag and gain, and rejects a different waveform."""

from __future__ import annotations

import numpy as np
import pytest

from hilbridge.oracle.audio import match_audio


def square_wave(length: int, period: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    wave = ((np.arange(length) // (period // 2)) % 2).astype(np.float32) * 0.1
    return wave + rng.normal(0, 0.001, length).astype(np.float32)


@pytest.mark.parametrize(("lag", "gain"), [(0, 1.0), (2, 0.4), (-3, 1.7)])
def test_lag_and_gain_are_recovered(lag, gain):
    ours = square_wave(5000, 48)
    theirs = np.roll(ours, lag) * gain
    match = match_audio(ours, theirs)
    assert match.lag == lag
    assert match.gain == pytest.approx(gain, rel=0.01)
    assert match.within_tolerance


def test_a_different_tone_is_out_of_tolerance():
    match = match_audio(square_wave(5000, 48), square_wave(5000, 40, seed=1))
    assert not match.within_tolerance


def test_silence_cannot_be_compared():
    with pytest.raises(ValueError, match="silent"):
        match_audio(np.zeros(1000, np.float32), square_wave(1000, 48))
