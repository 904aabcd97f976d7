"""`hilbridge dump`: read the cartridge in the adapter's slot into a verified, identified file."""

from __future__ import annotations

import json

import click
from tqdm import tqdm

from hilbridge.cli import force_option
from hilbridge.dumper.detect import DETECTABLE
from hilbridge.dumper.dump import DumpResult, dump_cartridge
from hilbridge.errors import HilbridgeError
from hilbridge.files import check_outputs
from hilbridge.link.discovery import DEFAULT_DEVICE, open_adapter

DEVICE_HELP = "Adapter: sim, usb[:SERIAL], a serial port or a pyserial URL (see `hilbridge devices`)."
UNSTABLE_SHOWN = 16


@click.command()
@click.option("-d", "--device", default=DEFAULT_DEVICE, show_default=True, help=DEVICE_HELP)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Output file (default: named after the cartridge).",
)
@click.option("--type", "mapper", type=click.Choice(["auto", *DETECTABLE]), default="auto", show_default=True)
@click.option(
    "--passes", type=click.IntRange(2, 16), default=2, show_default=True, help="Reads of every byte."
)
@click.option("--keep-unverified", is_flag=True, help="Write the file even if some addresses read unstably.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@force_option
def dump(
    device: str,
    output: str | None,
    mapper: str,
    passes: int,
    keep_unverified: bool,
    as_json: bool,
    force: bool,
) -> None:
    """Dump the cartridge: detect its type, read it PASSES times, verify, identify, write atomically.

    An interrupted dump resumes when the same command is run again. Without -o the file is named
    after the cartridge; if that name is taken by other bytes (and no --force), a free NAME-2.bin is used.
    """
    check_outputs({"-o": output}, force=force)
    with (
        open_adapter(device) as adapter,
        tqdm(
            total=1, unit="B", unit_scale=True, desc="dump", leave=False, disable=True if as_json else None
        ) as bar,
    ):

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        if not as_json:
            info = adapter.info
            click.echo(
                f"adapter: {device} (serial {info.serial}, firmware {info.firmware}, "
                f"protocol {info.protocol})"
            )
        result = dump_cartridge(
            adapter,
            output,
            mapper=None if mapper == "auto" else mapper,
            passes=passes,
            keep_unverified=keep_unverified,
            replace=force,
            progress=progress,
            notice=lambda text: click.echo(f"note: {text}", err=True),
        )
    if as_json:
        click.echo(json.dumps(result.report(), indent=2))
    else:
        _print_report(result)
    if not result.verified:
        saved = f"saved anyway to {result.output}" if result.written else "nothing was written"
        raise HilbridgeError(
            f"the dump is not verified: {len(result.unstable)} address(es) read inconsistently; {saved}",
            hint="clean the cartridge contacts and dump again"
            + ("" if result.written else " (or --keep-unverified)"),
        )


def _print_report(result: DumpResult) -> None:
    report = result.report()
    click.echo(f"detected: {report['mapper']}, {report['size']} bytes")
    for reason in report["reasons"]:
        click.echo(f"  - {reason}")
    if result.resumed:
        click.echo("resumed an interrupted dump")
    click.echo(f"crc32: {report['crc32']}  sha1: {report['sha1']}")
    if not result.matches:
        click.echo("identified: not in the cartridge list")
    for match in result.matches:
        quality = "" if match.exact else " (CRC32 only: SHA-1 differs, bad dump?)"
        click.echo(f"identified: {match.cartridge.name}: {match.cartridge.description}{quality}")
    link = report["link"]
    if link["retransmits"] or link["bad_frames"]:
        click.echo(
            f"link: {link['retransmits']} request(s) sent again, {link['bad_frames']} damaged frame(s)"
        )
    if result.recovered:
        click.echo(f"recovered: {len(result.recovered)} byte(s) differed once and then read consistently")
    if result.unstable:
        click.echo(f"unstable: {len(result.unstable)} address(es) (image offset: values seen)")
        for offset, values in sorted(result.unstable.items())[:UNSTABLE_SHOWN]:
            click.echo(f"  0x{offset:04x}: " + " ".join(f"{v:02x}" for v in values))
    if result.written:
        state = "verified" if result.verified else "NOT verified"
        click.echo(f"wrote {result.output} ({state}, {len(result.image)} bytes, {result.seconds:.2f} s)")
