"""Compare our sound output with MAME's -wavwrite recording of the same cartridge.

MAME resamples the VDC's sound stream to 48 kHz and scales it by its mixer gains, and its
resampler delays the signal by a few samples, so the comparison allows one gain and one small lag
and then asks for the waveforms to agree: correlation and the remaining RMS error, both relative.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_LAG = 10  # samples at 48 kHz (0.2 ms) either way
MIN_CORRELATION = 0.99  # the stated tolerance for issue 4 (docs/oracle.md)
MAX_RELATIVE_RMS_ERROR = 0.05


@dataclass(frozen=True, slots=True)
class AudioMatch:
    lag: int  # MAME's samples are this many samples later than ours
    gain: float  # MAME sample ≈ gain × our sample
    correlation: float
    relative_rms_error: float  # RMS of (MAME − gain × ours) / RMS of MAME

    @property
    def within_tolerance(self) -> bool:
        return self.correlation >= MIN_CORRELATION and self.relative_rms_error <= MAX_RELATIVE_RMS_ERROR


def match_audio(ours: np.ndarray, theirs: np.ndarray, max_lag: int = MAX_LAG) -> AudioMatch:
    """Best lag and gain aligning `ours` onto `theirs`; both must contain sound (not silence)."""
    length = min(len(ours), len(theirs)) - 2 * max_lag
    if length <= 0:
        raise ValueError("the recordings are too short to compare")
    target = theirs[max_lag : max_lag + length].astype(np.float64)
    best: AudioMatch | None = None
    for lag in range(-max_lag, max_lag + 1):
        source = ours[max_lag - lag : max_lag - lag + length].astype(np.float64)
        power = float(source @ source)
        if power == 0 or not target.any():
            raise ValueError("one of the recordings is silent")
        gain = float(source @ target) / power
        error = target - gain * source
        correlation = float(np.corrcoef(source, target)[0, 1])
        rms = float(np.sqrt(np.mean(error**2)) / np.sqrt(np.mean(target**2)))
        if best is None or correlation > best.correlation:
            best = AudioMatch(lag, gain, correlation, rms)
    assert best is not None
    return best
