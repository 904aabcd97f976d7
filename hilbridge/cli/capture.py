"""`hilbridge capture`: record a console's bus into a .hbcap file; `capture show` and `capture export`."""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import click
from tqdm import tqdm

from hilbridge.capture.export import write_csv, write_json, write_vcd
from hilbridge.capture.file import CaptureReader, CaptureWriter
from hilbridge.capture.mame import MameSource
from hilbridge.capture.sources import CONSOLE_TIMED, AdapterSource, open_capture
from hilbridge.capture.stream import CaptureHeader, CaptureItem, FrameSync, Gap, ResetDetected
from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.discovery import DEFAULT_DEVICE
from hilbridge.machine.timing import REGIONS
from hilbridge.machine.vdc import Vdc

DEVICE_HELP = "sim[?...], mame, usb[:SERIAL], a serial port or pyserial URL (see `hilbridge devices`)."
SHOWN_RECORDS = 10
SHOWN_GAPS = 10


def _same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def check_output(output: str, inputs: list[str | None], force: bool) -> None:
    """Refuse before any work: an output that is one of the inputs, exists (without --force), or has
    no directory to go to."""
    for given in inputs:
        if given and _same_file(given, output):
            raise HilbridgeError(
                "the output is one of the inputs; choose another name", SourceLocation(output)
            )
    path = Path(output)
    if path.exists() and not force:
        raise HilbridgeError("output exists (use --force to replace it)", SourceLocation(output))
    if not (path.parent if str(path.parent) else Path(".")).is_dir():
        raise HilbridgeError("output directory does not exist", SourceLocation(str(path.parent)))


class FrameEnds:
    """Counts frames for the progress bar as `--frames` counts them (`FrameLimit`): console frames
    of sim and mame, frame syncs elsewhere."""

    def __init__(self, header: CaptureHeader):
        self.vdc = Vdc(REGIONS[header.region]) if header.source in CONSOLE_TIMED else None
        self.done = 0
        self.next_end = self.vdc.frame_end_cycle(0) if self.vdc else 0

    def passed(self, item: CaptureItem) -> bool:
        if self.vdc is None:
            return isinstance(item, FrameSync)
        if isinstance(item, Gap) or item.cycle < self.next_end:
            return False
        self.done += 1
        self.next_end = self.vdc.frame_end_cycle(self.done)
        return True


@click.group(invoke_without_command=True)
@click.option("-d", "--device", default=DEFAULT_DEVICE, show_default=True, help=DEVICE_HELP)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="The .hbcap file to write.")
@click.option(
    "--frames",
    type=click.IntRange(min=1),
    help="Stop after N frames: console frames on sim and mame, frame syncs (0406h fetches) on an adapter.",
)
@click.option(
    "--seconds",
    type=click.FloatRange(min=0, min_open=True),
    help="Stop after S seconds (wall clock; mame: emulated time).",
)
@click.option(
    "--serve",
    "serve",
    type=click.Path(dir_okay=False, exists=True),
    help="Serve this image to the console (upload + emulation on); mame and sim run it.",
)
@click.option("--region", type=click.Choice(sorted(REGIONS)), default="ntsc", show_default=True)
@click.option("--input", "movie", type=click.Path(dir_okay=False, exists=True), help="Input movie to play.")
@click.option("--force", is_flag=True, help="Replace an existing output file.")
@click.pass_context
def capture(
    ctx: click.Context,
    device: str,
    output: str | None,
    frames: int | None,
    seconds: float | None,
    serve: str | None,
    region: str,
    movie: str | None,
    force: bool,
) -> None:
    """Record the bus stream of DEVICE's console into a .hbcap file (Ctrl-C ends an open capture).

    Without --frames or --seconds the capture runs until Ctrl-C (mame needs one of them).
    """
    if ctx.invoked_subcommand is not None:
        return
    if not output:
        raise HilbridgeError("give the capture file with -o run.hbcap (or use `capture show|export`)")
    if frames is not None and seconds is not None:
        raise HilbridgeError("give --frames or --seconds, not both")
    check_output(output, [serve, movie, device], force)
    source = open_capture(
        device, serve, frames=frames, seconds=seconds, region=region, inputs=movie, serve=serve is not None
    )
    counts: Counter[str] = Counter()
    stopped = ""
    frame_end = FrameEnds(source.header)
    try:
        with (
            CaptureWriter(output, source.header, overwrite=force) as writer,
            tqdm(total=frames, unit="frame", desc="capture", leave=False) as bar,
        ):
            try:
                for item in source.items():
                    writer.write(item)
                    counts[type(item).__name__] += 1
                    if frame_end.passed(item):
                        bar.update(1)
                        bar.set_postfix(records=counts["CaptureRecord"], refresh=False)
                    if isinstance(item, Gap):
                        tqdm.write(f"gap: {item.reason}")
            except KeyboardInterrupt:
                stopped = "stopped by Ctrl-C"
            except HilbridgeError as error:
                partial = writer.abort()
                raise HilbridgeError(
                    f"{error.message} (what was captured is in {partial})", error.location, error.hint
                ) from None
    finally:
        source.close()
    gaps = counts["Gap"]
    message = stopped or (source.end_message if isinstance(source, AdapterSource | MameSource) else "")
    click.echo(
        f"wrote {output}: {counts['CaptureRecord']} records, {counts['FrameSync']} frame syncs, "
        f"{counts['ResetDetected']} resets, {gaps} gap{'s' if gaps != 1 else ''}"
        + (f" ({message})" if message else "")
    )


