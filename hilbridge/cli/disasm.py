"""`hilbridge disasm`: print asl source for an 8048 ROM image."""

from __future__ import annotations

from pathlib import Path

import click

from hilbridge.cli import force_option
from hilbridge.cli.asm import parse_number
from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import check_outputs, write_atomic
from hilbridge.toolchain.disasm import CARTRIDGE_ORIGIN, cartridge_bank, disassemble


@click.command()
@click.argument("rom", type=click.Path(dir_okay=False))
@click.option("--org", "origin_text", help="Load address of the image [default: 0, or 0x400 with --bank].")
@click.option("--bank", type=int, help="Disassemble only this 2 KB bank of a bank-switched cartridge.")
@click.option("--labels", is_flag=True, help="Name jump targets L0xxx instead of printing numbers.")
@click.option("--bios-symbols", is_flag=True, help="Name calls into the Videopac BIOS (0x000-0x3FF).")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write the source to this file (else stdout)."
)
@force_option
def disasm(
    rom: str,
    origin_text: str | None,
    bank: int | None,
    labels: bool,
    bios_symbols: bool,
    output: str | None,
    force: bool,
) -> None:
    """Disassemble the 8048 image ROM into asl source that assembles back to the same bytes."""
    check_outputs({"-o": output}, inputs=[rom], force=force)
    if origin_text is not None:
        origin = parse_number(origin_text, "--org")
    else:
        origin = 0 if bank is None else CARTRIDGE_ORIGIN
    try:
        image = Path(rom).read_bytes()
    except OSError as error:
        raise HilbridgeError(f"cannot read ROM image: {error.strerror}", SourceLocation(rom)) from None
    title = Path(rom).name
    try:
        if bank is not None:
            image = cartridge_bank(image, bank)
            title += f" bank {bank}"
        text = disassemble(image, origin, labels=labels, bios_names=bios_symbols, title=title)
    except HilbridgeError as error:
        raise HilbridgeError(error.message, SourceLocation(rom), error.hint) from None
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        write_atomic(output, text.encode("utf-8"))
    except OSError as error:
        raise HilbridgeError(f"cannot write the source: {error.strerror}", SourceLocation(output)) from None
