"""Cycle stamps as MAME gives them: `Vdc.mame_trace_cycle` asked from a bus listener (after the access),
and the MAME capture's exact cycle counter against our emulator past the point where a clock / 15
rate falls a cycle behind."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import require_tool

from hilbridge.machine.bios import boot_bios
from hilbridge.machine.bus import WRITE, BusAccess
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.charset import charset_rom
from hilbridge.machine.console import Console
from hilbridge.machine.timing import NTSC
from hilbridge.machine.vdc import Vdc
from hilbridge.oracle.carts import build_cart, load_manifest
from hilbridge.oracle.mame import _layout, find_mame
from hilbridge.oracle.run_cache import Invocation, cache_entry, cache_folder

CARTS = {
    spec.name: spec for spec in load_manifest(Path(__file__).resolve().parents[2] / "fixtures" / "carts")
}

A1 = 0xA1


def test_stamp_of_an_a1_read_is_the_same_before_and_after_the_vdc_takes_it():
    # an A1 polling loop (MOVX A,@R0 / JB3 / JMP: a read every 5 cycles) for 60 frames; a bus listener
    # asks for the stamp after the VDC has taken the read, which must not change the answer: an A1
    # read ends MAME's timeslice *after* it, so it is the previous read that started the slice
    vdc = Vdc(NTSC)
    differing = []
    for cycle in range(14, vdc.frame_end_cycle(59), 5):
        before = vdc.mame_trace_cycle(cycle)
        vdc.read(A1, cycle)
        if vdc.mame_trace_cycle(cycle) != before:
            differing.append(cycle)
    assert differing == []


def run_shared_vdc_trace(script: Path, cart: bytes, frames: int) -> list[tuple[str, int, int, int]]:
    """(kind, cycle, address, data) of every MOVX access in MAME 0.251, stamped by the shared reference
    script `vdc_trace.lua` (time × clock / 15, rounded). The run is kept in the MAME-run cache like
    the oracle's (its key: MAME, the files, the command line, the script and the TRACE_ variables;
    no TRACE_ variable is inherited)."""
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        options = _layout(work, "odyssey2", boot_bios().image, charset_rom(), cart, None)
        out = work / "trace.txt"
        mame = find_mame()
        command = [
            mame, "odyssey2", "-noreadconfig", *options, "-video", "none", "-sound", "none",
            "-nothrottle", "-skip_gameinfo", "-nomouse", "-cfg_directory", str(work / "cfg"),
            "-nvram_directory", str(work / "nvram"), "-homepath", str(work),
            "-autoboot_script", str(script), "-autoboot_delay", "0", "-seconds_to_run", "60",
        ]  # fmt: skip
        trace = {"TRACE_OUT": str(out), "TRACE_FRAMES": str(frames), "TRACE_SNAP": "0", "TRACE_READS": "1"}
        inherited = {name: value for name, value in os.environ.items() if not name.startswith("TRACE_")}
        invocation = Invocation(mame, command, trace, work, (out.name,), (script,))
        with cache_entry(cache_folder(), invocation) as entry:
            if not entry.restore():
                started = time.perf_counter()
                environment = {**inherited, **trace}
                subprocess.run(
                    command, cwd=work, env=environment, capture_output=True, timeout=600, check=True
                )
                entry.store(time.perf_counter() - started)
        accesses = []
        for line in out.read_text().splitlines():
            if line[:1] in ("W", "R"):
                kind, _, cycle, _, _, _, _, address, data = line.split()
                accesses.append((kind, int(cycle), int(address, 16), int(data, 16)))
        return accesses


@pytest.mark.mame
@pytest.mark.slow
def test_mame_trace_cycle_from_a_listener_equals_the_shared_scripts_stamps(shared_reference):
    # video_objects polls A1 for VBL every frame; 60 frames pass the clock / 15 stamps' first lag
    require_tool("mame")
    cart = build_cart(CARTS["video_objects"])
    frames = 60
    theirs = run_shared_vdc_trace(shared_reference / "mame" / "vdc_trace.lua", cart, frames)
    console = Console(load_cartridge(cart, "o2_rom_mame0251"))
    ours = []

    def listen(access: BusAccess) -> None:
        kind = "W" if access.kind == WRITE else "R"
        ours.append((kind, console.vdc.mame_trace_cycle(access.cycle), access.address, access.value))

    console.add_bus_listener(listen)
    console.run_frames(frames)
    last = theirs[-1][1]
    ours = [access for access in ours if access[1] <= last]
    assert any(cycle > 335_600 for _, cycle, _, _ in theirs)
    assert ours == theirs