@capture.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--records", "shown", type=click.IntRange(min=0), default=SHOWN_RECORDS, show_default=True)
def show(path: str, shown: int) -> None:
    """Print a capture's header, item counts, gaps and first records."""
    with CaptureReader(path, warn=lambda text: click.echo(text, err=True)) as reader:
        header = reader.header
        click.echo(f"{path}: hbcap version {reader.version}, written by {reader.info.get('writer', '?')}")
        for name in ("source", "adapter", "cart_sha1", "mapper", "region", "bios", "kinds", "notes"):
            value = getattr(header, name)
            if isinstance(value, tuple):
                value = ", ".join(value)
            click.echo(f"  {name}: {value or '-'}")
        inputs = header.inputs.strip().splitlines()
        click.echo(f"  inputs: {'; '.join(inputs) if inputs else 'none'}")
        kinds: Counter[str] = Counter()
        gaps: list[Gap] = []
        first: list[CaptureRecord] = []
        frames = resets = 0
        first_cycle = last_cycle = None
        for item in reader.items():
            if isinstance(item, CaptureRecord):
                kinds[item.kind] += 1
                if len(first) < shown:
                    first.append(item)
                first_cycle = item.cycle if first_cycle is None else first_cycle
                last_cycle = item.cycle
            elif isinstance(item, FrameSync):
                frames += 1
            elif isinstance(item, ResetDetected):
                resets += 1
            else:
                gaps.append(item)
        total = sum(kinds.values())
        by_kind = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())) or "none"
        click.echo(f"records: {total} ({by_kind})")
        if first_cycle is not None:
            click.echo(f"cycles: {first_cycle}-{last_cycle}")
        click.echo(f"frame syncs: {frames}, resets: {resets}, gaps: {len(gaps)}")
        for gap in gaps[:SHOWN_GAPS]:
            click.echo(f"  gap: {gap.reason} (chunks {gap.chunks}, records {gap.records})")
        if len(gaps) > SHOWN_GAPS:
            click.echo(f"  ... {len(gaps) - SHOWN_GAPS} more gaps")
        if first:
            click.echo("first records (cycle kind address value p1):")
            for record in first:
                fields = f"{record.address:03X} {record.value:02X} {record.p1:02X}"
                click.echo(f"  {record.cycle:>10} {record.kind:<10} {fields}")


@contextmanager
def atomic_text(path: str) -> Iterator[TextIO]:
    """A text file that appears under `path` only when fully written."""
    target = Path(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            yield handle
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@capture.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option(
    "--vcd", type=click.Path(dir_okay=False), help="Value change dump (PulseView, GTKWave, sigrok)."
)
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="One row per item.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Header and items as JSON.")
@click.option("--force", is_flag=True, help="Replace existing output files.")
def export(path: str, vcd: str | None, csv_path: str | None, json_path: str | None, force: bool) -> None:
    """Export a capture as VCD, CSV and/or JSON."""
    outputs = [(vcd, write_vcd), (csv_path, write_csv), (json_path, write_json)]
    chosen = [(out, writer) for out, writer in outputs if out]
    if not chosen:
        raise HilbridgeError("choose an export: --vcd FILE, --csv FILE or --json FILE")
    names = [out for out, _ in chosen]
    if len({str(Path(name).resolve()) for name in names}) != len(names):
        raise HilbridgeError("two exports to the same file")
    for out in names:
        check_output(out, [path], force)
    for out, writer in chosen:
        with (
            CaptureReader(path, warn=lambda text: click.echo(text, err=True)) as reader,
            atomic_text(out) as handle,
        ):
            count = writer(reader.header, reader.items(), handle)
        click.echo(f"wrote {out}: {count} items")
