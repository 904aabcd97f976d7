"""Frames (243 × 360 palette indices) to PNG and animated GIF, through Pillow.

Images keep the palette (indexed colour), so a PNG holds exactly the 16 VDC colours and can be
compared pixel by pixel. `scale` repeats pixels (nearest neighbour) for viewing.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

import numpy as np
from PIL import GifImagePlugin, Image

from hilbridge.errors import HilbridgeError
from hilbridge.files import AtomicOutput, write_atomic
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


class GifWriter:
    """An endlessly looping animated GIF written frame by frame: only the current frame is in memory.

    GIF delays are whole centiseconds, so each frame gets the delay that keeps the animation on the
    console's clock (frame k ends at round(100 k / rate) cs): at 59.83 Hz 2 and 1 cs alternate
    (1.67 cs on average), at 50 Hz every frame is 2 cs. (Some viewers show 1 cs delays slower.)
    Use as a context manager: the file appears complete when it closes, or not at all on an error.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        frame_rate: float,
        palette: np.ndarray = RF_PALETTE,
        scale: int = 1,
    ):
        if frame_rate <= 0:
            raise HilbridgeError(f"frame rate must be positive, not {frame_rate}")
        self._output = AtomicOutput(path)
        self._rate = frame_rate
        self._palette = palette
        self._scale = scale
        self.count = 0
        self._shown_cs = 0

    def add(self, frame: Frame) -> None:
        image = _image(frame, self._palette, self._scale)
        if self.count == 0:
            header, _ = GifImagePlugin.getheader(image, info={"loop": 0, "optimize": False})
            self._output.write(b"".join(header))
        end_cs = round((self.count + 1) * 100 / self._rate)
        delay_cs, self._shown_cs = end_cs - self._shown_cs, end_cs
        chunks = GifImagePlugin.getdata(image, duration=delay_cs * 10, disposal=1, optimize=False)
        self._output.write(b"".join(chunks))
        self.count += 1

    def close(self) -> None:
        if self.count == 0:
            self._output.discard()
            raise HilbridgeError("an animation needs at least one frame")
        self._output.write(b";")  # the GIF trailer
        self._output.commit()

    def __enter__(self) -> GifWriter:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if kind is None:
            self.close()
        else:
            self._output.discard()


def gif_bytes(
    frames: Sequence[Frame], *, frame_rate: float, palette: np.ndarray = RF_PALETTE, scale: int = 1
) -> bytes:
    """An endlessly looping animated GIF of `frames` (see `GifWriter` for the frame delays)."""
    if not frames:
        raise HilbridgeError("an animation needs at least one frame")
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        target = os.path.join(folder, "animation.gif")
        with GifWriter(target, frame_rate=frame_rate, palette=palette, scale=scale) as writer:
            for frame in frames:
                writer.add(frame)
        with open(target, "rb") as handle:
            return handle.read()


def write_png(path: str | os.PathLike[str], frame: Frame, **options) -> None:
    write_atomic(path, png_bytes(frame, **options))


def write_gif(path: str | os.PathLike[str], frames: Sequence[Frame], *, frame_rate: float, **options) -> None:
    with GifWriter(path, frame_rate=frame_rate, **options) as writer:
        for frame in frames:
            writer.add(frame)
