"""The VDC picture: background, grid, characters, quads and sprites, with collision bits.

The rules and their sources: docs/hardware.md, "Drawing" and "Collisions".

A `Picture` is what one set of video registers draws over the whole visible 243 × 360 area, computed
with numpy one object at a time (never one pixel at a time): the palette index of every pixel, the
per-pixel collision bits, the major-overlap cells, and the source-mask map the edge rule needs.
Each of these is computed only for the lines someone asks about, on first use: a picture that a
mid-frame register write makes and that draws a few pixels costs microseconds. Pictures are cached
by register snapshot, so a picture that stays the same from frame to frame costs one dictionary lookup.

The `Renderer` receives the spans MAME would draw (`add`, from `Vdc`'s update bookkeeping) and
turns them into the frame and into status bits when asked. Every rule follows MAME 0.251's
i8244.cpp `screen_update`:

* per line: background, grid (A0 b3, lines 24-218), major system (quads 3→0 then characters 11→0),
  sprites 3→0, then the edge pass; maps are cleared when a span starts at x = 0.
* a major pixel drawn where another major object's cell already is sets A1 b7; the first opaque
  pixel drawn keeps the cell.
* collision: an opaque pixel of object M over accumulated sources C: if E&C then status |= M; if E&M
  then status |= C (E = A2). Grid pixels mark the map but do not test.
* edge pass: newer MAME counts a major pixel directly right of a grid or sprite pixel, and an
  unzoomed sprite pixel directly right of a grid pixel, as touching it; MAME 0.251 counts nothing
  (EDGE_LEFT_OF_MAJOR, EDGE_LEFT_OF_SPRITE).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from operator import itemgetter
from struct import Struct

import numpy as np

from hilbridge.machine.charset import charset_rom

VISIBLE_LINES = 243
VISIBLE_WIDTH = 360
LINE_BYTES = VISIBLE_WIDTH // 8  # a line of raster bits (`BaseLayer.packed_sources`)
VISIBLE_AREA_BYTES = VISIBLE_LINES * LINE_BYTES
BRIGHT = 8  # the palette index's I bit: every pixel of a span drawn with LUM (P17) bright
_PAD_WIDTH = 656  # wide enough for any object at X = 255 (quads reach (255 + 5) * 2 + 112)

CONTROL, COLLISION, COLOUR = 0xA0, 0xA2, 0xA3
CONTROL_GRID, CONTROL_DOTS, CONTROL_DISPLAY, CONTROL_WIDE_BARS = 0x08, 0x40, 0x20, 0x80

# collision source bits (A2 layout)
SOURCE_VERTICAL_GRID = 0x10
SOURCE_HORIZONTAL_GRID = 0x20
SOURCE_MAJOR = 0x80
GRID_SOURCES = SOURCE_VERTICAL_GRID | SOURCE_HORIZONTAL_GRID
GRID_SOURCES_PACKED = (SOURCE_VERTICAL_GRID, SOURCE_HORIZONTAL_GRID)  # each packed on its own

# Edge pass: the sources left of a major pixel, and left of an unzoomed sprite pixel, that count as
# touching it. MAME 0.251: none (measured with fixtures/carts/video_edges.asm: characters, quads and
# sprites at the pixel left or right of bars and dots never collide; the grid-left-of-major rule we
# had before, which video_objects could not tell apart from none, reported collisions there). Newer
# MAME source counts grid and sprites left of major (0x3F) and grid left of an unzoomed sprite
# (0x30); docs/accuracy.md.
EDGE_LEFT_OF_MAJOR = 0x00
EDGE_LEFT_OF_SPRITE = 0x00
# Does a pixel's edge-pass result depend on its left neighbour at all? When not, a span's first
# pixel has the bits its own picture computed there, whatever the span before it drew to its left.
EDGE_SEES_LEFT = bool(EDGE_LEFT_OF_MAJOR or EDGE_LEFT_OF_SPRITE)

GRID_X0_UNITS, GRID_Y0, GRID_CELL_UNITS, GRID_CELL_LINES = 13, 24, 16, 24
NTSC_HIDDEN_Y = 14  # 8244: characters and quads with Y < 14 are not drawn
SNAPSHOT_LOW = 0xA4  # snapshot = registers 00-A3 + C0-EF (everything that affects the picture)
GRID_REGISTERS = slice(0xC0, 0xF0)
SNAPSHOT_SIZE = SNAPSHOT_LOW + GRID_REGISTERS.stop - GRID_REGISTERS.start
PICTURE_CACHE_SIZE = 64
DEFERRED_SPANS = 64  # finished spans whose A2 bits wait for a read; more are computed at a frame end
ALIAS_CACHE_SIZE = 1024
# sprites 3 -> 0 (draw order): (index, address of its Y, address of its shape)
SPRITE_SLOTS = tuple((index, 4 * index, 0x80 + 8 * index) for index in range(3, -1, -1))
SPRITE_X_LIMIT = VISIBLE_WIDTH // 2 - 5  # a sprite with X at or right of this starts off screen
NO_SHAPE = bytes(8)
_HIDE_FLAGS = (b"\0", b"\1")  # a major system key's last byte, by "hide Y < 14"
_REACHED = tuple(b"\1" * lines for lines in range(33))  # an object's lines in a reach map, by count
# a grid key's first byte by A0: the bits that change the grid (made once, not per picture)
_GRID_CONTROL = tuple(
    bytes([control & (CONTROL_GRID | CONTROL_DOTS | CONTROL_WIDE_BARS)]) for control in range(256)
)
_EMPTY = np.zeros(0, dtype=np.intp)


def snapshot_of(registers: bytes | bytearray) -> bytes:
    """The registers a picture draws from: 00-A3, then the grid's C0-EF (one join: the VDC takes
    a snapshot after every write that changes the picture)."""
    return b"".join((registers[:SNAPSHOT_LOW], registers[GRID_REGISTERS]))


def registers_from_snapshot(snapshot: bytes) -> bytearray:
    registers = bytearray(256)
    registers[0:SNAPSHOT_LOW] = snapshot[:SNAPSHOT_LOW]
    registers[GRID_REGISTERS] = snapshot[SNAPSHOT_LOW:]
    return registers


# registers that never affect what is drawn: sprite byte 3, and the Y/X of a quad's characters 1-3
# (a quad is placed by its first character's Y/X)
UNUSED_OBJECT_REGISTERS = (
    *(4 * sprite + 3 for sprite in range(4)),
    *(0x40 + 16 * quad + 4 * char + byte for quad in range(4) for char in (1, 2, 3) for byte in (0, 1)),
)
_DRAWING_CONTROL = CONTROL_GRID | CONTROL_DOTS | CONTROL_DISPLAY | CONTROL_WIDE_BARS


def _drawing_mask(control: int) -> int:
    """The bits of a snapshot that `drawing_key` keeps with A0's display and grid bits as in
    `control`, as one integer (the snapshot read big-endian)."""
    mask = bytearray(b"\xff" * SNAPSHOT_SIZE)
    if control & CONTROL_DISPLAY:
        for address in UNUSED_OBJECT_REGISTERS:
            mask[address] = 0
    else:
        mask[0:0xA0] = bytes(0xA0)
        mask[COLLISION] = 0
    if control & CONTROL_GRID:
        mask[CONTROL] = _DRAWING_CONTROL
    else:
        mask[CONTROL] = CONTROL_DISPLAY
        mask[SNAPSHOT_LOW:] = bytes(SNAPSHOT_SIZE - SNAPSHOT_LOW)
    mask[CONTROL + 1] = 0
    return int.from_bytes(mask, "big")


# by A0 & (display | grid)
_DRAWING_MASKS = {
    control: _drawing_mask(control)
    for control in (0, CONTROL_GRID, CONTROL_DISPLAY, CONTROL_DISPLAY | CONTROL_GRID)
}


def _bytes_at(addresses: list[int]) -> Struct:
    """A struct that reads the bytes at `addresses` (ascending) of a snapshot in one call."""
    pieces, position = [], 0
    for address in addresses:
        pieces.append(f"{address - position}xB" if address > position else "B")
        position = address + 1
    return Struct("".join(pieces))


# the unused object registers and A1: with the display and the grid on and all of them zero (most
# games leave them so), `drawing_key` needs only A0's other bits cleared, not the whole mask
_UNUSED_AND_STATUS = _bytes_at([*sorted(UNUSED_OBJECT_REGISTERS), CONTROL + 1])
_NONE_UNUSED = (0,) * len(_UNUSED_AND_STATUS.unpack_from(bytes(SNAPSHOT_SIZE)))
_KEPT_CONTROL = tuple(bytes([control & _DRAWING_CONTROL]) for control in range(256))  # A0 in a key


def drawing_key(snapshot: bytes) -> bytes:
    """The snapshot with every register that cannot change the pixels or collision bits zeroed, so
    pictures that draw the same are one picture: objects and collision enable with the display off,
    grid registers with the grid off, A0 bits other than display/grid/dots/wide, A1, unused bytes.
    One AND of the snapshot as an integer with the mask for its A0 (a new snapshot comes with
    every mid-frame write); with the display and the grid on and nothing else to zero, the
    snapshot with A0 masked, without the integer round trip (most snapshots of a drawn screen)."""
    control = snapshot[CONTROL]
    if (
        control & (CONTROL_DISPLAY | CONTROL_GRID) == CONTROL_DISPLAY | CONTROL_GRID
        and _UNUSED_AND_STATUS.unpack_from(snapshot) == _NONE_UNUSED
    ):
        if control & ~_DRAWING_CONTROL:
            return snapshot[:CONTROL] + _KEPT_CONTROL[control] + snapshot[CONTROL + 1 :]
        return snapshot
    mask = _DRAWING_MASKS[control & (CONTROL_DISPLAY | CONTROL_GRID)]
    return (int.from_bytes(snapshot, "big") & mask).to_bytes(SNAPSHOT_SIZE, "big")


_UNUSED_OBJECT_SET = frozenset(UNUSED_OBJECT_REGISTERS)


def changes_drawing(address: int, changed_bits: int, control: int) -> bool:
    """Can changing `changed_bits` of register `address` (with A0 = `control`) change `drawing_key`?
    When it cannot, the write needs no redraw up to the beam and the picture stays the same."""
    if address == CONTROL:
        return bool(changed_bits & _DRAWING_CONTROL)
    if address < 0xA0 or address == COLLISION:
        return bool(control & CONTROL_DISPLAY) and address not in _UNUSED_OBJECT_SET
    if 0xC0 <= address < 0xF0:
        return bool(control & CONTROL_GRID)
    return address == COLOUR


DRAWING_STATES = CONTROL_DISPLAY | CONTROL_GRID  # the A0 bits `changes_drawing` looks at


@lru_cache(maxsize=4)
def drawing_bits(control: int) -> bytes:
    """Per register address, the bits whose change `changes_drawing` says can change the picture
    with A0's display and grid bits as in `control`: a write tests one AND instead of a call."""
    return bytes(
        sum(1 << bit for bit in range(8) if changes_drawing(address, 1 << bit, control))
        for address in range(256)
    )


