"""`hilbridge oracle`: run a cartridge on MAME 0.251 and compare its bus trace with our emulator."""

from __future__ import annotations

import io
from pathlib import Path

import click
import numpy as np

from hilbridge.cli import force_option
from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import check_outputs, write_atomic
from hilbridge.oracle.mame import SLOTS, SYSTEMS, run_mame
from hilbridge.oracle.trace import compare_runs


def _read_image(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise HilbridgeError(f"cannot read cartridge image: {error.strerror}", SourceLocation(path)) from None


_region = click.option("--region", type=click.Choice(sorted(SYSTEMS)), default="ntsc", show_default=True)
_frames = click.option("--frames", type=click.IntRange(min=1), default=300, show_default=True)
_slot = click.option(
    "--slot", type=click.Choice(SLOTS), help="Cartridge type; default: MAME chooses from the size."
)
_reads = click.option("--reads", is_flag=True, help="Also trace MOVX reads (much slower in MAME).")


@click.group()
def oracle() -> None:
    """MAME 0.251 as a reference: bus traces and frames of a cartridge."""


@oracle.command()
@click.argument("cart", type=click.Path(dir_okay=False))
@_frames
@click.option("--out", "out", type=click.Path(dir_okay=False), required=True, help="Trace file to write.")
@_region
@_slot
@_reads
@click.option("--state", is_flag=True, help="Add a register and RAM dump at every frame end.")
@click.option(
    "--pixels",
    type=click.Path(file_okay=False),
    help="Directory for frames.npy: the distinct frames as palette indices (the trace's P lines index it).",
)
@force_option
def mame(
    cart: str,
    frames: int,
    out: str,
    region: str,
    slot: str | None,
    reads: bool,
    state: bool,
    pixels: str | None,
    force: bool,
) -> None:
    """Run CART headless on MAME for --frames frames and write its MOVX trace to --out."""
    frames_file = None
    if pixels is not None:
        folder = Path(pixels)
        if not folder.is_dir() and not folder.parent.is_dir():
            raise HilbridgeError(f"--pixels: no such folder: {folder.parent}", SourceLocation(pixels))
        frames_file = folder / "frames.npy" if folder.is_dir() else None  # a new folder holds nothing yet
    check_outputs({"--out": out, "--pixels": frames_file}, inputs=[cart], force=force)
    image = _read_image(cart)
    run = run_mame(
        image, frames=frames, region=region, slot=slot, reads=reads, state=state, pixels=pixels is not None
    )
    write_atomic(out, run.trace.text().encode())
    if pixels is not None and run.pixels is not None:
        Path(pixels).mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        np.save(buffer, run.pixels)
        write_atomic(Path(pixels) / "frames.npy", buffer.getvalue())
    click.echo(
        f"{len(run.trace.writes())} writes, {len(run.trace.reads())} reads in {frames} frames "
        f"({run.wall_seconds:.1f} s) -> {out}"
    )


@oracle.command()
@click.argument("cart", type=click.Path(dir_okay=False))
@_frames
@_region
@_slot
@_reads
def compare(cart: str, frames: int, region: str, slot: str | None, reads: bool) -> None:
    """Run CART on MAME and on our emulator; report the first MOVX access that differs (exit 1).

    A run in which neither side made an access compared nothing and is an error (exit 2), not "equal".
    """
    from hilbridge.oracle.emulator import run_emulator

    image = _read_image(cart)
    theirs = run_mame(image, frames=frames, region=region, slot=slot, reads=reads).trace
    ours = run_emulator(image, frames=frames, region=region, slot=slot, reads=reads).trace
    compared, mismatch = compare_runs(ours, theirs)
    if mismatch is None and not compared:
        raise HilbridgeError(
            f"nothing compared: neither MAME nor the emulator made a MOVX access in {frames} frames",
            SourceLocation(cart),
            hint="run more --frames, add --reads, or check that the cartridge starts (hilbridge emu run)",
        )
    if mismatch is None:
        click.echo(f"equal: {len(compared)} accesses in {frames} frames")
        return
    click.echo(mismatch.report())
    raise SystemExit(1)
