"""UF2 writer and validator, boot2 sealing: what the RP2040 boot ROM takes and what it would refuse."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hilbridge.firmware.uf2 import (
    BLOCK_SIZE,
    FLASH_BASE,
    RP2040_FAMILY_ID,
    Uf2Error,
    boot2_is_valid,
    crc32_mpeg2,
    read_uf2,
    seal_boot2,
    write_uf2,
)


def flash_image(body: bytes = b"\x5a" * 1000) -> bytes:
    return seal_boot2(b"\x01\x02\x03") + body


def test_crc32_mpeg2_matches_the_catalogued_check_value():
    # CRC-32/MPEG-2 "check" (the CRC of the ASCII digits 1-9) from the CRC catalogue: 0x0376E6E7.
    assert crc32_mpeg2(b"123456789") == 0x0376E6E7


def test_crc32_mpeg2_is_not_the_zlib_crc():
    import zlib

    assert crc32_mpeg2(b"123456789") != zlib.crc32(b"123456789")


def test_sealed_boot2_is_256_bytes_with_its_crc_at_252():
    sealed = seal_boot2(b"\xaa" * 10)
    assert len(sealed) == 256 and sealed[10:252] == bytes(242)
    assert int.from_bytes(sealed[252:], "little") == crc32_mpeg2(sealed[:252])
    assert boot2_is_valid(sealed)


def test_boot2_longer_than_252_bytes_is_refused():
    with pytest.raises(Uf2Error):
        seal_boot2(bytes(253))


@given(st.binary(min_size=256, max_size=3000), st.integers(0, 255))
def test_any_flipped_bit_in_boot2_breaks_its_crc(tail, bit):
    image = bytearray(seal_boot2(tail[:100]) + tail)
    image[bit // 8] ^= 1 << (bit % 8)
    assert not boot2_is_valid(bytes(image))


@given(st.binary(min_size=0, max_size=5000))
def test_written_uf2_reads_back_to_the_image(body):
    image = flash_image(body)
    data = write_uf2(image)
    assert len(data) % BLOCK_SIZE == 0
    parsed = read_uf2(data)
    assert parsed.base == FLASH_BASE and parsed.family == RP2040_FAMILY_ID
    assert parsed.image[: len(image)] == image and set(parsed.image[len(image) :]) <= {0}
    assert parsed.blocks == -(-len(image) // 256)


def test_block_header_fields_follow_the_uf2_format():
    data = write_uf2(flash_image())
    magic0, magic1, flags, address, size, number, count, family = struct.unpack_from("<8I", data, BLOCK_SIZE)
    assert (magic0, magic1) == (0x0A324655, 0x9E5D5157)
    assert flags & 0x2000 and family == 0xE48BFF56
    assert (address, size, number, count) == (0x10000100, 256, 1, len(data) // BLOCK_SIZE)
    assert data[2 * BLOCK_SIZE - 4 : 2 * BLOCK_SIZE] == (0x0AB16F30).to_bytes(4, "little")


def test_another_family_is_refused():
    data = write_uf2(flash_image(), family=0x68ED2B88)  # SAMD21
    with pytest.raises(Uf2Error, match="family"):
        read_uf2(data)


@pytest.mark.parametrize("cut", [1, 100, BLOCK_SIZE])
def test_truncated_uf2_is_refused(cut):
    data = write_uf2(flash_image(b"x" * 2000))
    with pytest.raises(Uf2Error, match="truncated"):
        read_uf2(data[:-cut])


def test_missing_block_in_the_middle_is_refused():
    data = write_uf2(flash_image(b"x" * 2000))
    with pytest.raises(Uf2Error, match="truncated or reordered"):
        read_uf2(data[:BLOCK_SIZE] + data[2 * BLOCK_SIZE :])


def test_bad_boot2_crc_is_refused():
    image = bytearray(flash_image())
    image[5] ^= 0x40
    with pytest.raises(Uf2Error, match="boot2"):
        read_uf2(write_uf2(bytes(image)))


def test_image_not_at_the_start_of_flash_is_refused():
    with pytest.raises(Uf2Error, match="start of flash"):
        read_uf2(write_uf2(flash_image(), base=0x10001000))


def test_garbage_is_refused():
    with pytest.raises(Uf2Error, match="magic"):
        read_uf2(bytes(BLOCK_SIZE))
    with pytest.raises(Uf2Error, match="empty"):
        read_uf2(b"")
