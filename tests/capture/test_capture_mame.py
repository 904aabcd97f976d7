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


def image_and_slot(name: str) -> tuple[bytes, str]:
    spec = CARTS[name]
    image = build_cart(spec)
    return image, spec.slot or ("o2_rally" if len(image) == 16384 else "o2_rom")


def mame_items(name, frames, kinds, movie=None, region="ntsc") -> list:
    """The items of a MAME capture of cart `name`."""
    require_tool("mame")
    image, slot = image_and_slot(name)
    source = open_capture(
        "mame", load_cartridge(image, slot), frames=frames, kinds=kinds, region=region, inputs=movie
    )
    assert source.header.source == "mame" and source.header.mapper == slot
    return captured(source)


def mame_and_emulator(name, frames, kinds, movie=None, region="ntsc"):
    """The items of a MAME capture, and what the emulator's bus must give for them."""
    theirs = mame_items(name, frames, kinds, movie, region)
    image, slot = image_and_slot(name)
    ours = emulator_items(image, MAME_EQUIVALENT_MAPPERS.get(slot, slot), frames, region, movie)
    return theirs, [item for item in ours if getattr(item, "kind", None) in (None, *kinds)]


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
    without = mame_items("input_read", 8, ("FETCH", "MOVX_WRITE"))  # no emulator run: not compared
    assert without != theirs  # the cart saw the keys


def test_mame_capture_shows_its_own_o2_rom_wiring_where_the_fetches_from_0c00h_differ():
    # MAME 0.251's o2_rom runs 0400h-07FFh at 0C00h-0FFFh; the console (our o2_rom) runs 0800h-0BFFh
    require_tool("mame")
    image = build_cart(CARTS["bank_o2rom_4k"])
    theirs = captured(open_capture("mame", load_cartridge(image, "o2_rom"), frames=3, kinds=("FETCH",)))
    ours = [item for item in emulator_items(image, "o2_rom", 3) if getattr(item, "kind", "FETCH") == "FETCH"]
    first = next(index for index, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b)
    assert theirs[first].address == ours[first].address and 0xC00 <= theirs[first].address <= 0xFFF
    fetch = theirs[first]
    bank = (fetch.p1 & 0x03) % (len(image) // 2048)  # P10/P11 pick the 2 KB bank
    assert fetch.value == image[bank * 2048 + fetch.address - 0xC00]  # that bank's 0400h-07FFh


def test_a_cached_mame_capture_is_read_back_equal_and_any_change_runs_mame_again(tmp_path, monkeypatch):
    require_tool("mame")
    monkeypatch.setenv("HILBRIDGE_MAME_CACHE", str(tmp_path / "runs"))
    cart = load_cartridge(build_cart(CARTS["input_read"]), "o2_rom")
    kinds = ("FETCH", "MOVX_WRITE", "P1")

    def capture(frames=4, movie=None):
        source = open_capture("mame", cart, frames=frames, kinds=kinds, inputs=movie)
        return captured(source), source.from_cache

    first, first_cached = capture()
    again, again_cached = capture()
    assert (first_cached, again_cached) == (False, True)
    assert again == first
    longer, longer_cached = capture(frames=5)  # another frame count is another run
    assert not longer_cached and longer[: len(first)] == first and len(longer) > len(first)
    pressed, pressed_cached = capture(movie=parse_input_movie("1 press A\n3 release A", "movie"))
    assert not pressed_cached and pressed != first


def test_a_mame_capture_closed_early_is_kept_whole_in_the_cache(tmp_path, monkeypatch):
    # a check closes its source at its last frame, before MAME's: MAME finishes, the whole run is kept
    require_tool("mame")
    cart = load_cartridge(build_cart(CARTS["input_read"]), "o2_rom")
    kinds = ("FETCH", "MOVX_WRITE", "P1")
    monkeypatch.setenv("HILBRIDGE_MAME_CACHE", "")
    plain = captured(open_capture("mame", cart, frames=4, kinds=kinds))
    monkeypatch.setenv("HILBRIDGE_MAME_CACHE", str(tmp_path / "runs"))
    first = open_capture("mame", cart, frames=4, kinds=kinds)
    items = first.items()
    assert [next(items) for _ in range(100)] == plain[:100]
    items.close()
    first.close()
    again = open_capture("mame", cart, frames=4, kinds=kinds)
    assert (first.from_cache, captured(again), again.from_cache) == (False, plain, True)
