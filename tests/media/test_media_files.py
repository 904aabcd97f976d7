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


def _durations(data: bytes) -> list[int]:
    image = Image.open(io.BytesIO(data))
    out = []
    for n in range(image.n_frames):
        image.seek(n)
        out.append(image.info["duration"])
    return out


@pytest.mark.parametrize(("rate", "frames"), [(59.826, 120), (50.0, 50)])
def test_gif_frame_delays_add_up_to_the_console_frame_rate(rate, frames) -> None:
    # GIF delays are whole centiseconds: 59.83 Hz needs 1.67 cs a frame, so 2 and 1 cs alternate
    # (20 ms for every frame played 16 % slow); PAL's 50 Hz is exactly 2 cs.
    data = gif_bytes([sample_frame(n % 3) for n in range(frames)], frame_rate=rate)
    durations = _durations(data)
    assert len(durations) == frames
    assert sum(durations) / 1000 == pytest.approx(frames / rate, abs=0.01)
    assert set(durations) <= {10, 20}


def test_gif_writer_streams_frames_to_the_file_and_reads_back_the_same(tmp_path) -> None:
    from hilbridge.media.images import GifWriter

    target = tmp_path / "movie.gif"
    frames = [sample_frame(n) for n in range(4)]
    with GifWriter(target, frame_rate=50, scale=1) as writer:
        for frame in frames:
            writer.add(frame)
        assert not target.exists()  # written atomically: the file appears complete, at the end
        assert not hasattr(writer, "frames")
    image = Image.open(target)
    assert image.n_frames == 4 and image.info["loop"] == 0
    for n, frame in enumerate(frames):
        image.seek(n)
        assert (np.asarray(image.convert("RGB")) == RF_PALETTE[frame]).all()


def test_gif_writer_holds_no_frames_in_memory(tmp_path) -> None:
    import gc
    import tracemalloc

    from hilbridge.media.images import GifWriter

    frame = sample_frame()
    tracemalloc.start()
    with GifWriter(tmp_path / "long.gif", frame_rate=59.826, scale=2) as writer:
        writer.add(frame)
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        for _ in range(60):
            writer.add(frame)
        gc.collect()  # what is still reachable, not garbage the collector has not reached yet
        grown = tracemalloc.get_traced_memory()[0] - baseline
    tracemalloc.stop()
    assert grown < 2_000_000  # 60 scaled frames held would be 60 × 350 KB
