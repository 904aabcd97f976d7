"""The check with MAME 0.251 as the console: its verdict is `oracle compare`'s on every fixture cart,
and a real difference between MAME 0.251 and the console (o2_rom's 0C00h-0FFFh, docs/accuracy.md) is
reported at its first access."""

from __future__ import annotations

import pytest
from check_support import SimulatedCapture, fixture_cart
from conftest import require_tool
from fixture_runs import REGIONS, SPECS, compare_group, emulator_run, mame_run

from hilbridge.capture.sources import open_capture
from hilbridge.check import check
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import CaptureRecord
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.oracle.emulator import MAME_EQUIVALENT_MAPPERS
from hilbridge.oracle.trace import compare_runs

pytestmark = pytest.mark.mame
FRAMES = 60


def mame_source(cart, region: str):
    require_tool("mame")
    try:
        return open_capture("mame", cart, frames=FRAMES + 30, region=region)
    except HilbridgeError as error:
        if "not built yet" in error.message:
            pytest.skip("the mame capture source (wave/capture) is not merged yet")
        raise


def oracle_verdict(name: str, region: str) -> str:
    """What `hilbridge oracle compare` decides for the same frames: the first FRAMES frames of the
    oracle tests' own runs of the cart (its spec's frames and reads; a trace's first frames are a
    shorter run's), so MAME runs once per cart and region for both."""
    theirs, ours = mame_run(name, region).trace, emulator_run(name, region).trace
    _, found = compare_runs(ours, theirs, FRAMES)
    return "equal" if found is None else "diverged"


@pytest.mark.parametrize(
    ("name", "region"),
    [
        pytest.param(name, region, marks=compare_group(name, region))  # beside the oracle's tests
        for name in sorted(SPECS)
        for region in REGIONS
    ],
)
def test_the_checks_verdict_is_the_oracles(name: str, region: str) -> None:
    spec = SPECS[name]
    image = fixture_cart(name).image
    mapper = MAME_EQUIVALENT_MAPPERS.get(spec.slot, spec.slot)
    cart = load_cartridge(image, mapper, name=name)  # the emulator as MAME 0.251 maps the slot
    source = mame_source(fixture_cart(name), region)  # MAME with its own slot type
    result = check(cart, source, frames=FRAMES, region=region, tolerance=1)
    assert result.verdict == oracle_verdict(name, region), result.summary()


def first_mapping_difference(name: str) -> int:
    """Cycle of the first fetch in 0C00h-0FFFh where o2_rom and MAME 0.251's mapping give different
    bytes, on the simulated console's (plain) fetch stream."""
    image = fixture_cart(name).image
    ours, mames = load_cartridge(image, "o2_rom"), load_cartridge(image, "o2_rom_mame0251")
    for item in SimulatedCapture(ours, frames=FRAMES, kinds=("FETCH",)).items():
        high = isinstance(item, CaptureRecord) and item.address >= 0xC00
        if high and ours.fetch(item.address, item.p1, 0xFF) != mames.fetch(item.address, item.p1, 0xFF):
            return item.cycle
    raise AssertionError("the cart never reaches a differing byte above 0BFFh")


def test_o2_rom_0c00h_as_mame_0251_maps_it_is_reported_at_its_first_access() -> None:
    cart = fixture_cart("bank_o2rom_4k")  # our o2_rom: 0C00h reads what 0800h holds, as the console does
    source = mame_source(cart, "ntsc")
    result = check(cart, source, frames=FRAMES, tolerance=1)
    assert result.verdict == "diverged", result.summary()
    first = first_mapping_difference("bank_o2rom_4k")
    if "FETCH" in source.header.kinds:
        assert (result.divergence.cycle, result.divergence.kind) == (first, "fetch"), result.summary()
    else:
        assert result.divergence.cycle >= first, result.summary()
