"""The live viewer's pieces that need no display: key mapping and frame conversion."""

from __future__ import annotations

import numpy as np
import pytest

from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import KEYBOARD, Console
from hilbridge.machine.palette import RF_PALETTE
from hilbridge.viewer.window import Input, apply_input, input_for, parse_keymap, ppm_bytes


def test_every_mapped_key_exists_on_the_console() -> None:
    console = Console(load_cartridge(b"\xff" * 2048, None))
    for keysym in ("Return", "BackSpace", "space", "plus", "question", "a", "Z", "7", "Up", "KP_0"):
        item = input_for(keysym)
        assert item is not None, keysym
        if item.kind == "key":
            assert item.name in KEYBOARD
        apply_input(console, item, True)
        apply_input(console, item, False)
    assert input_for("F13") is None


def test_arrows_drive_the_player_1_joystick() -> None:
    assert input_for("Up") == Input("joy", "up", 1)
    assert input_for("KP_0") == Input("joy", "fire", 0)


def test_keymap_rejects_bad_rows() -> None:
    with pytest.raises(ValueError, match="line 1"):
        parse_keymap("x\tmouse:1")


def test_ppm_is_the_scaled_rgb_frame() -> None:
    frame = np.random.default_rng(3).integers(0, 16, size=(243, 360), dtype=np.uint8)
    data = ppm_bytes(frame, 2)
    header, pixels = data[:15], data[15:]
    assert header == b"P6 720 486 255\n"
    rgb = np.frombuffer(pixels, dtype=np.uint8).reshape(486, 720, 3)
    assert (rgb[::2, ::2] == RF_PALETTE[frame]).all()
