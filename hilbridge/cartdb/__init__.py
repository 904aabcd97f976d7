"""The Videopac / Odyssey² cartridge database: which game an image is, and which mapper it needs.

The data is `videopac.tsv`, converted from MAME's software list, and `hilbridge.tsv`, hilbridge's own
images in the same columns (the simulated adapter's demo cartridge). The emulator asks it for the mapper
of a cartridge image, the dumper for the name and the checksums of a dump.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from hilbridge.errors import HilbridgeError
from hilbridge.machine.mappers import DEFAULT_REGISTRY, registry

MAPPERS: tuple[str, ...] = DEFAULT_REGISTRY.slot_types
"""MAME's cartridge slot types, which are also our mapper names (the mapper registry's rows)."""

PROGRAM_AREA = "rom"
"""The data area holding the program ROM the 8048 sees; `exrom` and `voice` belong to other chips."""

RELOAD = "reload"


@dataclass(frozen=True, slots=True)
class RomFile:
    """One ROM file of an entry, loaded at `offset` bytes into its data area."""

    dataarea: str
    dataarea_size: int
    name: str
    offset: int
    size: int
    crc32: str
    sha1: str
    loadflag: str

    @property
    def is_reload(self) -> bool:
        """A reload repeats the previous file at another offset; it is not a file of its own."""
        return self.loadflag == RELOAD

    @property
    def has_data(self) -> bool:
        return bool(self.crc32) and not self.is_reload


@dataclass(frozen=True, slots=True)
class Cartridge:
    """One software-list entry: a game (or module) and the ROM files that make it up."""

    name: str
    description: str
    year: str
    publisher: str
    serial: str
    mapper: str
    b_pin: bool
    cloneof: str
    roms: tuple[RomFile, ...]
    source: str = "videopac.tsv"  # the list it comes from (LISTS)

    @property
    def program_roms(self) -> tuple[RomFile, ...]:
        """The files of the program data area, in load order, without reloads or empty rows."""
        return tuple(rom for rom in self.roms if rom.dataarea == PROGRAM_AREA and rom.has_data)

    @property
    def file_name(self) -> str:
        """A name for a dump of the program ROM: the list's file name, or ``<name>.bin``."""
        roms = self.program_roms
        if len(roms) == 1 and roms[0].name.endswith(".bin"):
            return roms[0].name
        return f"{self.name}.bin"

    @property
    def program_size(self) -> int:
        """Size of a dump of the program ROM files, concatenated in offset order."""
        return sum(rom.size for rom in self.program_roms)


@dataclass(frozen=True, slots=True)
class Match:
    """An entry whose program ROM has the image's CRC32 (and, if `exact`, also its SHA-1)."""

    cartridge: Cartridge
    exact: bool


@dataclass(frozen=True, slots=True)
class Checksums:
    crc32: str
    sha1: str


def checksums(data: bytes) -> Checksums:
    """CRC32 and SHA-1 in the spelling of the software list (lower-case hex, CRC32 8 digits)."""
    return Checksums(crc32=f"{zlib.crc32(data):08x}", sha1=hashlib.sha1(data).hexdigest())


