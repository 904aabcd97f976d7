"""Captures from the adapter firmware leave sequential fetches out and stamp each access at its bus
cycle (hilbridge.check.compression): the rule on hand-made streams, and the check on a simulated
console's capture compressed by it (the firmware decoder itself is compared with the rule in
tests/firmware/test_fetch_compression_model.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from check_support import SimulatedCapture, fixture_cart
from conftest import quick_few

from hilbridge.capture.file import CaptureReader, write_capture
from hilbridge.capture.stream import CaptureItem, FrameSync, ResetDetected
from hilbridge.check import check
from hilbridge.check.compression import FetchCompressor, next_fetch
from hilbridge.check.emulator import FETCH, P1, RESET, SYNC, WRITE
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.protocol import CAPTURE_KINDS
from hilbridge.sim.deviations import Deviation

KIND_NAMES = {number: name for name, number in CAPTURE_KINDS.items()}


def test_the_next_fetch_stays_in_its_2k_half():
    assert next_fetch(0x500) == 0x501
    assert next_fetch(0x7FF) == 0x000
    assert next_fetch(0xFFF) == 0x800


def test_sequential_fetches_are_left_out_but_not_the_reset_and_vsync_hook():
    events = [
        (0, FETCH, 0x400, 0x84, 0),
        (0, RESET, 0x400, 0, 0),
        (2, FETCH, 0x401, 0x10, 0),  # sequential
        (4, FETCH, 0x406, 0x00, 0),  # not sequential
        (6, FETCH, 0x405, 0x00, 0),  # not sequential
        (6, FETCH, 0x406, 0x00, 0),  # sequential, and the VSYNC hook: passes (second fetch: one later)
        (6, SYNC, 0x406, 0, 0),
        (8, WRITE, 0xA0, 0x55, 0x10),
    ]
    kept = FetchCompressor().compress(events)
    assert kept == [events[0], events[1], events[3], events[4], (7, FETCH, 0x406, 0, 0), events[6], events[7]]


def test_a_p1_change_at_a_left_out_fetch_is_reported_at_the_next_recorded_access():
    events = [
        (0, FETCH, 0x500, 0x39, 0x13),
        (1, P1, 0, 0x10, 0x10),
        (1, FETCH, 0x501, 0x00, 0x10),  # sequential: left out, the P1 change waits
        (3, FETCH, 0x502, 0x00, 0x10),
        (5, WRITE, 0x80, 0x01, 0x10),  # the next access the adapter records
        (6, FETCH, 0x600, 0x00, 0x10),
    ]
    assert FetchCompressor().compress(events) == [
        events[0],
        (5, P1, 0, 0x10, 0x10),
        events[4],
        events[5],
    ]


def test_a_p1_change_undone_before_the_next_recorded_access_is_not_reported():
    compressor = FetchCompressor()
    events = [
        (0, P1, 0, 0x13, 0x13),
        (0, FETCH, 0x500, 0x39, 0x13),
        (1, P1, 0, 0x10, 0x10),
        (1, FETCH, 0x501, 0x00, 0x10),
        (2, P1, 0, 0x13, 0x13),
        (2, FETCH, 0x502, 0x00, 0x13),
        (4, FETCH, 0x700, 0x00, 0x13),
    ]
    assert compressor.compress(events) == [events[0], events[1], events[6]]


def as_events(items: list[CaptureItem]) -> list[tuple[int, int, int, int, int]]:
    events = []
    for item in items:
        if isinstance(item, CaptureRecord):
            events.append((item.cycle, CAPTURE_KINDS[item.kind], item.address, item.value, item.p1))
        elif isinstance(item, ResetDetected):
            events.append((item.cycle, RESET, 0x400, 0, 0))
        elif isinstance(item, FrameSync):
            events.append((item.cycle, SYNC, 0x406, item.frame, 0))
    return events


def as_items(events: list[tuple[int, int, int, int, int]]) -> list[CaptureItem]:
    items: list[CaptureItem] = []
    for cycle, kind, address, value, p1 in events:
        if kind == RESET:
            items.append(ResetDetected(cycle))
        elif kind == SYNC:
            items.append(FrameSync(value, cycle))
        else:
            items.append(CaptureRecord(cycle, KIND_NAMES[kind], address, value, p1))
    return items


def compressed_capture(tmp_path, cart_name: str, frames: int, deviation: Deviation | None = None):
    """A simulated console's capture as the adapter firmware would stream it, in a capture file."""
    source = SimulatedCapture(fixture_cart(cart_name), frames=frames, deviation=deviation)
    items = list(source.items())
    compressed = as_items(FetchCompressor().compress(as_events(items)))
    assert sum(isinstance(item, CaptureRecord) and item.kind == "FETCH" for item in compressed) < sum(
        isinstance(item, CaptureRecord) and item.kind == "FETCH" for item in items
    )
    header = replace(source.header, fetches="compressed")
    return write_capture(tmp_path / f"{cart_name}.hbcap", header, compressed), header


@pytest.mark.parametrize("cart_name", quick_few(["cpu_alu", "bank_rally"], ["cpu_alu"]))
def test_a_compressed_capture_checks_equal_and_says_so(tmp_path, cart_name):
    path, header = compressed_capture(tmp_path, cart_name, 14)
    result = check(fixture_cart(cart_name), CaptureReader(path), frames=10)
    assert result.verdict == "equal", result.summary()
    assert any("sequential fetches out" in note for note in result.notes)
    plain = write_capture(
        tmp_path / "unmarked.hbcap", replace(header, fetches="all"), CaptureReader(path).items()
    )
    assert check(fixture_cart(cart_name), CaptureReader(plain), frames=10).verdict == "diverged"


def test_a_deviation_in_a_compressed_capture_is_found_where_it_is_in_a_full_one(tmp_path):
    cart = fixture_cart("cpu_alu")
    full = check(
        cart, SimulatedCapture(cart, frames=18, deviation=Deviation("write_dropped", 3, 1)), frames=6
    )
    path, _ = compressed_capture(tmp_path, "cpu_alu", 18, Deviation("write_dropped", 3, 1))
    compressed = check(cart, CaptureReader(path), frames=6)
    assert full.verdict == compressed.verdict == "diverged"
    assert (compressed.divergence.frame, compressed.divergence.cycle, compressed.divergence.kind) == (
        full.divergence.frame,
        full.divergence.cycle,
        full.divergence.kind,
    )


def test_an_unknown_fetch_mode_is_refused(tmp_path):
    path, header = compressed_capture(tmp_path, "cpu_alu", 4)
    odd = write_capture(
        tmp_path / "odd.hbcap", replace(header, fetches="zipped"), CaptureReader(path).items()
    )
    with pytest.raises(HilbridgeError, match="zipped"):
        check(fixture_cart("cpu_alu"), CaptureReader(odd), frames=2)
