"""`hilbridge disasm`: print asl source for an 8048 ROM image."""

from __future__ import annotations

from pathlib import Path

import click

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import write_atomic
from hilbridge.toolchain.disasm import disassemble


def _parse_origin(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise HilbridgeError(f"--org {text!r} is not a number", hint="write it like 0x400 or 1024") from None


@click.command()
@click.argument("rom", type=click.Path(dir_okay=False))
@click.option("--org", "origin_text", default="0", show_default=True, help="Load address of the image.")
@click.option("--labels", is_flag=True, help="Name jump targets L0xxx instead of printing numbers.")
@click.option("--bios-symbols", is_flag=True, help="Name calls into the Videopac BIOS (0x000-0x3FF).")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the source to this file (else stdout)."
)
def disasm(rom: str, origin_text: str, labels: bool, bios_symbols: bool, output: str | None) -> None:
    """Disassemble the 8048 image ROM into asl source that assembles back to the same bytes."""
    origin = _parse_origin(origin_text)
    try:
        image = Path(rom).read_bytes()
    except OSError as error:
        raise HilbridgeError(f"cannot read ROM image: {error.strerror}", SourceLocation(rom)) from None
    try:
        text = disassemble(image, origin, labels=labels, bios_names=bios_symbols, title=Path(rom).name)
    except HilbridgeError as error:
        raise HilbridgeError(error.message, SourceLocation(rom), error.hint) from None
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        write_atomic(output, text.encode("utf-8"))
    except OSError as error:
        raise HilbridgeError(f"cannot write the source: {error.strerror}", SourceLocation(output)) from None
