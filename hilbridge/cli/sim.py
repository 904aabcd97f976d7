"""`hilbridge sim serve`: run the simulated adapter for other processes (socket, RFC 2217 or pty)."""

from __future__ import annotations

import contextlib

import click

from hilbridge.sim import build_device
from hilbridge.sim.faults import FaultPlan
from hilbridge.sim.serve import IDLE_TIMEOUT, serve_pty, serve_socket


@click.group()
def sim() -> None:
    """The simulated adapter (no hardware needed)."""


@sim.command()
@click.option("--port", type=click.IntRange(0, 65535), help="Serve on TCP 127.0.0.1:PORT (0: any free port).")
@click.option(
    "--rfc2217",
    is_flag=True,
    help="With --port: speak RFC 2217 (Telnet COM port control) for -d rfc2217://127.0.0.1:PORT.",
)
@click.option("--pty", "use_pty", is_flag=True, help="Serve on a new pseudo-terminal (like /dev/ttyACM0).")
@click.option("--cart", type=click.Path(dir_okay=False), help="Cartridge image in the slot (default: demo).")
@click.option("--type", "mapper", help="Mapper of --cart, or of the demo image (e.g. o2_rally).")
@click.option("--size", type=int, help="Size of the demo image in bytes.")
@click.option("--faults", default="", help="Faults, e.g. drop=0.01,corrupt=0.01,dup=0.01,seed=1.")
@click.option("--serial", default="SIM-0001", show_default=True, help="Serial number reported by HELLO.")
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0),
    default=IDLE_TIMEOUT,
    show_default=True,
    help="Drop a socket client that sends nothing for this many seconds (0: never).",
)
def serve(
    port: int | None,
    rfc2217: bool,
    use_pty: bool,
    cart: str | None,
    mapper: str | None,
    size: int | None,
    faults: str,
    serial: str,
    idle_timeout: float,
) -> None:
    """Serve the simulated adapter until interrupted; prints the device name to pass to -d.

    One socket client at a time (others get BUSY); anyone on this machine can connect: no authentication.
    """
    if (port is None) == (not use_pty):
        raise click.UsageError("give exactly one of --port N and --pty")
    if rfc2217 and port is None:
        raise click.UsageError("--rfc2217 serves on a TCP port: give --port N too")
    plan = FaultPlan.parse(faults)
    device = build_device(cart, mapper, size, plan, serial)

    def announce(name: str) -> None:
        click.echo(f"simulated adapter on {name}  (use: hilbridge dump -d {name})")
        if plan.active:
            click.echo(
                f"note: simulated faults {faults}: clients that get no answer may be hearing them", err=True
            )
        click.get_text_stream("stdout").flush()

    with contextlib.suppress(KeyboardInterrupt):
        if use_pty:
            serve_pty(device, plan, announce=announce)
        else:
            serve_socket(
                device,
                port or 0,
                plan,
                announce=announce,
                rfc2217=rfc2217,
                idle_timeout=idle_timeout or None,
                report=lambda text: click.echo(f"note: {text}", err=True),
            )
