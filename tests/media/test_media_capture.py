"""run_capture/save_capture on a real (tiny, self-contained) cartridge run by the emulator."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest
from PIL import Image

from hilbridge.errors import HilbridgeError
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.timing import NTSC
from hilbridge.machine.vdc import Vdc
from hilbridge.media.capture import run_capture, save_capture


def cart() -> bytes:
    """Blue background, a white '0' at Y=60h X=30h, a square wave on the speaker; then loops."""
    code = [
        0x04,
        0x02,  # 400h: jmp 402h
        0x23,
        0xB4,
        0x39,  # mov a,#0B4h ; outl p1,a (VDC selected)
    ]
    for address, value in (
        (0xA3, 0x08), (0x10, 0x60), (0x11, 0x30), (0x12, 0xD0), (0x13, 0x0F),
        (0xA7, 0x00), (0xA8, 0xFF), (0xA9, 0xFF), (0xAA, 0xAF), (0xA0, 0x20),
    ):  # fmt: skip
        code += [0xB8, address, 0x23, value, 0x90]  # mov r0,#a ; mov a,#v ; movx @r0,a
    loop = 0x400 + len(code)
    code += [0x04 | ((loop >> 3) & 0xE0), loop & 0xFF]  # jmp loop
    image = bytearray(b"\xff" * 2048)
    image[: len(code)] = bytes(code)
    return bytes(image)


def console(audio: bool = False) -> Console:
    return Console(load_cartridge(cart(), None), region="ntsc", vdc=Vdc(NTSC, audio=audio))


def test_capture_keeps_every_completed_frame_once() -> None:
    machine = console()
    capture = run_capture(machine, 5)
    assert len(capture.frames) == 5 and machine.vdc.frames_completed == 5
    last = capture.frames[-1]
    assert (last[0] == 4).all(), "blue background"
    assert (last[96:110, 106:122] == 15).any(), "the white character"
    assert capture.frame_rate == pytest.approx(59.826, abs=0.001)


def test_outputs_written(tmp_path) -> None:
    capture = run_capture(console(audio=True), 6, audio_rate=22050)
    save_capture(capture, png=tmp_path / "f.png", gif=tmp_path / "a.gif", wav=tmp_path / "s.wav", scale=2)
    png = Image.open(tmp_path / "f.png")
    assert png.size == (720, 486)
    assert (np.asarray(png)[::2, ::2] == capture.frames[-1]).all()
    assert Image.open(tmp_path / "a.gif").n_frames >= 1
    with wave.open(io.BytesIO((tmp_path / "s.wav").read_bytes())) as wav:
        assert wav.getframerate() == 22050
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    assert pcm.max() > 3000 and pcm.min() == 0, "the square wave is audible"


def test_capture_errors() -> None:
    with pytest.raises(HilbridgeError):
        run_capture(console(), 0)
    with pytest.raises(HilbridgeError, match="audio=True"):
        run_capture(console(audio=False), 1, audio_rate=44100)


def test_emu_run_writes_png_gif_wav(tmp_path) -> None:
    from click.testing import CliRunner

    from hilbridge.cli.main import cli

    rom = tmp_path / "demo.bin"
    rom.write_bytes(cart())
    outputs = {name: tmp_path / name for name in ("shot.png", "movie.gif", "sound.wav")}
    result = CliRunner().invoke(
        cli,
        ["emu", "run", str(rom), "--frames", "8", "--png", str(outputs["shot.png"]),
         "--gif", str(outputs["movie.gif"]), "--wav", str(outputs["sound.wav"]), "--scale", "2"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert Image.open(outputs["shot.png"]).size == (720, 486)
    assert Image.open(outputs["movie.gif"]).size == (720, 486)
    with wave.open(str(outputs["sound.wav"])) as wav:
        assert wav.getnframes() == pytest.approx(8 / 59.826 * 44100, rel=0.02)
    missing = str(tmp_path / "no" / "x.wav")
    bad = CliRunner().invoke(cli, ["emu", "run", str(rom), "--frames", "1", "--wav", missing])
    assert bad.exit_code == 2 and "no such folder" in bad.output