def background_colour(colour: int) -> int:
    """A3 b3-b5 = background B, G, R -> palette index (never bright)."""
    return (colour >> 3 & 1) << 2 | (colour >> 4 & 1) << 1 | (colour >> 5 & 1)


def grid_colour(colour: int) -> int:
    """A3 b0-b2 = grid B, G, R and b6 = bright -> palette index."""
    return (colour >> 6 & 1) << 3 | (colour & 1) << 2 | (colour >> 1 & 1) << 1 | (colour >> 2 & 1)


def edge_bits(left: int, here: int, enable: int) -> int:
    """The edge-pass collision bits for one pixel, given the source maps left of it and at it."""
    bits = 0
    if here & SOURCE_MAJOR:
        if enable & left & EDGE_LEFT_OF_MAJOR:
            bits |= SOURCE_MAJOR
        if enable & SOURCE_MAJOR:
            bits |= left & EDGE_LEFT_OF_MAJOR
    unzoomed_sprites = (here & 0x0F) & (~here >> 8) & 0x0F
    if enable & left & EDGE_LEFT_OF_SPRITE:
        bits |= unzoomed_sprites
    if enable & unzoomed_sprites:
        bits |= left & EDGE_LEFT_OF_SPRITE
    return bits


class Picture:
    """Everything one register snapshot draws on the visible area, built lazily line by line.

    Shared, cached layers (grid, major system, each sprite) are looked up once per picture and
    draw only the lines someone asks for; pixels and collision bits are computed only for the
    lines that a span drawn with this picture covers (a register write mid-frame makes a new
    picture that may draw only a few pixels of one line, which must then cost only microseconds).
    `tests/machine/video_reference.py` keeps the straightforward whole-frame version this must equal.
    """

    # made on first use (then instance attributes): most pictures never need them, and a mid-frame
    # write makes a new picture
    _overlap_positions: np.ndarray | None = None
    _collision_positions: np.ndarray | None = None
    _collided: bytearray | None = None  # 1 = that line's collision bits are computed

    def __init__(self, snapshot: bytes, hides_high_characters: bool, layout: Picture | None = None) -> None:
        """`layout`: a picture with the same registers except the colours (A3), whose object and
        collision layers this one shares (raster bars rewrite A3 mid-frame)."""
        # registers 00-A3 are at their own addresses in the snapshot (C0-EF follow from A4 on)
        self.snapshot = self.registers = snapshot
        self.layout = layout
        self.hides_high_characters = hides_high_characters
        self.enable = snapshot[COLLISION]
        control = snapshot[CONTROL]
        self.objects_on = control & CONTROL_DISPLAY != 0
        # with the display and the grid off every pixel is the background: the frame end fills a
        # span with it instead of painting lines and copying them (-1: the picture draws more)
        self.plain_colour = (
            -1 if control & (CONTROL_DISPLAY | CONTROL_GRID) else background_colour(snapshot[COLOUR])
        )
        self._built = False

    # -- layers -----------------------------------------------------------------------------------
    def _build(self) -> None:
        """Look up the layers; they draw their lines on first use (`MajorSystem.build`, `sprites_in`)."""
        if self._built:
            return
        self._built = True
        r = self.registers
        if self.layout is not None:
            layout = self.layout
            layout._build()
            self.grid, self.major, self.sprites = layout.grid, layout.major, layout.sprites
            self.base, self.object_reach = layout.base, layout.object_reach
            return
        # grid and characters change less often than sprites: their layers are shared between pictures
        grid_key = _GRID_CONTROL[r[CONTROL]] + r[SNAPSHOT_LOW:]
        major_key = r[0x10:0x80] + _HIDE_FLAGS[self.hides_high_characters] if self.objects_on else b""
        self.base = base_layer(grid_key, major_key)
        self.grid, self.major = self.base.grid, self.base.major
        # (index, zoomed, top line, bottom line + 1, `placed_sprite` key) in draw order; a sprite whose
        # lines are off screen, which starts right of the visible area or has no pixel is left out
        self.sprites: list[tuple[int, bool, int, int, bytes]] = []
        # 1 = a character or sprite reaches that line (maybe with transparent pixels only there)
        self.object_reach = self.major.cell_reach
        if not self.objects_on:
            return
        for index, at, shape_at in SPRITE_SLOTS:
            shape = r[shape_at : shape_at + 8]
            top = r[at]
            if shape == NO_SHAPE or top >= VISIBLE_LINES or r[at + 1] >= SPRITE_X_LIMIT:
                continue
            zoomed = r[at + 2] & 4 == 4
            bottom = top + (32 if zoomed else 16)
            if bottom > VISIBLE_LINES:
                bottom = VISIBLE_LINES
            self.sprites.append((index, zoomed, top, bottom, r[at : at + 3] + shape))
            if self.object_reach is self.major.cell_reach:
                self.object_reach = bytearray(self.object_reach)
            self.object_reach[top:bottom] = _REACHED[bottom - top]

    def sprites_in(self, first: int, end: int) -> list[tuple[int, bool, int, np.ndarray]]:
        """(index, zoomed, top line, mask of lines top..bottom-1 (360 wide)) of the sprites that
        reach lines first..end-1, in draw order: their placed rasters (`placed_sprite`) seen as lines."""
        found = []
        for index, zoomed, top, bottom, key in self.sprites:
            if top < end and first < bottom:
                origin, raster, _bits = placed_sprite(key)
                lines = raster[top * VISIBLE_WIDTH - origin : bottom * VISIBLE_WIDTH - origin]
                found.append((index, zoomed, top, lines.reshape(-1, VISIBLE_WIDTH)))
        return found

    def draw(self, target: np.ndarray, start: int, end: int, lum: bool) -> None:
        """Palette indices of raster range start..end-1 (line * 360 + x) into `target` (as long as
        the range): the grid and major system in this picture's colours, copied from their shared
        base layer, then sprites 3 -> 0 over them. LUM brightens the background and the grid (object
        colours are bright already)."""
        if not self._built:
            self._build()
        first, last = start // VISIBLE_WIDTH, (end - 1) // VISIBLE_WIDTH
        base = self.base.coloured(self.registers[COLOUR], lum, first, last)
        target[...] = base[start:end]
        if not self.sprites:
            return
        r = self.registers
        for index, _zoomed, top, bottom, key in self.sprites:
            if top > last or bottom <= first:
                continue
            origin, raster, _bits = placed_sprite(key)
            low, high = max(start, top * VISIBLE_WIDTH), min(end, bottom * VISIBLE_WIDTH)
            colour = 8 + (r[4 * index + 2] >> 3 & 7)
            np.copyto(target[low - start : high - start], colour, where=raster[low - origin : high - origin])

    def _collide(self, first: int, last: int) -> None:
        """Collision bits of the drawing pass and of the edge pass on lines first..last.

        Only pixels of characters and sprites can collide (grid pixels never test), so the work
        is done on the lines and columns they reach alone. Each pixel's bits depend only on which
        sources meet there (its source byte: grid 0x30, major 0x80, sprites 0x0F) and on its left
        neighbour's, so they are looked up in tables made from the per-pixel rules (`draw_table`,
        `edge_table`)."""
        reach = self.object_reach
        low = reach.find(1, first, last + 1)
        if low < 0:
            return
        end = reach.rfind(1, first, last + 1) + 1
        major = self.major
        major.build(low, end - 1)
        # only columns x0..x1-1 hold object pixels (others get no bits), and x0 - 1 is their left
        # neighbour; every object starts at x >= 10
        x0, x1 = major.columns(low, end)
        for _index, zoomed, top, bottom, key in self.sprites:
            if top < end and low < bottom:
                left = (key[1] + 5) * 2
                x0, x1 = min(x0, left), max(x1, left + (34 if zoomed else 17))
        x1 = min(x1, VISIBLE_WIDTH)
        columns = slice(x0 - 1, x1)
        # source bytes fit in uint8 unless the left neighbour's grid bits are looked up too (<< 4);
        # half the bytes to move and no shift make this the faster pass (MAME 0.251 has no edge rule)
        kind = np.dtype(np.uint16) if EDGE_LEFT_OF_MAJOR else np.dtype(np.uint8)
        source = self.base.sources(low, end - 1)[low:end, columns].astype(kind)
        for index, _zoomed, top, sprite in self.sprites_in(low, end):
            a, b = max(low, top), min(end, top + len(sprite))
            rows = source[a - low : b - low]
            np.bitwise_or(rows, kind.type(1 << index), out=rows, where=sprite[a - top : b - top, columns])
        # lookup: the pixel's source byte | its left neighbour's grid bits << 4
        if EDGE_LEFT_OF_MAJOR:
            lookup = source[:, :-1] & EDGE_LEFT_OF_MAJOR
            lookup *= 16
            lookup |= source[:, 1:]
        else:
            lookup = source[:, 1:]
        self.combined_bits[low:end, x0:x1] = np.take(collision_table(self.enable), lookup)

    def _collision_lines(self, first: int, last: int) -> Picture:
        """Make sure lines first..last have collision bits; the picture that holds them."""
        owner = self.layout if self.layout is not None else self
        done = owner._collided
        if done is None:
            owner._build()
            done = owner._collided = bytearray(VISIBLE_LINES)
            owner.combined_bits = np.empty((VISIBLE_LINES, VISIBLE_WIDTH), dtype=np.uint8)  # rows set below
        low = done.find(0, first, last + 1)
        if low >= 0:
            high = done.rfind(0, first, last + 1)
            owner.combined_bits[low : high + 1] = 0
            owner._collide(low, high)
            done[low : high + 1] = b"\1" * (high + 1 - low)
        return owner

    def overlap_positions(self) -> np.ndarray:
        """Sorted raster indices (line * 360 + x) of overlapping major cells."""
        if self._overlap_positions is None:
            self._build()
            self._overlap_positions = self.major.overlap_positions()
        return self._overlap_positions

    def collision_positions(self) -> np.ndarray:
        """Sorted raster indices of pixels that set A2 bits (drawing or edge pass)."""
        if self._collision_positions is None:
            if not self.enable:
                self._collision_positions = _EMPTY
            else:
                owner = self._collision_lines(0, VISIBLE_LINES - 1)
                self._collision_positions = np.flatnonzero(owner.combined_bits.ravel())
        return self._collision_positions

    # -- queries over a span (raster range start..end-1, start = line * 360 + x) -------------------
    def overlaps(self, start: int, end: int) -> bool:
        """Does a major cell overlap another anywhere in the span (A1 b7)? Answered from each
        line's overlap bit mask, so a span of a few pixels costs no numpy call once its lines are built."""
        if not self.objects_on:
            return False
        if not self._built:
            self._build()
        major = self.major
        if end <= major.overlap_start or start >= major.overlap_end:
            return False  # no two cells meet on the span's lines: nothing to build or look at
        first, x0 = divmod(start, VISIBLE_WIDTH)
        last, x1 = divmod(end - 1, VISIBLE_WIDTH)
        if major.drawn_lines.find(0, first, last + 1) >= 0:
            major.build(first, last)
        masks = major.overlap_masks
        if first == last:
            return bool(masks[first] >> x0 & ((2 << (x1 - x0)) - 1))
        return bool(masks[first] >> x0 or masks[last] & ((2 << x1) - 1) or any(masks[first + 1 : last]))

    def collisions(self, start: int, end: int, left_source: int) -> int:
        """A2 bits of pixels start..end-1; `left_source` is the source map left of `start` as the
        previous span drew it, or -1 to take this picture's own bits there (right when this picture
        drew that pixel too, or when no edge rule looks left: `EDGE_SEES_LEFT`)."""
        if not self.enable or not self.objects_on:
            return 0  # only character and sprite pixels set A2 bits
        first_line, last_line = start // VISIBLE_WIDTH, (end - 1) // VISIBLE_WIDTH
        if not self._built:
            self._build()
        reach = self.object_reach
        low_line = reach.find(1, first_line, last_line + 1)
        if low_line < 0:
            return 0
        if not EDGE_SEES_LEFT:
            # every pair that collides holds a character or sprite pixel: only the lines they reach
            end_line = reach.rfind(1, first_line, last_line + 1) + 1
            low, high = max(start, low_line * VISIBLE_WIDTH), min(end, end_line * VISIBLE_WIDTH)
            return self._pair_collisions(low, high)
        owner = self._collision_lines(first_line, last_line)
        combined = owner.combined_bits.ravel()
        first = start
        result = 0
        if start % VISIBLE_WIDTH and left_source >= 0:
            # the edge pass at a span's first pixel sees the map the span before it drew
            y, x = divmod(start, VISIBLE_WIDTH)
            here = self.source_at(y, x)
            result = int(draw_table(self.enable)[here & 0xFF]) | edge_bits(left_source, here, self.enable)
            first = start + 1
        if first < end:
            result |= int(np.bitwise_or.reduce(combined[first:end]))
        return result

    def _pair_collisions(self, start: int, end: int) -> int:
        """A2 bits of pixels start..end-1 from the pairs of sources that meet there.

        A pixel's drawing-pass bits are the OR over each pair of sources present at it (grid bars,
        major, sprites; the two grid bars are no pair, grid pixels never test) of: the other's bit
        if the enable has one's bit. So a span's bits are those of the pairs that meet somewhere
        in it: each source's pixels in the span as one Python integer, a few ANDs per pair, and no
        array for a span of a few pixels. Only the span's lines of the grid and major system are
        packed, and only the sprites that reach them: a picture that draws a few pixels costs no
        whole-area layer. (Without edge rules: `EDGE_SEES_LEFT`.)"""
        owner = self.layout if self.layout is not None else self
        first_byte, end_byte = start >> 3, (end + 7) >> 3
        first_line, last_line = start // VISIBLE_WIDTH, (end - 1) // VISIBLE_WIDTH
        window = ((1 << (end - start)) - 1) << (start & 7)  # the span's bits from first_byte on
        present = []
        for bit, packed in owner.base.packed_sources(first_line, last_line):
            pixels = int.from_bytes(packed[first_byte:end_byte], "little") & window
            if pixels:
                present.append((bit, pixels))
        for index, _zoomed, top, bottom, key in owner.sprites:
            if top > last_line or bottom <= first_line:
                continue
            origin, _raster, bits = placed_sprite(key)
            shift = origin - 8 * first_byte  # where the sprite's raster bits start in the span's
            pixels = (bits << shift if shift >= 0 else bits >> -shift) & window
            if pixels:
                present.append((1 << index, pixels))
        enable = self.enable
        found = 0
        for index, (bit, pixels) in enumerate(present):
            for other, other_pixels in present[index + 1 :]:
                gain = (other if enable & bit else 0) | (bit if enable & other else 0)
                if gain & ~found and bit | other != GRID_SOURCES and pixels & other_pixels:
                    found |= gain
        return found

    def source_at(self, line: int, x: int) -> int:
        """The collision source map at one pixel (what the edge pass of the next span sees)."""
        if not self.objects_on and not self.registers[CONTROL] & CONTROL_GRID:
            return 0
        self._build()
        value = int(self.grid.drawn(line, line)[line, x])
        if self.major.build(line, line) and self.major.opaque[line, x]:
            value |= SOURCE_MAJOR
        for index, zoomed, top, mask in self.sprites_in(line, line + 1):
            if mask[line - top, x]:
                value |= (0x101 if zoomed else 1) << index
        return value


