"""The simulated adapter: protocol device side, simulated cartridge slot, fault injection, servers.

`build_endpoint(options)` makes the device the name `sim` stands for. Options come as a query string:
`sim?cart=FILE&type=o2_rally&faults=drop=0.01,dup=0.01&serial=SIM-0002`; without `cart` the slot
holds the demo cartridge (`type` and `size` pick a demo image of another mapper type). The console
that captures run on takes `region=pal` and a seeded deviation from the emulator,
`deviation=NAME&frame=F&seed=S` (`hilbridge.sim.deviations`, docs/check.md).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.sim.demo import DEMO_MAPPER, DEMO_SIZE, demo_image
from hilbridge.sim.device import SimulatedAdapter
from hilbridge.sim.faults import FaultPlan, FaultyEndpoint

SIM_OPTIONS = ("cart", "type", "size", "faults", "serial", "region", "deviation", "frame", "seed")


def parse_options(query: str) -> dict[str, str]:
    """`cart=F&type=T&...` → dict; unknown options are a user error."""
    options = {key: values[-1] for key, values in parse_qs(query, keep_blank_values=True).items()}
    unknown = set(options) - set(SIM_OPTIONS)
    if unknown:
        raise HilbridgeError(
            f"unknown simulator option {sorted(unknown)[0]!r}", hint="options: " + ", ".join(SIM_OPTIONS)
        )
    return options


def console_options(options: dict[str, str]) -> dict[str, object]:
    """The capture console's options from `region`, `deviation`, `frame` and `seed`."""
    from hilbridge.machine.timing import REGIONS

    chosen: dict[str, object] = {}
    region = options.get("region", "ntsc")
    if region not in REGIONS:
        raise HilbridgeError(f"unknown simulator region {region!r}", hint="regions: " + ", ".join(REGIONS))
    chosen["region"] = region
    if options.get("deviation"):
        from hilbridge.sim.deviations import Deviation, deviant_console

        deviation = Deviation.parse(options["deviation"], options.get("frame", "0"), options.get("seed", "0"))
        chosen["console"] = deviant_console(deviation)
    elif "frame" in options or "seed" in options:
        raise HilbridgeError(
            "simulator options frame and seed belong to a deviation", hint="add deviation=NAME"
        )
    return chosen


def build_device(
    cart: str | None = None,
    mapper: str | None = None,
    size: int | None = None,
    faults: FaultPlan | None = None,
    serial: str = "SIM-0001",
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
    return SimulatedAdapter(cartridge, serial=serial, unstable=plan.unstable_bits(), seed=plan.seed)


def build_endpoint(query: str = "") -> SimulatedAdapter | FaultyEndpoint:
    """The device `sim?query` names, wrapped in its faults when it has any."""
    options = parse_options(query)
    plan = FaultPlan.parse(options.get("faults", ""))
    size = options.get("size")
    try:
        size_value = int(size, 0) if size else None
    except ValueError:
        raise HilbridgeError(f"simulator size {size!r} is not a number") from None
    device = build_device(
        options.get("cart"), options.get("type"), size_value, plan, options.get("serial", "SIM-0001")
    )
    device.console_options = console_options(options)
    return FaultyEndpoint(device, plan) if plan.active else device
