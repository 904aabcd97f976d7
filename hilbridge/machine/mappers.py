"""The mapper registry: every fact about a cartridge type, from one table (`mappers.tsv`).

The emulator, the link codes, the simulated adapter, the cartridge list, the dumper, the oracle and
the firmware generator all read their mapper facts from here, so a mapper is added by one row of
`mappers.tsv` plus its banking rule in `cartridge.py` (docs/emulator.md "Adding a mapper"). Code
asks `registry()` at the time it needs a fact; tests swap in another registry with `use_registry`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources

from hilbridge.errors import HilbridgeError, SourceLocation

REGISTRY_FILE = "mappers.tsv"
NONE = "-"
EVERY_OTHER_SIZE = "*"
HIGH_WINDOW_SHIFT = {"mirror_800": 0x400, "mirror_400": 0x800, "linear": 0}
"""How far below itself each `high_window` maps CPU 0C00h-0FFFh."""
HIGH_WINDOWS = tuple(HIGH_WINDOW_SHIFT)
WRAPS = ("mask", "modulo")
DATA_AREAS = ("none", "p11_p2_page")
COLUMNS = (
    "name",
    "protocol_id",
    "mame_slot",
    "size_rule",
    "detect",
    "sizes",
    "bank_select",
    "bank_size",
    "high_window",
    "program_offset",
    "wrap",
    "data_area",
    "layout",
    "note",
)
EMULATION_COLUMNS = COLUMNS[COLUMNS.index("sizes") : COLUMNS.index("note")]

Layouts = dict[int, tuple[tuple[int, ...], int]]  # image size → (copy offsets, bank space size)


@dataclass(frozen=True, slots=True)
class Mapper:
    """One row of the registry. `bank_select` is "" for a type that is listed but not emulated.

    `bank_select` names a banking rule (cartridge.py `BANKING_RULES`); the registry does not check
    the name, so a new rule needs no change here: loading a cartridge of it does.
    """

    name: str
    protocol_id: int | None  # UPLOAD_BEGIN / EMULATION id; None: the adapter cannot emulate it
    mame_slot: str | None  # the MAME 0.251 slot type the oracle checks this mapper with
    size_rule: tuple[int, ...]  # sizes an unlisted image of which gets this mapper
    every_other_size: bool  # `*`: also every size no other row claims
    detectable: bool
    sizes: tuple[int, ...]
    bank_select: str
    bank_size: int
    high_window: str
    program_offset: int
    wrap: str
    data_area: str
    layouts: Layouts = field(default_factory=dict)
    note: str = ""

    @property
    def emulated(self) -> bool:
        return bool(self.bank_select)

    def rules(self) -> tuple[tuple[str, str], ...]:
        """(column, value) of the four rule columns, for a consumer that implements a subset."""
        return (
            ("bank_select", self.bank_select),
            ("high_window", self.high_window),
            ("wrap", self.wrap),
            ("data_area", self.data_area),
        )

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


@dataclass(frozen=True)
class Registry:
    """All mappers, in the table's order, and the questions every consumer asks of them."""

    mappers: dict[str, Mapper]
    source: str = REGISTRY_FILE

    def get(self, name: str) -> Mapper:
        """The mapper called `name`; an unknown name is a `HilbridgeError` that lists the known ones."""
        mapper = self.mappers.get(name)
        if mapper is None:
            raise HilbridgeError(f"unknown mapper {name!r}", hint="mappers: " + ", ".join(self.mappers))
        return mapper

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.mappers)

    @property
    def slot_types(self) -> tuple[str, ...]:
        """The cartridge types of MAME's software list (its `slot` feature): every row but the ones
        that model another slot's MAME behaviour (o2_rom_mame0251)."""
        return tuple(name for name, m in self.mappers.items() if m.mame_slot in (None, name))

    @property
    def emulated(self) -> dict[str, Mapper]:
        return {name: m for name, m in self.mappers.items() if m.emulated}

    @property
    def detectable(self) -> tuple[str, ...]:
        return tuple(name for name, m in self.mappers.items() if m.detectable)

    @property
    def protocol_ids(self) -> dict[str, int]:
        """Mapper name → link protocol id, for the mappers an adapter can emulate."""
        return {name: m.protocol_id for name, m in self.mappers.items() if m.protocol_id is not None}

    def by_protocol_id(self, protocol_id: int) -> Mapper | None:
        return next((m for m in self.mappers.values() if m.protocol_id == protocol_id), None)

    @property
    def mame_slots(self) -> tuple[str, ...]:
        """The MAME slot types the oracle can run, in table order."""
        return tuple(m.mame_slot for m in self.mappers.values() if m.mame_slot is not None)

    def for_mame_slot(self, slot: str) -> Mapper | None:
        """Our mapper that behaves as MAME 0.251's `slot` (o2_rom: o2_rom_mame0251)."""
        return next((m for m in self.mappers.values() if m.mame_slot == slot), None)

    @property
    def image_sizes(self) -> tuple[int, ...]:
        """Every image size some emulated mapper takes: what a cartridge image can be."""
        return tuple(sorted({size for m in self.mappers.values() for size in m.sizes}))

    @property
    def max_image_size(self) -> int:
        return max(self.image_sizes)

    def for_size(self, size: int) -> Mapper:
        """The mapper of an image the cartridge list does not know, by its size as MAME 0.251 chooses.

        The one place of the size rule (the `size_rule` column). A size no mapper takes is refused:
        such a file is not a cartridge image.
        """
        if size <= 0:
            raise HilbridgeError("an empty cartridge image has no mapper")
        sizes = self.image_sizes
        if size not in sizes:
            raise HilbridgeError(
                f"not a cartridge image: {size} bytes is no cartridge's size",
                hint="cartridge images are " + ", ".join(str(s) for s in sizes) + " bytes",
            )
        for mapper in self.mappers.values():
            if size in mapper.size_rule:
                return mapper
        fallback = next((m for m in self.mappers.values() if m.every_other_size), None)
        if fallback is None:
            raise HilbridgeError(f"no mapper is chosen for a {size}-byte image", hint=f"see {self.source}")
        return fallback


