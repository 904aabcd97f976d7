"""The console BIOS (the 8048's internal 1 KB ROM at 000h-3FFh): the user's file or our boot BIOS.

The real BIOS is copyrighted, so by default the console runs `bios/boot.bin`, built from our own
`bios/boot.asm` with our assembler (reset → 0400h, /INT → 0402h, timer → 0404h). A user-supplied
image is checked against the known dumps in `bios/bios_hashes.tsv`; an unknown image still runs,
with an `UnknownBiosWarning`.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from hilbridge.errors import HilbridgeError, HilbridgeWarning, SourceLocation

BIOS_SIZE = 1024
BOOT_SOURCE = "boot.asm"
BOOT_IMAGE = "boot.bin"


class UnknownBiosWarning(HilbridgeWarning):
    """A BIOS image whose SHA-1 is not one of the known console dumps."""


@dataclass(frozen=True, slots=True)
class KnownBios:
    machine: str
    file: str
    sha1: str


@dataclass(frozen=True, slots=True)
class Bios:
    image: bytes
    name: str
    known: KnownBios | None  # None: our boot BIOS or an unknown image


def _bios_dir():
    return resources.files(__package__).joinpath("bios")


def known_bioses() -> tuple[KnownBios, ...]:
    text = _bios_dir().joinpath("bios_hashes.tsv").read_text(encoding="utf-8")
    lines = text.splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"), strict=False)) for line in lines[1:] if line]
    return tuple(KnownBios(row["machine"], row["file"], row["sha1"]) for row in rows)


def boot_source() -> str:
    return _bios_dir().joinpath(BOOT_SOURCE).read_text(encoding="utf-8")


def build_boot_bios() -> bytes:
    """Assemble `boot.asm` with our assembler, gaps FFh as an erased EPROM (what `boot.bin` holds)."""
    from hilbridge.toolchain.assembler import assemble_text

    result = assemble_text(boot_source(), name=BOOT_SOURCE)
    image = bytearray(b"\xff" * BIOS_SIZE)
    image[result.origin : result.origin + len(result.image)] = result.image
    return bytes(image)


def boot_bios() -> Bios:
    image = _bios_dir().joinpath(BOOT_IMAGE).read_bytes()
    return Bios(image=image, name="hilbridge boot BIOS", known=None)


def check_bios(image: bytes, name: str = "<bios>") -> Bios:
    """Validate a user BIOS image: wrong size is an error, an unknown checksum a warning."""
    if len(image) != BIOS_SIZE:
        raise HilbridgeError(
            f"a BIOS image must be {BIOS_SIZE} bytes, this one is {len(image)} bytes", SourceLocation(name)
        )
    digest = hashlib.sha1(image).hexdigest()
    for known in known_bioses():
        if known.sha1 == digest:
            return Bios(image=bytes(image), name=name, known=known)
    warnings.warn(
        f"{name}: unknown BIOS image (SHA-1 {digest}); running it anyway", UnknownBiosWarning, stacklevel=2
    )
    return Bios(image=bytes(image), name=name, known=None)


def read_bios(path: str | Path) -> Bios:
    try:
        image = Path(path).read_bytes()
    except OSError as error:
        where = SourceLocation(str(path))
        raise HilbridgeError(f"cannot read the BIOS: {error.strerror}", where) from None
    return check_bios(image, name=str(path))
