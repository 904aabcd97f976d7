"""The frame cut and the event comparison on small hand-made streams."""

from __future__ import annotations

import numpy as np
import pytest
from check_support import assert_same_frames, fixture_cart
from fixture_runs import SPECS

from hilbridge.capture.stream import FrameSync, Gap, RecordBatch, ResetDetected
from hilbridge.check.emulator import FETCH, P1, RESET, SYNC, WRITE, EmulatorSide, as_events
from hilbridge.check.engine import FrameRanges, classify, first_difference
from hilbridge.check.frames import capture_blocks, cut_frames
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.protocol import CAPTURE_KINDS


def frame_end(n: int) -> int:
    return 100 * (n + 1)


def blocks_of(items, anchor=10, copies=False):
    """The blocks, each as event tuples (the blocks are rows), and the gaps."""
    blocks = capture_blocks(iter(items), 0x13, lambda: anchor, copies)
    return [block if isinstance(block, Gap) else as_events(block) for block in blocks]


def test_items_before_the_reset_are_dropped_and_cycles_shift_to_the_emulators_reset():
    items = [
        CaptureRecord(5, "MOVX_WRITE", 1, 2, 0xFF),
        ResetDetected(1000),
        CaptureRecord(1004, "MOVX_WRITE", 3, 4, 0xFF),
    ]
    (block,) = blocks_of(items, anchor=10)
    assert block == [(10, RESET, 0x400, 0, 0), (14, WRITE, 3, 4, 0x13)]


def test_32_bit_cycles_are_unwrapped():
    items = [ResetDetected(0xFFFFFFF0), CaptureRecord(0x10, "FETCH", 0x400, 0, 0)]
    (block,) = blocks_of(items, anchor=0xFFFFFFF0)
    assert block[1][0] == (1 << 32) + 0x10


def test_records_of_a_kind_the_check_does_not_know_are_left_out_of_a_batch():
    rows = [(1004, CAPTURE_KINDS["MOVX_WRITE"], 3, 4, 0xFF), (1005, 7, 1, 2, 0xFF), (1006, 0xFF, 1, 2, 0xFF)]
    rows.append((1007, CAPTURE_KINDS["FETCH"], 0x401, 5, 0xFF))
    (block,) = blocks_of([ResetDetected(1000), RecordBatch.from_tuples(rows)], anchor=10)
    assert block == [(10, RESET, 0x400, 0, 0), (14, WRITE, 3, 4, 0x13), (17, FETCH, 0x401, 5, 0x13)]


def test_copy_mode_accesses_are_kept_apart_only_where_the_whole_p1_is_known():
    items = [ResetDetected(0), CaptureRecord(3, "MOVX_WRITE", 1, 2, 0x40)]
    dropped = [as_events(block) for block in capture_blocks(iter(items), 0xFF, lambda: 0, False)]
    assert dropped == [[(0, RESET, 0x400, 0, 0)]]
    flagged = [as_events(block) for block in capture_blocks(iter(items), 0xFF, lambda: 0, True)]
    assert flagged[0][1][1] == WRITE | 0x10
    slot_only = blocks_of(items, anchor=0)  # P16 is not on the slot: an ordinary write
    assert slot_only[0][1] == (3, WRITE, 1, 2, 0)


def test_time_marker_cuts_at_the_emulators_frame_ends_including_empty_frames():
    events = [(50, RESET, 0x400, 0, 0), (99, WRITE, 1, 1, 0), (100, WRITE, 2, 2, 0), (350, WRITE, 3, 3, 0)]
    frames = list(cut_frames(iter([events]), "time", frame_end))
    assert [(f.index, f.start, f.end) for f in frames] == [
        (0, 50, 100),
        (1, 100, 200),
        (2, 200, 300),
        (3, 300, None),
    ]
    assert [len(f.events) for f in frames] == [2, 1, 0, 1]


def test_vsync_marker_starts_a_frame_at_each_frame_sync():
    items = [
        ResetDetected(0),
        CaptureRecord(5, "P1", 0, 1, 1),
        FrameSync(0, 40),
        CaptureRecord(41, "FETCH", 0x406, 0, 0),
    ]
    frames = list(cut_frames(iter(blocks_of(items, anchor=0)), "vsync", frame_end))
    assert [(f.index, f.start, f.end) for f in frames] == [(0, 0, 40), (1, 40, None)]
    assert frames[1].events[0][1] == SYNC


