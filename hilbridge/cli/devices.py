"""`hilbridge devices`: the adapters this machine can reach, and the simulated one."""

from __future__ import annotations

import json

import click

from hilbridge.link.discovery import list_devices


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def devices(as_json: bool) -> None:
    """List adapters: serial ports with the adapter's USB VID:PID, USB adapters, and `sim`.

    Pass the first column to -d of dump, load and unload.
    """
    entries = list_devices()
    if as_json:
        click.echo(
            json.dumps([{"name": e.name, "kind": e.kind, "description": e.description} for e in entries])
        )
        return
    for entry in entries:
        click.echo(f"{entry.name:<16} {entry.kind:<7} {entry.description}")
