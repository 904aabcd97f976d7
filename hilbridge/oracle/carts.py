"""Our test cartridges: the table that describes them and how an image is built from its source.

The sources and the table (`carts.tsv`) live in `fixtures/carts/` of the source tree. A
multi-bank cart is one source assembled once per bank with the symbol BANK set to the bank's
number, so every bank holds the same code at the same addresses and only the bytes that name the
bank differ: switching banks under the running program then continues at the next instruction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.machine.inputs import NO_INPUT, InputMovie, parse_input_movie
from hilbridge.toolchain.assembler import assemble

MANIFEST = "carts.tsv"
FIELDS = (
    "name", "source", "size", "slot", "bank_size", "origin", "frames", "reads", "pixels", "inputs", "what",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class CartSpec:
    name: str
    source: Path
    size: int
    slot: str  # MAME cartridge type
    bank_size: int
    origin: int  # CPU address of the first byte of each bank
    frames: int
    reads: bool
    pixels: bool
    inputs: InputMovie  # key and joystick changes, by the frame before which they happen
    what: str

    @property
    def banks(self) -> int:
        return self.size // self.bank_size


def load_manifest(directory: Path) -> list[CartSpec]:
    """The carts listed in `directory/carts.tsv`."""
    path = directory / MANIFEST
    specs: list[CartSpec] = []
    header_seen = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        cells = line.split("\t")
        where = SourceLocation(str(path), number, 1)
        if not header_seen:
            if tuple(cells) != FIELDS:
                raise HilbridgeError(f"header must be {' '.join(FIELDS)}", where)
            header_seen = True
            continue
        if len(cells) != len(FIELDS):
            raise HilbridgeError(f"expected {len(FIELDS)} tab-separated cells, found {len(cells)}", where)
        row = dict(zip(FIELDS, cells, strict=True))
        try:
            spec = CartSpec(
                name=row["name"],
                source=directory / row["source"],
                size=int(row["size"]),
                slot=row["slot"],
                bank_size=int(row["bank_size"]),
                origin=int(row["origin"], 16),
                frames=int(row["frames"]),
                reads=row["reads"] == "1",
                pixels=row["pixels"] == "1",
                inputs=NO_INPUT
                if row["inputs"] == "-"
                else parse_input_movie(row["inputs"], f"{path}:{number}"),
                what=row["what"],
            )
        except ValueError as error:
            raise HilbridgeError(f"bad number: {error}", where) from None
        except HilbridgeError as error:
            raise HilbridgeError(error.message, where) from None
        if spec.size % spec.bank_size:
            raise HilbridgeError("size must be a whole number of banks", where)
        specs.append(spec)
    return specs


def build_cart(spec: CartSpec) -> bytes:
    """Assemble `spec.source` once per bank and lay the banks out as the cartridge file."""
    image = bytearray(b"\xff" * spec.size)
    for bank in range(spec.banks):
        result = assemble(spec.source, defines={"BANK": bank}, auto_bank_select=False)
        start = spec.origin - result.origin
        chunk = result.image[max(0, start) : start + spec.bank_size]
        offset = bank * spec.bank_size + max(0, -start)
        image[offset : offset + len(chunk)] = chunk
    return bytes(image)
