"""The screen decoder: text a test cart writes at known positions decodes exactly; the decoding agrees
with the picture the renderer draws from random character registers; a capture's MOVX writes replay
to the registers the live VDC holds."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.bridge.combat import combat_image
from hilbridge.bridge.consoles import EmulatorConsole
from hilbridge.bridge.profile import profile_for
from hilbridge.bridge.resolver import BattlePlan, battle_movie
from hilbridge.bridge.screen import (
    UNREADABLE,
    BusReplay,
    glyph_texts,
    registers_at_frame,
    screen_chars,
    screen_text,
)
from hilbridge.cli.main import cli
from hilbridge.machine.charset import charset_rom
from hilbridge.machine.console import Console
from hilbridge.machine.video import VISIBLE_LINES, VISIBLE_WIDTH, Picture, snapshot_of
from hilbridge.toolchain import assemble_text

CODE_OF = {text: code for code, text in enumerate(glyph_texts())}


def pointer_for(code: int, y: int) -> tuple[int, int]:
    """Pointer and attribute bit 0 that show `code` at line `y` (8 * code - Y / 2, 9 bits)."""
    pointer9 = (8 * code - (y >> 1)) & 0x1FF
    return pointer9 & 0xFF, pointer9 >> 8


def text_cart(singles: list[tuple[int, int, str, int]], quad: tuple[int, int, str]) -> bytes:
    """A cart that writes `singles` (Y, X, character, colour) and one quad (Y, X, 4 characters)."""
    lines = ["        cpu 8048", "        org 400h", "        jmp start", "        org 410h", "start:  dis i"]
    lines += ["        mov a,#0B4h", "        outl p1,a"]

    def put(address: int, value: int) -> None:
        lines.extend(
            [f"        mov r0,#{address:03X}h", f"        mov a,#{value:03X}h", "        movx @r0,a"]
        )

    for index, (y, x, text, colour) in enumerate(singles):
        pointer, high = pointer_for(CODE_OF[text], y)
        base = 0x10 + 4 * index
        for offset, value in enumerate((y, x, pointer, colour << 1 | high)):
            put(base + offset, value)
    y, x, text = quad
    put(0x40, y)
    put(0x41, x)
    for index, char in enumerate(text):
        pointer, high = pointer_for(CODE_OF[char], y)
        put(0x42 + 4 * index, pointer)
        put(0x43 + 4 * index, 4 << 1 | high)
    put(0xA0, 0x20)
    lines += ["idle:   jmp idle", "        org 0BFFh", "        db 0FFh"]
    return assemble_text("\n".join(lines) + "\n").image


SINGLES = [
    (20, 30, "H", 1),
    (20, 38, "I", 2),
    (20, 54, "5", 3),
    (42, 30, "?", 7),
    (42, 46, "$", 0),
    (100, 120, "Z", 5),
]
QUAD = (150, 20, "QUAD")


def test_text_a_cart_writes_at_known_positions_decodes_exactly():
    console = Console(text_cart(SINGLES, QUAD))
    console.run_frames(3)
    chars = screen_chars(console.vdc.registers)
    shown = {(char.y, char.x, char.text, char.colour) for char in chars}
    assert {(y, x, text, 8 + colour) for y, x, text, colour in SINGLES} <= shown
    assert {(150, 20 + 16 * i, c, 12) for i, c in enumerate("QUAD")} <= shown
    # the six unused characters sit at Y 0, X 0 with pointer 0: on NTSC above line 14, not drawn
    assert len(chars) == len(SINGLES) + 4
    assert screen_text(console.vdc.registers).splitlines() == [
        " 20 |   HI 5",
        " 42 |   ? $",
        "100 |               Z",
        "150 |  Q U A D",
    ]


def test_a_pointer_between_two_glyphs_is_unreadable_and_a_display_off_shows_nothing():
    registers = bytearray(256)
    registers[0xA0] = 0x20
    registers[0x10:0x14] = bytes((40, 10, (8 * 0x11 - 20 + 3) & 0xFF, 0))  # three rows into W
    assert [char.text for char in screen_chars(registers)] == [UNREADABLE]
    registers[0xA0] = 0
    assert screen_chars(registers) == []


def glyph_bitmap(code: int) -> np.ndarray:
    """16 x 14 pixels: the 7 rows of a glyph, each bit two pixels wide and two lines high."""
    rows = np.frombuffer(charset_rom()[8 * code : 8 * code + 7], dtype=np.uint8)
    bits = np.unpackbits(rows[:, None], axis=1).astype(bool)
    return np.repeat(np.repeat(bits, 2, axis=0), 2, axis=1)


cells = st.tuples(
    st.integers(7, 113).map(lambda half: 2 * half),  # Y: even, on screen for a whole cell
    st.integers(0, 110),
    st.integers(0, 0x1FF),  # any pointer: aligned or not
    st.integers(0, 7),
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.lists(cells, min_size=12, max_size=12), st.lists(cells, min_size=4, max_size=4), st.data())
def test_decoding_agrees_with_the_picture_the_renderer_draws(singles, quads, data):
    registers = bytearray(256)
    registers[0xA0] = 0x20
    for index, (y, x, pointer9, colour) in enumerate(singles):
        if data.draw(st.booleans()):  # an aligned glyph half of the time
            pointer9 = (8 * (pointer9 & 0x3F) - (y >> 1)) & 0x1FF
        registers[0x10 + 4 * index : 0x14 + 4 * index] = bytes(
            (y, x, pointer9 & 0xFF, colour << 1 | pointer9 >> 8)
        )
    for quad, (y, x, _pointer, colour) in enumerate(quads):
        base = 0x40 + 16 * quad
        registers[base], registers[base + 1] = y, x
        for char in range(4):
            code = data.draw(st.integers(0, 63))
            aligned = (8 * code - (y >> 1)) & 0x1FF
            registers[base + 2 + 4 * char] = aligned & 0xFF
            registers[base + 3 + 4 * char] = colour << 1 | aligned >> 8
    picture = Picture(snapshot_of(registers), True)
    pixels = np.empty((VISIBLE_LINES, VISIBLE_WIDTH), dtype=np.uint8)
    picture.draw(pixels.reshape(-1), 0, pixels.size, lum=False)
    chars = screen_chars(registers)
    boxes = [(char.y, (char.x + 5) * 2) for char in chars]
    for index, (char, (top, left)) in enumerate(zip(chars, boxes, strict=True)):
        others = boxes[:index] + boxes[index + 1 :]
        if any(abs(top - t) < 16 and abs(left - lx) < 16 for t, lx in others):
            continue  # overlapping cells: the picture shows both
        lit = pixels[top : top + 14, left : left + 16] == char.colour
        if char.code is not None:
            assert np.array_equal(lit, glyph_bitmap(char.code)), char
            assert not (pixels[top + 14 : top + 16, left : left + 16] == char.colour).any()
        else:
            assert not any(np.array_equal(lit, glyph_bitmap(code)) for code in range(64)), char


def test_the_captured_writes_replay_to_the_registers_of_the_live_vdc():
    console = EmulatorConsole(combat_image())
    profile = profile_for(combat_image())
    plan = BattlePlan(
        {"attacker": "a", "defender": "d"},
        {"attacker": 900, "defender": 800},
        {"attacker": "SUB", "defender": "TANK"},
    )
    movie, last = battle_movie(plan, profile.keys)
    items = list(console.battle(movie, last + 150).items())
    replay = BusReplay()
    for item in items:
        replay.feed(item)
    live = console.console.vdc.registers
    assert replay.registers[0x10:0x80] == live[0x10:0x80] and replay.registers[0xA0] == live[0xA0]
    assert screen_text(replay.registers) == screen_text(live)
    assert replay.ram == console.console.ram
    frame = items[-1].frame
    assert screen_text(registers_at_frame(items, frame).registers) == screen_text(live)
    middle = registers_at_frame(items, frame - 140)  # before the battle: the attacker's entry is shown
    assert "S U B" in screen_text(middle.registers)


def test_screen_command_prints_the_text_grid_of_a_cart_at_a_frame(tmp_path):
    cart = tmp_path / "text.bin"
    cart.write_bytes(text_cart(SINGLES, QUAD))
    result = CliRunner().invoke(cli, ["screen", str(cart), "--frame", "3"])
    assert result.exit_code == 0, result.output
    assert " 20 |   HI 5" in result.output and "150 |  Q U A D" in result.output