def _ints(text: str) -> tuple[int, ...]:
    return () if text == NONE else tuple(int(item) for item in text.split(","))


def _parse_layouts(text: str) -> Layouts:
    """`12288@0+4096/16384;...` → {12288: ((0, 4096), 16384)}; `-` → {}."""
    layouts: Layouts = {}
    for item in filter(None, text.replace(NONE, "").split(";")):
        size, _, rest = item.partition("@")
        offsets, _, space = rest.partition("/")
        layouts[int(size)] = (tuple(int(offset) for offset in offsets.split("+")), int(space))
    return layouts


def _row(values: dict[str, str]) -> Mapper:
    emulated = values["bank_select"] != NONE
    if not emulated and any(values[column] != NONE for column in EMULATION_COLUMNS):
        raise ValueError("a row that is not emulated (bank_select -) has - in every emulation column")
    if emulated and not values["bank_select"].isidentifier():
        raise ValueError(f"bank_select {values['bank_select']!r} is not a banking rule's name")
    for column, allowed in (
        ("high_window", HIGH_WINDOWS),
        ("wrap", WRAPS),
        ("data_area", DATA_AREAS),
    ):
        if emulated and values[column] not in allowed:
            raise ValueError(f"unknown {column} {values[column]!r}; known: {', '.join(allowed)}")
    if values["detect"] not in ("yes", "no"):
        raise ValueError(f"detect is yes or no, not {values['detect']!r}")
    rule = values["size_rule"]
    mapper = Mapper(
        name=values["name"],
        protocol_id=None if values["protocol_id"] == NONE else int(values["protocol_id"]),
        mame_slot=None if values["mame_slot"] == NONE else values["mame_slot"],
        size_rule=() if rule == EVERY_OTHER_SIZE else _ints(rule),
        every_other_size=rule == EVERY_OTHER_SIZE,
        detectable=values["detect"] == "yes",
        sizes=_ints(values["sizes"]),
        bank_select=values["bank_select"] if emulated else "",
        bank_size=int(values["bank_size"]) if emulated else 0,
        high_window=values["high_window"] if emulated else "",
        program_offset=int(values["program_offset"]) if emulated else 0,
        wrap=values["wrap"] if emulated else "",
        data_area=values["data_area"] if emulated else "",
        layouts=_parse_layouts(values["layout"]),
        note=values["note"],
    )
    claimed = set(mapper.size_rule) | set(mapper.layouts)
    if not claimed <= set(mapper.sizes):
        raise ValueError("size_rule and layout sizes must be sizes of the mapper")
    if not emulated and (mapper.protocol_id is not None or mapper.mame_slot or mapper.detectable):
        raise ValueError("a mapper that is not emulated has no protocol id, MAME slot or detection")
    if rule not in (NONE, EVERY_OTHER_SIZE) and not emulated:
        raise ValueError("a mapper that is not emulated is never chosen by size")
    return mapper


