"""Drawing rules of the VDC picture (docs/hardware.md, "Drawing"), checked on whole frames from `Vdc`."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.machine.charset import charset_rom
from hilbridge.machine.palette import RF_PALETTE, RGB_PALETTE, to_rgb
from hilbridge.machine.timing import NTSC, PAL
from hilbridge.machine.vdc import Vdc
from hilbridge.machine.video import VISIBLE_LINES, VISIBLE_WIDTH, GridLayer, MajorSystem, character_cell

BACKGROUND_BLACK = 0x00


def frame_after(writes: list[tuple[int, int]], region=NTSC, lum: bool = False) -> np.ndarray:
    """The first frame drawn with `writes` made in the VBLANK after power-on."""
    vdc = Vdc(region)
    cycle = 10
    for address, value in writes:
        vdc.write(address, value, cycle)
        cycle += 3
    assert cycle < 400, "writes must land before line 0"
    if lum:
        vdc.set_lum(True, cycle)
    vdc.run_to(int(region.cycles_per_frame) + 10)
    assert vdc.frames_completed == 1
    return vdc.frame()


def glyph(code: int) -> np.ndarray:
    """The 7 rows x 8 columns of a character (1 = lit), straight from the ROM bytes."""
    rom = charset_rom()
    return np.array([[rom[code * 8 + row] >> (7 - bit) & 1 for bit in range(8)] for row in range(7)])


def character(slot: int, y: int, x: int, code: int, colour: int) -> list[tuple[int, int]]:
    pointer9 = (8 * code - y // 2) & 0x1FF
    base = 0x10 + 4 * slot
    return [(base, y), (base + 1, x), (base + 2, pointer9 & 0xFF), (base + 3, colour << 1 | pointer9 >> 8)]


def test_background_colour_and_display_off() -> None:
    frame = frame_after([(0xA3, 0b101000)])  # background B=1, R=1 -> violet (5)
    assert (frame == 5).all()


@pytest.mark.parametrize("code", [0x00, 0x12, 0x2F, 0x3A])
def test_character_shows_its_glyph_doubled_vertically_and_horizontally(code: int) -> None:
    y, x = 0x60, 0x30
    frame = frame_after([*character(0, y, x, code, colour=2), (0xA0, 0x20)])
    left = (x + 5) * 2
    area = frame[y : y + 14, left : left + 16]
    expected = np.repeat(np.repeat(glyph(code), 2, axis=0), 2, axis=1)
    assert ((area == 8 + 2) == (expected == 1)).all()
    assert (area[expected == 0] == BACKGROUND_BLACK).all()
    # nothing else on screen
    rest = frame.copy()
    rest[y : y + 14, left : left + 16] = 0
    assert (rest == 0).all()


def test_characters_with_y_below_14_hidden_on_ntsc_only() -> None:
    writes = [*character(0, 12, 0x20, 0x00, colour=1), (0xA0, 0x20)]
    assert not (frame_after(writes, NTSC) == 9).any()
    assert (frame_after(writes, PAL) == 9).any()


def test_quad_characters_are_32_pixels_apart_and_share_y_x() -> None:
    y, x = 0x40, 0x20
    writes = [(0x40, y), (0x41, x)]
    for char, code in enumerate((0x01, 0x02, 0x03, 0x04)):
        pointer9 = (8 * code - y // 2) & 0x1FF
        writes += [(0x42 + 4 * char, pointer9 & 0xFF), (0x43 + 4 * char, 3 << 1 | pointer9 >> 8)]
    frame = frame_after([*writes, (0xA0, 0x20)])
    for char, code in enumerate((0x01, 0x02, 0x03, 0x04)):
        left = (x + 5) * 2 + 32 * char
        area = frame[y : y + 14, left : left + 16]
        expected = np.repeat(np.repeat(glyph(code), 2, axis=0), 2, axis=1)
        assert ((area == 11) == (expected == 1)).all(), char


def sprite(index: int, y: int, x: int, attribute: int, shape: list[int]) -> list[tuple[int, int]]:
    return [(4 * index, y), (4 * index + 1, x), (4 * index + 2, attribute)] + [
        (0x80 + 8 * index + row, byte) for row, byte in enumerate(shape)
    ]


def lit(frame: np.ndarray, colour: int) -> set[tuple[int, int]]:
    ys, xs = np.nonzero(frame == colour)
    return set(zip(ys.tolist(), xs.tolist(), strict=True))


@pytest.mark.parametrize(("attribute", "size"), [(0x08, 2), (0x0C, 4)])
def test_sprite_pixels_zoom_and_bit0_leftmost(attribute: int, size: int) -> None:
    y, x = 50, 40
    frame = frame_after([*sprite(0, y, x, attribute, [0x01, 0, 0, 0, 0, 0, 0, 0x80]), (0xA0, 0x20)])
    left = (x + 5) * 2
    expected = {(y + r, left + c) for r in range(size) for c in range(size)}  # row 0, bit 0
    expected |= {(y + 7 * size + r, left + 7 * size + c) for r in range(size) for c in range(size)}
    assert lit(frame, 8 + 1) == expected


@pytest.mark.parametrize(
    ("shift_bits", "shifted_rows"),
    [(0b01, set(range(8))), (0b10, {0, 2, 4, 6}), (0b11, {1, 3, 5, 7})],
)
def test_sprite_half_unit_shift(shift_bits: int, shifted_rows: set[int]) -> None:
    y, x = 60, 50
    frame = frame_after([*sprite(1, y, x, 0x10 | shift_bits, [0x01] * 8), (0xA0, 0x20)])
    left = (x + 5) * 2
    for row in range(8):
        columns = sorted(c for (line, c) in lit(frame, 8 + 2) if line == y + 2 * row)
        assert columns == [left + (row in shifted_rows), left + 1 + (row in shifted_rows)], row


def test_sprites_in_front_of_characters_and_sprite_0_in_front() -> None:
    y, x = 0x50, 0x28
    writes = [*character(0, y, x, 0x2F, colour=1)]  # solid block
    writes += sprite(0, y, x, 0x10, [0xFF] * 8)  # green, on top
    writes += sprite(1, y + 4, x, 0x20, [0xFF] * 8)  # blue, under sprite 0
    frame = frame_after([*writes, (0xA0, 0x20)])
    left = (x + 5) * 2
    assert frame[y, left] == 8 + 2
    assert frame[y + 4, left] == 8 + 2
    assert frame[y + 17, left] == 8 + 4
    assert frame[y + 20, left + 17] == BACKGROUND_BLACK


def test_grid_horizontal_and_vertical_bars_and_colour() -> None:
    # row 0 bar of column 0; vertical bar column 1, row 2; grid colour R+G (yellow) not bright
    frame = frame_after([(0xC0, 0x01), (0xE1, 0x04), (0xA3, 0b110), (0xA0, 0x08)])
    yellow = 3
    # horizontal: lines 24-26, x = 13*2 .. (13+18)*2 - 1
    assert lit(frame, yellow) >= {(line, px) for line in range(24, 27) for px in range(26, 62)}
    vertical = {(line, px) for line in range(24 + 48, 24 + 72) for px in range(58, 62)}
    assert lit(frame, yellow) == vertical | {(line, px) for line in range(24, 27) for px in range(26, 62)}


def test_grid_dots_and_wide_bars_and_bright() -> None:
    frame = frame_after([(0xE0, 0x01), (0xA3, 0x41), (0xA0, 0x08 | 0x40 | 0x80)])
    bright_blue = 8 + 4
    cells = lit(frame, bright_blue)
    # dots at all 10 x 9 intersections, 4 px x 3 lines
    for row in range(9):
        for column in range(10):
            assert (24 + 24 * row, (13 + 16 * column) * 2) in cells
    # wide vertical bar: 16 units = 32 px
    assert {(30, px) for px in range(26, 58)} <= cells and (30, 58) not in cells


def test_lum_brightens_every_pixel() -> None:
    frame = frame_after([(0xA3, 0b001000)], lum=True)  # blue background
    assert (frame == 8 + 4).all()


def line_cycle(vdc: Vdc, line: int, hpos: int) -> int:
    return vdc.timing.first_cycle_at_pixel((263 - 243 + line) * 455 + hpos)


@pytest.mark.parametrize("later_update", [True, False])
def test_mid_frame_change_lands_at_the_beam(later_update: bool) -> None:
    vdc = Vdc(NTSC)
    vdc.write(0xA3, 0x08, 10)  # blue background
    target = line_cycle(vdc, 100, 200)
    vdc.write(0xA3, 0x10, target)  # green from here on
    line, hpos = vdc.position(target)
    if later_update:
        vdc.read(0xA1, line_cycle(vdc, 150, 0))  # A1 reads draw up to the beam
    vdc.run_to(6100)
    frame = vdc.frame()
    assert (frame[:line] == 4).all() and (frame[line + 1 :] == 2).all()
    # with no later update the frame end finishes the half-drawn line from where the write left it,
    # as MAME 0.251 does (test_vdc_half_drawn_line.py)
    assert (frame[line, :hpos] == 4).all() and (frame[line, hpos:] == 2).all()


def test_palettes_are_16_rgb_triples() -> None:
    assert RF_PALETTE.shape == RGB_PALETTE.shape == (16, 3)
    assert RF_PALETTE[7].tolist() == [0xCE, 0xCE, 0xCE]  # MAME's RF background grey
    assert to_rgb(np.array([[15]], dtype=np.uint8))[0, 0].tolist() == [255, 255, 255]


def _lines_in_any_order(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(first, last) line ranges from (first, length), then the whole area."""
    return [(first, min(first + length, VISIBLE_LINES - 1)) for first, length in ranges] + [
        (0, VISIBLE_LINES - 1)
    ]


