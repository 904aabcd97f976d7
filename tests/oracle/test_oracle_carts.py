"""The test-cart table and builder, and the MAME runner's checks that need no MAME."""

from __future__ import annotations

import numpy as np
import pytest
from fixture_runs import CARTS_DIR, SPECS, cart_image

from hilbridge.errors import HilbridgeError
from hilbridge.machine.palette import RF_PALETTE
from hilbridge.oracle import mame
from hilbridge.oracle.carts import load_manifest
from hilbridge.toolchain.assembler import assemble


def test_manifest_lists_sources_that_exist():
    assert len(SPECS) >= 15
    for spec in SPECS.values():
        assert spec.source.is_file(), spec.source
        assert spec.slot in mame.SLOTS
        assert spec.frames >= (300 if spec.pixels else 600)


def test_every_mapper_has_a_cart():
    assert {spec.slot for spec in SPECS.values()} == set(mame.SLOTS)


def test_bad_manifest_row_names_its_line(tmp_path):
    text = (CARTS_DIR / "carts.tsv").read_text()
    (tmp_path / "carts.tsv").write_text(text + "broken\t1\n")
    with pytest.raises(HilbridgeError) as caught:
        load_manifest(tmp_path)
    assert caught.value.location is not None and caught.value.location.line == len(text.splitlines()) + 1


@pytest.mark.parametrize("name", sorted(SPECS))
def test_cart_builds_to_its_size_and_starts_with_the_vectors(name):
    spec = SPECS[name]
    image = cart_image(name)
    assert len(image) == spec.size
    for bank in range(spec.banks):
        start = bank * spec.bank_size + (0x400 - spec.origin)
        # 400h: JMP start; 402h and 404h: the interrupt vectors the boot BIOS jumps to
        assert [image[start] & 0x1F, image[start + 2] & 0x1F, image[start + 4] & 0x1F] == [0x04] * 3


@pytest.mark.parametrize("name", ["bank_o2rom_8k", "bank_ktaa", "bank_rally"])
def test_each_bank_names_itself(name):
    spec = SPECS[name]
    image = cart_image(name)
    ident = assemble(spec.source, defines={"BANK": 0}, auto_bank_select=False).symbols["IDENT"]
    for bank in range(spec.banks):
        assert image[bank * spec.bank_size + ident - spec.origin] == bank * 0x10 + 0x0A


def test_pixels_map_to_palette_indices():
    colours = [0xFF000000 | int(r) << 16 | int(g) << 8 | int(b) for r, g, b in RF_PALETTE]
    frame = np.array([colours[i % 16] for i in range(360 * 243)], dtype="<u4")
    indices = mame.pixels_to_indices(frame.tobytes())
    assert indices.shape == (1, 243, 360)
    assert indices.reshape(-1)[:20].tolist() == [i % 16 for i in range(20)]


def test_pixels_outside_the_palette_are_an_error():
    frame = np.full(360 * 243, 0xFF000000, dtype="<u4")
    frame[360 * 5 + 7] = 0xFF123456
    with pytest.raises(HilbridgeError, match=r"pixel 7,5 .* 00123456|pixel 7,5 .* FF123456"):
        mame.pixels_to_indices(frame.tobytes())
    with pytest.raises(HilbridgeError, match="whole number"):
        mame.pixels_to_indices(b"\0" * 100)


def plain_indices(argb: np.ndarray) -> np.ndarray:
    """Palette indices by the palette's own dictionary, pixel by pixel; -1 outside the palette."""
    return np.array([mame.MAME_PALETTE.get(int(value), -1) for value in argb.reshape(-1)]).reshape(argb.shape)


def test_pixel_conversion_is_the_palettes_lookup_in_every_chunk(tmp_path):
    """The hashed, chunked conversion against the dictionary, over more frames than a chunk holds."""
    colours = np.array(sorted(mame.MAME_PALETTE, key=mame.MAME_PALETTE.get), dtype="<u4")
    frames = mame.PIXEL_CHUNK_FRAMES + 3
    picked = np.random.default_rng(15).integers(0, 16, size=(frames, mame.SCREEN_HEIGHT, mame.SCREEN_WIDTH))
    argb = colours[picked]
    expected = plain_indices(argb[:, :4])
    (tmp_path / "pixels.argb").write_bytes(argb.tobytes())
    for indices in (
        mame.pixels_to_indices(argb.tobytes()),
        mame.pixel_file_indices(tmp_path / "pixels.argb"),
    ):
        assert indices.shape == argb.shape
        assert np.array_equal(indices, picked)
        assert np.array_equal(indices[:, :4], expected)


def test_every_colour_one_bit_off_the_palette_is_an_error():
    """A value one bit (RGB or alpha) from a palette colour is not the colour of its palette slot."""
    off = np.array(
        sorted(
            {colour ^ (1 << bit) for colour in mame.MAME_PALETTE for bit in range(32)}
            - set(mame.MAME_PALETTE)
        ),
        dtype=np.uint32,
    )
    assert len(off) > 400
    slots = (off * mame.PALETTE_MULTIPLIER) >> np.uint32(24)
    assert not np.any(mame.PALETTE_COLOURS[mame.PALETTE_SLOTS[slots]] == off)
    frame = np.full((mame.SCREEN_HEIGHT, mame.SCREEN_WIDTH), 0xFF000000, dtype="<u4")
    frame[20, 3] = 0xFF123456
    for value in off[:: len(off) // 16]:
        frame[9, 11] = value
        with pytest.raises(HilbridgeError, match=f"pixel 11,9 of stored frame 0 has colour {value:08X}"):
            mame.pixels_to_indices(frame.tobytes())


def test_a_pixel_outside_the_palette_is_named_in_its_chunk(tmp_path):
    frames = mame.PIXEL_CHUNK_FRAMES + 2
    argb = np.full((frames, mame.SCREEN_HEIGHT, mame.SCREEN_WIDTH), 0xFF000000, dtype="<u4")
    argb[frames - 1, 9, 11] = 0x00000000  # black, transparent
    argb[frames - 1, 20, 3] = 0xFF123456
    (tmp_path / "pixels.argb").write_bytes(argb.tobytes())
    message = f"pixel 11,9 of stored frame {frames - 1} has colour 00000000"
    with pytest.raises(HilbridgeError, match=message):
        mame.pixels_to_indices(argb.tobytes())
    with pytest.raises(HilbridgeError, match=message):
        mame.pixel_file_indices(tmp_path / "pixels.argb")


def test_mame_cycle_rate_rounds_up():
    # MAME's CPU core keeps an integer cycles-per-second: clock / 15 rounded up
    assert mame.mame_cycles_per_second("ntsc") == 357955  # 5 369 317 / 15 = 357 954.47
    assert mame.mame_cycles_per_second("pal") == 394100  # 5 911 492 / 15 = 394 099.47


def test_missing_mame_names_the_package(monkeypatch):
    monkeypatch.setenv("MAME", "no-such-mame-binary")
    with pytest.raises(HilbridgeError) as caught:
        mame.run_mame(cart_image("cpu_alu"), frames=1)
    assert "apt-get install mame" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"region": "secam"}, "unknown region"),
        ({"frames": 0}, "at least 1"),
        ({"slot": "o2_chess"}, "unknown cartridge type"),
        ({"bios": b"\0" * 10}, "BIOS must be 1024 bytes"),
        ({"charset": b"\0" * 10}, "512 bytes"),
    ],
)
def test_bad_run_options_are_user_errors(options, message):
    arguments = {"frames": 1, **options}
    with pytest.raises(HilbridgeError, match=message):
        mame.run_mame(cart_image("cpu_alu"), **arguments)
