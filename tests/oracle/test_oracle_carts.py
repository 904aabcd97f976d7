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