line_ranges = st.lists(st.tuples(st.integers(0, VISIBLE_LINES - 1), st.integers(0, 40)), max_size=12)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    registers=st.binary(min_size=0x70, max_size=0x70),
    on_screen=st.integers(0, 0xDF),
    hide_high=st.booleans(),
    ranges=line_ranges,
)
def test_major_system_drawn_line_range_by_line_range_equals_drawn_at_once(
    registers: bytes, on_screen: int, hide_high: bool, ranges: list[tuple[int, int]]
) -> None:
    """The major layers are drawn lazily, a few lines at a time and in any order; what they hold
    must not depend on that order (lines drawn twice or between drawn ones included). (The
    registers are drawn as one byte string: 112 separate integers were most of the example's time.)"""
    registers = bytearray(registers)
    for index in range(0, 0x70, 4):  # Y and X of every character slot on screen (mostly)
        registers[index] %= on_screen + 0x20
        registers[index + 1] %= on_screen + 0x20
    key = bytes(registers) + bytes([hide_high])
    whole, pieces = MajorSystem(key), MajorSystem(key)
    whole.build(0, VISIBLE_LINES - 1)
    for first, last in _lines_in_any_order(ranges):
        pieces.build(first, last)
    if not whole.cells:
        return
    assert (pieces.opaque == whole.opaque).all()
    assert (pieces.colour[whole.opaque] == whole.colour[whole.opaque]).all()
    assert (pieces.overlap == whole.overlap).all()
    assert pieces.overlap_masks == whole.overlap_masks
    # bit x of a line's mask = overlap at x, compared as strings of 0s and 1s (bit 0 first), which
    # costs far less than a list of every bit of every line
    rows = whole.overlap.astype(np.uint8) + ord("0")
    for line, mask in enumerate(whole.overlap_masks):
        assert format(mask, f"0{VISIBLE_WIDTH}b")[::-1][:VISIBLE_WIDTH] == rows[line].tobytes().decode()


