"""`hilbridge firmware build | info | flash`: the adapter firmware (see firmware/README.md)."""

from __future__ import annotations

from pathlib import Path

import click

from hilbridge.firmware.build import build as build_firmware
from hilbridge.firmware.build import default_uf2
from hilbridge.firmware.flash import flash as flash_uf2
from hilbridge.link.discovery import open_adapter

DEVICE_HELP = "Adapter: usb[:SERIAL], a serial port or a pyserial URL (see `hilbridge devices`)."


@click.group()
def firmware() -> None:
    """Build the adapter firmware, show what an adapter runs, flash a board."""


@firmware.command()
@click.option("-j", "--jobs", default=1, show_default=True, help="Parallel make jobs.")
@click.option(
    "--build-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to build (default firmware/build).",
)
def build(jobs: int, build_dir: Path | None) -> None:
    """Build firmware/build/hilbridge-adapter.elf, .bin and .uf2 (needs arm-none-eabi-gcc)."""
    result = build_firmware(jobs=jobs, build_dir=build_dir)
    for path in (result.elf, result.bin, result.uf2):
        click.echo(f"{path}  {path.stat().st_size} bytes")


@firmware.command()
@click.option("-d", "--device", required=True, help=DEVICE_HELP)
def info(device: str) -> None:
    """Print the adapter's HELLO (protocol, firmware version, capabilities) and FIRMWARE_INFO."""
    with open_adapter(device) as adapter:
        hello = adapter.info
        click.echo(f"device        {device}")
        click.echo(f"protocol      {hello.protocol}")
        click.echo(f"firmware      {hello.firmware}")
        click.echo(f"board id      0x{hello.board_id:04x}")
        click.echo(f"serial        {hello.serial}")
        click.echo(f"max payload   {hello.max_payload}")
        click.echo(f"capabilities  {', '.join(sorted(hello.capabilities)) or '-'}")
        click.echo(f"build         {adapter.firmware_info()}")


@firmware.command()
@click.argument("uf2", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--drive",
    type=click.Path(path_type=Path),
    help="The mounted RPI-RP2 drive (default: found among mounted drives).",
)
def flash(uf2: Path | None, drive: Path | None) -> None:
    """Copy UF2 (default: the built one) onto a board in USB boot mode (its RPI-RP2 drive)."""
    written = flash_uf2(uf2 or default_uf2(), drive)
    click.echo(f"wrote {written}: the board restarts with the new firmware")
