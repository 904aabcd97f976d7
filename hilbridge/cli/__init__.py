"""The `hilbridge` command line: a thin layer of click commands over the library, one module per group."""

import click

force_option = click.option(
    "--force", is_flag=True, help="Replace output files that exist (never an input; docs/usage.md)."
)
