"""Tracing fetches with whole blocks (`Cpu.trace_blocks`: a block's fetches, and those of skipped idle
iterations, handed to the check's emulator side in one call and merged by cycle) gives the events
of stepping every instruction, on every fixture cart, in both regions."""

from __future__ import annotations

import numpy as np
import pytest
from check_support import assert_same_frames
from conftest import quick_few
from fixture_runs import CARTS_DIR, built_cart

from hilbridge.check.emulator import FETCH, EmulatorSide, as_rows
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.oracle.carts import CartSpec, load_manifest

SPECS: dict[str, CartSpec] = {
    spec.name: spec for folder in (CARTS_DIR, CARTS_DIR / "wait_loops") for spec in load_manifest(folder)
}
FRAMES = 4
QUICK_CARTS = ("bank_rally", "interrupts", "timer_counter", "vdc_regs", "wait_call", "wait_lines")
"""Bank switches, interrupts, the timer, register writes, a wait through a CALL and a wait on the
beam (`quick_few`)."""
FULL = ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1")


def traced(
    spec: CartSpec, region: str, fast: bool, kinds: tuple[str, ...] = FULL
) -> tuple[list[np.ndarray], dict, int]:
    """Each frame's event rows and the CPU state after FRAMES frames, and how many fetches came
    through bulk calls; stepping (not `fast`), the events are kept in the order they were reported."""
    cart = load_cartridge(built_cart(spec), None if spec.slot == "o2_rom" else spec.slot, name=spec.name)
    side = EmulatorSide(cart, region=region, kinds=kinds, pictures=False)
    cpu = side.console.cpu
    cpu.trace_blocks = fast
    cpu.skip_idle = fast
    cpu.block_hot = 1 if fast else cpu.block_hot  # every block compiled at its first visit
    bulk = [0]
    plain = side.console.program_fetches

    def counted(fetches, cycle: int, ran: int) -> None:
        bulk[0] += sum(offset < ran for offset, _, _ in fetches.entries)
        plain(fetches, cycle, ran)

    repeated = side.console.repeat_fetches

    def counted_repeats(fetches, cycle: int, period: int, count: int) -> None:
        bulk[0] += count * len(fetches.entries)
        repeated(fetches, cycle, period, count)

    side.console.program_fetches = counted  # type: ignore[method-assign]
    side.console.repeat_fetches = counted_repeats  # type: ignore[method-assign]
    if not fast:  # the reference: events in the order stepping reports them, no merge by cycle
        side._fetched = side._events

        def in_call_order() -> np.ndarray:
            events = side._events
            side._events = side._fetched = []
            return as_rows(events)

        side._take_events = in_call_order  # type: ignore[method-assign]
    frames = [side.next_frame().rows for _ in range(FRAMES)]
    return frames, cpu.state(), bulk[0]


def fetch_count(frames: list[np.ndarray]) -> int:
    return sum(int(np.count_nonzero(rows[:, 1] == FETCH)) for rows in frames)


@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize("name", quick_few(SPECS, QUICK_CARTS))
def test_traced_blocks_give_the_events_of_stepping(name: str, region: str) -> None:
    frames, state, bulk = traced(SPECS[name], region, fast=True)
    stepped, stepped_state, none = traced(SPECS[name], region, fast=False)
    assert none == 0
    assert_same_frames(frames, stepped)
    assert state == stepped_state
    fetches = fetch_count(frames)
    assert bulk > fetches // 4, f"only {bulk} of {fetches} fetches came in bulk"


@pytest.mark.parametrize("name", ["cpu_alu", "bank_rally", "wait_vsync"])
def test_traced_blocks_without_fetches_in_the_capture_stop_tracing_at_the_reset_fetch(name: str) -> None:
    """Without fetches only the reset and frame markers are traced, up to the reset fetch."""
    kinds = ("MOVX_READ", "MOVX_WRITE", "P1")
    frames, state, _ = traced(SPECS[name], "ntsc", fast=True, kinds=kinds)
    stepped, stepped_state, _ = traced(SPECS[name], "ntsc", fast=False, kinds=kinds)
    assert_same_frames(frames, stepped)
    assert state == stepped_state


@pytest.mark.parametrize("name", ["bank_rally", "video_objects", "wait_lines", "wait_inverted"])
def test_skipped_polling_reads_come_in_bulk_with_the_values_of_stepping(name: str) -> None:
    """The reads of skipped polling iterations are valued in one call (`Console.peek_reads`, whose
    status reads are not drawn one by one), and the events are those of stepping."""
    calls = []
    peek_reads = Console.peek_reads

    def counted(console: Console, address: int, first: int, period: int, count: int) -> list[int]:
        calls.append(count)
        return peek_reads(console, address, first, period, count)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Console, "peek_reads", counted)
        frames, state, _ = traced(SPECS[name], "ntsc", fast=True)
    assert sum(calls) > 100, f"only {sum(calls)} reads were skipped"
    stepped, stepped_state, _ = traced(SPECS[name], "ntsc", fast=False)
    assert_same_frames(frames, stepped)
    assert state == stepped_state


@pytest.mark.parametrize("name", ["cpu_alu", "vdc_regs", "timer_counter"])
def test_a_blocks_first_fetch_comes_in_its_table_unless_p1_just_changed(name: str) -> None:
    """After the reset fetch, a block reports its first fetch in its table after it runs
    (`Cpu.trace_first_fetches_after`), not in a call of its own before it; only after a port write
    that changed the slot's P1 bits is it reported first, as that fetch shows the change."""
    frames, _, bulk = traced(SPECS[name], "ntsc", fast=True)
    fetches = fetch_count(frames)
    assert bulk >= 0.97 * fetches, f"{bulk} of {fetches} fetches came in bulk"
