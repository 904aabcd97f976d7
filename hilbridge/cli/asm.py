"""`hilbridge asm`: assemble an asl-dialect MCS-48 source into a ROM image."""

from __future__ import annotations

from pathlib import Path

import click

from hilbridge.cli import force_option
from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import check_outputs, write_atomic
from hilbridge.toolchain.asm_expr import MAX_NUMBER_DIGITS
from hilbridge.toolchain.assembler import AssemblyResult, assemble


def parse_number(text: str, option: str) -> int:
    """A number as asl or Python writes it: 0x400, 400h, $400, 1024."""
    cleaned = text.strip()
    if len(cleaned) > MAX_NUMBER_DIGITS + 2:
        raise HilbridgeError(
            f"{option}: a number of {len(cleaned)} digits; at most {MAX_NUMBER_DIGITS} (64-bit values)"
        )
    try:
        if cleaned.lower().endswith("h"):
            return int(cleaned[:-1], 16)
        if cleaned.startswith("$"):
            return int(cleaned[1:], 16)
        return int(cleaned, 0)
    except ValueError:
        raise HilbridgeError(
            f"{option} {text!r} is not a number", hint="write it like 0x400, 400h or 1024"
        ) from None


def _defines(pairs: tuple[str, ...]) -> dict[str, int]:
    defines = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not name.strip():
            raise HilbridgeError(f"-D {pair!r} needs a name", hint="write -D NAME=VALUE or -D NAME")
        defines[name.strip()] = parse_number(value, f"-D {name}") if equals else 1
    return defines


def _range(text: str | None) -> tuple[int | None, int | None] | None:
    """START-END as p2bin -r takes it; '$' for either end means "where the program starts/ends"."""
    if text is None:
        return None
    low, dash, high = text.partition("-")
    if not dash:
        raise HilbridgeError(f"--range {text!r} needs START-END", hint="for example --range 0x400-0xbff")
    start = None if low.strip() in ("", "$") else parse_number(low, "--range")
    end = None if high.strip() in ("", "$") else parse_number(high, "--range")
    if start is not None and end is not None and end < start:
        raise HilbridgeError(f"--range {text!r} ends before it starts")
    return start, end


def _cartridge_span(result: AssemblyResult) -> tuple[int, int] | None:
    """0400h up to the smallest cartridge size that holds the program, for a source that starts at
    or above 0400h (the cartridge's program space); None for others (a BIOS, data, an empty program)."""
    from hilbridge.cartdb import cartridge_sizes

    if not result.image or result.origin < CARTRIDGE_START:
        return None
    needed = result.origin + len(result.image) - CARTRIDGE_START
    size = next((size for size in cartridge_sizes() if size >= needed), None)
    return None if size is None else (CARTRIDGE_START, CARTRIDGE_START + size - 1)


def _outside(result: AssemblyResult, start: int, end: int) -> list[tuple[int, int]]:
    """The runs of assembled (not fill) addresses outside START..END."""
    runs: list[tuple[int, int]] = []
    for offset, flag in enumerate(result.written):
        address = result.origin + offset
        if not flag or start <= address <= end:
            continue
        if runs and runs[-1][1] == address - 1:
            runs[-1] = (runs[-1][0], address)
        else:
            runs.append((address, address))
    return runs


def _image(
    result: AssemblyResult, span: tuple[int | None, int | None] | None, fill: int
) -> tuple[bytes, int]:
    """The bytes to write and their first address: the assembled range, or START..END as p2bin -r.

    Assembled bytes outside START..END are an error rather than silently left out of the image.
    """
    if span is None:
        return result.image, result.origin
    start = result.origin if span[0] is None else span[0]
    end = result.origin + len(result.image) - 1 if span[1] is None else span[1]
    if end < start:
        raise HilbridgeError(f"--range ends at {end:#x}, before it starts at {start:#x}")
    dropped = _outside(result, start, end)
    if dropped:
        where = ", ".join(f"{low:04X}h-{high:04X}h" for low, high in dropped[:4])
        count = sum(high - low + 1 for low, high in dropped)
        raise HilbridgeError(
            f"--range {start:04X}h-{end:04X}h would leave out {count} assembled bytes at {where}",
            hint="widen --range, or move the code into it",
        )
    out = bytearray([fill]) * (end - start + 1)
    for offset, byte in enumerate(result.image):
        address = result.origin + offset
        if start <= address <= end:
            out[address - start] = byte
    return bytes(out), start


CARTRIDGE_START = 0x400


