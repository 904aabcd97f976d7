"""Cartridges as data-driven mapper types (console.md §7): program banks, bank latches, data ROMs.

Every mapper is one row of `cartridge_types.tsv`; the code below only knows a handful of rules
(how a bank is selected, what CPU 0C00h-0FFFh reaches, where a MOVX data ROM sits). A cartridge
sees only P1 AND 13h (P10, P11, P14) and P2 AND 0Fh (A8-A11), as on the real connector.

The CPU does not call `fetch` per instruction: it reads a 3 KB `program_view` (CPU 0400h-0FFFh)
that the console refreshes whenever P1 or a bank latch changes. `fetch` is for tests and adapters.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from hilbridge.errors import HilbridgeError, SourceLocation

CART_P1_MASK = 0x13  # P10, P11, P14 reach the slot
CART_P2_MASK = 0x0F  # P20-P23 = A8-A11
PROGRAM_START = 0x400
PROGRAM_END = 0x1000
VIEW_SIZE = PROGRAM_END - PROGRAM_START
NOT_DRIVEN = 0xFF


@dataclass(frozen=True, slots=True)
class MapperType:
    """One row of cartridge_types.tsv."""

    name: str
    sizes: tuple[int, ...]
    bank_size: int
    bank_select: str
    high_window: str
    program_offset: int
    wrap: str
    data_area: str
    layouts: dict[int, tuple[tuple[int, ...], int]]  # image size → (copy offsets, bank space size)
    note: str

    def bank_space(self, image: bytes) -> bytes:
        """What the banks address: the image, or its copies where the `layout` column places them."""
        layout = self.layouts.get(len(image))
        if layout is None:
            return image
        offsets, space_size = layout
        space = bytearray(space_size)
        for offset in offsets:
            space[offset : offset + len(image)] = image
        return bytes(space)


BANK_RULES = ("p1_low_bits", "latch_p10", "none")
HIGH_WINDOWS = ("mirror_800", "mirror_400", "linear")
DATA_AREAS = ("none", "p11_p2_page")


def _parse_layouts(text: str) -> dict[int, tuple[tuple[int, ...], int]]:
    """`12288@0+4096/16384;...` → {12288: ((0, 4096), 16384)}; `-` → {}."""
    layouts: dict[int, tuple[tuple[int, ...], int]] = {}
    for item in filter(None, text.replace("-", "").split(";")):
        size, _, rest = item.partition("@")
        offsets, _, space = rest.partition("/")
        layouts[int(size)] = (tuple(int(offset) for offset in offsets.split("+")), int(space))
    return layouts


def _load_types() -> dict[str, MapperType]:
    text = resources.files(__package__).joinpath("cartridge_types.tsv").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line and not line.startswith("#")]
    header = rows[0].split("\t")
    types: dict[str, MapperType] = {}
    for line in rows[1:]:
        row = dict(zip(header, line.split("\t"), strict=True))
        mapper = MapperType(
            name=row["mapper"],
            sizes=tuple(int(size) for size in row["sizes"].split(",")),
            bank_size=int(row["bank_size"]),
            bank_select=row["bank_select"],
            high_window=row["high_window"],
            program_offset=int(row["program_offset"]),
            wrap=row["wrap"],
            data_area=row["data_area"],
            layouts=_parse_layouts(row["layout"]),
            note=row["note"],
        )
        if (
            mapper.bank_select not in BANK_RULES
            or mapper.high_window not in HIGH_WINDOWS
            or mapper.data_area not in DATA_AREAS
            or mapper.wrap not in ("mask", "modulo")
        ):
            raise RuntimeError(f"cartridge_types.tsv: unknown rule in row {mapper.name}")
        types[mapper.name] = mapper
    return types


MAPPER_TYPES: dict[str, MapperType] = _load_types()
MAX_IMAGE_SIZE = max(size for mapper in MAPPER_TYPES.values() for size in mapper.sizes)


class Cartridge:
    """A cartridge image behind one mapper type; holds the mapper's latch state."""

    def __init__(self, image: bytes, mapper: MapperType, name: str = "<image>") -> None:
        self.image = bytes(image)
        self.mapper = mapper.name
        self.type = mapper
        self.name = name
        self.latch = 0  # o2_rally bank latch (MAME resets it to 0)
        self._space = mapper.bank_space(self.image)  # what the banks address (the image, or its layout)
        self._size = len(self._space)
        self._banks = max(1, self._size // mapper.bank_size)
        self._views: dict[int, bytes] = {}
        # what the console may leave out of its MOVX path for this mapper
        self.drives_reads = mapper.data_area != "none"  # `read` can return other than FFh
        self.takes_writes = mapper.bank_select == "latch_p10"  # `write` can change the bank

    # -- bank selection ---------------------------------------------------------------------------
    def bank(self, p1: int) -> int:
        """The program bank selected by P1 (and the latch), from the mapper's bank rule."""
        rule = self.type.bank_select
        if rule == "p1_low_bits":
            return p1 & 0x03  # P10, P11; the image wrap folds it onto the banks that exist
        if rule == "latch_p10":
            selected = 0xFF if p1 & 0x01 else self.latch
            return selected & (self._banks - 1)
        return 0

    def _offset(self, address: int, bank: int) -> int:
        address &= 0xFFF
        window = self.type.high_window
        if address >= 0xC00 and window == "mirror_800":
            address -= 0x400
        elif address >= 0xC00 and window == "mirror_400":
            address -= 0x800
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
        if self.type.data_area == "p11_p2_page" and p1 & 0x02:
            return self._space[(((p2 & CART_P2_MASK) << 8) | (address & 0xFF)) & (self._size - 1)]
        return NOT_DRIVEN

    def write(self, address: int, value: int, p1: int, p2: int) -> None:
        """MOVX write seen by the slot (the console only passes it on while P16 = 0)."""
        if self.type.bank_select == "latch_p10" and address & 0x80 and not p1 & 0x10:
            self.latch = value & 0xFF

    def program_view(self, p1: int) -> bytes:
        """CPU 0400h-0FFFh as one 3 KB block for the bank P1 (and the latch) select; cached."""
        bank = self.bank(p1 & CART_P1_MASK)
        view = self._views.get(bank)
        if view is None:
            space = self._space
            view = bytes(space[self._offset(address, bank)] for address in range(PROGRAM_START, PROGRAM_END))
            self._views[bank] = view
        return view

    def state(self) -> dict[str, int]:
        return {"latch": self.latch}

    def load_state(self, state: dict[str, int]) -> None:
        self.latch = int(state["latch"]) & 0xFF


def choose_mapper(image: bytes, mapper: str | None = None) -> str:
    """Explicit choice > the cartridge list (by checksum) > the size rule MAME 0.251 uses."""
    if mapper is not None:
        return mapper
    try:
        from hilbridge import cartdb
    except ImportError:  # the database is optional for the emulator core
        cartdb = None  # type: ignore[assignment]
    if cartdb is not None:
        listed = cartdb.mapper_for(image)
        if listed is not None:
            return listed
        return cartdb.mapper_from_size(len(image))
    return "o2_rally" if len(image) == 16 * 1024 else "o2_rom"


def load_cartridge(image: bytes, mapper: str | None = None, *, name: str = "<image>") -> Cartridge:
    """A `Cartridge` for `image`; a bad size or an unknown mapper is a `HilbridgeError`."""
    where = SourceLocation(name)
    if not image:
        raise HilbridgeError("the cartridge image is empty", where)
    if len(image) > MAX_IMAGE_SIZE:
        raise HilbridgeError(
            f"the cartridge image is {len(image)} bytes; no supported mapper is larger than "
            f"{MAX_IMAGE_SIZE} bytes",
            where,
        )
    try:
        chosen = choose_mapper(image, mapper)
    except HilbridgeError as error:
        raise HilbridgeError(error.message, where, error.hint) from None
    mapper_type = MAPPER_TYPES.get(chosen)
    if mapper_type is None:
        raise HilbridgeError(
            f"mapper {chosen!r} is not emulated",
            where,
            hint="supported: " + ", ".join(sorted(MAPPER_TYPES)),
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
