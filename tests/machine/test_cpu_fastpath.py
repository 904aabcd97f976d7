"""The fast run loop must equal the reference `step()` loop exactly, on any program."""

from __future__ import annotations

import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
from machine_doubles import ScriptedVdc

from hilbridge.machine.bios import UnknownBiosWarning
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console


def run(image: bytes, irq_at: tuple[int, ...], cycles: int, fast: bool):
    vdc = ScriptedVdc(irq_at=irq_at, t1_period=23, t1_high=4)
    console = Console(load_cartridge(image, "o2_rom"), vdc=vdc)
    records = []
    console.add_bus_listener(records.append)
    if fast:
        console.cpu.run_until(cycles)
    else:
        while console.cycle < cycles:
            console.cpu.step()
    return console.cpu.state(), bytes(console.ram), records, vdc.writes


@settings(max_examples=60, deadline=None)
@given(
    image=st.binary(min_size=2048, max_size=2048),
    irq_at=st.lists(st.integers(0, 3000), max_size=6).map(lambda cycles: tuple(sorted(cycles))),
)
def test_fast_loop_equals_stepping_on_random_programs(image, irq_at):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        assert run(image, irq_at, 3000, fast=True) == run(image, irq_at, 3000, fast=False)
