"""Entry point: the top-level `hilbridge` group and the table of command groups it offers.

Command modules are imported only when their command runs (or help lists them), so `hilbridge
--version` does not pay for numpy, the emulator or pyserial.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import click

from hilbridge import __version__
from hilbridge.errors import HilbridgeError, HilbridgeWarning

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
    ("hilbridge.cli.screen", "screen"),
    ("hilbridge.cli.bridge", "bridge"),
    ("hilbridge.cli.check", "check"),
    ("hilbridge.cli.capture", "capture"),
    ("hilbridge.cli.firmware", "firmware"),
)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """hilbridge's own warnings as one `warning:` line (the message names its file); others as Python's."""
    if issubclass(category, HilbridgeWarning):
        text = str(message)
        where, colon, rest = text.partition(": ")
        click.echo(f"{where}: warning: {rest}" if colon else f"warning: {text}", err=True)
        return
    _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


_MODULES = {attribute: module for module, attribute in COMMANDS}


class _Root(click.Group):
    """Resolves commands from COMMANDS on demand; turns `HilbridgeError` into one line and exit 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [attribute for _, attribute in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = _MODULES.get(cmd_name)
        if module is None:
            return None
        command = getattr(importlib.import_module(module), cmd_name)
        return command if isinstance(command, click.Command) else None

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        warnings.showwarning = _show_warning
        try:
            return super().invoke(ctx)
        except HilbridgeError as error:
            click.echo(str(error), err=True)
            sys.exit(2)
        finally:
            warnings.showwarning = _python_show_warning


@click.group(cls=_Root, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hilbridge")
def cli() -> None:
    """Hardware-in-the-loop test and bridge tool for the Odyssey² / Videopac."""


def main() -> None:
    cli()