def _check_unique(mappers: list[Mapper]) -> None:
    """Names, protocol ids, MAME slots and size-rule sizes each name one mapper; one row may say `*`."""
    for what, values in (
        ("name", [m.name for m in mappers]),
        ("protocol_id", [m.protocol_id for m in mappers if m.protocol_id is not None]),
        ("mame_slot", [m.mame_slot for m in mappers if m.mame_slot is not None]),
        ("size_rule size", [size for m in mappers for size in m.size_rule]),
    ):
        repeated = sorted({str(value) for value in values if values.count(value) > 1})
        if repeated:
            raise ValueError(f"{what} appears more than once: {', '.join(repeated)}")
    every_other = [m.name for m in mappers if m.every_other_size]
    if len(every_other) > 1:
        raise ValueError(f"size_rule * appears more than once: {', '.join(every_other)}")


def parse_registry(text: str, source: str = REGISTRY_FILE) -> Registry:
    """The registry in `text` (TSV with `#` comments); a malformed row is a `HilbridgeError` at file:line."""
    header: list[str] | None = None
    mappers: list[Mapper] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        where = SourceLocation(source, number)
        fields = line.split("\t")
        if header is None:
            header = fields
            if tuple(header) != COLUMNS:
                raise HilbridgeError("the header must be: " + " ".join(COLUMNS), where)
            continue
        try:
            mappers.append(_row(dict(zip(header, fields, strict=True))))
        except ValueError as error:
            raise HilbridgeError(f"mapper row: {error}", where) from None
    try:
        _check_unique(mappers)
    except ValueError as error:
        raise HilbridgeError(str(error), SourceLocation(source)) from None
    if not any(m.emulated for m in mappers):
        raise HilbridgeError("the registry has no emulated mapper", SourceLocation(source))
    return Registry({m.name: m for m in mappers}, source)


def _load_default() -> Registry:
    text = resources.files(__package__).joinpath(REGISTRY_FILE).read_text(encoding="utf-8")
    return parse_registry(text, f"hilbridge/machine/{REGISTRY_FILE}")


DEFAULT_REGISTRY: Registry = _load_default()
_active: list[Registry] = [DEFAULT_REGISTRY]


def registry() -> Registry:
    """The registry in use: the package's `mappers.tsv`, or one a test installed with `use_registry`."""
    return _active[-1]


@contextmanager
def use_registry(replacement: Registry) -> Iterator[Registry]:
    """Run a block with `replacement` as the registry every consumer reads (tests of a new row)."""
    _active.append(replacement)
    depth = len(_active)
    try:
        yield replacement
    finally:
        del _active[depth - 1 :]  # by position: registries that are equal are still different entries
