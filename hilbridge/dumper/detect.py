"""Mapper auto-detection: which cartridge type is in the slot, how big it is, and how to read it.

Three probes, each explained to the user (docs/hardware.md, "Cartridge types" and "The bus
engines and their timing"):
1. latch probe: MOVX writes with A7 = 1 and P14 = 0 that change what 0400h reads are the
   Videopac+ bank latch (`o2_rally`); the latch values after which the banks repeat give the size
   (8 KB: every 4 banks; 12 KB: banks 0-1 again as 2-3, as MAME's list lays it out; 16 KB);
2. mirror comparison: a survey of CPU 0400h-0FFFh under the four P10/P11 banks. If 0C00h-0FFFh
   differs from 0800h-0BFFh, A10 is connected (`o2_4in1` or `o2_ktaa`), otherwise the cartridge is an
   `o2_rom` whose banks pair up by size (all equal: 2 KB; equal on P11: 4 KB; all different: 8 KB);
3. data-area probe: with A10 connected and one program bank, MOVX reads with P11 = 1 that return data
   are the `o2_4in1` data ROM; otherwise it is a single-page `o2_ktaa`.
Blocks count as equal only where every stable byte is equal (`same`): bytes that vary between
re-reads of the same block are unstable bits, any other difference is data.
The result is a list of `Region`s: what to read, with which ports and strobe, to where in the image.
Images are laid out as MAME's software list has them, so CRC32/SHA-1 identification works.
Which mappers can be dumped, their bank sizes and image sizes are the mapper registry's
(`detect`, `bank_size` and `sizes` of hilbridge/machine/mappers.tsv); each detectable mapper has
one dump plan here, found by its name in `PLANS`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import Adapter
from hilbridge.machine.mappers import DEFAULT_REGISTRY, registry

DETECTABLE = DEFAULT_REGISTRY.detectable  # the choices of `hilbridge dump --type`
PROGRAM = 0x400
SURVEY_LENGTH = 0xC00  # CPU 0400h-0FFFh
P14_HIGH = 0x10
LATCH_WRITE_P1 = 0xEE  # P10 = 0 (latch selects the bank), P14 = 0 (latch enabled), others high
LATCH_READ_P1 = 0xFE  # P10 = 0, P14 high
LATCH_ADDRESS = 0x80  # A7 = 1
DATA_ROM_P1 = 0xFF  # P11 = 1 enables the o2_4in1 data ROM
DATA_ROM_OFF_P1 = 0xFD  # P11 = 0
SIGNATURE_LENGTH = 0x100
CONFIRM_READS = (2, 5, 16)  # reads of each side before a difference counts: unstable bits vary
CLEARLY_DIFFERENT = 8  # more than 1/8 of the bytes differing at once is data, not unstable bits
FEW_DIFFERENCES = 16  # blocks with more stable differences than this differ; fewer get more reads


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


class Reads:
    """Repeated reads of one block the same way (same ports, latch, strobe), made only when needed.

    A difference between two blocks is decided on stable bytes: bytes that vary between reads of
    the same block are unstable bits, everything else that differs is a real difference. Blocks
    that differ in more bytes than a contact could flip (1/8 of them) differ at once; a few
    differences that survive a confirmation get more reads before they count, so that an unstable bit
    that happened to read the same a few times cannot pass for data.
    """

    def __init__(self, read_many: Callable[[int], list[bytes]]):
        self._read_many = read_many
        self.reads = read_many(1)

    @property
    def data(self) -> bytes:
        return self.reads[0]

    def confirmed(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(values, stable mask) after at least `count` reads."""
        if len(self.reads) < count:
            self.reads += self._read_many(count - len(self.reads))
        stack = np.frombuffer(b"".join(self.reads), np.uint8).reshape(len(self.reads), -1)
        return stack[0], np.all(stack == stack[0], axis=0)


