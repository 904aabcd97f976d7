"""Run an emulated console for a number of frames and keep its pictures and sound.

The glue between the emulator core (which imports no I/O library) and the file writers: every frame
the VDC completes is collected exactly once, in order, and the speaker output can be rendered at
any sample rate. `save_capture` writes the `--png`/`--gif`/`--wav` outputs of `hilbridge emu run`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.machine.vdc import Vdc
from hilbridge.media.audio import write_wav
from hilbridge.media.images import write_gif, write_png

DEFAULT_AUDIO_RATE = 44_100


@dataclass
class Capture:
    frames: list[np.ndarray] = field(default_factory=list)  # (243, 360) palette indices each
    frame_rate: float = 60.0
    audio: np.ndarray | None = None  # float32 samples, -1…1
    audio_rate: int = DEFAULT_AUDIO_RATE


def run_capture(
    console,
    frames: int,
    *,
    keep: str = "all",
    audio_rate: int | None = None,
) -> Capture:
    """Run `console` until its VDC has completed `frames` more frames.

    keep: "all" keeps every frame, "last" only the final one, "none" no picture.
    audio_rate: render the speaker at this rate (the console's Vdc needs audio=True).
    """
    if frames < 1:
        raise HilbridgeError(f"frames must be at least 1, not {frames}")
    if keep not in ("all", "last", "none"):
        raise HilbridgeError(f"keep must be all, last or none, not {keep!r}")
    vdc: Vdc = console.vdc
    if audio_rate is not None and vdc.audio is None:
        raise HilbridgeError("sound capture needs a VDC created with audio=True")
    capture = Capture(frame_rate=float(console.region.frame_rate_hz))
    last = vdc.frames_completed + frames
    while vdc.frames_completed < last:
        target = vdc.frame_end_cycle(vdc.frames_completed)
        if console.cycle < target:
            console.run_cycles(target - console.cycle)
        vdc.run_to(console.cycle)
        if keep == "all" or (keep == "last" and vdc.frames_completed >= last):
            capture.frames.append(vdc.frame().copy())
    if audio_rate is not None:
        capture.audio = vdc.audio_samples(audio_rate, console.cycle)
        capture.audio_rate = audio_rate
    return capture


def save_capture(
    capture: Capture,
    *,
    png: str | os.PathLike[str] | None = None,
    gif: str | os.PathLike[str] | None = None,
    wav: str | os.PathLike[str] | None = None,
    scale: int = 1,
) -> None:
    """PNG of the last frame, GIF of all kept frames, WAV of the sound (each only if asked)."""
    try:
        _save(capture, png, gif, wav, scale)
    except OSError as error:
        where = SourceLocation(os.fspath(error.filename)) if error.filename else None
        raise HilbridgeError(f"cannot write: {error.strerror or error}", where) from None


def _save(capture: Capture, png, gif, wav, scale: int) -> None:
    if (png or gif) and not capture.frames:
        raise HilbridgeError("no frames were captured")
    if png:
        write_png(png, capture.frames[-1], scale=scale)
    if gif:
        write_gif(gif, capture.frames, frame_rate=capture.frame_rate, scale=scale)
    if wav:
        if capture.audio is None:
            raise HilbridgeError("no sound was captured")
        write_wav(wav, capture.audio, capture.audio_rate)
