"""PNG, GIF and WAV writers: what is written reads back as the same pixels and samples."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest
from PIL import Image

from hilbridge.errors import HilbridgeError
from hilbridge.machine.palette import RF_PALETTE
from hilbridge.media import gif_bytes, png_bytes, wav_bytes, write_png


def sample_frame(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 16, size=(243, 360), dtype=np.uint8)


def test_png_round_trips_palette_indices_and_colours() -> None:
    frame = sample_frame()
    image = Image.open(io.BytesIO(png_bytes(frame)))
    assert image.size == (360, 243)
    assert (np.asarray(image) == frame).all()
    assert (np.asarray(image.convert("RGB")) == RF_PALETTE[frame]).all()


def test_png_scale_repeats_pixels() -> None:
    frame = sample_frame(1)
    image = np.asarray(Image.open(io.BytesIO(png_bytes(frame, scale=2))))
    assert image.shape == (486, 720)
    assert (image[::2, ::2] == frame).all() and (image[1::2, 1::2] == frame).all()


def test_gif_holds_every_frame() -> None:
    frames = [sample_frame(n) for n in range(3)]
    image = Image.open(io.BytesIO(gif_bytes(frames, frame_rate=50)))
    assert image.n_frames == 3
    for n, frame in enumerate(frames):
        image.seek(n)
        assert (np.asarray(image.convert("RGB")) == RF_PALETTE[frame]).all()


def test_bad_frames_are_user_errors(tmp_path) -> None:
    with pytest.raises(HilbridgeError):
        png_bytes(np.zeros((10, 10), dtype=np.int32))
    with pytest.raises(HilbridgeError):
        gif_bytes([], frame_rate=60)
    target = tmp_path / "shot.png"
    target.write_bytes(b"old")
    with pytest.raises(HilbridgeError):
        write_png(target, np.zeros((4, 4), dtype=np.float32))
    assert target.read_bytes() == b"old", "a failed write leaves the old file"


def test_wav_is_16_bit_mono_with_clipping() -> None:
    samples = np.array([0.0, 0.5, -0.5, 1.0, 2.0, -3.0], dtype=np.float32)
    with wave.open(io.BytesIO(wav_bytes(samples, 44100))) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 44100)
        pcm = np.frombuffer(wav.readframes(6), dtype="<i2")
    assert pcm.tolist() == [0, 16384, -16384, 32767, 32767, -32767]
