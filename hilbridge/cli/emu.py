"""`hilbridge emu`: run a cartridge on the reference emulator, headless."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import click

from hilbridge.cli import force_option
from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import check_outputs, write_atomic
from hilbridge.machine.bios import read_bios
from hilbridge.machine.bus import READ, BusAccess
from hilbridge.machine.cartridge import MAPPER_TYPES, read_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import parse_input_script
from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import Vdc
from hilbridge.media.capture import Capture, save_capture
from hilbridge.media.images import GifWriter

FILE = click.Path(dir_okay=False)
BIOS_HELP = "BIOS image, or 'open' / 'boot' for ours (default: our open BIOS, docs/bios.md)."


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
@click.option("--bios", "bios_path", type=FILE, help=BIOS_HELP)
@click.option("--mapper", type=click.Choice(sorted(MAPPER_TYPES)), help="Cartridge type.")
@click.option("--trace", "trace_path", type=FILE, help="Write the MOVX writes to this file.")
@click.option("--reads", is_flag=True, help="Also trace MOVX reads.")
@click.option("--input", "input_path", type=FILE, help="Input script (docs/emulator.md).")
@click.option("--png", "png_path", type=FILE, help="Save the last frame as PNG.")
@click.option("--gif", "gif_path", type=FILE, help="Save every frame as an animated GIF.")
@click.option("--wav", "wav_path", type=FILE, help="Save the sound as WAV (44.1 kHz mono).")
@click.option("--scale", type=click.IntRange(1, 8), default=1, show_default=True, help="PNG/GIF pixel size.")
@force_option
def run(
    cart: str,
    frames: int,
    region: str,
    bios_path: str | None,
    mapper: str | None,
    trace_path: str | None,
    reads: bool,
    input_path: str | None,
    png_path: str | None,
    gif_path: str | None,
    wav_path: str | None,
    scale: int,
    force: bool,
) -> None:
    """Run CART for --frames frames and report where it stopped."""
    outputs = {"--trace": trace_path, "--png": png_path, "--gif": gif_path, "--wav": wav_path}
    check_outputs(outputs, inputs=[cart, bios_path, input_path], force=force)
    cartridge = read_cartridge(cart, mapper)
    bios = read_bios(bios_path) if bios_path else None
    events = parse_input_script(_read_text(input_path), input_path) if input_path else []
    console = Console(cartridge, bios=bios, region=region, vdc=Vdc(REGIONS[region], audio=bool(wav_path)))
    capture = Capture(frame_rate=float(console.region.frame_rate_hz))
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
    with contextlib.ExitStack() as outputs:
        # frames stream into the GIF as they are made: a long run holds one frame, not all of them
        gif = (
            outputs.enter_context(GifWriter(gif_path, frame_rate=capture.frame_rate, scale=scale))
            if gif_path
            else None
        )
        for frame in range(frames):
            while pending and pending[0].frame <= frame:
                pending.pop(0).apply(console)
            console.run_frames(1)
            if gif is not None and console.vdc.frames_completed > gif.count:
                gif.add(console.vdc.frame())
        if gif is not None and gif.count == 0:
            gif.add(console.vdc.frame())
    seconds = time.perf_counter() - started
    if png_path:
        capture.frames.append(console.vdc.frame())
    if wav_path:
        capture.audio = console.vdc.audio_samples(capture.audio_rate, console.cycle)
    save_capture(capture, png=png_path, wav=wav_path, scale=scale)
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


@emu.command()
@click.argument("cart", type=click.Path(dir_okay=False))
@click.option("--region", type=click.Choice(["ntsc", "pal"]), default="ntsc", show_default=True)
@click.option("--bios", "bios_path", type=FILE, help=BIOS_HELP)
@click.option("--mapper", type=click.Choice(sorted(MAPPER_TYPES)), help="Cartridge type.")
@click.option("--scale", type=click.IntRange(1, 6), default=2, show_default=True, help="Window pixel size.")
def view(cart: str, region: str, bios_path: str | None, mapper: str | None, scale: int) -> None:
    """Play CART in a live window: keys as labelled, arrows + Ctrl = joystick 1, keypad = joystick 0."""
    from hilbridge.viewer.window import view as open_window

    cartridge = read_cartridge(cart, mapper)
    bios = read_bios(bios_path) if bios_path else None
    console = Console(cartridge, bios=bios, region=region, vdc=Vdc(REGIONS[region]))
    open_window(console, scale=scale, title=f"hilbridge - {Path(cart).name}")


def _position(console: Console, cycle: int) -> tuple[int, int]:
    position = getattr(console.vdc, "position", None)
    if position is None:
        return 0, 0
    return position(cycle)