@settings(max_examples=100, deadline=None)
@given(
    control=st.sampled_from([0x08, 0x48, 0x88, 0xC8]),
    registers=st.binary(min_size=0x30, max_size=0x30),
    ranges=line_ranges,
)
def test_grid_drawn_line_range_by_line_range_equals_the_whole_layer(
    control: int, registers: bytes, ranges: list[tuple[int, int]]
) -> None:
    key = bytes([control]) + registers
    pieces = GridLayer(key)
    for first, last in _lines_in_any_order(ranges):
        pieces.drawn(first, last)
    assert (pieces.drawn(0, VISIBLE_LINES - 1) == GridLayer(key).drawn(0, VISIBLE_LINES - 1)).all()


@settings(max_examples=60, deadline=None)
@given(
    places=st.lists(st.sampled_from([0, 8, 16]), min_size=0x38, max_size=0x38),
    codes=st.lists(st.sampled_from([0, 1, 0x22]), min_size=0x38, max_size=0x38),
    hide_high=st.booleans(),
)
def test_major_system_with_stacked_cells_equals_counting_covers(
    places: list[int], codes: list[int], hide_high: bool
) -> None:
    """Cells stacked on one rectangle (as the power-on registers leave every character at (0, 0))
    are painted once and make one overlap box: the layers equal counting each pixel's covers and
    taking the first cell's colour, cell by cell in drawing order."""
    registers = bytearray(0x70)
    for slot in range(0x1C):
        registers[4 * slot], registers[4 * slot + 1] = places[2 * slot], places[2 * slot + 1]
        registers[4 * slot + 2], registers[4 * slot + 3] = codes[2 * slot], codes[2 * slot + 1]
    major = MajorSystem(bytes(registers) + bytes([hide_high]))
    major.build(0, VISIBLE_LINES - 1)
    covers = np.zeros((VISIBLE_LINES, VISIBLE_WIDTH + 16), int)
    colour = np.zeros((VISIBLE_LINES, VISIBLE_WIDTH + 16), np.uint8)
    for y, bottom, x, pointer9, height_pointer, cell_colour in major.cells:
        covers[y:bottom, x : x + 16] += 1
        bits = character_cell(y, pointer9, height_pointer)
        unset = colour[y:bottom, x : x + 16] == 0
        colour[y:bottom, x : x + 16][bits & unset] = cell_colour
    assert (major.overlap == (covers[:, :VISIBLE_WIDTH] >= 2)).all()
    if major.cells:
        assert (major.colour[:, :VISIBLE_WIDTH] == colour[:, :VISIBLE_WIDTH]).all()
