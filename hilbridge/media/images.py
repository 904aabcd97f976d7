"""Frames (243 × 360 palette indices) to PNG and animated GIF, through Pillow.

Images keep the palette (indexed colour), so a PNG holds exactly the 16 VDC colours and can be
compared pixel by pixel. `scale` repeats pixels (nearest neighbour) for viewing.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

import numpy as np
from PIL import Image

from hilbridge.errors import HilbridgeError
from hilbridge.files import write_atomic
from hilbridge.machine.palette import RF_PALETTE

Frame = np.ndarray


def _image(frame: Frame, palette: np.ndarray, scale: int) -> Image.Image:
    if frame.ndim != 2 or frame.dtype != np.uint8:
        shape = f"{frame.dtype} {frame.shape}"
        raise HilbridgeError(f"a frame is a 2-D uint8 array of palette indices, not {shape}")
    if scale < 1:
        raise HilbridgeError(f"scale must be at least 1, not {scale}")
    pixels = np.repeat(np.repeat(frame & 0x0F, scale, axis=0), scale, axis=1)
    image = Image.fromarray(np.ascontiguousarray(pixels), mode="P")
    image.putpalette(palette.astype(np.uint8).tobytes())
    return image


def png_bytes(frame: Frame, *, palette: np.ndarray = RF_PALETTE, scale: int = 1) -> bytes:
    buffer = io.BytesIO()
    _image(frame, palette, scale).save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def gif_bytes(
    frames: Sequence[Frame], *, frame_rate: float, palette: np.ndarray = RF_PALETTE, scale: int = 1
) -> bytes:
    """An endlessly looping animated GIF; GIF delays are in 10 ms steps, so timing is rounded."""
    if not frames:
        raise HilbridgeError("an animation needs at least one frame")
    images = [_image(frame, palette, scale) for frame in frames]
    buffer = io.BytesIO()
    duration_ms = max(20, round(1000 / frame_rate / 10) * 10)
    images[0].save(
        buffer,
        format="GIF",
        save_all=True,
        append_images=images[1:],
        duration=duration_ms,
        loop=0,
        optimize=False,
        disposal=1,
    )
    return buffer.getvalue()


def write_png(path: str | os.PathLike[str], frame: Frame, **options) -> None:
    write_atomic(path, png_bytes(frame, **options))


def write_gif(path: str | os.PathLike[str], frames: Sequence[Frame], *, frame_rate: float, **options) -> None:
    write_atomic(path, gif_bytes(frames, frame_rate=frame_rate, **options))
