"""The fast, line-lazy renderer draws exactly what the straightforward whole-frame one draws.

Random register sequences (a random scene set up in VBLANK, then writes, A1/A2 reads and LUM
changes at random beam positions over a few frames) go through two `Vdc`s: the normal one and one
whose renderer uses `video_reference.ReferencePicture`, one picture per distinct register snapshot
(no `drawing_key` merging, a new picture on every register change). Every completed frame and every
read must be the same, pixel for pixel and bit for bit.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from video_reference import ReferencePicture
from video_reference import grid_layer as reference_grid_layer

from hilbridge.machine.timing import NTSC, PAL, Region
from hilbridge.machine.vdc import Vdc
from hilbridge.machine.video import (
    _DRAWING_CONTROL,
    CONTROL,
    CONTROL_DISPLAY,
    CONTROL_GRID,
    DRAWING_STATES,
    SNAPSHOT_LOW,
    SNAPSHOT_SIZE,
    UNUSED_OBJECT_REGISTERS,
    VISIBLE_LINES,
    VISIBLE_WIDTH,
    Picture,
    Renderer,
    changes_drawing,
    drawing_bits,
    drawing_key,
    grid_layer,
    snapshot_of,
)

# addresses a scene uses: sprites, characters, quads, sprite shapes, control, enable, colour, grid
VIDEO_ADDRESSES = [
    *range(0x00, 0xA0),
    0xA0,
    0xA2,
    0xA3,
    *range(0xC0, 0xCA),
    *range(0xD0, 0xDA),
    *range(0xE0, 0xEA),
]
MIDFRAME_ADDRESSES = [0xA0, 0xA2, 0xA3, *range(0x00, 0x10), *range(0x80, 0xA0), 0x10, 0x11, 0x40, 0x41]


def pair(region: Region) -> tuple[Vdc, Vdc]:
    fast = Vdc(region)
    reference = Vdc(region)
    reference.renderer = Renderer(
        hides_high_characters=region.hides_high_characters,
        picture_type=ReferencePicture,
        key=bytes,
        left_sources=True,
    )
    reference.drawing_bits = (b"\xff" * 256,) * len(reference.drawing_bits)  # redraw on every write
    reference._plan_writes()
    return fast, reference


def position_value(address: int, value: int) -> int:
    """Keep most Y/X coordinates on screen so objects are drawn and meet."""
    if address < 0x80 and address % 4 in (0, 1) and value > 0xE0:
        return value % 0xB0
    return value


def run_both(region: Region, scene: list[tuple[int, int]], events: list[tuple[str, int, int, int]]) -> None:
    fast, reference = pair(region)
    frames_fast: list[np.ndarray] = []
    frames_reference: list[np.ndarray] = []

    def collect() -> None:
        for vdc, frames in ((fast, frames_fast), (reference, frames_reference)):
            while len(frames) < vdc.frames_completed:
                frames.append(vdc.frame().copy())

    cycle = 10
    for address, value in scene:  # in the first VBLANK, before line 0
        value = position_value(address, value)
        fast.write(address, value, cycle)
        reference.write(address, value, cycle)
        cycle += 1
    for kind, address, value, gap in events:
        cycle += gap
        if kind == "write":
            value = position_value(address, value)
            fast.write(address, value, cycle)
            reference.write(address, value, cycle)
        elif kind == "read":
            assert fast.read(address, cycle) == reference.read(address, cycle), (kind, address, cycle)
        else:
            fast.set_lum(bool(value & 1), cycle)
            reference.set_lum(bool(value & 1), cycle)
        collect()
    end = cycle + int(region.cycles_per_frame) + 10
    fast.run_to(end)
    reference.run_to(end)
    collect()
    assert len(frames_fast) == len(frames_reference) >= 1
    for number, (ours, theirs) in enumerate(zip(frames_fast, frames_reference, strict=True)):
        differ = np.argwhere(ours != theirs)
        assert not differ.size, f"frame {number}: {len(differ)} pixels differ, first at {differ[0]}"
    assert fast.read(0xA2, end + 5) == reference.read(0xA2, end + 5)
    assert fast.read(0xA1, end + 10) == reference.read(0xA1, end + 10)


scene_writes = st.lists(
    st.tuples(st.sampled_from(VIDEO_ADDRESSES), st.integers(0, 255)), min_size=20, max_size=120
)
events = st.lists(
    st.one_of(
        st.tuples(
            st.just("write"), st.sampled_from(MIDFRAME_ADDRESSES), st.integers(0, 255), st.integers(1, 600)
        ),
        st.tuples(st.just("read"), st.sampled_from([0xA1, 0xA2]), st.just(0), st.integers(1, 600)),
        st.tuples(st.just("lum"), st.just(0), st.integers(0, 1), st.integers(1, 600)),
    ),
    max_size=60,
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    region=st.sampled_from([NTSC, PAL]),
    scene=scene_writes,
    enable=st.integers(0, 255),
    control=st.integers(0, 255),
    events=events,
)
def test_fast_renderer_equals_reference_on_random_register_sequences(
    region: Region,
    scene: list[tuple[int, int]],
    enable: int,
    control: int,
    events: list[tuple[str, int, int, int]],
) -> None:
    run_both(region, [*scene, (0xA2, enable), (0xA0, control)], events)


def test_fast_renderer_equals_reference_over_many_busy_frames() -> None:
    """A longer seeded run: a dense scene with display and grid on, then many mid-frame changes."""
    rng = random.Random(8244)
    for region in (NTSC, PAL):
        scene = [(address, rng.randrange(256)) for address in VIDEO_ADDRESSES]
        scene += [(0xA2, 0xFF), (0xA0, 0x28)]
        moves = []
        for _ in range(400):
            kind = rng.choice(["write", "write", "write", "read", "lum"])
            address = rng.choice(MIDFRAME_ADDRESSES) if kind == "write" else rng.choice([0xA1, 0xA2])
            moves.append((kind, address, rng.randrange(256), rng.randrange(1, 300)))
        run_both(region, scene, moves)


def test_fast_renderer_equals_reference_when_only_colours_and_lum_change() -> None:
    """Raster bars over one grid and major system: every picture shares one base layer, whose copy
    in each colour (A3 and LUM) is painted once and then reused on other lines and frames, so a
    copy kept under the wrong colour shows."""
    rng = random.Random(8243)
    colours = [rng.randrange(256) for _ in range(6)]
    for region in (NTSC, PAL):
        scene = [(address, rng.randrange(256)) for address in VIDEO_ADDRESSES]
        scene += [(0xA2, 0xFF), (0xA0, 0x28)]
        moves = []
        for _ in range(300):
            if rng.randrange(4):
                moves.append(("write", 0xA3, rng.choice(colours), rng.randrange(1, 400)))
            else:
                moves.append(("lum", 0, rng.randrange(2), rng.randrange(1, 400)))
        run_both(region, scene, moves)


@pytest.mark.slow
def test_fast_renderer_equals_reference_when_shapes_and_control_change_mid_frame() -> None:
    """Writes aimed at what stays writable while the display is on (sprite shapes, A0, A2, A3):
    each must reach the picture from the beam position on."""
    rng = random.Random(8245)
    shapes_and_control = [*range(0x80, 0xA0), 0xA0, 0xA2, 0xA3]
    for region in (NTSC, PAL):
        for _ in range(3):
            scene = [(address, rng.randrange(256)) for address in VIDEO_ADDRESSES]
            scene += [(0xA2, 0xFF), (0xA0, 0x28)]
            moves = []
            for _ in range(150):
                address = rng.choice(shapes_and_control)
                value = rng.choice([0x28, 0x68, 0xA8, 0x20, 0x08]) if address == 0xA0 else rng.randrange(256)
                moves.append(("write", address, value, rng.randrange(1, 200)))
            run_both(region, scene, moves)


@settings(max_examples=200, deadline=None)
@given(
    control=st.sampled_from([0x00, 0x08, 0x48, 0x88, 0xC8, 0x40]),
    registers=st.binary(min_size=0x30, max_size=0x30),
)
def test_grid_layer_equals_the_reference_piece_by_piece_drawing(control: int, registers: bytes) -> None:
    key = bytes([control]) + registers
    reference = reference_grid_layer(key)
    assert not reference[:, VISIBLE_WIDTH:].any()
    assert (grid_layer(key) == reference[:, :VISIBLE_WIDTH]).all()


def drawing_key_register_by_register(snapshot: bytes) -> bytes:
    """`drawing_key` written out: zero what cannot change the pixels or collision bits."""
    registers = bytearray(snapshot)
    control = registers[CONTROL] & _DRAWING_CONTROL
    if control & CONTROL_DISPLAY:
        for address in UNUSED_OBJECT_REGISTERS:
            registers[address] = 0
    else:
        registers[0:0xA0] = bytes(0xA0)
        registers[0xA2] = 0
    if not control & CONTROL_GRID:
        control &= CONTROL_DISPLAY
        registers[SNAPSHOT_LOW:] = bytes(len(registers) - SNAPSHOT_LOW)
    registers[CONTROL] = control
    registers[CONTROL + 1] = 0
    return bytes(registers)


@settings(max_examples=300, deadline=None)
@given(snapshot=st.binary(min_size=SNAPSHOT_SIZE, max_size=SNAPSHOT_SIZE))
def test_drawing_key_zeroes_what_the_registers_say(snapshot: bytes) -> None:
    assert drawing_key(snapshot) == drawing_key_register_by_register(snapshot)


@settings(max_examples=300, deadline=None)
@given(
    snapshot=st.binary(min_size=SNAPSHOT_SIZE, max_size=SNAPSHOT_SIZE),
    control=st.integers(0, 255),
    unused=st.sets(st.sampled_from([*UNUSED_OBJECT_REGISTERS, CONTROL + 1]), max_size=2),
)
def test_drawing_key_with_the_display_and_grid_on_and_no_unused_byte_set(
    snapshot: bytes, control: int, unused: set[int]
) -> None:
    """`drawing_key`'s short way (display and grid on, the unused object registers and A1 zero: only
    A0 to mask) gives the key the register-by-register rule gives; `unused` are left set (at most
    two), which must take the long way."""
    registers = bytearray(snapshot)
    registers[CONTROL] = control | CONTROL_DISPLAY | CONTROL_GRID
    for address in [*UNUSED_OBJECT_REGISTERS, CONTROL + 1]:
        if address not in unused:
            registers[address] = 0
    assert drawing_key(bytes(registers)) == drawing_key_register_by_register(bytes(registers))


@settings(max_examples=300, deadline=None)
@given(
    registers=st.binary(min_size=256, max_size=256),
    address=st.sampled_from([*range(0xA4), *range(0xC0, 0xF0)]),
    value=st.integers(0, 255),
)
def test_a_write_that_changes_no_drawing_bit_leaves_the_drawing_key(
    registers: bytes, address: int, value: int
) -> None:
    """`Vdc.write` skips the redraw of a write that changes no bit of `drawing_bits`: the picture
    it would draw must be the one already drawn."""
    after = bytearray(registers)
    after[address] = value
    if not (registers[address] ^ value) & drawing_bits(registers[CONTROL] & DRAWING_STATES)[address]:
        assert drawing_key(snapshot_of(registers)) == drawing_key(snapshot_of(after))


@settings(max_examples=100, deadline=None)
@given(control=st.integers(0, 255), address=st.integers(0, 255), changed=st.integers(1, 255))
def test_drawing_bits_are_changes_drawing_as_a_table(control: int, address: int, changed: int) -> None:
    bits = drawing_bits(control & DRAWING_STATES)[address]
    assert bool(changed & bits) == changes_drawing(address, changed, control)


def fast_and_reference(
    scene: list[tuple[int, int]], enable: int, control: int
) -> tuple[Picture, ReferencePicture]:
    """The fast and the reference picture of a scene with A2 = `enable` and A0 = `control`."""
    registers = bytearray(256)
    for address, value in scene:
        registers[address] = position_value(address, value)
    registers[0xA2], registers[0xA0] = enable, control
    snapshot = snapshot_of(registers)
    return Picture(snapshot, True), ReferencePicture(snapshot, True)


@settings(max_examples=150, deadline=None)
@given(
    scene=scene_writes,
    enable=st.integers(1, 255),
    control=st.sampled_from([0x28, 0x20, 0x68, 0xA8]),
    lengths=st.lists(st.integers(1, 40), min_size=3, max_size=3),
)
def test_span_collisions_equal_the_reference_next_to_colliding_pixels(
    scene: list[tuple[int, int]], enable: int, control: int, lengths: list[int]
) -> None:
    """A span's A2 bits from the pairs of sources that meet in it: spans that end just before a
    colliding pixel, start just after it or hold it alone, so that no neighbour leaks in. The
    whole area comes last: the short spans find only their own lines packed before them."""
    fast, reference = fast_and_reference(scene, enable, control)
    area = VISIBLE_LINES * VISIBLE_WIDTH
    positions = reference.collision_positions().tolist()
    spans = []
    for position in positions[:: max(1, len(positions) // 12)]:
        before, after, around = lengths
        spans += [(max(0, position - before), position), (position + 1, min(area, position + 1 + after))]
        spans += [(max(0, position - around), min(area, position + around)), (position, position + 1)]
    spans.append((0, area))
    for start, end in spans:
        if start < end:
            assert fast.collisions(start, end, -1) == reference.collisions(start, end, -1), (start, end)


@settings(max_examples=50, deadline=None)
@given(registers=st.binary(min_size=256, max_size=256))
def test_snapshot_holds_registers_00_a3_then_c0_ef(registers: bytes) -> None:
    snapshot = snapshot_of(bytearray(registers))
    assert type(snapshot) is bytes
    assert snapshot == registers[:0xA4] + registers[0xC0:0xF0]


def picture_summary(picture: Picture) -> tuple[bytes, bytes, int, bool]:
    """Pixels with LUM off and on, A2 bits and the A1 overlap of the whole area."""
    area = VISIBLE_LINES * VISIBLE_WIDTH
    dim, bright = np.empty(area, dtype=np.uint8), np.empty(area, dtype=np.uint8)
    picture.draw(dim, 0, area, False)
    picture.draw(bright, 0, area, True)
    return dim.tobytes(), bright.tobytes(), picture.collisions(0, area, -1), picture.overlaps(0, area)


@settings(max_examples=60, deadline=None)
@given(
    scene=scene_writes,
    control=st.sampled_from([0x28, 0x08, 0x20, 0x68, 0xA8]),
    colours=st.lists(st.integers(0, 255), min_size=3, max_size=3),
    changes=st.lists(st.tuples(st.sampled_from(VIDEO_ADDRESSES), st.integers(0, 255)), max_size=3),
)
def test_pictures_sharing_layers_draw_what_each_draws_alone(
    scene: list[tuple[int, int]], control: int, colours: list[int], changes: list[tuple[int, int]]
) -> None:
    """`Renderer.picture` lets a picture in other colours (A3) share the layers of the first
    picture made with the same other registers: each picture of a sequence of colour and register
    changes must draw, collide and overlap as the same picture made on its own."""
    registers = bytearray(256)
    for address, value in scene:
        registers[address] = position_value(address, value)
    registers[0xA2], registers[0xA0] = 0xFF, control
    renderer = Renderer(hides_high_characters=True)
    snapshots = []
    for step, colour in enumerate(colours):
        for address, value in changes[step : step + 1]:
            registers[address] = position_value(address, value)
        for a3 in (colour, 0, colour ^ 0x3F):
            registers[0xA3] = a3
            snapshots.append(snapshot_of(registers))
    for snapshot in snapshots:
        shared = renderer.picture(snapshot)
        alone = Picture(drawing_key(snapshot), True)
        assert picture_summary(shared) == picture_summary(alone)


@settings(max_examples=100, deadline=None)
@given(
    scene=scene_writes,
    enable=st.integers(1, 255),
    control=st.sampled_from([0x28, 0x20, 0x68, 0xA8]),
)
def test_collision_positions_equal_the_reference(
    scene: list[tuple[int, int]], enable: int, control: int
) -> None:
    """The pixels that set A2 bits, which a poll of A2 is skipped up to (`Picture.collision_positions`,
    from the per-pixel tables over the sprites' and characters' lines)."""
    fast, reference = fast_and_reference(scene, enable, control)
    assert fast.collision_positions().tolist() == reference.collision_positions().tolist()
