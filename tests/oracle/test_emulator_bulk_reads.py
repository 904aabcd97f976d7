"""`run_emulator` places and values a skipped polling loop's reads in bulk (`Vdc.read_positions`,
`Console.peek_reads`): its traces must be those of the console telling its bus listener of every
read one by one, on every fixture cart, in both regions, with reads traced and without."""

from __future__ import annotations

import pytest
from conftest import quick_few
from fixture_runs import REGIONS, SPECS, cart_image

from hilbridge.machine import timing
from hilbridge.machine.bus import READ, BusAccess
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.vdc import Vdc
from hilbridge.oracle.emulator import MAME_EQUIVALENT_MAPPERS, run_emulator
from hilbridge.oracle.trace import Access

FRAMES = 40
QUICK_CARTS = ("bank_4in1", "input_read", "vdc_regs", "video_midframe")
"""Polling with bank switches, with key reads, beside register writes (half its reads placed one by
one), and mid-frame (`quick_few`)."""


def read_by_read(name: str, region: str) -> list[Access]:
    """The trace with reads as the console's listener sees it: every skipped read peeked and told
    alone (without reads, the same run's writes: what a listener is told does not change the run)."""
    slot = SPECS[name].slot
    cart = load_cartridge(cart_image(name), MAME_EQUIVALENT_MAPPERS.get(slot, slot))
    vdc = Vdc(timing.REGIONS[region])
    console = Console(cart, region=region, vdc=vdc)
    accesses: list[Access] = []

    def record(access: BusAccess) -> None:
        line, hpos = vdc.position(access.cycle)
        accesses.append(Access(access.kind, access.cycle, access.p1, access.address, access.value,
                               console.frame, line, hpos))  # fmt: skip

    console.add_bus_listener(record)
    for frame in range(FRAMES):
        SPECS[name].inputs.apply(console, frame)
        console.run_frames(1)
    return accesses


@pytest.fixture
def bulk_placed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many reads `Vdc.read_positions` placed in bulk."""
    placed: list[int] = []
    original = Vdc.read_positions

    def counted(self: Vdc, address: int, first: int, period: int, count: int):
        found = original(self, address, first, period, count)
        placed.append(0 if found is None else count)
        return found

    monkeypatch.setattr(Vdc, "read_positions", counted)
    return placed


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("name", quick_few(SPECS, QUICK_CARTS))
def test_bulk_reads_give_the_trace_of_telling_each_read(name: str, region: str) -> None:
    spec = SPECS[name]
    told = read_by_read(name, region)
    for reads in (True, False):
        run = run_emulator(cart_image(name), frames=FRAMES, region=region, slot=spec.slot, reads=reads,
                           inputs=spec.inputs)  # fmt: skip
        assert run.trace.accesses == [a for a in told if reads or a.kind != READ], f"reads={reads}"
        assert {type(access) for access in run.trace.accesses} == {Access}  # named, not plain tuples


def test_a_polling_cart_has_most_of_its_reads_placed_in_bulk(bulk_placed: list[int]) -> None:
    run = run_emulator(cart_image("bank_4in1"), frames=FRAMES, region="pal", slot="o2_4in1", reads=True)
    reads = sum(access.kind == READ for access in run.trace.accesses)
    assert sum(bulk_placed) > 0.9 * reads
