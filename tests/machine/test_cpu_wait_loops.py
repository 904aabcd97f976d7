"""Game-like wait loops (fixtures/carts/wait_loops) are skipped, and skipping them is exact: the
same bus records, CPU state and pictures as stepping every instruction, in both regions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import quick_few
from fixture_runs import built_cart

from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.cpu import Cpu
from hilbridge.oracle.carts import CartSpec, load_manifest

WAIT_LOOPS = Path(__file__).resolve().parents[2] / "fixtures" / "carts" / "wait_loops"
SPECS: dict[str, CartSpec] = {spec.name: spec for spec in load_manifest(WAIT_LOOPS)}
FRAMES = 12
QUICK_TRACED = ("wait_call", "wait_jni_irq", "wait_lines", "wait_timer")
"""Skipped under fetch tracing in the development loop (`quick_few`): a wait through a CALL, one on
/INT with interrupts on, one counting lines on T1 and one on the timer flag."""


def count_skipped_cycles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A one-item list that counts the cycles idle skipping jumps from now on."""
    skipped = [0]
    original = Cpu._skip_loop

    def counted(cpu: Cpu, anchor: int, movx_pc: int, address: int) -> None:
        before = cpu.cycle
        original(cpu, anchor, movx_pc, address)
        skipped[0] += cpu.cycle - before

    monkeypatch.setattr(Cpu, "_skip_loop", counted)
    return skipped


def run(spec: CartSpec, region: str, skip: bool, monkeypatch: pytest.MonkeyPatch):
    console = Console(load_cartridge(built_cart(spec), spec.slot), region=region)
    console.cpu.skip_idle = skip
    skipped = count_skipped_cycles(monkeypatch)
    records: list = []
    console.add_bus_listener(records.append)
    pictures = []
    for frame in range(FRAMES):
        spec.inputs.apply(console, frame)  # wait_keys: keys pressed and released while it polls
        console.run_frames(1)
        pictures.append(console.vdc.frame().copy())
    return records, console.cpu.state(), pictures, skipped[0] / console.cycle


@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_skipping_a_wait_loop_equals_stepping_it(name: str, region: str, monkeypatch) -> None:
    spec = SPECS[name]
    records, state, pictures, share = run(spec, region, True, monkeypatch)
    stepped_records, stepped_state, stepped_pictures, _ = run(spec, region, False, monkeypatch)
    assert records == stepped_records
    assert state == stepped_state
    assert all(np.array_equal(a, b) for a, b in zip(pictures, stepped_pictures, strict=True))
    assert sum(record.kind == "W" for record in records) >= FRAMES * 4  # it did draw every frame
    assert share > 0.3, f"only {share:.0%} of the time was skipped"  # each waits most of a frame


@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize("name", quick_few(SPECS, QUICK_TRACED))
def test_skipping_while_tracing_fetches_reports_every_skipped_fetch(name: str, region: str) -> None:
    """With `skip_traced` (and `trace_blocks`: the board merges bulk fetches by cycle), idle loops
    are skipped under fetch tracing too, and the board is told each skipped iteration's fetches and
    reads: merged by cycle (accesses before fetches at one cycle), those of stepping."""
    runs = []
    for skip in (True, False):
        console = Console(load_cartridge(built_cart(SPECS[name]), "o2_rom"), region=region)
        console.cpu.skip_idle = skip
        console.cpu.skip_traced = True
        console.cpu.trace_blocks = skip
        records: list = []
        console.add_bus_listener(records.append, fetches=True)
        console.run_frames(4)
        merged = sorted(records, key=lambda record: (record.cycle, record.kind == "F"))
        runs.append((merged, console.cpu.state(), -1 in console.cpu.anchor_failures.values()))
    assert runs[0][:2] == runs[1][:2]
    assert runs[0][2], "the loop was not skipped"
    assert sum(record.kind == "F" for record in runs[0][0]) > 4000


def run_frames(spec: CartSpec, region: str, skip: bool, listen: str):
    """Per frame: CPU state, VDC state and picture; and the reads seen. `listen`: "none" (the CPU
    peeks only the last skipped read), "bulk" (skipped reads valued in one call, as the check and
    the simulated capture take them) or "each" (a bus listener)."""
    console = Console(load_cartridge(built_cart(spec), spec.slot), region=region)
    console.cpu.skip_idle = skip
    records: list = []
    if listen == "each":
        console.add_bus_listener(records.append)
    elif listen == "bulk":

        def bulk(address: int, first: int, period: int, count: int) -> None:
            values = console.peek_reads(address, first, period, count)
            records.extend((first + index * period, value) for index, value in enumerate(values))

        console.repeat_reads = bulk  # type: ignore[method-assign]
        console.add_bus_listener(lambda access: records.append((access.cycle, access.value)))
    frames = []
    for frame in range(FRAMES):
        spec.inputs.apply(console, frame)
        console.run_frames(1)
        frames.append((console.cpu.state(), console.vdc.state(), console.vdc.frame().tobytes()))
    return frames, records


@pytest.mark.parametrize("listen", ["none", "bulk"])
@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize("name", ["wait_reload", "wait_carry", "wait_keys"])
def test_skipping_without_a_listener_or_in_bulk_equals_stepping(name: str, region: str, listen: str) -> None:
    """Skipped A1 reads take the overlap bit one by one (PAL draws the power-on characters on top of
    each other at (0, 0), so the bit is set again on every line they cover): the chip's state and
    the pictures after a skip nobody listens to, and the values of reads taken in bulk, are those
    of stepping."""
    spec = SPECS[name]
    frames, records = run_frames(spec, region, True, listen)
    stepped, stepped_records = run_frames(spec, region, False, listen)
    for frame, (ours, reference) in enumerate(zip(frames, stepped, strict=True)):
        assert ours == reference, f"frame {frame}"
    assert records == stepped_records


def skipped_share(spec: CartSpec, region: str, frames: int, last: int, monkeypatch: pytest.MonkeyPatch):
    """The share of the cycles of the last `last` of `frames` frames that idle skipping jumped."""
    console = Console(load_cartridge(built_cart(spec), spec.slot), region=region)
    skipped = count_skipped_cycles(monkeypatch)
    for frame in range(frames - last):
        spec.inputs.apply(console, frame)
        console.run_frames(1)
    start, skipped[0] = console.cycle, 0
    for frame in range(frames - last, frames):
        spec.inputs.apply(console, frame)
        console.run_frames(1)
    return skipped[0] / (console.cycle - start)


@pytest.mark.parametrize("region", ["ntsc", "pal"])
def test_a_wait_is_still_skipped_after_hundreds_of_frames(region: str, monkeypatch) -> None:
    """An anchor given up for costing more than it saves is not compiled into a block that would
    hide the loop's other anchor: wait_vsync's spin on the flag, entered at its JZ after each
    interrupt, once stopped being skipped from frame ~140 on."""
    assert skipped_share(SPECS["wait_vsync"], region, 300, 100, monkeypatch) > 0.9


@pytest.mark.slow
@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_wait_is_still_skipped_after_hundreds_of_frames(name: str, region: str, monkeypatch) -> None:
    assert skipped_share(SPECS[name], region, 300, 100, monkeypatch) > 0.3
