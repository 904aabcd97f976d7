"""Cartridges: an image behind a mapper of the registry (`mappers.py`), and the mappers' banking rules.

A mapper's facts (sizes, bank size, what CPU 0C00h-0FFFh reaches, where a MOVX data ROM sits) are
one row of `mappers.tsv`; how its bank is chosen is code: one `BankingRule` class per `bank_select`
name of that table, found by the name in `BANKING_RULES` (docs/emulator.md "Adding a mapper"). A
cartridge sees only P1 AND 13h (P10, P11, P14) and P2 AND 0Fh (A8-A11), as on the real connector.

The CPU does not call `fetch` per instruction: it reads a 3 KB `program_view` (CPU 0400h-0FFFh)
that the console refreshes whenever P1 or a bank latch changes. `fetch` is for tests and adapters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import ClassVar, TypeVar

import numpy as np

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.machine.mappers import HIGH_WINDOW_SHIFT, Mapper, registry

CART_P1_MASK = 0x13  # P10, P11, P14 reach the slot
CART_P2_MASK = 0x0F  # P20-P23 = A8-A11
PROGRAM_START = 0x400
PROGRAM_END = 0x1000
VIEW_SIZE = PROGRAM_END - PROGRAM_START
NOT_DRIVEN = 0xFF
Addresses = TypeVar("Addresses", int, np.ndarray)
P10, P11, P14 = 0x01, 0x02, 0x10
LATCH_ADDRESS_BIT = 0x80  # A7


class BankingRule:
    """How a mapper chooses its program bank from P1 and what MOVX writes do to it (the latch).

    The base rule has one bank and ignores writes; a rule that needs a latch overrides `write`
    and sets `takes_writes`, so the console can leave it out of its MOVX path otherwise.
    """

    takes_writes: ClassVar[bool] = False

    def __init__(self, banks: int) -> None:
        self.banks = banks  # program banks in the bank space (at least 1)
        self.latch = 0  # MAME resets a bank latch to 0

    def bank(self, p1: int) -> int:
        """The bank P1 (only P10, P11, P14 reach the slot) and the latch select."""
        return 0

    def write(self, address: int, value: int, p1: int) -> None:
        """A MOVX write seen by the slot."""


BANKING_RULES: dict[str, type[BankingRule]] = {}
"""`bank_select` name (a column of mappers.tsv) → its rule."""


def banking_rule(name: str) -> Callable[[type[BankingRule]], type[BankingRule]]:
    """Register a `BankingRule` under the `bank_select` name rows of mappers.tsv use."""

    def register(rule: type[BankingRule]) -> type[BankingRule]:
        BANKING_RULES[name] = rule
        return rule

    return register


@banking_rule("none")
class OneBank(BankingRule):
    """One linear program area (o2_4in1)."""


@banking_rule("p1_low_bits")
class P1LowBits(BankingRule):
    """Bank = P10/P11; the image wrap folds it onto the banks that exist. Boots in the last bank."""

    def bank(self, p1: int) -> int:
        return p1 & (P10 | P11)


@banking_rule("latch_p10")
class LatchP10(BankingRule):
    """Videopac+: an 8-bit latch written by MOVX with A7 = 1 while P14 = 0; P10 = 1 forces the last bank."""

    takes_writes = True

    def bank(self, p1: int) -> int:
        selected = 0xFF if p1 & P10 else self.latch
        return selected & (self.banks - 1)

    def write(self, address: int, value: int, p1: int) -> None:
        if address & LATCH_ADDRESS_BIT and not p1 & P14:
            self.latch = value & 0xFF


class _EmulatedMappers(Mapping[str, Mapper]):
    """The emulated mappers of the registry in use, by name (read at each access, not at import)."""

    def __getitem__(self, name: str) -> Mapper:
        return registry().emulated[name]

    def __iter__(self) -> Iterator[str]:
        return iter(registry().emulated)

    def __len__(self) -> int:
        return len(registry().emulated)


MAPPER_TYPES: Mapping[str, Mapper] = _EmulatedMappers()


class Cartridge:
    """A cartridge image behind one mapper; its banking rule holds the mapper's latch state."""

    def __init__(self, image: bytes, mapper: Mapper, name: str = "<image>") -> None:
        rule = BANKING_RULES.get(mapper.bank_select)
        if rule is None:
            raise HilbridgeError(
                f"mapper {mapper.name!r} has no banking rule {mapper.bank_select!r}",
                SourceLocation(name),
                hint="banking rules: " + ", ".join(BANKING_RULES),
            )
        self.image = bytes(image)
        self.mapper = mapper.name
        self.type = mapper
        self.name = name
        self._space = mapper.bank_space(self.image)  # what the banks address (the image, or its layout)
        self._size = len(self._space)
        self.banking = rule(max(1, self._size // mapper.bank_size))
        self._views: dict[int, bytes] = {}
        # what the console may leave out of its MOVX path for this mapper
        self.drives_reads = mapper.data_area != "none"  # `read` can return other than FFh
        self.takes_writes = rule.takes_writes  # `write` can change the bank

    @property
    def latch(self) -> int:
        """The bank latch (0 for a mapper without one)."""
        return self.banking.latch

    @latch.setter
    def latch(self, value: int) -> None:
        self.banking.latch = value

    # -- bank selection ---------------------------------------------------------------------------
    def bank(self, p1: int) -> int:
        """The program bank selected by P1 (and the latch), from the mapper's banking rule."""
        return self.banking.bank(p1 & CART_P1_MASK)

    def _offset(self, address: Addresses, bank: int) -> Addresses:
        """Where CPU `address` (an int, or an array of them: `program_view`) lies in the bank space."""
        address = address & 0xFFF
        address = address - HIGH_WINDOW_SHIFT[self.type.high_window] * (address >= 0xC00)
        offset = bank * self.type.bank_size + self.type.program_offset + address - PROGRAM_START
        if self.type.wrap == "mask":
            return offset & (self._size - 1)
        return offset % self._size

    # -- the slot interface -----------------------------------------------------------------------
    def fetch(self, address: int, p1: int, p2: int) -> int:
        """Program byte at CPU `address` (0400h-0FFFh) with the bank P1 selects."""
        return self._space[self._offset(address, self.bank(p1 & CART_P1_MASK))]

    def read(self, address: int, p1: int, p2: int) -> int:
        """MOVX read seen by the slot: the data ROM where the mapper has one, else FFh (not driving)."""
        if self.type.data_area == "p11_p2_page" and p1 & P11:
            return self._space[(((p2 & CART_P2_MASK) << 8) | (address & 0xFF)) & (self._size - 1)]
        return NOT_DRIVEN

    def write(self, address: int, value: int, p1: int, p2: int) -> None:
        """MOVX write seen by the slot (the console only passes it on while P16 = 0)."""
        self.banking.write(address, value, p1 & CART_P1_MASK)

    def program_view(self, p1: int) -> bytes:
        """CPU 0400h-0FFFh as one 3 KB block for the bank P1 (and the latch) select; cached."""
        bank = self.bank(p1 & CART_P1_MASK)
        view = self._views.get(bank)
        if view is None:
            offsets = self._offset(np.arange(PROGRAM_START, PROGRAM_END), bank)
            view = np.frombuffer(self._space, np.uint8)[offsets].tobytes()
            self._views[bank] = view
        return view

    def state(self) -> dict[str, int]:
        return {"latch": self.latch}

    def load_state(self, state: dict[str, int]) -> None:
        self.latch = int(state["latch"]) & 0xFF


def choose_mapper(image: bytes, mapper: str | None = None) -> str:
    """Explicit choice > the cartridge list (by checksum) > the registry's size rule (MAME 0.251's)."""
    if mapper is not None:
        return mapper
    try:
        from hilbridge import cartdb
    except ImportError:  # the database is optional for the emulator core
        cartdb = None  # type: ignore[assignment]
    listed = cartdb.mapper_for(image) if cartdb is not None else None
    return listed if listed is not None else registry().for_size(len(image)).name


def load_cartridge(image: bytes, mapper: str | None = None, *, name: str = "<image>") -> Cartridge:
    """A `Cartridge` for `image`; a bad size or an unknown mapper is a `HilbridgeError`."""
    where = SourceLocation(name)
    mappers = registry()
    if not image:
        raise HilbridgeError("the cartridge image is empty", where)
    if len(image) > mappers.max_image_size:
        raise HilbridgeError(
            f"the cartridge image is {len(image)} bytes; no supported mapper is larger than "
            f"{mappers.max_image_size} bytes",
            where,
        )
    try:
        chosen = choose_mapper(image, mapper)
    except HilbridgeError as error:
        raise HilbridgeError(error.message, where, error.hint) from None
    mapper_type = mappers.emulated.get(chosen)
    if mapper_type is None:
        raise HilbridgeError(
            f"mapper {chosen!r} is not emulated",
            where,
            hint="supported: " + ", ".join(sorted(mappers.emulated)),
        )
    if len(image) not in mapper_type.sizes:
        sizes = ", ".join(str(size) for size in mapper_type.sizes)
        raise HilbridgeError(
            f"a {chosen} cartridge must be {sizes} bytes, this image is {len(image)} bytes", where
        )
    return Cartridge(image, mapper_type, name=name)


def read_cartridge(path: str | Path, mapper: str | None = None) -> Cartridge:
    """Load a cartridge file; an unreadable file is a `HilbridgeError`."""
    try:
        image = Path(path).read_bytes()
    except OSError as error:
        where = SourceLocation(str(path))
        raise HilbridgeError(f"cannot read the cartridge: {error.strerror}", where) from None
    return load_cartridge(image, mapper, name=str(path))
