"""The check's model of the adapter's capture (hilbridge.check.compression: sequential fetches left
out, accesses at their bus cycles) against the firmware's sniff decoder in C, both fed the slot
activity of the reference emulator on fixture cartridges (the decoder through the sniff timing
model of test_pio_sniff, without the PIO program, so it is cheap)."""

from __future__ import annotations

import ctypes

import pytest
from bus_waves import slot_accesses
from cart_fixtures import image
from conftest import quick_few
from pio_harness import tool
from test_pio_sniff import _cycle_q8, decode, decoder_library, synthetic_events  # noqa: F401 (a fixture)

from hilbridge.check.compression import FetchCompressor
from hilbridge.check.emulator import FETCH, READ, WRITE, EmulatorSide
from hilbridge.machine import bus
from hilbridge.machine.cartridge import load_cartridge

CYCLES = 30000
NAMES = {FETCH: bus.FETCH, READ: bus.READ, WRITE: bus.WRITE}


@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize(
    ("name", "mapper"),
    quick_few(
        [("cpu_alu", "o2_rom"), ("bank_rally", "o2_rally"), ("xram", "o2_rom")], [("bank_rally", "o2_rally")]
    ),
)
def test_compressing_the_emulators_events_gives_what_the_adapter_decodes(
    decoder_library: ctypes.CDLL,  # noqa: F811 (the fixture imported above)
    name: str,
    mapper: str,
    region: str,
) -> None:
    accesses = slot_accesses(image(name), mapper, region, CYCLES)
    cycle_pio = tool("gen_timing").load_timing().cycle_pio(region)
    decoded = decode(decoder_library, synthetic_events(accesses, cycle_pio), _cycle_q8(region))

    side = EmulatorSide(
        load_cartridge(image(name), mapper), region=region, kinds=("FETCH", "MOVX_READ", "MOVX_WRITE")
    )
    events = []
    while side.console.cycle < CYCLES:
        events += side.next_frame().events
    modelled = [event for event in FetchCompressor().compress(events) if event[1] in NAMES]
    base = modelled[0][0]
    end = accesses[-1].cycle - base - 4  # both stop within an instruction of CYCLES
    mine = [(c - base, NAMES[k], a, v, p) for c, k, a, v, p in modelled if c - base < end]
    theirs = [record for record in decoded if record[0] < end]
    assert len(theirs) < len([a for a in accesses if a.cycle - base < end])  # something was compressed
    assert any(record[1] != bus.FETCH for record in theirs)
    assert mine == theirs