def same(a: Reads, b: Reads, a_span: slice = slice(None), b_span: slice = slice(None)) -> bool:
    """Equal on every byte that reads stably: only unstable bits may differ, nothing else."""
    first_a = np.frombuffer(a.data[a_span], np.uint8)
    first_b = np.frombuffer(b.data[b_span], np.uint8)
    differing = int(np.count_nonzero(first_a != first_b))
    if differing == 0:
        return True
    if differing > len(first_a) // CLEARLY_DIFFERENT:
        return False
    for count in CONFIRM_READS:
        a_values, a_stable = (part[a_span] for part in a.confirmed(count))
        b_values, b_stable = (part[b_span] for part in b.confirmed(count))
        differing = int(np.count_nonzero((a_values != b_values) & a_stable & b_stable))
        if differing == 0:
            return True
        if differing > FEW_DIFFERENCES:
            return False
    return False


def _all_same(blocks: list[Reads]) -> bool:
    return all(same(blocks[0], block) for block in blocks[1:])


def _bank_p1(bank: int) -> int:
    return 0xFC | bank | P14_HIGH


def survey(adapter: Adapter) -> list[Reads]:
    """CPU 0400h-0FFFh under each of the four P10/P11 banks."""

    def reader(p1: int) -> Callable[[int], list[bytes]]:
        return lambda count: adapter.read_repeated(PROGRAM, SURVEY_LENGTH, count, p1=p1)

    return [Reads(reader(_bank_p1(bank))) for bank in range(4)]


def _latch_banks(adapter: Adapter, length: int) -> list[Reads]:
    def reader(value: int) -> Callable[[int], list[bytes]]:
        def read(count: int) -> list[bytes]:
            adapter.write(LATCH_ADDRESS, value, p1=LATCH_WRITE_P1)
            return adapter.read_repeated(PROGRAM, length, count, p1=LATCH_READ_P1)

        return read

    return [Reads(reader(value)) for value in range(8)]


def _bank_size(mapper: str) -> int:
    return registry().get(mapper).bank_size


def plan_rally(adapter: Adapter, _banks: list[Reads], reasons: list[str]) -> tuple[int, list[Region]]:
    """Size an o2_rally cartridge from where its latch banks repeat; 12 KB as MAME's list lays it out.

    A 12 KB image sits in the 16 KB bank space at 0 and again at 4096, so latch banks 0-1 repeat as
    2-3 and the file is banks 2-7; its bytes are read from there.
    """
    bank_size = _bank_size("o2_rally")
    banks = _latch_banks(adapter, bank_size)
    if _all_same(banks):
        raise HilbridgeError(
            "no bank latch: MOVX writes with A7 = 1 and P14 = 0 change nothing, so this is not an "
            "o2_rally cartridge",
            hint="dump with --type auto to detect the type",
        )
    if all(same(banks[b], banks[b + 4]) for b in range(4)):
        first, count = 0, 4
        reasons.append("latch values repeat every 4 banks of 2 KB: 8 KB")
    elif same(banks[0], banks[2]) and same(banks[1], banks[3]):
        first, count = 2, 6
        reasons.append("latch banks 0-1 repeat as 2-3, banks 4-7 differ: 12 KB, laid out at 0 and 4096")
    else:
        first, count = 0, 8
        reasons.append("all eight latch banks of 2 KB differ: 16 KB")
    regions = [
        Region((bank - first) * bank_size, bank_size, PROGRAM, LATCH_READ_P1, latch=bank)
        for bank in range(first, first + count)
    ]
    return count * bank_size, regions


def plan_rom(_adapter: Adapter, banks: list[Reads], reasons: list[str]) -> tuple[int, list[Region]]:
    bank_size = _bank_size("o2_rom")
    program = slice(0, bank_size)
    if all(same(banks[0], bank, program, program) for bank in banks[1:]):
        count = 1
        reasons.append("P10/P11 change nothing: one 2 KB bank")
    elif same(banks[0], banks[2], program, program) and same(banks[1], banks[3], program, program):
        count = 2
        reasons.append("banks differ on P10 and repeat on P11: two 2 KB banks, 4 KB")
    else:
        count = 4
        reasons.append("all four P10/P11 banks differ: 8 KB")
    regions = [Region(b * bank_size, bank_size, PROGRAM, _bank_p1(b)) for b in range(count)]
    return count * bank_size, regions


