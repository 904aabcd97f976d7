"""Capture sources: the simulated adapter's live capture against the emulator's own bus listener,
gaps for everything that goes missing, cycle unwrapping, frame limits, input movies."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import served_simulator

from hilbridge.capture.file import write_capture
from hilbridge.capture.sources import (
    ALL_KINDS,
    AdapterSource,
    ConsoleSource,
    CycleUnwrapper,
    _unwrapped_batch,
    open_capture,
)
from hilbridge.capture.stream import CaptureSource, FrameSync, Gap, ResetDetected
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import AdapterInfo, CaptureRecord
from hilbridge.link.capture_codec import chunk_fields
from hilbridge.machine.bus import FETCH, READ, WRITE, BusAccess
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import parse_input_movie
from hilbridge.oracle.carts import build_cart, load_manifest

CARTS = {
    spec.name: spec for spec in load_manifest(Path(__file__).resolve().parents[2] / "fixtures" / "carts")
}
KIND = {FETCH: "FETCH", READ: "MOVX_READ", WRITE: "MOVX_WRITE"}


def emulator_items(image: bytes, mapper: str, frames: int, region: str = "ntsc", movie=None) -> list:
    """What a slot capture of `frames` console frames must hold, built straight from the console's bus
    listener: every fetch and MOVX access stamped before the end of frame `frames - 1`, a P1 record
    before the access that first shows changed P10/P11/P14, a reset marker at each fetch of 0400h and
    a frame sync at each fetch of 0406h."""
    console = Console(load_cartridge(image, mapper), region=region)
    out: list = []
    state = {"p1": console.p1 & 0x13, "frame": 0}

    def listen(access: BusAccess) -> None:
        if access.p1 & 0x13 != state["p1"]:
            state["p1"] = access.p1 & 0x13
            out.append(CaptureRecord(access.cycle, "P1", 0, state["p1"], access.p1))
        out.append(CaptureRecord(access.cycle, KIND[access.kind], access.address, access.value, access.p1))
        if access.kind == FETCH and access.address == 0x400:
            out.append(ResetDetected(access.cycle))
        if access.kind == FETCH and access.address == 0x406:
            out.append(FrameSync(state["frame"], access.cycle))
            state["frame"] += 1

    console.add_bus_listener(listen, fetches=True)
    while console.frame < frames:
        if movie is not None:
            movie.apply(console, console.frame)
        console.run_frames(1)
    end = console.frame_end_cycle(frames - 1)
    return [item for item in out if item.cycle < end]


def captured(source: CaptureSource) -> list:
    try:
        return list(source.items())
    finally:
        source.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["interrupts", "bank_o2rom_4k"])
@pytest.mark.parametrize("region", ["ntsc", "pal"])
def test_sim_capture_equals_the_emulators_bus_for_n_frames(name, region):
    spec = CARTS[name]
    image = build_cart(spec)
    mapper = "o2_rom" if spec.slot in (None, "o2_rom") else spec.slot
    cart = load_cartridge(image, mapper)
    source = open_capture("sim", cart, frames=5, region=region)
    assert source.header.cart_sha1 == hashlib.sha1(image).hexdigest()
    assert source.header.region == region and source.header.kinds == ALL_KINDS
    items = captured(source)
    assert items == emulator_items(image, mapper, 5, region)
    assert isinstance(items[0], CaptureRecord) and items[1] == ResetDetected(items[0].cycle)


@pytest.mark.parametrize("name", ["interrupts", "bank_rally"])
def test_console_source_gives_what_the_simulated_adapter_gives(name):
    spec = CARTS[name]
    image = build_cart(spec)
    cart = load_cartridge(image, spec.slot)
    direct = ConsoleSource(cart, frames=3, region="pal")
    assert direct.header.cart_sha1 == hashlib.sha1(image).hexdigest() and direct.header.region == "pal"
    items = captured(direct)
    assert items == captured(open_capture("sim", cart, frames=3, region="pal"))
    assert items == emulator_items(image, spec.slot, 3, "pal")


def test_frames_of_a_cart_with_the_vsync_hook_are_its_frame_syncs(tmp_path):
    source = open_capture("sim", frames=4)  # the demo cartridge fetches 0406h once per frame
    items = captured(source)
    syncs = [item for item in items if isinstance(item, FrameSync)]
    assert [sync.frame for sync in syncs] == [0, 1, 2]  # console frames 1-3 (frame 0 has none)
    path = tmp_path / "run.hbcap"
    write_capture(path, replace(source.header, source="adapter"), items)  # counted by frame syncs
    assert captured(open_capture(str(path), frames=1))[-1] == syncs[1]


def test_served_capture_runs_the_served_cart_and_switches_emulation_off(tmp_path):
    image = build_cart(CARTS["interrupts"])
    cart = load_cartridge(image, "o2_rom")
    source = open_capture("sim", cart, frames=2, serve=True)
    assert isinstance(source, AdapterSource)
    items = captured(source)
    assert items == emulator_items(image, "o2_rom", 2)


@pytest.mark.slow
def test_sim_plays_the_input_movie_frame_exactly(tmp_path):
    spec = CARTS["input_read"]
    image = build_cart(spec)
    movie_path = tmp_path / "keys.txt"
    movie_path.write_text("2 press A\n4 release A\n5 joy0 up+fire\n")
    source = open_capture("sim", load_cartridge(image, "o2_rom"), frames=7, inputs=str(movie_path))
    assert source.header.inputs == "2 press A\n4 release A\n5 joy0 up+fire\n"
    items = captured(source)
    movie = parse_input_movie(movie_path.read_text())
    assert items == emulator_items(image, "o2_rom", 7, movie=movie)
    assert items != emulator_items(image, "o2_rom", 7)  # the cart saw the keys


def test_capture_file_source_refuses_another_cartridge_and_limits_frames(tmp_path):
    image = build_cart(CARTS["interrupts"])
    cart = load_cartridge(image, "o2_rom")
    items = captured(open_capture("sim", cart, frames=4))
    source = open_capture("sim", cart, frames=4)
    path = tmp_path / "run.hbcap"
    write_capture(path, source.header, items)
    source.close()
    assert captured(open_capture(str(path), cart)) == items
    assert captured(open_capture(str(path), cart, frames=2)) == emulator_items(image, "o2_rom", 2)
    with pytest.raises(HilbridgeError, match="another cartridge"):
        open_capture(str(path), build_cart(CARTS["xram"]))


def test_a_real_adapter_cannot_play_a_movie(tmp_path):
    movie = tmp_path / "m.txt"
    movie.write_text("1 press A\n")
    with pytest.raises(HilbridgeError, match="not on the cartridge slot"):
        open_capture("socket://127.0.0.1:9", inputs=str(movie))


@pytest.mark.slow
def test_lost_chunks_on_a_noisy_link_become_gaps():
    image = build_cart(CARTS["interrupts"])
    expected = emulator_items(image, "o2_rom", 6)
    source = open_capture("sim?faults=corrupt=0.0001,seed=3", load_cartridge(image, "o2_rom"), frames=6)
    items = captured(source)
    gaps = [item for item in items if isinstance(item, Gap)]
    records = [item for item in items if not isinstance(item, Gap)]
    assert gaps and all("lost on the link" in gap.reason for gap in gaps)
    assert len(records) < len(expected)
    remaining = iter(expected)
    assert all(any(item == other for other in remaining) for item in records)  # in order, nothing invented


def test_a_device_that_stops_streaming_ends_with_a_gap_and_a_message():
    image = build_cart(CARTS["interrupts"])
    source = open_capture("sim?faults=disconnect=200000", load_cartridge(image, "o2_rom"), frames=1000)
    assert isinstance(source, AdapterSource)
    source.idle_seconds = 0.3
    source.adapter.link.max_timeout = 0.05
    source.adapter.link.retries = 2
    items = captured(source)
    assert isinstance(items[-1], Gap) and items[-1].reason.startswith("the device stopped streaming")
    assert "stopped streaming" in source.end_message
    assert sum(isinstance(item, FrameSync) for item in items) < 1000


class ScriptedAdapter:
    """An adapter double that plays scripted capture events and counters."""

    name = "scripted"
    info = AdapterInfo(3, "9.9.9", frozenset(), 0x1234, 4096, "X-1")

    def __init__(self, events, dropped_by_status, stop):
        self.events = list(events)
        self.dropped = list(dropped_by_status)
        self.stop = stop
        self.calls: list[str] = []

    def firmware_info(self):
        return "scripted build"

    def upload(self, image, mapper):
        self.calls.append(f"upload {len(image)} {mapper}")

    def emulation(self, enable):
        self.calls.append(f"emulation {'on' if enable else 'off'}")

    def capture_start(self, kinds):
        self.calls.append("start")

    def capture_events(self, timeout):
        return [self.events.pop(0)] if self.events else []

    def status(self):
        return {"capture_dropped": self.dropped.pop(0) if self.dropped else 0}

    def capture_stop(self):
        self.calls.append("stop")
        return self.stop

    def close(self):
        self.calls.append("close")


def chunk(seq, *records):
    return ("CAPTURE_CHUNK", chunk_fields(seq, list(records)))


def test_chunk_gaps_dropped_counters_and_wrapping_cycles(monkeypatch):
    monkeypatch.setattr("hilbridge.capture.sources.STATUS_SECONDS", 0.0)
    events = [
        chunk(0, (0xFFFFFFF0, 0, 0x400, 1, 0xFF)),
        ("RESET_DETECTED", {"cycle": 0xFFFFFFF0}),
        chunk(3, (0x00000005, 2, 0x10, 7, 0xF7)),  # chunks 1 and 2 lost; the cycle wrapped
        ("FRAME_SYNC", {"frame": 0, "cycle": 0x00000010}),
        chunk(4, (0x00000020, 0, 0x406, 9, 0xFF)),
        ("FRAME_SYNC", {"frame": 1, "cycle": 0x00000030}),
    ]
    adapter = ScriptedAdapter(events, [0, 0, 0, 5], {"chunks": 9, "records": 99, "dropped": 7})
    source = AdapterSource(adapter, frames=1)  # type: ignore[arg-type]
    items = captured(source)
    wrapped = 1 << 32
    assert items[:2] == [CaptureRecord(0xFFFFFFF0, "FETCH", 0x400, 1, 0xFF), ResetDetected(0xFFFFFFF0)]
    assert items[2] == Gap("2 capture chunk(s) lost on the link", chunks=2)
    assert CaptureRecord(wrapped + 5, "MOVX_WRITE", 0x10, 7, 0xF7) in items
    assert FrameSync(1, wrapped + 0x30) in items
    dropped = [item for item in items if isinstance(item, Gap) and "dropped" in item.reason]
    assert [gap.records for gap in dropped] == [5, 2]  # 5 seen by STATUS, 2 more by CAPTURE_STOP
    assert adapter.calls == ["start", "stop", "close"]
    assert source.header.adapter == "scripted (board 0x1234, firmware 9.9.9 [scripted build], serial X-1)"


def test_serving_switches_emulation_on_and_off_again_even_when_the_consumer_stops_early():
    events = [chunk(0, (10, 0, 0x400, 1, 0xFF)), chunk(1, (12, 0, 0x401, 2, 0xFF))]
    adapter = ScriptedAdapter(events, [], {"chunks": 2, "records": 2, "dropped": 0})
    cart = load_cartridge(bytes(2048), "o2_rom")
    source = AdapterSource(adapter, serve=cart)  # type: ignore[arg-type]
    assert source.header.cart_sha1 == hashlib.sha1(bytes(2048)).hexdigest()
    items = source.items()
    assert next(items) == CaptureRecord(10, "FETCH", 0x400, 1, 0xFF)
    items.close()
    source.close()
    assert adapter.calls == ["upload 2048 o2_rom", "emulation on", "start", "stop", "emulation off", "close"]


def test_records_of_a_chunk_that_wraps_inside_get_full_cycles():
    unwrap = CycleUnwrapper()
    first = chunk_fields(0, [(c, 0, 0x400, 0, 0xFF) for c in (0xFFFFFFF8, 0xFFFFFFFE, 0x1, 0x5)])
    second = chunk_fields(1, [(c, 0, 0x400, 0, 0xFF) for c in (0x9, 0xC)], 0x5, 0xFF)
    cycles = [
        record.cycle
        for record in _unwrapped_batch(first, unwrap).records() + _unwrapped_batch(second, unwrap).records()
    ]
    assert cycles == [0xFFFFFFF8, 0xFFFFFFFE, 2**32 + 1, 2**32 + 5, 2**32 + 9, 2**32 + 0xC]


def test_cycle_unwrapper_counts_wraps():
    unwrap = CycleUnwrapper()
    stamps = [5, 2**32 - 10, 3, 2**31, 2**32 - 1, 0, 7]
    assert [unwrap(s) for s in stamps] == [
        5,
        2**32 - 10,
        2**32 + 3,
        2**32 + 2**31,
        2**33 - 1,
        2**33,
        2**33 + 7,
    ]


@pytest.mark.slow
def test_capture_from_an_adapter_on_a_socket_url_sniffing_and_serving():
    # `hilbridge sim serve` in another process, reached as a user reaches a networked adapter
    image = build_cart(CARTS["interrupts"])
    with served_simulator("--port", "0") as url:
        source = open_capture(url, frames=2)  # sniffing the demo cartridge: frames are frame syncs
        assert source.header.source == "adapter" and "input-free" in source.header.notes[0]
        items = captured(source)
        assert [item.frame for item in items if isinstance(item, FrameSync)] == [0, 1, 2]
        assert items[-1] == FrameSync(2, items[-1].cycle)
        source = open_capture(url, load_cartridge(image, "o2_rom"), seconds=0.5, serve=True)
        assert source.header.cart_sha1 == hashlib.sha1(image).hexdigest()
        items = captured(source)
        expected = emulator_items(image, "o2_rom", 1)
        assert items[: len(expected)] == expected
