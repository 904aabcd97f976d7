"""`hilbridge carts`: look cartridge images up in the Videopac cartridge database."""

from __future__ import annotations

from pathlib import Path

import click

from hilbridge import cartdb
from hilbridge.errors import HilbridgeError, SourceLocation


def _read_image(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise HilbridgeError(f"cannot read cartridge image: {error.strerror}", SourceLocation(path)) from None


@click.group()
def carts() -> None:
    """Identify cartridge dumps and list the known cartridges."""


@carts.command()
@click.argument("file", type=click.Path(dir_okay=False))
def identify(file: str) -> None:
    """Name the cartridge FILE is a dump of, by CRC32 and SHA-1."""
    image = _read_image(file)
    if not image:
        raise HilbridgeError("cartridge image is empty", SourceLocation(file))
    sums = cartdb.checksums(image)
    matches = cartdb.identify(image)
    if not matches:
        try:
            mapper = cartdb.mapper_from_size(len(image))
        except HilbridgeError as error:
            raise HilbridgeError(error.message, SourceLocation(file), error.hint) from None
    click.echo(f"size:   {len(image)} bytes")
    click.echo(f"crc32:  {sums.crc32}")
    click.echo(f"sha1:   {sums.sha1}")
    if not matches:
        click.echo("match:  unknown")
        click.echo(f"mapper: {mapper} (from the size)")
        return
    for match in matches:
        cartridge = match.cartridge
        quality = "" if match.exact else " (CRC32 only: SHA-1 differs, bad dump?)"
        click.echo(f"match:  {cartridge.name}: {cartridge.description}{quality}")
        click.echo(f"mapper: {cartridge.mapper}")


@carts.command(name="list")
@click.option("--mapper", type=click.Choice(cartdb.MAPPERS), help="Only cartridges of this mapper.")
def list_(mapper: str | None) -> None:
    """List the known cartridges: name, mapper, program size, CRC32, description."""
    for cartridge in cartdb.entries():
        if mapper and cartridge.mapper != mapper:
            continue
        roms = cartridge.program_roms
        crc = "+".join(rom.crc32 for rom in roms) or "-"
        click.echo(
            f"{cartridge.name:<10} {cartridge.mapper:<11} {cartridge.program_size:>6} {crc:<8} "
            f"{cartridge.description}"
        )
