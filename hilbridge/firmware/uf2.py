"""UF2 images for the RP2040 boot ROM's mass-storage drive: writer and validator.

A UF2 file is a run of 512-byte blocks, each carrying 256 bytes of flash contents, its flash address,
its block number and the total, and the RP2040 family id. The boot ROM writes what it accepts and
ignores the rest silently, so a bad file must be refused here, before it is copied: wrong family,
gaps, a truncated file, or a boot2 whose CRC the ROM would reject (which leaves a board in USB boot).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hilbridge.errors import HilbridgeError, SourceLocation

MAGIC_START0 = 0x0A324655
MAGIC_START1 = 0x9E5D5157
MAGIC_END = 0x0AB16F30
FLAG_FAMILY_ID_PRESENT = 0x00002000
RP2040_FAMILY_ID = 0xE48BFF56
BLOCK_SIZE = 512
PAYLOAD_SIZE = 256
FLASH_BASE = 0x10000000
HEADER = struct.Struct("<8I")  # magic0, magic1, flags, address, payload size, block no, blocks, family
BOOT2_SIZE = 256
BOOT2_CODE_SIZE = BOOT2_SIZE - 4


class Uf2Error(HilbridgeError):
    """A UF2 file (or boot2) that a board would not boot or the boot ROM would not take."""


def crc32_mpeg2(data: bytes) -> int:
    """CRC-32/MPEG-2 (polynomial 0x04C11DB7, init 0xFFFFFFFF, not reflected, no final XOR): the
    boot ROM's check of boot2. With init 0 a board stays in USB boot."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else (crc << 1)
            crc &= 0xFFFFFFFF
    return crc


def seal_boot2(code: bytes) -> bytes:
    """The 256 bytes of flash the boot ROM checks: `code` padded with zeros to 252 bytes, then its CRC."""
    if len(code) > BOOT2_CODE_SIZE:
        raise Uf2Error(f"boot2 is {len(code)} bytes; at most {BOOT2_CODE_SIZE} fit before the CRC")
    padded = code.ljust(BOOT2_CODE_SIZE, b"\0")
    return padded + crc32_mpeg2(padded).to_bytes(4, "little")


def boot2_is_valid(image: bytes) -> bool:
    """Whether the first 256 bytes of a flash image carry the CRC the boot ROM expects."""
    if len(image) < BOOT2_SIZE:
        return False
    return crc32_mpeg2(image[:BOOT2_CODE_SIZE]) == int.from_bytes(image[BOOT2_CODE_SIZE:BOOT2_SIZE], "little")


def write_uf2(image: bytes, base: int = FLASH_BASE, family: int = RP2040_FAMILY_ID) -> bytes:
    """The UF2 file that puts `image` into flash at `base` (the last block padded with zeros)."""
    blocks = [image[offset : offset + PAYLOAD_SIZE] for offset in range(0, len(image), PAYLOAD_SIZE)]
    out = bytearray()
    for number, payload in enumerate(blocks):
        header = HEADER.pack(
            MAGIC_START0,
            MAGIC_START1,
            FLAG_FAMILY_ID_PRESENT,
            base + number * PAYLOAD_SIZE,
            PAYLOAD_SIZE,
            number,
            len(blocks),
            family,
        )
        data = payload.ljust(PAYLOAD_SIZE, b"\0").ljust(BLOCK_SIZE - HEADER.size - 4, b"\0")
        out += header + data + MAGIC_END.to_bytes(4, "little")
    return bytes(out)


@dataclass(frozen=True, slots=True)
class Uf2Image:
    """What a valid UF2 file holds."""

    base: int
    image: bytes
    blocks: int
    family: int


def read_uf2(data: bytes, name: str = "<uf2>") -> Uf2Image:
    """Check a UF2 file as the RP2040 boot ROM would take it and return the flash image it writes.

    Refused: no blocks, a length that is not whole blocks (truncated), bad magic, another family,
    payloads that are not 256 bytes, block numbers or addresses that are not contiguous, a block
    count that disagrees with the file, and a boot2 whose CRC the boot ROM rejects.
    """
    where = SourceLocation(name)
    if not data:
        raise Uf2Error("empty UF2 file", where)
    if len(data) % BLOCK_SIZE:
        raise Uf2Error(
            f"{len(data)} bytes is not a whole number of {BLOCK_SIZE}-byte blocks (truncated?)", where
        )
    count = len(data) // BLOCK_SIZE
    image = bytearray()
    base = 0
    for number in range(count):
        block = data[number * BLOCK_SIZE : (number + 1) * BLOCK_SIZE]
        magic0, magic1, flags, address, size, block_no, blocks, family = HEADER.unpack_from(block)
        at = f"block {number}"
        if (magic0, magic1, int.from_bytes(block[-4:], "little")) != (MAGIC_START0, MAGIC_START1, MAGIC_END):
            raise Uf2Error(f"{at}: not a UF2 block (bad magic)", where)
        if not flags & FLAG_FAMILY_ID_PRESENT or family != RP2040_FAMILY_ID:
            shown = f"0x{family:08X}" if flags & FLAG_FAMILY_ID_PRESENT else "none"
            raise Uf2Error(
                f"{at}: family id {shown} is not the RP2040's (0x{RP2040_FAMILY_ID:08X})",
                where,
                hint="this UF2 was built for another chip",
            )
        if size != PAYLOAD_SIZE:
            raise Uf2Error(f"{at}: payload of {size} bytes, the RP2040 takes {PAYLOAD_SIZE}", where)
        if block_no != number or blocks != count:
            raise Uf2Error(
                f"{at}: says it is block {block_no} of {blocks}, but the file holds {count} blocks "
                "(truncated or reordered?)",
                where,
            )
        if number == 0:
            base = address
        elif address != base + number * PAYLOAD_SIZE:
            raise Uf2Error(f"{at}: address 0x{address:08X} leaves a gap after the previous block", where)
        image += block[HEADER.size : HEADER.size + PAYLOAD_SIZE]
    if base != FLASH_BASE:
        raise Uf2Error(
            f"the image starts at 0x{base:08X}, not at the start of flash 0x{FLASH_BASE:08X}", where
        )
    if not boot2_is_valid(bytes(image)):
        raise Uf2Error(
            "boot2 (the first 256 bytes) has a bad CRC-32: the boot ROM would not start this image",
            where,
            hint="rebuild with `hilbridge firmware build`",
        )
    return Uf2Image(base, bytes(image), count, RP2040_FAMILY_ID)
