"""`hilbridge check`: a console (or any capture source) against the reference emulator, frame by frame."""

from __future__ import annotations

import json
import sys

import click
from tqdm import tqdm

from hilbridge.capture.sources import open_capture
from hilbridge.check import check as run_check
from hilbridge.check.report import result_dict, text_report, write_report
from hilbridge.errors import HilbridgeError
from hilbridge.machine.bios import read_bios
from hilbridge.machine.cartridge import MAPPER_TYPES, Cartridge, load_cartridge, read_cartridge
from hilbridge.machine.inputs import NO_INPUT, read_input_movie
from hilbridge.oracle.emulator import MAME_EQUIVALENT_MAPPERS

DEFAULT_FRAMES = 600
LOOKAHEAD_FRAMES = 30  # frames a bounded source (MAME) runs past the last checked one
LONG_CHECK = 300  # frames from which a progress bar is shown


@click.command("check")
@click.argument("cart", type=click.Path(dir_okay=False, exists=True))
@click.option("-d", "--device", help="sim[?...], mame, usb[:SERIAL], a serial port or URL: the console.")
@click.option(
    "--capture", "capture_path", type=click.Path(dir_okay=False, exists=True), help="A .hbcap file."
)
@click.option(
    "--frames", type=click.IntRange(min=1), help=f"Frames to check (device: {DEFAULT_FRAMES}; file: all)."
)
@click.option(
    "--region", type=click.Choice(["ntsc", "pal"]), help="Console region (default: the capture's, or ntsc)."
)
@click.option(
    "--bios", "bios_path", type=click.Path(dir_okay=False, exists=True), help="BIOS for the emulator."
)
@click.option(
    "--mapper", type=click.Choice(sorted(MAPPER_TYPES)), help="Cartridge type (default: from the image)."
)
@click.option("--input", "input_path", type=click.Path(dir_okay=False, exists=True), help="Input movie.")
@click.option(
    "--tolerance", type=click.IntRange(min=0), default=0, show_default=True, help="Cycles of slack."
)
@click.option(
    "--pictures",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Compare pictures every frame (always), only draw them at a divergence (auto), or not at all.",
)
@click.option(
    "--report", "report_dir", type=click.Path(file_okay=False), help="Write report.html/.json here."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def check(
    cart: str,
    device: str | None,
    capture_path: str | None,
    frames: int | None,
    region: str | None,
    bios_path: str | None,
    mapper: str | None,
    input_path: str | None,
    tolerance: int,
    pictures: str,
    report_dir: str | None,
    as_json: bool,
) -> None:
    """Check CART on a console (-d DEVICE) or in a capture (--capture FILE) against the emulator.

    Exit status: 0 all frames equal, 1 a divergence or frames that could not be compared, 2 error.
    """
    if (device is None) == (capture_path is None):
        raise HilbridgeError("give either -d DEVICE or --capture FILE")
    cartridge = read_cartridge(cart, mapper)
    bios = read_bios(bios_path) if bios_path else None
    movie = read_input_movie(input_path) if input_path else NO_INPUT
    if capture_path is not None:
        source = open_capture(
            capture_path, cartridge, warn=lambda text: click.echo(f"warning: {text}", err=True)
        )
        if movie:
            raise HilbridgeError("--input applies to a live console; a capture file records its own inputs")
    else:
        assert device is not None
        frames = frames or DEFAULT_FRAMES
        bounded = device == "mame" or device.startswith("mame?")
        source = open_capture(
            device,
            _as_served(cartridge),
            frames=frames + LOOKAHEAD_FRAMES if bounded else None,
            region=region or "ntsc",
            inputs=movie,
            serve=True,
        )
    long_check = frames is None or frames >= LONG_CHECK
    with tqdm(total=frames, unit="frame", desc="check", leave=False, disable=not long_check or None) as bar:
        result = run_check(
            cartridge,
            source,
            frames=frames,
            region=region,
            bios=bios,
            inputs=movie,
            tolerance=tolerance,
            pictures=pictures,
            progress=bar.update,
        )
    if report_dir:
        page = write_report(result, report_dir, cart)
        click.echo(f"report: {page}", err=True)
    if as_json:
        click.echo(json.dumps(result_dict(result), indent=2))
    else:
        click.echo(text_report(result))
    sys.exit(result.exit_code)


def _as_served(cartridge: Cartridge) -> Cartridge:
    """The cartridge as a device takes it: a mapper that only reproduces MAME 0.251 for the
    emulator (`--mapper o2_rom_mame0251`) is the plain slot type for the device."""
    for slot, mapper in MAME_EQUIVALENT_MAPPERS.items():
        if cartridge.mapper == mapper:
            return load_cartridge(cartridge.image, slot, name=cartridge.name)
    return cartridge