@lru_cache(maxsize=1)
def draw_tables() -> np.ndarray:
    """A2 bits the drawing pass sets at a pixel, by enable (A2) and by its source byte (grid 0x30,
    major 0x80, sprite bits 0x0F): major over grid, then sprites 3 -> 0 each over what is drawn so
    far. An opaque pixel of object M over sources C: if E & C, status |= M; if E & M, status |= C.
    All 256 enables at once: a game that rewrites A2 every frame meets many of them."""
    code = np.arange(256)[None, :]
    enable = np.arange(256)[:, None]
    grid = code & (SOURCE_HORIZONTAL_GRID | SOURCE_VERTICAL_GRID)
    major = (code & SOURCE_MAJOR) != 0
    bits = np.where(major & ((grid & enable) != 0), SOURCE_MAJOR, 0)
    bits |= np.where(major & ((enable & SOURCE_MAJOR) != 0), grid, 0)
    drawn = grid | np.where(major, SOURCE_MAJOR, 0)
    for index in range(3, -1, -1):
        own = 1 << index
        present = (code & own) != 0
        bits |= np.where(present & ((drawn & enable) != 0), own, 0)
        bits |= np.where(present & ((enable & own) != 0), drawn, 0)
        drawn = drawn | np.where(present, own, 0)
    table = bits.astype(np.uint8)
    table.setflags(write=False)
    return table


