"""MAME 0.251 as the console of a capture: its items equal our emulator's bus, cycle for cycle, on the
fixture carts where `oracle compare` says the two are equal (with MAME's o2_rom wiring, as there)."""

from __future__ import annotations

import pytest
from conftest import require_tool
from test_capture_sources import CARTS, captured, emulator_items

from hilbridge.capture.sources import open_capture
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.inputs import parse_input_movie
from hilbridge.oracle.carts import build_cart
from hilbridge.oracle.emulator import MAME_EQUIVALENT_MAPPERS

pytestmark = [pytest.mark.mame, pytest.mark.slow]


def mame_and_emulator(name, frames, kinds, movie=None, region="ntsc"):
    require_tool("mame")
    spec = CARTS[name]
    image = build_cart(spec)
    slot = spec.slot or ("o2_rally" if len(image) == 16384 else "o2_rom")
    source = open_capture(
        "mame", load_cartridge(image, slot), frames=frames, kinds=kinds, region=region, inputs=movie
    )
    assert source.header.source == "mame" and source.header.mapper == slot
    ours = emulator_items(image, MAME_EQUIVALENT_MAPPERS.get(slot, slot), frames, region, movie)
    return captured(source), [item for item in ours if getattr(item, "kind", None) in (None, *kinds)]


@pytest.mark.parametrize("name", sorted(CARTS))
def test_mame_capture_equals_the_emulators_bus(name):
    # every fixture cart (`oracle compare` finds them all equal to MAME), PAL for every other one
    region = "pal" if sorted(CARTS).index(name) % 2 else "ntsc"
    theirs, ours = mame_and_emulator(name, 3, ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1"), region=region)
    assert len(theirs) > 10_000
    assert theirs == ours


def test_mame_capture_cycles_stay_exact_past_the_clock_over_15_drift():
    # a clock / 15 stamp (357 954.47 cycles/s) first falls a cycle behind near cycle 335 600 (frame 56)
    theirs, ours = mame_and_emulator("video_midframe", 60, ("FETCH", "MOVX_WRITE", "P1"))
    assert theirs[-1].cycle > 355_000
    assert theirs == ours


def test_mame_plays_the_input_movie_frame_exactly():
    movie = parse_input_movie("2 press A\n4 release A\n5 joy0 up+fire\n6 joy0 none\n6 press 3", "movie")
    theirs, ours = mame_and_emulator("input_read", 8, ("FETCH", "MOVX_WRITE"), movie)
    assert theirs == ours
    without, _ = mame_and_emulator("input_read", 8, ("FETCH", "MOVX_WRITE"))
    assert without != theirs  # the cart saw the keys
