"""The straightforward whole-frame picture renderer, kept as the reference for the fast one.

This is `hilbridge.machine.video.Picture` as it was when it matched MAME 0.251 pixel for pixel on
the oracle carts (commit 2d44bbb): every layer is computed over the whole visible area at once, with
no row-laziness and no per-object caches. `test_video_fast_equals_reference.py` runs the same random
register sequences through a `Vdc` using it and through the normal one, and compares frames and
status reads.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from hilbridge.machine.charset import charset_rom
from hilbridge.machine.video import (
    _EMPTY,
    _PAD_WIDTH,
    BRIGHT,
    COLLISION,
    COLOUR,
    CONTROL,
    CONTROL_DISPLAY,
    CONTROL_DOTS,
    CONTROL_GRID,
    CONTROL_WIDE_BARS,
    EDGE_LEFT_OF_MAJOR,
    EDGE_LEFT_OF_SPRITE,
    GRID_CELL_LINES,
    GRID_CELL_UNITS,
    GRID_REGISTERS,
    GRID_X0_UNITS,
    GRID_Y0,
    NTSC_HIDDEN_Y,
    SOURCE_HORIZONTAL_GRID,
    SOURCE_MAJOR,
    SOURCE_VERTICAL_GRID,
    VISIBLE_LINES,
    VISIBLE_WIDTH,
    background_colour,
    edge_bits,
    grid_colour,
    registers_from_snapshot,
)


def major_objects(r: bytes) -> list[tuple[int, int, int, int, int]]:
    """(y, x_px, pointer9, colour, height_pointer) of every major character, in drawing order
    (`r` holds registers 10-7F at offsets 0-6F), object by object as the registers list them."""
    objects = []
    for quad in range(3, -1, -1):
        base = 0x30 + 16 * quad
        y, x = r[base], (r[base + 1] + 5) * 2
        height_pointer = r[base + 12 + 2]  # the 4th character's pointer sets the height
        for char in range(4):
            pointer, attribute = r[base + 4 * char + 2], r[base + 4 * char + 3]
            colour = 8 + (attribute >> 1 & 7)
            objects.append((y, x + 32 * char, pointer | (attribute & 1) << 8, colour, height_pointer))
    for char in range(11, -1, -1):
        base = 4 * char
        y, x, pointer, attribute = r[base], (r[base + 1] + 5) * 2, r[base + 2], r[base + 3]
        objects.append((y, x, pointer | (attribute & 1) << 8, 8 + (attribute >> 1 & 7), pointer))
    return objects


class ReferencePicture:
    """Everything one register snapshot draws on the visible area; layers are built on first use."""

    plain_colour = -1  # never one colour to fill with: the renderer paints every pixel of it

    def __init__(
        self, snapshot: bytes, hides_high_characters: bool, layout: ReferencePicture | None = None
    ) -> None:
        """`layout`: a picture with the same registers except the colours (A3), whose object and
        collision layers this one shares (raster bars rewrite A3 mid-frame)."""
        self.snapshot = snapshot
        self.layout = layout
        self.registers = registers_from_snapshot(snapshot)
        self.hides_high_characters = hides_high_characters
        self.enable = self.registers[COLLISION]
        self.objects_on = bool(self.registers[CONTROL] & CONTROL_DISPLAY)
        self._built = False
        self._collisions_built = False
        self.full_overlap: bool | None = None
        self.full_collisions: int | None = None
        self._overlap_positions: np.ndarray | None = None
        self._collision_positions: np.ndarray | None = None
        self._pixels: np.ndarray | None = None

    # -- layers -----------------------------------------------------------------------------------
    def _build(self) -> None:
        if self._built:
            return
        self._built = True
        r = self.registers
        if self.layout is not None:
            self._share_layout(self.layout)
            return
        # grid and characters change less often than sprites: their layers are shared (read-only)
        grid_bits = r[CONTROL] & (CONTROL_GRID | CONTROL_DOTS | CONTROL_WIDE_BARS)
        self.grid = grid_layer(bytes([grid_bits]) + bytes(r[GRID_REGISTERS]))
        major_key = bytes(r[0x10:0x80]) + bytes([self.hides_high_characters and self.objects_on])
        if not self.objects_on:
            major_key = b""
        self.major_cover, self.major_opaque, self.major_colour, self.overlap = major_layers(major_key)
        self.sprites: list[tuple[int, bool, np.ndarray]] = []  # (index, zoomed, mask) in draw order
        if self.objects_on:
            self._draw_minor()
        self.overlap_lines = self.overlap.any(axis=1).tolist()
        self.full_overlap = any(self.overlap_lines)

    def _share_layout(self, layout: ReferencePicture) -> None:
        layout._build()
        for name in ("grid", "major_cover", "major_opaque", "major_colour", "sprites", "overlap"):
            setattr(self, name, getattr(layout, name))
        self.overlap_lines = layout.overlap_lines
        self.full_overlap = layout.full_overlap

    @property
    def pixels(self) -> np.ndarray:
        """(243, 360) palette indices, painted the first time a span of this picture is drawn."""
        if self._pixels is None:
            self._build()
            self._pixels = self._paint()
        return self._pixels

    def _paint(self) -> np.ndarray:
        """Palette index of every visible pixel: background, grid, characters, sprites 3 -> 0."""
        r = self.registers
        width = VISIBLE_WIDTH
        grid = self.grid[:, :width]
        pixels = np.where(grid != 0, grid_colour(r[COLOUR]), background_colour(r[COLOUR])).astype(np.uint8)
        if self.objects_on:
            major = self.major_opaque[:, :width]
            np.copyto(pixels, self.major_colour[:, :width], where=major)
            for index, _zoomed, mask in self.sprites:
                pixels[mask[:, :width]] = 8 + (r[4 * index + 2] >> 3 & 7)
        return pixels

    def _draw_minor(self) -> None:
        r = self.registers
        for index in range(3, -1, -1):
            y, x, attribute = r[4 * index], r[4 * index + 1], r[4 * index + 2]
            zoomed = bool(attribute & 4)
            size = 4 if zoomed else 2
            mask = np.zeros((VISIBLE_LINES, _PAD_WIDTH), dtype=bool)
            for row in range(8):
                top = y + row * size
                if top >= VISIBLE_LINES:
                    break
                shape = r[0x80 + 8 * index + row]
                if not shape:
                    continue
                shift = {0: 0, 1: 1, 2: (row & 1) ^ 1, 3: row & 1}[attribute & 3]
                left = (x + 5) * 2 + shift * (size // 2)
                bits = np.unpackbits(np.array([shape], dtype=np.uint8), bitorder="little").astype(bool)
                mask[top : top + size, left : left + 8 * size] = np.repeat(bits, size)
            self.sprites.append((index, zoomed, mask))

    def _build_collisions(self) -> None:
        """Per-pixel collision bits of the drawing pass and of the edge pass (needs enable != 0)."""
        if self._collisions_built:
            return
        self._build()
        self._collisions_built = True
        if self.layout is not None:
            layout = self.layout
            layout._build_collisions()
            self.source_map, self.draw_bits, self.edge_bits = (
                layout.source_map,
                layout.draw_bits,
                layout.edge_bits,
            )
            self.combined_bits, self.full_collisions = layout.combined_bits, layout.full_collisions
            return
        enable = self.enable
        width = VISIBLE_WIDTH
        # only lines with a character or sprite pixel can collide (grid pixels never test), so
        # the work is done on those lines alone
        major_full = self.major_opaque[:, :width]
        object_lines = major_full.any(axis=1)
        for _index, _zoomed, full_mask in self.sprites:
            object_lines |= full_mask[:, :width].any(axis=1)
        rows = np.flatnonzero(object_lines)
        grid = self.grid[rows, :width]
        major = major_full[rows]
        bits = np.zeros((len(rows), width), dtype=np.uint8)
        bits[major & ((grid & enable) != 0)] |= SOURCE_MAJOR
        if enable & SOURCE_MAJOR:
            bits |= np.where(major, grid, 0).astype(np.uint8)
        source = grid.astype(np.uint16) | np.where(major, SOURCE_MAJOR, 0).astype(np.uint16)
        for index, zoomed, full_mask in self.sprites:
            mask = full_mask[rows, :width]
            own = 1 << index
            bits[mask & ((source & enable) != 0)] |= own
            if enable & own:
                bits |= np.where(mask, source & 0xFF, 0).astype(np.uint8)
            source[mask] |= (0x101 if zoomed else 1) << index
        left, here = source[:, :-1], source[:, 1:]
        edge = np.zeros((len(rows), width), dtype=np.uint8)
        on_major = (here & SOURCE_MAJOR) != 0
        edge[:, 1:][on_major & ((left & enable & EDGE_LEFT_OF_MAJOR) != 0)] |= SOURCE_MAJOR
        if enable & SOURCE_MAJOR:
            edge[:, 1:] |= np.where(on_major, left & EDGE_LEFT_OF_MAJOR, 0).astype(np.uint8)
        unzoomed = ((here & 0x0F) & (~here >> 8) & 0x0F).astype(np.uint8)
        edge[:, 1:] |= np.where((left & enable & EDGE_LEFT_OF_SPRITE) != 0, unzoomed, 0).astype(np.uint8)
        edge[:, 1:] |= np.where((unzoomed & enable) != 0, left & EDGE_LEFT_OF_SPRITE, 0).astype(np.uint8)
        self.source_map = self.grid[:, :width].astype(np.uint16)
        self.source_map[rows] = source
        self.draw_bits = np.zeros((VISIBLE_LINES, width), dtype=np.uint8)
        self.draw_bits[rows] = bits
        self.edge_bits = np.zeros((VISIBLE_LINES, width), dtype=np.uint8)
        self.edge_bits[rows] = edge
        self.combined_bits = (self.draw_bits | self.edge_bits).ravel()
        self.full_collisions = int(np.bitwise_or.reduce(self.combined_bits))

    def overlap_positions(self) -> np.ndarray:
        """Sorted raster indices (line * 360 + x) of overlapping major cells."""
        if self._overlap_positions is None:
            self._build()
            self._overlap_positions = np.flatnonzero(self.overlap.ravel()) if self.full_overlap else _EMPTY
        return self._overlap_positions

    def collision_positions(self) -> np.ndarray:
        """Sorted raster indices of pixels that set A2 bits (drawing or edge pass)."""
        if self._collision_positions is None:
            if not self.enable:
                self._collision_positions = _EMPTY
            else:
                self._build_collisions()
                self._collision_positions = np.flatnonzero(self.combined_bits)
        return self._collision_positions

    # -- queries over a span (raster range start..end-1, start = line * 360 + x) -------------------
    def overlaps(self, start: int, end: int) -> bool:
        """Does a major cell overlap another anywhere in the span (A1 b7)?"""
        if not self.objects_on:
            return False
        if not self._built:
            self._build()
        if not self.full_overlap:
            return False
        first, last = start // VISIBLE_WIDTH, (end - 1) // VISIBLE_WIDTH
        if not any(self.overlap_lines[first : last + 1]):
            return False
        return bool(self.overlap.ravel()[start:end].any())

    def collisions(self, start: int, end: int, left_source: int) -> int:
        """A2 bits of pixels start..end-1; `left_source` is the source map left of `start` as the
        previous span drew it, or -1 when this picture drew that pixel too."""
        if not self.enable:
            return 0
        self._build_collisions()
        if not self.full_collisions:
            return 0
        if start == 0 and end == VISIBLE_LINES * VISIBLE_WIDTH:
            return self.full_collisions
        first = start
        result = 0
        if start % VISIBLE_WIDTH and left_source >= 0:
            # the edge pass at a span's first pixel sees the map the span before it drew
            y, x = divmod(start, VISIBLE_WIDTH)
            here = int(self.source_map[y, x])
            result = int(self.draw_bits[y, x]) | edge_bits(left_source, here, self.enable)
            first = start + 1
        if first < end:
            result |= int(np.bitwise_or.reduce(self.combined_bits[first:end]))
        return result

    def source_at(self, line: int, x: int) -> int:
        """The collision source map at one pixel (what the edge pass of the next span sees)."""
        if not self.objects_on and not self.registers[CONTROL] & CONTROL_GRID:
            return 0
        self._build()
        value = int(self.grid[line, x])
        if self.major_opaque[line, x]:
            value |= SOURCE_MAJOR
        for index, zoomed, mask in self.sprites:
            if mask[line, x]:
                value |= (0x101 if zoomed else 1) << index
        return value

    def draw(self, target: np.ndarray, start: int, end: int, lum: bool) -> None:
        """Raster range start..end-1 of the whole painted picture, LUM ORed into every pixel."""
        target[...] = self.pixels.reshape(-1)[start:end] | (BRIGHT if lum else 0)


@lru_cache(maxsize=32)
def grid_layer(key: bytes) -> np.ndarray:
    """Source bits of the grid (0x20 horizontal bars and dots, 0x10 vertical bars) per pixel.

    key: A0 & (grid | dots | wide bars), then registers C0-EF."""
    control, r = key[0], bytearray(0xC0) + key[1:]
    grid = np.zeros((VISIBLE_LINES, _PAD_WIDTH), dtype=np.uint8)
    if control & CONTROL_GRID:
        for row in range(9):
            top = GRID_Y0 + row * GRID_CELL_LINES
            band = grid[top : top + 3]
            for column in range(9):
                bars = (r[0xD0 + column] & 1) << 8 | r[0xC0 + column]
                if bars >> row & 1:
                    x = (GRID_X0_UNITS + column * GRID_CELL_UNITS) * 2
                    band[:, x : x + (GRID_CELL_UNITS + 2) * 2] |= SOURCE_HORIZONTAL_GRID
            if control & CONTROL_DOTS:
                for column in range(10):
                    x = (GRID_X0_UNITS + column * GRID_CELL_UNITS) * 2
                    band[:, x : x + 4] |= SOURCE_HORIZONTAL_GRID
        bar_units = GRID_CELL_UNITS if control & CONTROL_WIDE_BARS else 2
        for row in range(8):
            top = GRID_Y0 + row * GRID_CELL_LINES
            for column in range(10):
                if r[0xE0 + column] >> row & 1:
                    x = (GRID_X0_UNITS + column * GRID_CELL_UNITS) * 2
                    grid[top : top + GRID_CELL_LINES, x : x + bar_units * 2] |= SOURCE_VERTICAL_GRID
    grid.setflags(write=False)
    return grid


@lru_cache(maxsize=32)
def major_layers(key: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(cells covered, opaque, colour of the first opaque pixel, overlap) of the major system.

    key: registers 10-7F and a byte "hide Y < 14" (8244), or b"" when the display is off."""
    shape = (VISIBLE_LINES, _PAD_WIDTH)
    cover, opaque, colours = np.zeros(shape, np.uint8), np.zeros(shape, bool), np.zeros(shape, np.uint8)
    if key:
        rom = np.frombuffer(charset_rom(), dtype=np.uint8)
        hide_high = bool(key[-1])
        for y, x, pointer9, colour, height_pointer in major_objects(key[:-1]):
            if hide_high and y < NTSC_HIDDEN_Y:
                continue
            height = 7 - (((y >> 1) + height_pointer) & 7) or 8
            bottom = min(y + 2 * height, VISIBLE_LINES)
            if y >= bottom:
                continue
            scanlines = np.arange(y, bottom)
            rows = rom[(pointer9 + (y >> 1) + ((scanlines - y) >> 1)) & 0x1FF]
            bits = np.repeat(np.unpackbits(rows[:, None], axis=1).astype(bool), 2, axis=1)
            cell = (slice(y, bottom), slice(x, x + 16))
            cover[cell] += 1
            fresh = bits & ~opaque[cell]
            colours[cell][fresh] = colour
            opaque[cell] |= bits
    overlap = np.ascontiguousarray(cover[:, :VISIBLE_WIDTH] >= 2)
    for layer in (cover, opaque, colours, overlap):
        layer.setflags(write=False)
    return cover, opaque, colours, overlap