def _parse(text: str, source: str = "videopac.tsv") -> tuple[Cartridge, ...]:
    header: list[str] | None = None
    grouped: dict[str, tuple[dict[str, str], list[RomFile]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if header is None:
            header = fields
            continue
        row = dict(zip(header, fields, strict=True))
        rom = RomFile(
            dataarea=row["dataarea"],
            dataarea_size=int(row["dataarea_size"]),
            name=row["rom_name"],
            offset=int(row["rom_offset"] or 0),
            size=int(row["rom_size"] or 0),
            crc32=row["crc32"],
            sha1=row["sha1"],
            loadflag=row["loadflag"],
        )
        grouped.setdefault(row["name"], (row, []))[1].append(rom)
    return tuple(
        Cartridge(
            name=row["name"],
            description=row["description"],
            year=row["year"],
            publisher=row["publisher"],
            serial=row["serial"],
            mapper=row["slot"],
            b_pin=row["b_pin"] == "1",
            cloneof=row["cloneof"],
            roms=tuple(roms),
            source=source,
        )
        for row, roms in grouped.values()
    )


LISTS = ("videopac.tsv", "hilbridge.tsv")
"""MAME's Videopac list, then hilbridge's own images (the simulated adapter's demo cartridge)."""


@cache
def entries() -> tuple[Cartridge, ...]:
    """Every cartridge of the lists, in the lists' order."""
    folder = resources.files(__package__)
    return tuple(
        entry for name in LISTS for entry in _parse(folder.joinpath(name).read_text(encoding="utf-8"), name)
    )


def by_name(name: str) -> Cartridge:
    """The entry with MAME short name `name` (e.g. ``conquest``); unknown names are a user error."""
    for cartridge in entries():
        if cartridge.name == name:
            return cartridge
    raise HilbridgeError(f"no cartridge named {name!r} in the Videopac list")


def identify(image: bytes) -> list[Match]:
    """Entries whose program ROM is `image`: exact matches (CRC32 and SHA-1) first, then CRC-only.

    A multi-file program area is compared as its files concatenated in offset order, each slice of
    the image against that file's checksums. A CRC-only match means a SHA-1 mismatch: a bad dump or a
    CRC collision, reported so the user sees it.
    """
    exact: list[Match] = []
    crc_only: list[Match] = []
    sums_of: dict[tuple[int, int], Checksums] = {}  # many entries share a file layout
    for cartridge, files in _entries_by_program_size().get(len(image), ()):
        position = 0
        crc_ok = sha_ok = True
        for rom in files:
            sums = sums_of.get((position, rom.size))
            if sums is None:
                sums = sums_of[position, rom.size] = checksums(image[position : position + rom.size])
            crc_ok &= sums.crc32 == rom.crc32
            sha_ok &= sums.sha1 == rom.sha1
            position += rom.size
        if crc_ok and sha_ok:
            exact.append(Match(cartridge, exact=True))
        elif crc_ok:
            crc_only.append(Match(cartridge, exact=False))
    return exact + crc_only


_SizeIndex = dict[int, list[tuple[Cartridge, tuple[RomFile, ...]]]]
_size_index: list[tuple[tuple[Cartridge, ...], _SizeIndex]] = []  # (the entries, their index)


def _entries_by_program_size() -> _SizeIndex:
    """The entries with a program ROM, in the lists' order, by the size of a dump of it, each with its
    files in offset order: a console identifies its cartridge on every start (tests start thousands).
    Made again whenever `entries()` gives other entries (tests give synthetic lists)."""
    listed = entries()
    if _size_index and _size_index[0][0] is listed:
        return _size_index[0][1]
    found: _SizeIndex = {}
    for cartridge in listed:
        roms = cartridge.program_roms
        if roms:
            ordered = tuple(sorted(roms, key=lambda rom: rom.offset))
            found.setdefault(cartridge.program_size, []).append((cartridge, ordered))
    _size_index[:] = [(listed, found)]
    return found


def mapper_for(image: bytes) -> str | None:
    """The mapper the list gives for `image` (by exact checksum), or None for an unknown image."""
    for match in identify(image):
        if match.exact:
            return match.cartridge.mapper
    return None


def cartridge_sizes() -> tuple[int, ...]:
    """Every image size some emulated mapper takes (the mapper registry): what a cartridge image can be."""
    return registry().image_sizes


def mapper_from_size(size: int) -> str:
    """The mapper for an image the list does not know, chosen by its size as MAME 0.251 does.

    The rule is the registry's `size_rule` column: MAME loads a plain 16 KB file as `o2_rally` (the
    Videopac+ bank-latch cart) and everything else, including 12 KB, as `o2_rom`. We follow MAME
    rather than guess `o2_ktaa` for 12 KB, because the emulator is checked against MAME and the only
    12 KB list entry (the KTAA homebrew) is found by checksum anyway. Other mappers cannot be told
    from the size alone. A size no mapper takes is refused: such a file is not a cartridge image.
    """
    return registry().for_size(size).name