def draw_table(enable: int) -> np.ndarray:
    """The drawing pass's A2 bits by source byte with A2 = `enable` (see `draw_tables`)."""
    return draw_tables()[enable]


@lru_cache(maxsize=256)
def edge_table(enable: int) -> np.ndarray:
    """Edge-pass A2 bits at a pixel by (left neighbour's source & EDGE_LEFT_OF_MAJOR) | (its own
    source & SOURCE_MAJOR). With EDGE_LEFT_OF_SPRITE = 0 (MAME 0.251) nothing else takes part."""
    if EDGE_LEFT_OF_SPRITE or EDGE_LEFT_OF_MAJOR & ~(SOURCE_VERTICAL_GRID | SOURCE_HORIZONTAL_GRID):
        raise NotImplementedError("the fast edge pass covers grid-left-of-major rules only")
    table = np.zeros(256, dtype=np.uint8)
    for left in range(0, EDGE_LEFT_OF_MAJOR + 1, SOURCE_VERTICAL_GRID):
        for here in (0, SOURCE_MAJOR):
            table[left | here] = edge_bits(left, here, enable)
    table.setflags(write=False)
    return table


@lru_cache(maxsize=256)
def collision_table(enable: int) -> np.ndarray:
    """A2 bits of a pixel (drawing and edge pass) by its source byte | (its left neighbour's source
    & EDGE_LEFT_OF_MAJOR) << 4."""
    index = np.arange(1024)
    table = (
        draw_table(enable)[index & 0xFF]
        | edge_table(enable)[(index >> 4 & EDGE_LEFT_OF_MAJOR) | (index & SOURCE_MAJOR)]
    )
    table.setflags(write=False)
    return table


# by attribute b0-b1, by shape row: is the row shifted right by half a unit (0: none, 1: every row,
# 2: the even rows, 3: the odd rows)
_ROW_SHIFTS = tuple(
    tuple({0: 0, 1: 1, 2: (row & 1) ^ 1, 3: row & 1}[mode] for row in range(8)) for mode in range(4)
)


SPRITE_WIDTH = 34  # a zoomed sprite's pixels reach 34 columns right of its left edge (8 * 4 + 2)
# by zoom (2 or 4 pixels a bit), by shape byte: its bits (bit 0 leftmost) each repeated that often
_SPREAD_BITS = {
    size: tuple(
        sum(((1 << size) - 1) << (bit * size) for bit in range(8) if byte >> bit & 1) for byte in range(256)
    )
    for size in (2, 4)
}