def test_a_gap_marks_its_frame_and_only_its_frame():
    items = [
        ResetDetected(0),
        CaptureRecord(150, "FETCH", 0x400, 0, 0),
        Gap("lost", chunks=2),
        CaptureRecord(250, "FETCH", 0x401, 0, 0),
    ]
    frames = list(cut_frames(iter(blocks_of(items, anchor=0)), "time", frame_end))
    assert [bool(f.gap) for f in frames] == [False, True, False]
    assert "2 chunks" in frames[1].gap


def test_first_difference_honours_the_tolerance_but_not_other_fields():
    mine = [(10, WRITE, 1, 2, 0), (20, WRITE, 3, 4, 0)]
    assert first_difference(mine, [(11, WRITE, 1, 2, 0), (19, WRITE, 3, 4, 0)], 1) is None
    assert first_difference(mine, [(11, WRITE, 1, 2, 0), (19, WRITE, 3, 4, 0)], 0) == 0
    assert first_difference(mine, [(10, WRITE, 1, 2, 0), (20, WRITE, 3, 5, 0)], 5) == 1
    assert first_difference(mine, mine[:1], 0) == 1


def test_classify_names_branches_missing_and_extra_events():
    assert classify((5, FETCH, 0x500, 1, 0), (5, FETCH, 0x420, 1, 0), 0x410)[0] == "branch"
    assert classify((5, FETCH, 0x411, 1, 0), (5, FETCH, 0x411, 2, 0), 0x410)[0] == "fetch"
    assert classify((5, WRITE, 1, 1, 0), (7, FETCH, 0x411, 2, 0), None)[0] == "missing write"
    assert classify((7, FETCH, 0x411, 1, 0), (5, P1, 0, 2, 0), None)[0] == "extra p1"


def test_frame_ranges_merge_consecutive_frames_with_one_reason():
    ranges = FrameRanges()
    for frame in (1, 2, 3, 7):
        ranges.add(frame, "x")
    ranges.add(8, "y")
    assert ranges.ranges == [[1, 3, "x"], [7, 7, "x"], [8, 8, "y"]]
    assert ranges.count() == 5


def traced_frames(cart_name: str, frames: int, stepping: bool) -> list[np.ndarray]:
    """Each frame's event rows, fetches traced a block and a skipped idle loop at a time, or
    (`stepping`) every instruction stepped and traced."""
    side = EmulatorSide(
        fixture_cart(cart_name), kinds=("FETCH", "MOVX_READ", "MOVX_WRITE", "P1"), pictures=False
    )
    if stepping:
        side.console.cpu.skip_idle = False  # every instruction stepped and traced
        side.console.cpu.trace_blocks = False
    return [side.next_frame().rows for _ in range(frames)]


@pytest.mark.parametrize("cart_name", ["bank_rally", "timer_counter"])
def test_idle_loops_skipped_while_tracing_give_the_fetches_of_stepping(cart_name: str) -> None:
    assert_same_frames(
        traced_frames(cart_name, 12, stepping=False), traced_frames(cart_name, 12, stepping=True)
    )


@pytest.mark.slow
@pytest.mark.parametrize("cart_name", sorted(SPECS))
def test_idle_loops_skipped_while_tracing_on_every_cart(cart_name: str) -> None:
    assert_same_frames(
        traced_frames(cart_name, 60, stepping=False), traced_frames(cart_name, 60, stepping=True)
    )


def test_the_emulator_as_a_capture_source_yields_what_the_simulated_slot_sees() -> None:
    from check_support import SimulatedCapture, fixture_cart

    from hilbridge.check.emulator import EmulatorCapture, EmulatorSide

    cart = fixture_cart("bank_rally")
    kinds = ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1")
    side = EmulatorSide(cart, kinds=kinds, pictures=False, p1_mask=0xFF, copies=True)
    ours = list(EmulatorCapture(side, frames=4).items())
    slot = list(SimulatedCapture(cart, frames=4, kinds=kinds).items())
    assert len(ours) > 10_000
    assert ours == slot
