"""Mapper auto-detection: which cartridge type is in the slot, how big it is, and how to read it.

Three probes, each explained to the user (adapter.md §4, console.md §7):
1. latch probe: MOVX writes with A7 = 1 and P14 = 0 that change what 0400h reads are the
   Videopac+ bank latch (`o2_rally`); the latch values after which the banks repeat give the size;
2. mirror comparison: a survey of CPU 0400h-0FFFh under the four P10/P11 banks. If 0C00h-0FFFh
   differs from 0800h-0BFFh, A10 is connected (`o2_4in1` or `o2_ktaa`), otherwise the cartridge is an
   `o2_rom` whose banks pair up by size (all equal: 2 KB; equal on P11: 4 KB; all different: 8 KB);
3. data-area probe: with A10 connected and one program bank, MOVX reads with P11 = 1 that return data
   are the `o2_4in1` data ROM; otherwise it is a single-page `o2_ktaa`.
The result is a list of `Region`s: what to read, with which ports and strobe, to where in the image.
Images are laid out as MAME's software list has them, so CRC32/SHA-1 identification works.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import Adapter

DETECTABLE = ("o2_rom", "o2_4in1", "o2_rally", "o2_ktaa")
PROGRAM = 0x400
SURVEY_LENGTH = 0xC00  # CPU 0400h-0FFFh
BANK_2K = 0x800
PAGE_3K = 0xC00
P14_HIGH = 0x10
LATCH_WRITE_P1 = 0xEE  # P10 = 0 (latch selects the bank), P14 = 0 (latch enabled), others high
LATCH_READ_P1 = 0xFE  # P10 = 0, P14 high
LATCH_ADDRESS = 0x80  # A7 = 1
DATA_ROM_P1 = 0xFF  # P11 = 1 enables the o2_4in1 data ROM
DATA_ROM_OFF_P1 = 0xFD  # P11 = 0
SIGNATURE_LENGTH = 0x100
NOISE_FRACTION = 64  # up to 1/64 of the bytes may differ through unstable bits and still count as "same"


@dataclass(frozen=True, slots=True)
class Region:
    """`length` bytes read from `address` with P1/P2 (and a latch value written first) → image offset."""

    offset: int
    length: int
    address: int
    p1: int
    p2: int = 0
    strobe: str = "PSEN"
    latch: int | None = None


@dataclass(slots=True)
class Detection:
    mapper: str
    size: int
    regions: list[Region]
    reasons: list[str] = field(default_factory=list)
    fingerprint: str = ""


def same(a: bytes, b: bytes) -> bool:
    """Equal up to a few bytes: an unstable bit must not turn a mirror or a repeated bank into a new one."""
    differing = np.count_nonzero(np.frombuffer(a, np.uint8) != np.frombuffer(b, np.uint8))
    return len(a) == len(b) and differing <= len(a) // NOISE_FRACTION


def _all_same(blocks: list[bytes]) -> bool:
    return all(same(blocks[0], block) for block in blocks[1:])


def _bank_p1(bank: int) -> int:
    return 0xFC | bank | P14_HIGH


def survey(adapter: Adapter) -> list[bytes]:
    """CPU 0400h-0FFFh under each of the four P10/P11 banks."""
    return [adapter.read(PROGRAM, SURVEY_LENGTH, p1=_bank_p1(bank)) for bank in range(4)]


def _latch_banks(adapter: Adapter, length: int) -> list[bytes]:
    banks = []
    for value in range(8):
        adapter.write(LATCH_ADDRESS, value, p1=LATCH_WRITE_P1)
        banks.append(adapter.read(PROGRAM, length, p1=LATCH_READ_P1))
    return banks


def plan_rally(adapter: Adapter, reasons: list[str]) -> tuple[int, list[Region]]:
    banks = _latch_banks(adapter, BANK_2K)
    count = 4 if all(same(banks[b], banks[b + 4]) for b in range(4)) else 8
    reasons.append(f"latch values repeat every {count} banks of 2 KB: {count * 2} KB")
    regions = [Region(bank * BANK_2K, BANK_2K, PROGRAM, LATCH_READ_P1, latch=bank) for bank in range(count)]
    return count * BANK_2K, regions


def plan_rom(banks: list[bytes], reasons: list[str]) -> tuple[int, list[Region]]:
    program = [bank[:BANK_2K] for bank in banks]
    if _all_same(program):
        count = 1
        reasons.append("P10/P11 change nothing: one 2 KB bank")
    elif same(program[0], program[2]) and same(program[1], program[3]):
        count = 2
        reasons.append("banks differ on P10 and repeat on P11: two 2 KB banks, 4 KB")
    else:
        count = 4
        reasons.append("all four P10/P11 banks differ: 8 KB")
    regions = [Region(b * BANK_2K, BANK_2K, PROGRAM, _bank_p1(b)) for b in range(count)]
    return count * BANK_2K, regions


def plan_ktaa(banks: list[bytes], reasons: list[str]) -> tuple[int, list[Region]]:
    if _all_same(banks):
        pages = 1
    elif same(banks[0], banks[2]) and same(banks[1], banks[3]):
        pages = 2
    else:
        pages = 4
    reasons.append(f"{pages} distinct 3 KB page(s) under P10/P11: {pages * 3} KB")
    regions = [Region(p * PAGE_3K, PAGE_3K, PROGRAM, _bank_p1(p)) for p in range(pages)]
    return pages * PAGE_3K, regions


def plan_4in1(reasons: list[str]) -> tuple[int, list[Region]]:
    reasons.append("4 KB: 1 KB data ROM (MOVX pages 0-3) + 3 KB program at 0400h-0FFFh")
    regions = [
        Region(page * 0x100, 0x100, 0x00, DATA_ROM_P1, p2=page, strobe="MOVX_READ") for page in range(4)
    ]
    regions.append(Region(PROGRAM, SURVEY_LENGTH, PROGRAM, DATA_ROM_P1))
    return 0x1000, regions


def _has_data_rom(adapter: Adapter) -> bool:
    enabled = b"".join(
        adapter.read(0, 0x100, p1=DATA_ROM_P1, p2=page, strobe="MOVX_READ") for page in range(4)
    )
    disabled = adapter.read(0, 0x100, p1=DATA_ROM_OFF_P1, strobe="MOVX_READ")
    return enabled != b"\xff" * len(enabled) and disabled == b"\xff" * len(disabled)


def detect(adapter: Adapter, forced: str | None = None) -> Detection:
    """Detect the cartridge type (or size a `forced` one) and plan its dump; the reasons say why."""
    if forced is not None and forced not in DETECTABLE:
        raise HilbridgeError(f"cannot dump mapper {forced!r}", hint="types: auto, " + ", ".join(DETECTABLE))
    reasons: list[str] = []
    adapter.write(LATCH_ADDRESS, 0, p1=LATCH_WRITE_P1)  # a known latch state, so the fingerprint repeats
    banks = survey(adapter)
    fingerprint = f"{zlib.crc32(b''.join(banks)):08x}"
    if all(bank == b"\xff" * SURVEY_LENGTH for bank in banks) or all(not any(b) for b in banks):
        raise HilbridgeError(
            "no cartridge detected: every read returned the same idle value",
            hint="seat the cartridge firmly and clean its contacts",
        )
    mapper = forced
    if forced is None:
        first = _latch_banks(adapter, SIGNATURE_LENGTH)
        a10 = not all(same(bank[0x800:0xC00], bank[0x400:0x800]) for bank in banks)
        if not _all_same(first):
            mapper = "o2_rally"
            reasons.append("latch probe: MOVX writes (A7 = 1, P14 = 0) change what 0400h reads: a bank latch")
        elif not a10:
            mapper = "o2_rom"
            reasons.append("latch probe: MOVX writes change nothing")
            reasons.append("mirror comparison: 0C00h-0FFFh mirrors 0800h-0BFFh (A10 not connected)")
        else:
            reasons.append("mirror comparison: 0C00h-0FFFh differs from 0800h-0BFFh (A10 connected)")
            if _all_same(banks) and _has_data_rom(adapter):
                mapper = "o2_4in1"
                reasons.append("data-area probe: MOVX reads with P11 = 1 return data, with P11 = 0 none")
            else:
                mapper = "o2_ktaa"
                reasons.append("data-area probe: no MOVX data ROM; 3 KB pages selected by P1")
    else:
        reasons.append(f"type {forced} given by the user")
    if mapper == "o2_rally":
        size, regions = plan_rally(adapter, reasons)
    elif mapper == "o2_4in1":
        size, regions = plan_4in1(reasons)
    elif mapper == "o2_ktaa":
        size, regions = plan_ktaa(banks, reasons)
    else:
        size, regions = plan_rom(banks, reasons)
    return Detection(mapper or "o2_rom", size, regions, reasons, fingerprint)
