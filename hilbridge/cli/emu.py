"""`hilbridge emu`: run a cartridge on the reference emulator, headless."""

from __future__ import annotations

import time
from pathlib import Path

import click

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import write_atomic
from hilbridge.machine.bios import read_bios
from hilbridge.machine.bus import READ, BusAccess
from hilbridge.machine.cartridge import MAPPER_TYPES, read_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import parse_input_script

FILE = click.Path(dir_okay=False)


@click.group()
def emu() -> None:
    """Run cartridges on the cycle-exact reference emulator."""


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise HilbridgeError(f"cannot read the input script: {reason}", SourceLocation(path)) from None


@emu.command()
@click.argument("cart", type=click.Path(dir_okay=False))
@click.option("--frames", type=click.IntRange(min=0), default=600, show_default=True, help="Frames to run.")
@click.option("--region", type=click.Choice(["ntsc", "pal"]), default="ntsc", show_default=True)
@click.option("--bios", "bios_path", type=FILE, help="BIOS image (default: our boot BIOS).")
@click.option("--mapper", type=click.Choice(sorted(MAPPER_TYPES)), help="Cartridge type.")
@click.option("--trace", "trace_path", type=FILE, help="Write the MOVX writes to this file.")
@click.option("--reads", is_flag=True, help="Also trace MOVX reads.")
@click.option("--input", "input_path", type=FILE, help="Input script (docs/emulator.md).")
def run(
    cart: str,
    frames: int,
    region: str,
    bios_path: str | None,
    mapper: str | None,
    trace_path: str | None,
    reads: bool,
    input_path: str | None,
) -> None:
    """Run CART for --frames frames and report where it stopped."""
    cartridge = read_cartridge(cart, mapper)
    bios = read_bios(bios_path) if bios_path else None
    events = parse_input_script(_read_text(input_path), input_path) if input_path else []
    console = Console(cartridge, bios=bios, region=region)
    lines: list[str] = []
    if trace_path:
        from hilbridge.oracle.trace import Access

        def record(access: BusAccess) -> None:
            if access.kind == READ and not reads:
                return
            line, hpos = _position(console, access.cycle)
            fields = (access.kind, access.cycle, access.p1, access.address, access.value)
            lines.append(Access(*fields, console.frame, line, hpos).line())

        console.add_bus_listener(record)
    started = time.perf_counter()
    pending = list(events)
    for frame in range(frames):
        while pending and pending[0].frame <= frame:
            pending.pop(0).apply(console)
        console.run_frames(1)
    seconds = time.perf_counter() - started
    if trace_path:
        header = f"# hilbridge emu run {Path(cart).name} region={region} frames={frames}\n"
        write_atomic(trace_path, (header + "".join(line + "\n" for line in lines)).encode("ascii"))
    rate = frames / seconds if seconds > 0 else float("inf")
    click.echo(f"cartridge: {Path(cart).name} ({cartridge.mapper}, {len(cartridge.image)} bytes)")
    click.echo(f"bios:      {console.bios.name}")
    click.echo(f"ran:       {frames} frames ({region}), {console.cycle} cycles, PC {console.cpu.pc:03X}h")
    click.echo(f"speed:     {rate:.0f} frames/s ({seconds:.2f} s)")
    if trace_path:
        click.echo(f"trace:     {len(lines)} records in {trace_path}")


def _position(console: Console, cycle: int) -> tuple[int, int]:
    position = getattr(console.vdc, "position", None)
    if position is None:
        return 0, 0
    return position(cycle)
