"""`hilbridge load` / `hilbridge unload`: serve a ROM image to the console from the adapter."""

from __future__ import annotations

import zlib
from pathlib import Path

import click
from tqdm import tqdm

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.link.discovery import DEFAULT_DEVICE, open_adapter
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.mappers import registry

DEVICE_HELP = "Adapter: sim, usb[:SERIAL], a serial port or a pyserial URL (see `hilbridge devices`)."


@click.command()
@click.argument("rom", type=click.Path(dir_okay=False))
@click.option("-d", "--device", default=DEFAULT_DEVICE, show_default=True, help=DEVICE_HELP)
@click.option(
    "--type",
    "mapper",
    type=click.Choice(sorted(registry().protocol_ids)),
    help="Mapper (default: from the list).",
)
def load(rom: str, device: str, mapper: str | None) -> None:
    """Upload ROM into the adapter's cartridge emulation, verify it by read-back CRC, and start it."""
    try:
        image = Path(rom).read_bytes()
    except OSError as error:
        raise HilbridgeError(f"cannot read the ROM: {error.strerror}", SourceLocation(rom)) from None
    cartridge = load_cartridge(image, mapper, name=rom)
    if cartridge.mapper not in registry().protocol_ids:
        raise HilbridgeError(f"the adapter cannot emulate {cartridge.mapper}", SourceLocation(rom))
    with open_adapter(device) as adapter:
        adapter.emulation(False)
        with tqdm(total=len(image), unit="B", unit_scale=True, desc="upload", leave=False) as bar:
            crc = adapter.upload(image, cartridge.mapper, progress=bar.update)
        state = adapter.emulation(True)
    if state["crc32"] != zlib.crc32(image):
        raise HilbridgeError(f"{device}: the adapter reports another image after starting emulation")
    click.echo(f"emulating {rom} on {device}: {cartridge.mapper}, {len(image)} bytes, crc32 {crc:08x}")
    click.echo("verified: the adapter's read-back CRC matches the image")


@click.command()
@click.option("-d", "--device", default=DEFAULT_DEVICE, show_default=True, help=DEVICE_HELP)
def unload(device: str) -> None:
    """Stop cartridge emulation: the console sees the cartridge in the adapter's slot again."""
    with open_adapter(device) as adapter:
        adapter.emulation(False)
    click.echo(f"emulation off on {device}")
