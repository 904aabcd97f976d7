"""The console BIOS (the 8048's internal 1 KB ROM at 000h-3FFh): the user's file or one of ours.

The real BIOS is copyrighted, so by default the console runs our open BIOS `bios/open.bin`, built
from `bios/open.asm` with our assembler: the documented entry points and their contracts
(`bios/open_entry_points.tsv`, docs/bios.md). The 16-line stub `bios/boot.asm` (reset → 0400h,
/INT → 0402h, timer → 0404h, no routines) stays available by the name "boot". A user-supplied image
is checked against the known dumps in `bios/bios_hashes.tsv`; an unknown image still runs, with an
`UnknownBiosWarning`.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from hilbridge.errors import HilbridgeError, HilbridgeWarning, SourceLocation

BIOS_SIZE = 1024
BOOT_SOURCE = "boot.asm"
BOOT_IMAGE = "boot.bin"
ENTRY_POINTS = "open_entry_points.tsv"


@dataclass(frozen=True, slots=True)
class BuiltinBios:
    """One of our own BIOS images: its source, its committed image and its display name."""

    source: str
    image: str
    title: str


BUILTIN_BIOSES = {
    "open": BuiltinBios("open.asm", "open.bin", "hilbridge open BIOS"),
    "boot": BuiltinBios(BOOT_SOURCE, BOOT_IMAGE, "hilbridge boot BIOS"),
}
DEFAULT_BIOS = "open"


class UnknownBiosWarning(HilbridgeWarning):
    """A BIOS image whose SHA-1 is not one of the known console dumps."""


class UnimplementedBiosRoutineWarning(UserWarning):
    """The cartridge ran into an entry point that the open BIOS does not implement (it stops there)."""


@dataclass(frozen=True, slots=True)
class KnownBios:
    machine: str
    file: str
    sha1: str


@dataclass(frozen=True, slots=True)
class Bios:
    image: bytes
    name: str
    known: KnownBios | None  # None: one of our BIOSes or an unknown image
    traps: tuple[tuple[int, str], ...] = ()  # (address, routine) where the BIOS holds `jmp $`


@dataclass(frozen=True, slots=True)
class EntryPoint:
    """One row of `open_entry_points.tsv`: an entry point and what the open BIOS does there."""

    address: int
    name: str
    implemented: str  # yes | trap | inside | internal
    inputs: str
    outputs: str
    clobbers: str
    source: str
    notes: str


def _bios_dir():
    return resources.files(__package__).joinpath("bios")


def known_bioses() -> tuple[KnownBios, ...]:
    text = _bios_dir().joinpath("bios_hashes.tsv").read_text(encoding="utf-8")
    lines = text.splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"), strict=False)) for line in lines[1:] if line]
    return tuple(KnownBios(row["machine"], row["file"], row["sha1"]) for row in rows)


def entry_points() -> tuple[EntryPoint, ...]:
    """Every entry point of the console BIOS with the open BIOS's contract for it."""
    text = _bios_dir().joinpath(ENTRY_POINTS).read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    header, body = rows[0], rows[1:]
    entries = []
    for cells in body:
        row = dict(zip(header, cells, strict=True))
        address = int(row.pop("address"), 16)
        entries.append(EntryPoint(address=address, **row))
    return tuple(entries)


def bios_source(name: str = BOOT_SOURCE) -> str:
    return _bios_dir().joinpath(name).read_text(encoding="utf-8")


def boot_source() -> str:
    return bios_source(BOOT_SOURCE)


def build_bios(name: str) -> bytes:
    """Assemble our BIOS `name` ("open", "boot") with our assembler, gaps FFh as an erased EPROM
    (what its committed image holds)."""
    from hilbridge.toolchain.assembler import assemble_text

    source = BUILTIN_BIOSES[name].source
    result = assemble_text(bios_source(source), name=source)
    image = bytearray(b"\xff" * BIOS_SIZE)
    image[result.origin : result.origin + len(result.image)] = result.image
    return bytes(image)


def build_boot_bios() -> bytes:
    return build_bios("boot")


@cache
def builtin_bios(name: str) -> Bios:
    """Our BIOS `name` from its committed image; the open BIOS carries its trap addresses. Read once
    per process (a `Bios` is frozen): every console without a BIOS of its own starts on one."""
    if name not in BUILTIN_BIOSES:
        raise HilbridgeError(f"unknown built-in BIOS {name!r}; choose one of {', '.join(BUILTIN_BIOSES)}")
    builtin = BUILTIN_BIOSES[name]
    image = _bios_dir().joinpath(builtin.image).read_bytes()
    traps = ()
    if name == "open":
        traps = tuple((entry.address, entry.name) for entry in entry_points() if entry.implemented == "trap")
    return Bios(image=image, name=builtin.title, known=None, traps=traps)


def boot_bios() -> Bios:
    return builtin_bios("boot")


def open_bios() -> Bios:
    return builtin_bios("open")


def default_bios() -> Bios:
    return builtin_bios(DEFAULT_BIOS)


def check_bios(image: bytes, name: str = "<bios>") -> Bios:
    """Validate a user BIOS image: wrong size is an error, an unknown checksum a warning."""
    if len(image) != BIOS_SIZE:
        raise HilbridgeError(
            f"a BIOS image must be {BIOS_SIZE} bytes, this one is {len(image)} bytes", SourceLocation(name)
        )
    for builtin in BUILTIN_BIOSES:
        ours = builtin_bios(builtin)
        if ours.image == image:
            return ours
    digest = hashlib.sha1(image).hexdigest()
    for known in known_bioses():
        if known.sha1 == digest:
            return Bios(image=bytes(image), name=name, known=known)
    warnings.warn(
        f"{name}: unknown BIOS image (SHA-1 {digest}); running it anyway", UnknownBiosWarning, stacklevel=2
    )
    return Bios(image=bytes(image), name=name, known=None)


def read_bios(path: str | Path) -> Bios:
    """A BIOS image file, or one of ours by its name ("open", "boot")."""
    if str(path) in BUILTIN_BIOSES:
        return builtin_bios(str(path))
    try:
        image = Path(path).read_bytes()
    except OSError as error:
        where = SourceLocation(str(path))
        raise HilbridgeError(f"cannot read the BIOS: {error.strerror}", where) from None
    return check_bios(image, name=str(path))
