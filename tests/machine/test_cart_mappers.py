"""Cartridge mappers (docs/hardware.md, "Cartridge types").

Bank selection, A10 decoding, latches, data ROM, bad images.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hilbridge.errors import HilbridgeError
from hilbridge.machine.cartridge import MAPPER_TYPES, load_cartridge, read_cartridge


def tagged(size: int, unit: int) -> bytes:
    """An image whose every byte names its own `unit`-sized block (so a fetch tells which bank)."""
    return bytes((offset // unit) & 0xFF for offset in range(size))


def test_4k_standard_cart_boots_in_last_bank_and_switches_with_p1():
    cart = load_cartridge(tagged(4096, 2048), "o2_rom")
    assert cart.fetch(0x400, 0xFF, 0xFF) == 1  # reset leaves P1 = FFh: last bank
    assert cart.fetch(0x400, 0xFC, 0xFF) == 0  # after ANL P1,#0FCh: file 000h


def test_standard_cart_mirrors_0c00_onto_0800_because_a10_is_not_decoded():
    image = bytes(range(256)) * 8
    cart = load_cartridge(image, "o2_rom")
    for address in range(0xC00, 0x1000, 0x55):
        assert cart.fetch(address, 0xFF, 0) == cart.fetch(address - 0x400, 0xFF, 0)
    assert cart.fetch(0x401, 0xFF, 0) == image[1]


def test_8k_cart_selects_four_banks_from_p10_p11():
    cart = load_cartridge(tagged(8192, 2048), "o2_rom")
    assert [cart.fetch(0x500, p1, 0) for p1 in (0xFC, 0xFD, 0xFE, 0xFF)] == [0, 1, 2, 3]


def test_4in1_maps_program_linearly_and_reads_the_data_rom_only_with_p11_set():
    image = tagged(4096, 256)
    cart = load_cartridge(image, "o2_4in1")
    assert cart.fetch(0x400, 0xFF, 0) == 4 and cart.fetch(0xC00, 0xFF, 0) == 12
    assert cart.read(0x12, 0x02, 0xF3) == 3  # page = P2 AND 0Fh
    assert cart.read(0x12, 0x00, 0xF3) == 0xFF  # P11 = 0: not driving


def test_rally_latch_selects_the_bank_and_p10_forces_the_last_one():
    cart = load_cartridge(tagged(16384, 2048), "o2_rally")
    assert cart.fetch(0x400, 0xFF, 0) == 7  # P10 = 1
    cart.write(0x80, 2, 0xAE, 0)  # A7 = 1, P14 = 0: latch
    assert cart.fetch(0x400, 0xAE, 0) == 2
    cart.write(0x00, 5, 0xAE, 0)  # A7 = 0: ignored
    cart.write(0x80, 5, 0xBE, 0)  # P14 = 1: ignored
    assert cart.fetch(0x400, 0xAE, 0) == 2
    assert cart.fetch(0xC00, 0xAE, 0) == cart.fetch(0x400, 0xAE, 0)


def test_ktaa_uses_3k_pages_with_a10_connected():
    cart = load_cartridge(tagged(12288, 3072), "o2_ktaa")
    assert [cart.fetch(0x400, p1, 0) for p1 in (0xFC, 0xFD, 0xFE, 0xFF)] == [0, 1, 2, 3]
    assert cart.fetch(0xFFF, 0xFD, 0) == 1


def test_mapper_from_size_when_not_listed():
    assert load_cartridge(bytes(2048)).mapper == "o2_rom"
    assert load_cartridge(bytes(16384)).mapper == "o2_rally"


@pytest.mark.parametrize(
    ("image", "mapper", "message"),
    [
        (b"", None, "empty"),
        (bytes(65536), None, "larger"),
        (bytes(3000), "o2_rom", "must be"),
        (bytes(2048), "o2_nonsense", "not emulated"),
    ],
)
def test_bad_images_are_user_errors(image, mapper, message):
    with pytest.raises(HilbridgeError, match=message):
        load_cartridge(image, mapper, name="bad.bin")


def test_unreadable_file_is_a_user_error(tmp_path):
    with pytest.raises(HilbridgeError, match="cannot read"):
        read_cartridge(tmp_path / "missing.bin")


@pytest.mark.slow
@given(
    mapper=st.sampled_from(sorted(MAPPER_TYPES)),
    p1=st.integers(0, 255),
    seed=st.integers(0, 255),
)
def test_program_view_equals_fetch_everywhere(mapper, p1, seed):
    size = MAPPER_TYPES[mapper].sizes[-1]
    image = bytes((offset * 7 + seed + (offset >> 8)) & 0xFF for offset in range(size))
    cart = load_cartridge(image, mapper)
    cart.latch = seed
    view = cart.program_view(p1)
    assert all(view[address - 0x400] == cart.fetch(address, p1, 0) for address in range(0x400, 0x1000, 7))


def test_mame_0251_variant_mirrors_0c00_onto_0400_as_that_version_runs_it():
    cart = load_cartridge(tagged(2048, 1024), "o2_rom_mame0251")
    assert cart.fetch(0xC80, 0xFF, 0) == cart.fetch(0x480, 0xFF, 0) != cart.fetch(0x880, 0xFF, 0)


def test_12k_rally_is_laid_out_in_the_16k_bank_space_as_mame_loads_it():
    # MAME's software list loads the 12 KB Videopac+ images at 0 and again at 4096 in a 16 KB area,
    # so latch banks 0-1 and 2-3 both hold file 0000h-0FFFh and banks 4-7 hold file 1000h-2FFFh.
    image = tagged(12288, 2048)
    cart = load_cartridge(image, "o2_rally")
    seen = []
    for latch in range(8):
        cart.write(0x80, latch, 0xAE, 0)
        seen.append(cart.fetch(0x400, 0xAE, 0))
    assert seen == [0, 1, 0, 1, 2, 3, 4, 5]
    assert cart.fetch(0x400, 0xFF, 0) == 5  # P10 = 1: the last bank
    assert cart.image == image
