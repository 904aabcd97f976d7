"""Mono 16-bit PCM WAV files from float samples (-1…1), with the standard library's `wave`."""

from __future__ import annotations

import io
import os
import wave

import numpy as np

from hilbridge.files import write_atomic


def wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    pcm = np.round(np.clip(samples, -1.0, 1.0) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm.tobytes())
    return buffer.getvalue()


def write_wav(path: str | os.PathLike[str], samples: np.ndarray, rate: int) -> None:
    write_atomic(path, wav_bytes(samples, rate))