def _write(path: str, data: bytes, what: str) -> None:
    try:
        write_atomic(path, data)
    except OSError as error:
        raise HilbridgeError(f"cannot write the {what}: {error.strerror}", SourceLocation(path)) from None


def _intel_hex(data: bytes, origin: int) -> bytes:
    lines = []
    for start in range(0, len(data), 16):
        chunk = data[start : start + 16]
        address = origin + start
        record = bytes([len(chunk), (address >> 8) & 0xFF, address & 0xFF, 0]) + chunk
        checksum = (-sum(record)) & 0xFF
        lines.append(f":{record.hex().upper()}{checksum:02X}")
    lines.append(":00000001FF")
    return ("\n".join(lines) + "\n").encode("ascii")


@click.command()
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="ROM image to write.")
@click.option(
    "--listing", type=click.Path(dir_okay=False), help="Write a listing (line, address, bytes, source)."
)
@click.option("--symbols", type=click.Path(dir_okay=False), help="Write the symbol table (NAME<TAB>HEX).")
@click.option(
    "--share-file", type=click.Path(dir_okay=False), help="Write the SHARED symbols as EQUs (asl's -a file)."
)
@click.option("--hex", "intel_hex", is_flag=True, help="Write Intel HEX instead of a raw binary.")
@click.option(
    "-I",
    "include_dirs",
    multiple=True,
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Include directory.",
)
@click.option(
    "-D", "defines", multiple=True, metavar="NAME=VALUE", help="Define a symbol: NAME=VALUE (or NAME for 1)."
)
@click.option(
    "--fill",
    "fill_text",
    default="0xFF",
    show_default=True,
    metavar="BYTE",
    help="Byte for gaps in the image.",
)
@click.option(
    "--range",
    "range_text",
    metavar="START-END",
    help="Write exactly START-END (like asl's p2bin -r), e.g. 0x400-0xbff.",
)
@click.option(
    "--plain",
    is_flag=True,
    help="Write only the lowest to the highest byte assembled (default for a source at 0400h and above: "
    "a cartridge-sized image from 0400h).",
)
@click.option("-U", "--case-sensitive", is_flag=True, help="Symbols are case-sensitive (asl -U).")
@click.option(
    "--no-auto-bank",
    is_flag=True,
    help="Report JMP/CALL into the other 2K bank instead of inserting SEL MBx.",
)
@force_option
def asm(
    source: str,
    output: str,
    listing: str | None,
    symbols: str | None,
    share_file: str | None,
    intel_hex: bool,
    include_dirs: tuple[str, ...],
    defines: tuple[str, ...],
    fill_text: str,
    range_text: str | None,
    plain: bool,
    case_sensitive: bool,
    no_auto_bank: bool,
    force: bool,
) -> None:
    """Assemble the asl-dialect 8048 program SOURCE into a ROM image.

    A source whose code starts at 0400h or above is written as a cartridge image: from 0400h, the
    smallest cartridge size that holds it, gaps filled. --plain writes the assembled bytes only.
    """
    if plain and range_text:
        raise HilbridgeError("--plain and --range choose the image two ways; give one of them")
    fill = parse_number(fill_text, "--fill")
    if not 0 <= fill <= 0xFF:
        raise HilbridgeError(f"--fill {fill_text!r} must be a byte (0..255)")
    span = _range(range_text)
    outputs = {"-o": output, "--listing": listing, "--symbols": symbols, "--share-file": share_file}
    check_outputs(outputs, inputs=[source], force=force)
    result = assemble(
        source,
        include_dirs=include_dirs,
        defines=_defines(defines),
        fill=fill,
        case_sensitive=case_sensitive,
        auto_bank_select=not no_auto_bank,
    )
    for warning in result.warnings:
        click.echo(warning, err=True)
    cartridge = None if plain or span is not None else _cartridge_span(result)
    image, origin = _image(result, cartridge or span, fill)
    _write(output, _intel_hex(image, origin) if intel_hex else image, "image")
    if cartridge is not None:
        low, high = cartridge
        click.echo(
            f"wrote {output}: {len(image)} bytes, the cartridge image {low:04X}h-{high:04X}h "
            f"({len(result.image)} bytes assembled from {result.origin:04X}h; --plain writes only those)",
            err=True,
        )
    if listing:
        _write(listing, result.listing.encode("utf-8"), "listing")
    if symbols:
        _write(symbols, result.symbol_file().encode("utf-8"), "symbol file")
    if share_file:
        _write(share_file, result.share_file(Path(source).name).encode("utf-8"), "share file")