def plan_ktaa(_adapter: Adapter, banks: list[Reads], reasons: list[str]) -> tuple[int, list[Region]]:
    page_size = _bank_size("o2_ktaa")
    if _all_same(banks):
        pages = 1
    elif same(banks[0], banks[2]) and same(banks[1], banks[3]):
        pages = 2
    else:
        pages = 4
    reasons.append(
        f"{pages} distinct {page_size // 1024} KB page(s) under P10/P11: {pages * page_size // 1024} KB"
    )
    regions = [Region(p * page_size, page_size, PROGRAM, _bank_p1(p)) for p in range(pages)]
    return pages * page_size, regions


def plan_4in1(_adapter: Adapter, _banks: list[Reads], reasons: list[str]) -> tuple[int, list[Region]]:
    reasons.append("4 KB: 1 KB data ROM (MOVX pages 0-3) + 3 KB program at 0400h-0FFFh")
    regions = [
        Region(page * 0x100, 0x100, 0x00, DATA_ROM_P1, p2=page, strobe="MOVX_READ") for page in range(4)
    ]
    regions.append(Region(PROGRAM, SURVEY_LENGTH, PROGRAM, DATA_ROM_P1))
    return 0x1000, regions


Plan = Callable[[Adapter, list[Reads], list[str]], tuple[int, list[Region]]]
PLANS: dict[str, Plan] = {
    "o2_rom": plan_rom,
    "o2_4in1": plan_4in1,
    "o2_rally": plan_rally,
    "o2_ktaa": plan_ktaa,
}
"""Mapper name → how to read a cartridge of it (its size from the probes, its regions)."""


def _has_data_rom(adapter: Adapter) -> bool:
    enabled = b"".join(
        adapter.read(0, 0x100, p1=DATA_ROM_P1, p2=page, strobe="MOVX_READ") for page in range(4)
    )
    disabled = adapter.read(0, 0x100, p1=DATA_ROM_OFF_P1, strobe="MOVX_READ")
    return enabled != b"\xff" * len(enabled) and disabled == b"\xff" * len(disabled)


def detect(adapter: Adapter, forced: str | None = None) -> Detection:
    """Detect the cartridge type (or size a `forced` one) and plan its dump; the reasons say why."""
    detectable = registry().detectable
    if forced is not None and forced not in detectable:
        raise HilbridgeError(f"cannot dump mapper {forced!r}", hint="types: auto, " + ", ".join(detectable))
    reasons: list[str] = []
    adapter.write(LATCH_ADDRESS, 0, p1=LATCH_WRITE_P1)  # a known latch state, so the fingerprint repeats
    banks = survey(adapter)
    fingerprint = f"{zlib.crc32(b''.join(bank.data for bank in banks)):08x}"
    data = [bank.data for bank in banks]
    if all(bank == b"\xff" * SURVEY_LENGTH for bank in data) or all(not any(bank) for bank in data):
        raise HilbridgeError(
            "no cartridge detected: every read returned the same idle value",
            hint="seat the cartridge firmly and clean its contacts",
        )
    if forced is None:
        high, low = slice(0x800, 0xC00), slice(0x400, 0x800)  # CPU 0C00h-0FFFh and 0800h-0BFFh
        if not _all_same(_latch_banks(adapter, SIGNATURE_LENGTH)):
            mapper = "o2_rally"
            reasons.append("latch probe: MOVX writes (A7 = 1, P14 = 0) change what 0400h reads: a bank latch")
        elif all(same(bank, bank, high, low) for bank in banks):
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
        mapper = forced
        reasons.append(f"type {forced} given by the user")
    plan = PLANS.get(mapper)
    if plan is None:
        raise HilbridgeError(
            f"the dumper has no plan for mapper {mapper!r}", hint="see hilbridge/dumper/detect.py"
        )
    size, regions = plan(adapter, banks, reasons)
    if size not in registry().get(mapper).sizes:
        raise HilbridgeError(
            f"the probes give a {size}-byte {mapper} cartridge, a size no {mapper} image has",
            hint="clean the contacts and dump again, or give --type",
        )
    return Detection(mapper, size, regions, reasons, fingerprint)
