"""The fixture cartridges of fixtures/carts, one per mapper the adapter serves, and the serve
engine's lookup tables built from the reference mapper logic (hilbridge.machine.cartridge)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from hilbridge.machine.cartridge import load_cartridge
from hilbridge.oracle.carts import build_cart, load_manifest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
# (fixture name, mapper) for every mapper of docs/protocol.md's mapper table, o2_rom in all sizes
SERVED = (
    ("cpu_alu", "o2_rom"),
    ("bank_o2rom_4k", "o2_rom"),
    ("bank_o2rom_8k", "o2_rom"),
    ("bank_4in1", "o2_4in1"),
    ("bank_rally", "o2_rally"),
    ("bank_ktaa", "o2_ktaa"),
)
QUICK_SERVED = (("cpu_alu", "o2_rom"), ("bank_rally", "o2_rally"))
"""The mappers the development loop serves (`quick_few`): the plain ROM and the one with a latch."""
SRAM = 0x2000_0000  # the tables start here in the model (aligned to their size)


@cache
def image(name: str) -> bytes:
    spec = next(spec for spec in load_manifest(FIXTURES) if spec.name == name)
    return build_cart(spec)


def latch_states(image: bytes, mapper: str) -> int:
    """How many lookup tables the mapper needs: one per o2_rally latch bank, else one."""
    cart = load_cartridge(image, mapper)
    return len(image) // cart.type.bank_size if cart.type.bank_select == "latch_p10" else 1


def index_bits(image: bytes, mapper: str) -> int:
    """14 (A0-A11, P10, P11) or 13 for the latch mappers, whose tables leave P11 out."""
    return 13 if latch_states(image, mapper) > 1 else 14


def program_for(image: bytes, mapper: str) -> str:
    return "serve_rally" if index_bits(image, mapper) == 13 else "serve"


@cache
def serve_tables(image: bytes, mapper: str) -> tuple[bytes, ...]:
    """table[latch][P11 P10 A11..A0]: the fetch byte for 0400h-0FFFh, the MOVX data ROM byte
    (with P11 = 1, page = A8-A11) below 0400h, FFh where nothing answers. Latch mappers: one table
    per latch bank, indexed by P10 A11..A0."""
    cart = load_cartridge(image, mapper)
    bits = index_bits(image, mapper)
    tables = []
    for latch in range(latch_states(image, mapper)):
        cart.latch = latch
        table = bytearray(1 << bits)
        for index in range(1 << bits):
            address, p1 = index & 0xFFF, index >> 12 & 3
            if address >= 0x400:
                table[index] = cart.fetch(address, p1, 0)
            else:
                table[index] = cart.read(address & 0xFF, p1 | 0x02, address >> 8)
        tables.append(bytes(table))
    return tuple(tables)
