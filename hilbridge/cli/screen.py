"""`hilbridge screen`: the text on the console's screen at a frame, decoded from the VDC registers."""

from __future__ import annotations

from pathlib import Path

import click

from hilbridge.bridge.screen import registers_at_frame, screen_text
from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import parse_input_script

CAPTURE_SUFFIX = ".hbcap"


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise HilbridgeError(f"cannot read the input script: {error}", SourceLocation(str(path))) from None


@click.command("screen")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--frame", "frame", type=click.IntRange(0), required=True, help="Frame to show.")
@click.option("--input", "input_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Input script for a cartridge run (docs/emulator.md).")  # fmt: skip
@click.option("--region", type=click.Choice(["ntsc", "pal"]), default="ntsc", show_default=True)
def screen(source: Path, frame: int, input_path: Path | None, region: str) -> None:
    """Print the text grid on screen: SOURCE is a cartridge image (run on the emulator for FRAME
    frames) or a capture file (.hbcap, replayed up to the start of frame FRAME)."""
    if source.suffix == CAPTURE_SUFFIX:
        if input_path is not None:
            raise HilbridgeError("--input applies to a cartridge run, not to a capture")
        try:
            from hilbridge.capture.file import CaptureReader
        except ImportError:
            raise HilbridgeError(
                "capture files cannot be read by this build", SourceLocation(str(source))
            ) from None
        reader = CaptureReader(str(source))
        try:
            registers = registers_at_frame(reader.items(), frame).registers
        finally:
            reader.close()
        region = reader.header.region or region
    else:
        console = Console(source, region=region)
        events = parse_input_script(_read_text(input_path), str(input_path)) if input_path else []
        for number in range(frame):
            for event in events:
                if event.frame == number:
                    event.apply(console)
            console.run_frames(1)
        registers = console.vdc.registers
    text = screen_text(registers, region)
    click.echo(text if text else "(nothing on screen)")
