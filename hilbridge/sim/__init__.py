"""The simulated adapter: protocol device side, simulated cartridge slot, fault injection, servers.

`build_endpoint(options)` makes the device the name `sim` stands for. Options come as a query string:
`sim?cart=FILE&type=o2_rally&faults=drop=0.01,dup=0.01&serial=SIM-0002`; without `cart` the slot
holds the demo cartridge (`type` and `size` pick a demo image of another mapper type). `region=pal`
and `input=MOVIE` set up the console that runs during captures (its region, the input movie it plays);
`deviation=NAME&frame=F&seed=S` makes it deviate from the emulator in one seeded, documented way
(`hilbridge.sim.deviations`, docs/check.md).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.inputs import NO_INPUT, read_input_movie
from hilbridge.machine.timing import REGIONS
from hilbridge.sim.demo import DEMO_MAPPER, DEMO_SIZE, demo_image
from hilbridge.sim.device import ConsoleSetup, SimulatedAdapter
from hilbridge.sim.faults import FaultPlan, FaultyEndpoint

SIM_OPTIONS = ("cart", "type", "size", "faults", "serial", "region", "input", "deviation", "frame", "seed")


def parse_options(query: str) -> dict[str, str]:
    """`cart=F&type=T&...` → dict; unknown options are a user error."""
    options = {key: values[-1] for key, values in parse_qs(query, keep_blank_values=True).items()}
    unknown = set(options) - set(SIM_OPTIONS)
    if unknown:
        raise HilbridgeError(
            f"unknown simulator option {sorted(unknown)[0]!r}", hint="options: " + ", ".join(SIM_OPTIONS)
        )
    return options


def deviation_factory(options: dict[str, str]):
    """The capture console's factory for `deviation`, `frame` and `seed` (None: no deviation)."""
    if not options.get("deviation"):
        if "frame" in options or "seed" in options:
            raise HilbridgeError(
                "simulator options frame and seed belong to a deviation", hint="deviation=NAME"
            )
        return None
    from hilbridge.sim.deviations import Deviation, deviant_console

    return deviant_console(
        Deviation.parse(options["deviation"], options.get("frame", "0"), options.get("seed", "0"))
    )


def build_device(
    cart: str | None = None,
    mapper: str | None = None,
    size: int | None = None,
    faults: FaultPlan | None = None,
    serial: str = "SIM-0001",
    console: ConsoleSetup | None = None,
) -> SimulatedAdapter:
    """A simulated adapter holding the cartridge file `cart` (or a demo image) in its slot."""
    plan = faults or FaultPlan()
    if cart:
        try:
            image = Path(cart).read_bytes()
        except OSError as error:
            where = SourceLocation(cart)
            raise HilbridgeError(f"cannot read the cartridge: {error.strerror}", where) from None
        cartridge = load_cartridge(image, mapper, name=cart)
    else:
        chosen = mapper or DEMO_MAPPER
        if size is None:
            from hilbridge.machine.cartridge import MAPPER_TYPES

            if chosen not in MAPPER_TYPES:
                raise HilbridgeError(f"mapper {chosen!r} is not emulated")
            size = DEMO_SIZE if DEMO_SIZE in MAPPER_TYPES[chosen].sizes else max(MAPPER_TYPES[chosen].sizes)
        try:
            image = demo_image(chosen, size)
        except ValueError as error:
            raise HilbridgeError(str(error)) from None
        cartridge = load_cartridge(image, chosen, name=f"demo-{chosen}-{size}")
    return SimulatedAdapter(
        cartridge, serial=serial, unstable=plan.unstable_bits(), seed=plan.seed, console=console
    )


def build_endpoint(query: str = "") -> SimulatedAdapter | FaultyEndpoint:
    """The device `sim?query` names, wrapped in its faults when it has any."""
    options = parse_options(query)
    plan = FaultPlan.parse(options.get("faults", ""))
    size = options.get("size")
    try:
        size_value = int(size, 0) if size else None
    except ValueError:
        raise HilbridgeError(f"simulator size {size!r} is not a number") from None
    region = options.get("region", "ntsc")
    if region not in REGIONS:
        raise HilbridgeError(f"unknown simulator region {region!r}", hint=", ".join(REGIONS))
    movie = read_input_movie(options["input"]) if options.get("input") else NO_INPUT
    device = build_device(
        options.get("cart"),
        options.get("type"),
        size_value,
        plan,
        options.get("serial", "SIM-0001"),
        ConsoleSetup(region, movie),
    )
    device.console_factory = deviation_factory(options)
    return FaultyEndpoint(device, plan) if plan.active else device
