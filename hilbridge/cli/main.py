"""Entry point: the top-level `hilbridge` group and the table of command groups it offers."""

from __future__ import annotations

import importlib
import sys

import click

from hilbridge import __version__
from hilbridge.errors import HilbridgeError

# (module, attribute) of each command or group. Only capabilities that work are listed.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("hilbridge.cli.game", "game"),
    ("hilbridge.cli.carts", "carts"),
    ("hilbridge.cli.disasm", "disasm"),
    ("hilbridge.cli.asm", "asm"),
    ("hilbridge.cli.oracle", "oracle"),
    ("hilbridge.cli.devices", "devices"),
    ("hilbridge.cli.dump", "dump"),
    ("hilbridge.cli.load", "load"),
    ("hilbridge.cli.load", "unload"),
    ("hilbridge.cli.sim", "sim"),
    ("hilbridge.cli.emu", "emu"),
    ("hilbridge.cli.check", "check_command"),
    ("hilbridge.cli.capture", "capture"),
)


class _Root(click.Group):
    """Turns `HilbridgeError` into a one-line message and exit status 2, never a traceback."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except HilbridgeError as error:
            click.echo(str(error), err=True)
            sys.exit(2)


@click.group(cls=_Root, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hilbridge")
def cli() -> None:
    """Hardware-in-the-loop test and bridge tool for the Odyssey² / Videopac."""


for _module, _attribute in COMMANDS:
    cli.add_command(getattr(importlib.import_module(_module), _attribute))


def main() -> None:
    cli()