@lru_cache(maxsize=1024)
def sprite_raster(attribute: int, shape: bytes, width: int) -> tuple[np.ndarray, int]:
    """A sprite's pixels as if its left edge were at x = 0 and a blank line above its top: flat
    raster positions (line * 360 + x) of those lines, and the same as bits (bit i = position i).
    A sprite's X only shifts this, so a sprite that moves finds it cached (a game that moves one
    sprite along a line makes a new position every frame). `width`: the columns seen right of its
    left edge (360 - left, or SPRITE_WIDTH or more when none is cut): pixels past the right edge
    are cut, not wrapped to the next line. attribute: b0-b2 (shift and zoom). Made as bytes of
    raster bits, a line per row repeated (one numpy call, not one per row: a game that rewrites a
    shape every frame makes a new one each time)."""
    size = 4 if attribute & 4 else 2
    spread = _SPREAD_BITS[size]
    shifts = _ROW_SHIFTS[attribute & 3]
    visible = (1 << width) - 1
    lines = [bytes(LINE_BYTES)]
    for row in range(8):
        line = (spread[shape[row]] << shifts[row] * (size // 2)) & visible
        lines += [line.to_bytes(LINE_BYTES, "little")] * size
    packed = b"".join(lines)
    raster = np.unpackbits(np.frombuffer(packed, dtype=np.uint8), bitorder="little").view(bool)
    raster.setflags(write=False)
    return raster, int.from_bytes(packed, "little")


@lru_cache(maxsize=1024)
def placed_sprite(key: bytes) -> tuple[int, np.ndarray, int]:
    """(origin, raster, bits) of a sprite (`sprite_raster`): its pixel at raster position p is
    raster[p - origin], bit p - origin. key: its Y, X, attribute and 8 shape bytes (the one bytes
    object a picture keeps per sprite, so a lookup hashes nothing new)."""
    left = (key[1] + 5) * 2
    raster, bits = sprite_raster(key[2] & 7, key[3:11], min(VISIBLE_WIDTH - left, SPRITE_WIDTH))
    return (key[0] - 1) * VISIBLE_WIDTH + left, raster, bits


@lru_cache(maxsize=8)
def grid_columns(width_units: int, count: int) -> np.ndarray:
    """(count, 360) 0/1: where a grid piece `width_units` wide in each of the first `count` columns is
    (float32, so that the product with the pieces that are on is a fast BLAS product)."""
    masks = np.zeros((count, VISIBLE_WIDTH), dtype=np.float32)
    for column in range(count):
        x = (GRID_X0_UNITS + column * GRID_CELL_UNITS) * 2
        masks[column, x : x + width_units * 2] = 1
    masks.setflags(write=False)
    return masks


# the grid row drawn on each line: horizontal bar row 0-8 (9 = none), vertical bar row 0-7 (8 = none),
# as bytes (the rows of a few lines are a slice, read without numpy)
_LINE_OFFSET = np.arange(VISIBLE_LINES) - GRID_Y0
_GRID_ROW = np.where(_LINE_OFFSET >= 0, _LINE_OFFSET // GRID_CELL_LINES, 99)
HORIZONTAL_ROW_OF_LINE = bytes(
    np.where((_GRID_ROW < 9) & (_LINE_OFFSET % GRID_CELL_LINES < 3), _GRID_ROW, 9).tolist()
)
VERTICAL_ROW_OF_LINE = bytes(np.where(_GRID_ROW < 8, _GRID_ROW, 8).tolist())


def _bits_of_row(columns: bytes | list[int], row: int) -> int:
    """Bit c = piece `row` of column c is on (bit `row` of the column's register)."""
    bits = 0
    for column, value in enumerate(columns):
        bits |= (value >> row & 1) << column
    return bits


def _stack_rows(rows: list[bytes]) -> np.ndarray:
    return np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), VISIBLE_WIDTH)


@lru_cache(maxsize=1024)
def horizontal_bar_row(pieces: int, dots: bool) -> bytes:
    """One horizontal bar row's source bits (360 bytes): bit c of `pieces` = the piece of column c
    (0-8) is on; the dots (A0 b6) add a dot at every column's left edge (0-9)."""
    row = (
        np.array([pieces >> column & 1 for column in range(9)], dtype=np.float32)
        @ grid_columns(GRID_CELL_UNITS + 2, 9)
    ) != 0
    if dots:
        row |= grid_columns(2, 10).any(axis=0)
    return (row * np.uint8(SOURCE_HORIZONTAL_GRID)).astype(np.uint8).tobytes()


@lru_cache(maxsize=1024)
def vertical_bar_row(pieces: int, wide: bool) -> bytes:
    """One vertical bar row's source bits (360 bytes): bit c of `pieces` = the bar of column c
    (0-9) is on; wide bars (A0 b7) fill the whole cell."""
    units = GRID_CELL_UNITS if wide else 2
    row = (
        np.array([pieces >> column & 1 for column in range(10)], dtype=np.float32) @ grid_columns(units, 10)
    ) != 0
    return (row * np.uint8(SOURCE_VERTICAL_GRID)).astype(np.uint8).tobytes()


class GridLayer:
    """Source bits of the grid (0x20 horizontal bars and dots, 0x10 vertical bars) per pixel,
    drawn line by line on first use (`drawn`).

    key: A0 & (grid | dots | wide bars), then registers C0-EF. A bar row or column is the OR of
    its pieces: which pieces are on (C0-C8 + D0-D8 b0: 9 horizontal rows; E0-E9: 8 vertical rows)
    times where each column's piece is. A line shows one horizontal bar row (or none) and one
    vertical bar row (or none)."""

    def __init__(self, key: bytes) -> None:
        """Only `on` is worked out here: many pictures with the grid on draw no grid line at all (a
        game or test that turns the grid on and off in VBLANK), so the bar rows wait for `drawn`."""
        self.key = key
        self.on = bool(key[0] & CONTROL_GRID)
        if not self.on:
            self.pixels = np.zeros((VISIBLE_LINES, VISIBLE_WIDTH), dtype=np.uint8)
            self._built = bytearray(b"\1" * VISIBLE_LINES)
            return
        self.pixels = np.empty((VISIBLE_LINES, VISIBLE_WIDTH), dtype=np.uint8)
        self._built = bytearray(VISIBLE_LINES)
        # each bar row's source bits (360 bytes), made when a line that shows it is drawn; the last
        # of each is the row of the lines without a bar
        self._horizontal_rows: list[bytes] = [b""] * 9 + [bytes(VISIBLE_WIDTH)]
        self._vertical_rows: list[bytes] = [b""] * 8 + [bytes(VISIBLE_WIDTH)]

    def _bar_rows(self, horizontal_rows: bytes, vertical_rows: bytes) -> tuple[list[bytes], list[bytes]]:
        """The horizontal bar rows (with the dots) and vertical bar rows by row number, with those
        of `horizontal_rows` and `vertical_rows` made, from one cached row per set of pieces that
        are on: a game or test that rewrites C0-EF every frame makes a new layer each frame, which
        may draw one line (one row of 17)."""
        control, registers = self.key[0], self.key[1:]
        horizontal, vertical = self._horizontal_rows, self._vertical_rows
        new_horizontal = [row for row in set(horizontal_rows) if not horizontal[row]]
        if new_horizontal:
            bars = [
                registers[column] | (registers[0x10 + column] & 1) << 8 for column in range(9)
            ]  # C0-C8, D0-D8
            dots = bool(control & CONTROL_DOTS)
            for row in new_horizontal:
                horizontal[row] = horizontal_bar_row(_bits_of_row(bars, row), dots)
        new_vertical = [row for row in set(vertical_rows) if not vertical[row]]
        if new_vertical:
            columns = registers[0x20:0x2A]  # E0-E9
            wide = bool(control & CONTROL_WIDE_BARS)
            for row in new_vertical:
                vertical[row] = vertical_bar_row(_bits_of_row(columns, row), wide)
        return horizontal, vertical

    def drawn(self, first: int, last: int) -> np.ndarray:
        """The (243, 360) source bits, with lines first..last drawn (others may be unset): each
        line's horizontal bar row | its vertical bar row, the rows of the lines joined as bytes."""
        built = self._built
        low = built.find(0, first, last + 1)
        if low >= 0:
            end = built.rfind(0, first, last + 1) + 1
            horizontal_rows = HORIZONTAL_ROW_OF_LINE[low:end]
            vertical_rows = VERTICAL_ROW_OF_LINE[low:end]
            horizontal, vertical = self._bar_rows(horizontal_rows, vertical_rows)
            np.bitwise_or(
                _stack_rows([horizontal[row] for row in horizontal_rows]),
                _stack_rows([vertical[row] for row in vertical_rows]),
                out=self.pixels[low:end],
            )
            built[low:end] = b"\1" * (end - low)
        return self.pixels


@lru_cache(maxsize=32)
def grid_system(key: bytes) -> GridLayer:
    return GridLayer(key)


def grid_layer(key: bytes) -> np.ndarray:
    """The whole grid layer of `key` (see `GridLayer`)."""
    return grid_system(key).drawn(0, VISIBLE_LINES - 1)


@lru_cache(maxsize=1024)
def character_cell(y: int, pointer9: int, height_pointer: int) -> np.ndarray | None:
    """The lit pixels (lines y.., 16 wide) of a major character cell, None when nothing is visible."""
    height = 7 - (((y >> 1) + height_pointer) & 7) or 8
    bottom = min(y + 2 * height, VISIBLE_LINES)
    if y >= bottom:
        return None
    rom = np.frombuffer(charset_rom(), dtype=np.uint8)
    scanlines = np.arange(y, bottom)
    rows = rom[(pointer9 + (y >> 1) + ((scanlines - y) >> 1)) & 0x1FF]
    bits = np.repeat(np.unpackbits(rows[:, None], axis=1).astype(bool), 2, axis=1)
    bits.setflags(write=False)
    return bits


_MAJOR_WIDTH = VISIBLE_WIDTH + 16  # a cell starting left of the edge draws up to 15 pixels past it
# the lines a character cell is tall by ((y >> 1) + its height pointer) & 7 (see `character_cell`)
_CELL_LINES = tuple(2 * ((7 - step) or 8) for step in range(8))
MajorCell = tuple[int, int, int, int, int, int]  # top, bottom + 1, x, pointer9, height pointer, colour


def major_cells(key: bytes) -> list[MajorCell]:
    """The major characters (quads 3 -> 0, then characters 11 -> 0) that can be seen, as (top line,
    bottom line + 1, x, pointer9, height pointer, colour) in drawing order: Y hidden (8244), X right
    of the visible area or Y below it left out. One loop over the registers without a tuple per
    object: a game or test that rewrites the characters every frame makes a new major system each
    frame (the reference renderer lists every object first: `video_reference.major_objects`).
    key: registers 10-7F and a byte "hide Y < 14" (8244)."""
    r = key
    hidden_above = NTSC_HIDDEN_Y if key[-1] else 0
    cells: list[MajorCell] = []
    for base in (0x60, 0x50, 0x40, 0x30):  # quads 3 -> 0: placed by their first character
        y = r[base]
        if y < hidden_above or y >= VISIBLE_LINES:
            continue
        height_pointer = r[base + 14]  # the 4th character's pointer sets the height
        bottom = y + _CELL_LINES[((y >> 1) + height_pointer) & 7]
        if bottom > VISIBLE_LINES:
            bottom = VISIBLE_LINES
        x = (r[base + 1] + 5) * 2
        for at in range(base + 2, base + 16, 4):  # each character's pointer, 32 pixels apart
            if x >= VISIBLE_WIDTH:
                break
            attribute = r[at + 1]
            cells.append(
                (y, bottom, x, r[at] | (attribute & 1) << 8, height_pointer, 8 + (attribute >> 1 & 7))
            )
            x += 32
    for base in range(44, -1, -4):  # characters 11 -> 0
        y, x = r[base], (r[base + 1] + 5) * 2
        if y < hidden_above or y >= VISIBLE_LINES or x >= VISIBLE_WIDTH:
            continue
        pointer, attribute = r[base + 2], r[base + 3]
        bottom = y + _CELL_LINES[((y >> 1) + pointer) & 7]
        if bottom > VISIBLE_LINES:
            bottom = VISIBLE_LINES
        cells.append((y, bottom, x, pointer | (attribute & 1) << 8, pointer, 8 + (attribute >> 1 & 7)))
    return cells


class MajorSystem:
    """The major system (quads, then characters) of one set of registers 10-7F, drawn line by line
    on first use: opaque pixels, colour of the first opaque pixel, overlap (two cells or more),
    and each line's overlap as a bit mask (bit x = pixel x).
    Cells starting right of the visible area are left out (nothing of them is seen or overlaps)."""

    def __init__(self, key: bytes) -> None:
        """key: registers 10-7F and a byte "hide Y < 14" (8244), or b"" when the display is off.
        The whole-area arrays wait for the first line drawn (`build`): a picture made by a write
        mid-frame may need no line of them, or only the cells and their overlap boxes."""
        # (top line, bottom line + 1, x, pointer9, height pointer, colour) in drawing order
        self.cells = major_cells(key) if key else []
        self.cell_reach = bytearray(VISIBLE_LINES)  # 1 = a cell reaches that line
        for y, bottom, _x, _pointer9, _height_pointer, _colour in self.cells:
            self.cell_reach[y:bottom] = b"\1" * (bottom - y)
        self.overlap_boxes = overlap_boxes(self.cells)
        self._overlap_positions: np.ndarray | None = None
        # the raster positions overlap_start..overlap_end-1 hold the lines of every box (empty
        # when there is none)
        boxes = self.overlap_boxes
        top = min([box[0] for box in boxes]) if boxes else VISIBLE_LINES
        self.overlap_start = top * VISIBLE_WIDTH
        self.overlap_end = max([box[1] for box in boxes]) * VISIBLE_WIDTH if boxes else 0
        self.overlap_masks = [0] * VISIBLE_LINES
        if self.cells:
            self.drawn_lines = bytearray(VISIBLE_LINES)
            self._allocated = False
        else:
            # with no cell all is drawn (empty)
            self.drawn_lines = bytearray(b"\1" * VISIBLE_LINES)
            self._allocate(np.zeros)

    def _allocate(self, blank: Callable[..., np.ndarray]) -> None:
        shape = (VISIBLE_LINES, _MAJOR_WIDTH)
        self.opaque = blank(shape, bool)
        self.colour = blank(shape, np.uint8)
        self.overlap = blank((VISIBLE_LINES, VISIBLE_WIDTH), bool)
        self._allocated = True

    def overlap_positions(self) -> np.ndarray:
        """Sorted raster indices (line * 360 + x) where two cells or more meet, found once per
        major system (every picture with these characters and quads asks for the same)."""
        if self._overlap_positions is None:
            found = _EMPTY
            if self.overlap_boxes:
                self.build(0, VISIBLE_LINES - 1)
                if any(self.overlap_masks):
                    found = np.flatnonzero(self.overlap.ravel())
            self._overlap_positions = found
        return self._overlap_positions

    def columns(self, first: int, end: int) -> tuple[int, int]:
        """x0, x1: the cells reaching lines first..end-1 lie in columns x0..x1-1 (x0 >= x1: none)."""
        x0, x1 = VISIBLE_WIDTH, 0
        for y, bottom, x, *_cell in self.cells:
            if y < end and first < bottom:
                x0, x1 = min(x0, x), max(x1, x + 16)
        return x0, min(x1, VISIBLE_WIDTH)

    def build(self, first: int, last: int) -> bool:
        """Draw lines first..last if not yet drawn. False when there is no cell at all."""
        if not self.cells:
            return False
        built = self.drawn_lines
        low = built.find(0, first, last + 1)
        if low < 0:
            return True
        end = built.rfind(0, first, last + 1) + 1
        if not self._allocated:
            self._allocate(np.empty)  # uninitialised: each line is set when drawn
            # a cell drawn twice (the power-on registers stack equal characters) paints what it did once
            self._paint_order = list(reversed(dict.fromkeys(self.cells)))
        self.colour[low:end] = 0
        # the first cell drawn keeps a pixel's colour: drawn last to first, each overwrites the rest;
        # colours are 8-15, so a pixel is opaque where it has one
        for y, bottom, x, pointer9, height_pointer, colour in self._paint_order:
            if y < end and low < bottom:
                top, stop = max(y, low), min(bottom, end)
                bits = character_cell(y, pointer9, height_pointer)[top - y : stop - y]
                np.copyto(self.colour[top:stop, x : x + 16], colour, where=bits)
        np.not_equal(self.colour[low:end], 0, out=self.opaque[low:end])
        overlap = self.overlap[low:end]
        overlap.fill(False)
        boxed = False  # a box reaches these lines (most lines have none: no masks to look for)
        for top, stop, left, right in self.overlap_boxes:
            top, stop = max(top, low), min(stop, end)
            if top < stop:
                self.overlap[top:stop, left:right] = True
                boxed = True
        if boxed:
            masks = self.overlap_masks
            for row in np.flatnonzero(overlap.any(axis=1)).tolist():
                masks[low + row] = int.from_bytes(
                    np.packbits(overlap[row], bitorder="little").tobytes(), "little"
                )
        built[low:end] = b"\1" * (end - low)
        return True


def overlap_boxes(cells: list[tuple[int, int, int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """(top, bottom + 1, x0, x1 + 1) where two cells meet, clipped to the visible width: their union
    is where two cells or more cover a pixel. A few comparisons per pair of cells in Python cost less
    than counting every cell's cover in a numpy array (one call per cell), and only the few
    overlapping pairs then touch the array. With the cells sorted by x, each is compared only with
    those starting less than 16 pixels right of it (28 cells strewn over the screen: a few dozen
    comparisons instead of 378)."""
    # cells on the same rectangle (the power-on registers stack every character at one place) are
    # one rectangle that is itself a box
    rectangles = [cell[:3] for cell in cells]
    distinct = dict.fromkeys(rectangles)
    boxes = []
    if len(distinct) < len(rectangles):
        boxes = [
            (y, bottom, x, min(x + 16, VISIBLE_WIDTH))
            for (y, bottom, x), count in Counter(rectangles).items()
            if count > 1
        ]
    by_x = sorted(distinct, key=itemgetter(2))
    for index, (y, bottom, x) in enumerate(by_x, 1):
        reach = x + 16
        for other_y, other_bottom, other_x in islice(by_x, index, None):
            if other_x >= reach:
                break  # this one and all after it start right of the cell
            if other_y < bottom and y < other_bottom:
                boxes.append((max(y, other_y), min(bottom, other_bottom), other_x, min(reach, VISIBLE_WIDTH)))
    return boxes


@lru_cache(maxsize=32)
def major_system(key: bytes) -> MajorSystem:
    return MajorSystem(key)


COLOURED_BASES = 16  # coloured copies kept per base layer (A3 and LUM combinations)
# a coloured copy painted more than BLOCKS_AFTER times (in use for a while) is then painted in
# aligned blocks of PAINTED_BLOCK lines
PAINTED_BLOCK = 16
BLOCKS_AFTER = 4


class BaseLayer:
    """The grid and the major system that many pictures share (all that differ in sprites, colours
    or the collision enable): their palette indices in each colour (A3 and LUM) are painted once
    per line into an array of their own, so a span drawn with any picture on this base is one copy
    and its sprites."""

    def __init__(self, grid: GridLayer, major: MajorSystem) -> None:
        self.grid, self.major = grid, major
        # A3 | 256 * LUM -> [palette indices, the same flat, 1 = that line painted, paints so far],
        # oldest first (an int key and no reordering: a span drawn with a new picture looks its
        # colours up here)
        self._coloured: dict[int, list] = {}
        # collision sources (grid bits | SOURCE_MAJOR) per pixel, made on first use; with no cell,
        # the grid's own
        self._sources: np.ndarray | None = None
        self._sourced = bytearray(VISIBLE_LINES)
        # raster bits (bit i of byte k = pixel 8k + i) of the vertical bars, the horizontal bars and
        # the major system, each left out when the layer has none; made on first use, lines packed
        # then (a base that many pictures share may never be asked)
        self._packed: list[tuple[int, bytearray]] | None = None
        self._packed_lines = bytearray(VISIBLE_LINES)

    def packed_sources(self, first: int, last: int) -> list[tuple[int, bytearray]]:
        """(source bit, raster bits of the whole area) of the vertical bars, the horizontal bars and
        the major system (see `Picture._pair_collisions`), lines first..last packed (others may be
        unset). A line is 45 whole bytes, so a span's lines are packed on their own."""
        if self._packed is None:
            bits = [
                *(GRID_SOURCES_PACKED if self.grid.on else ()),
                *((SOURCE_MAJOR,) if self.major.cells else ()),
            ]
            self._packed = [(bit, bytearray(VISIBLE_AREA_BYTES)) for bit in bits]
        done = self._packed_lines
        low = done.find(0, first, last + 1)
        if low >= 0:
            end = done.rfind(0, first, last + 1) + 1
            grid = self.grid.drawn(low, end - 1)[low:end] if self.grid.on else None
            major = self.major.opaque[low:end, :VISIBLE_WIDTH] if self.major.build(low, end - 1) else None
            for bit, packed in self._packed:
                layer = major if bit == SOURCE_MAJOR else grid & bit
                packed[low * LINE_BYTES : end * LINE_BYTES] = np.packbits(layer, bitorder="little").tobytes()
            done[low:end] = b"\1" * (end - low)
        return self._packed

    def sources(self, first: int, last: int) -> np.ndarray:
        """The (243, 360) collision sources of the grid and major system (grid 0x30, major 0x80),
        lines first..last drawn (others may be unset)."""
        if not self.major.cells:
            return self.grid.drawn(first, last)
        if self._sources is None:
            self._sources = np.empty((VISIBLE_LINES, VISIBLE_WIDTH), dtype=np.uint8)
        sourced = self._sourced
        low = sourced.find(0, first, last + 1)
        if low >= 0:
            end = sourced.rfind(0, first, last + 1) + 1
            major = self.major
            major.build(low, end - 1)
            # (bool * integer scalar: numpy's uint8 shifts are many times slower than its multiplies)
            np.multiply(
                major.opaque[low:end, :VISIBLE_WIDTH], np.uint8(SOURCE_MAJOR), out=self._sources[low:end]
            )
            self._sources[low:end] |= self.grid.drawn(low, end - 1)[low:end]
            sourced[low:end] = b"\1" * (end - low)
        return self._sources

    def coloured(self, colour: int, lum: bool, first: int, last: int) -> np.ndarray:
        """The palette indices with A3 = `colour` and `lum` in raster order (line * 360 + x), lines
        first..last painted."""
        key = colour | 256 if lum else colour
        entry = self._coloured.get(key)
        if entry is None:
            if len(self._coloured) >= COLOURED_BASES:
                del self._coloured[next(iter(self._coloured))]
            pixels = np.empty((VISIBLE_LINES, VISIBLE_WIDTH), dtype=np.uint8)
            entry = self._coloured[key] = [pixels, pixels.reshape(-1), bytearray(VISIBLE_LINES), 0]
        pixels, raster, painted, _paints = entry
        low = painted.find(0, first, last + 1)
        if low >= 0:
            end = painted.rfind(0, first, last + 1) + 1
            entry[3] += 1
            if entry[3] > BLOCKS_AFTER:
                # painted piece by piece before, so in use for a while: whole blocks of lines, or
                # spans that start and end on other lines each frame (raster bars) paint a line or
                # two at a time (a colouring used for a span or two paints only those lines)
                low, end = low & -PAINTED_BLOCK, min(-(-end // PAINTED_BLOCK) * PAINTED_BLOCK, VISIBLE_LINES)
            self._paint(pixels[low:end], low, end, colour, BRIGHT if lum else 0)
            painted[low:end] = b"\1" * (end - low)
        return raster

    def _paint(self, target: np.ndarray, low: int, end: int, colour: int, bright: int) -> None:
        """Lines low..end-1: background, grid, then the major system (its colours are bright)."""
        target.fill(background_colour(colour) | bright)
        grid = self.grid
        if grid.on:
            np.copyto(target, grid_colour(colour) | bright, where=grid.drawn(low, end - 1)[low:end] != 0)
        major = self.major
        if major.build(low, end - 1) and major.cell_reach.find(1, low, end) >= 0:
            columns = slice(0, VISIBLE_WIDTH)
            np.copyto(target, major.colour[low:end, columns], where=major.opaque[low:end, columns])


@lru_cache(maxsize=16)
def base_layer(grid_key: bytes, major_key: bytes) -> BaseLayer:
    return BaseLayer(grid_system(grid_key), major_system(major_key))


@dataclass(slots=True)
class Span:
    """Visible pixels start..end-1 in raster order (line * 360 + x) drawn with one picture and LUM.

    Consecutive MAME screen updates with the same registers are merged into one span: drawing them
    separately or together gives the same pixels and the same collision bits.
    """

    start: int
    end: int
    picture: Picture
    lum: bool


class Renderer:
    """Collects the spans of the frame being drawn; makes pixels and status bits from them on demand."""

    def __init__(
        self,
        *,
        hides_high_characters: bool,
        picture_type: type[Picture] | None = None,
        key: Callable[[bytes], bytes] = drawing_key,
        left_sources: bool = EDGE_SEES_LEFT,
    ) -> None:
        """`picture_type` draws a register snapshot and `key` says which snapshots draw the same
        (tests swap in the reference renderer, keyed by the whole snapshot). `left_sources`: look up
        the source map left of each span for the edge pass at its first pixel; needless while no
        edge rule looks left (`EDGE_SEES_LEFT`), and the tests' reference renderer always does."""
        self.hides_high_characters = hides_high_characters
        self.picture_type = picture_type or Picture
        self.key = key
        self.left_sources = left_sources
        self._cache: OrderedDict[bytes, Picture] = OrderedDict()  # by drawing_key
        self._aliases: dict[bytes, bytes] = {}  # raw snapshot -> its key
        # registers without A3 -> the picture whose layers the pictures in other colours share
        self._layouts: dict[bytes, Picture] = {}
        self.reset()

    def reset(self) -> None:
        self._spans: list[Span] = []
        self._overlap_cursor = (0, 0)  # (span index, raster position) settled up to
        self._collision_cursor = (0, 0)
        self._pending_overlap = False
        self._pending_collisions = 0
        self._deferred: list[tuple[Picture, int, int, int]] = []  # (picture, start, end, left source)
        self.last_frame = np.zeros((VISIBLE_LINES, VISIBLE_WIDTH), dtype=np.uint8)

    def picture(self, snapshot: bytes) -> Picture:
        """The picture of a register snapshot (registers 00-A3 and C0-EF)."""
        key = self._aliases.get(snapshot)
        if key is None:
            key = self.key(snapshot)
            if len(self._aliases) >= ALIAS_CACHE_SIZE:
                self._aliases.clear()
            self._aliases[snapshot] = key
        return self._keyed(key)

    def _keyed(self, snapshot: bytes) -> Picture:
        picture = self._cache.get(snapshot)
        if picture is not None:
            self._cache.move_to_end(snapshot)
            return picture
        # the same picture in other colours shares the layers of the first one made (raster bars
        # rewrite A3 mid-frame), found by its registers without A3
        layers_key = snapshot[:COLOUR] + snapshot[COLOUR + 1 :]
        layout = self._layouts.get(layers_key)
        picture = self.picture_type(snapshot, self.hides_high_characters, layout)
        if layout is None:
            self._layouts[layers_key] = picture
            if len(self._layouts) > PICTURE_CACHE_SIZE:
                del self._layouts[next(iter(self._layouts))]
        self._cache[snapshot] = picture
        if len(self._cache) > PICTURE_CACHE_SIZE:
            self._cache.popitem(last=False)
        return picture

    def add_range(self, start: int, end: int, picture: Picture, lum: bool) -> None:
        """Raster range start..end-1 (line * 360 + x) drawn with `picture` and `lum`."""
        spans = self._spans
        if spans:
            last = spans[-1]
            if last.end == start and last.picture is picture and last.lum == lum:
                last.end = end
                return
        spans.append(Span(start, end, picture, lum))

    def _left_source(self, index: int) -> int:
        """The source map left of span `index`'s first pixel, as the span before it drew it."""
        span = self._spans[index]
        y, x = divmod(span.start, VISIBLE_WIDTH)
        if x == 0 or index == 0:
            return 0
        return self._spans[index - 1].picture.source_at(y, x - 1)

    def _settle(self, collisions: bool) -> None:
        """Take the status bits of everything drawn since the last call (cursors: span, position)."""
        spans = self._spans
        if spans:
            if not self._pending_overlap:
                index, position = self._overlap_cursor
                for span in spans[index:]:
                    start = position if position > span.start else span.start
                    # (with the display off a picture has no major cell: no call)
                    if (
                        start < span.end
                        and span.picture.objects_on
                        and span.picture.overlaps(start, span.end)
                    ):
                        self._pending_overlap = True
                        break
                    position = 0
            last = spans[-1]
            self._overlap_cursor = (len(spans) - 1, last.end)
        if collisions:
            self._defer_collisions()
            self._run_deferred()

    def _defer_collisions(self) -> None:
        """Note the spans drawn since the collision cursor whose A2 bits are still to be taken."""
        spans = self._spans
        if not spans:
            return
        first, position = self._collision_cursor
        deferred, left_sources = self._deferred, self.left_sources
        for index in range(first, len(spans)):
            span = spans[index]
            start, end, picture = span.start, span.end, span.picture
            if position > start:
                start = position
            position = 0
            # only character and sprite pixels set A2 bits: none with the display off
            if start >= end or not picture.enable or not picture.objects_on:
                continue
            left = self._left_source(index) if left_sources and start == span.start else -1
            deferred.append((picture, start, end, left))
        self._collision_cursor = (len(spans) - 1, spans[-1].end)

    def _run_deferred(self) -> None:
        """A2 bits are only ORed together until a read takes them, so they are computed then."""
        for picture, start, end, left in self._deferred:
            self._pending_collisions |= picture.collisions(start, end, left)
        self._deferred.clear()

    def resolve(self, *, collisions: bool) -> tuple[int, int]:
        """(A1 major-overlap bit, A2 bits) drawn since the last call; A2 bits only when asked."""
        self._settle(collisions)
        major = 0x80 if self._pending_overlap else 0
        self._pending_overlap = False
        found = 0
        if collisions:
            found, self._pending_collisions = self._pending_collisions, 0
        return major, found

    def end_frame(self, draw: bool) -> None:
        """The beam reached line 243: settle the frame's overlap bit, keep what its collisions need
        (computed when A2 is read, or when too many frames wait) and, if drawing, make its pixels."""
        self._settle(collisions=False)
        self._defer_collisions()
        if len(self._deferred) > DEFERRED_SPANS:
            self._run_deferred()
        if draw:
            self.last_frame = self._draw_spans(self.last_frame)
        self._spans.clear()
        self._overlap_cursor = (0, 0)
        self._collision_cursor = (0, 0)

    def _draw_spans(self, previous: np.ndarray) -> np.ndarray:
        """The frame's spans drawn in order into a new bitmap; pixels no span covers keep their
        colour in `previous`. A new array rather than a copy of the finished one: a frame that
        `last_frame` handed out stays as it was, and the frame's pixels are written once."""
        bitmap = np.empty_like(previous)
        raster, old = bitmap.reshape(-1), previous.reshape(-1)
        covered = 0  # raster[:covered] is drawn (or taken from `previous`)
        for span in self._spans:
            start, end = span.start, span.end
            if start > covered:
                raster[covered:start] = old[covered:start]
            if end > covered:
                covered = end
            target = raster[start:end]
            plain = span.picture.plain_colour
            if plain >= 0:
                target.fill(plain | BRIGHT if span.lum else plain)
            else:
                span.picture.draw(target, start, end, span.lum)
        if covered < raster.size:
            raster[covered:] = old[covered:]
        return bitmap

    def state(self) -> dict:
        self._run_deferred()
        return {
            "spans": [[s.start, s.end, s.picture.snapshot.hex(), s.lum] for s in self._spans],
            "overlap_cursor": list(self._overlap_cursor),
            "collision_cursor": list(self._collision_cursor),
            "pending_overlap": self._pending_overlap,
            "pending_collisions": self._pending_collisions,
            "last_frame": self.last_frame.tobytes().hex(),
        }

    def load_state(self, state: dict) -> None:
        self._spans = [
            Span(start, end, self.picture(bytes.fromhex(snapshot)), bool(lum))
            for start, end, snapshot, lum in state["spans"]
        ]
        self._overlap_cursor = tuple(state["overlap_cursor"])
        self._collision_cursor = tuple(state["collision_cursor"])
        self._pending_overlap = bool(state["pending_overlap"])
        self._pending_collisions = int(state["pending_collisions"])
        self._deferred = []
        # (states saved before the frame end drew into a new bitmap also hold "bitmap": the same pixels)
        self.last_frame = _array_from_hex(state["last_frame"], (VISIBLE_LINES, VISIBLE_WIDTH))


def _array_from_hex(text: str, shape: tuple[int, int]) -> np.ndarray:
    return np.frombuffer(bytes.fromhex(text), dtype=np.uint8).reshape(shape).copy()
