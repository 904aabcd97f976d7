"""The fast run loop must equal the reference `step()` loop exactly, on any program."""

from __future__ import annotations

import random
import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
from machine_doubles import ScriptedVdc

from hilbridge.machine.bios import UnknownBiosWarning
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console


def run(image: bytes, irq_at: tuple[int, ...], cycles: int, fast: bool):
    vdc = ScriptedVdc(irq_at=irq_at, t1_period=23, t1_high=4)
    console = Console(load_cartridge(image, "o2_rom"), vdc=vdc)
    records = []
    console.add_bus_listener(records.append)
    if fast:
        console.cpu.run_until(cycles)
    else:
        console.cpu.target = cycles  # as run_until sets it: idle skipping stops there too
        while console.cycle < cycles:
            console.cpu.step()
    return console.cpu.state(), bytes(console.ram), records, vdc.writes


@settings(max_examples=60, deadline=None)
@given(
    image=st.binary(min_size=2048, max_size=2048),
    irq_at=st.lists(st.integers(0, 3000), max_size=6).map(lambda cycles: tuple(sorted(cycles))),
)
def test_fast_loop_equals_stepping_on_random_programs(image, irq_at):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        assert run(image, irq_at, 3000, fast=True) == run(image, irq_at, 3000, fast=False)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    irq_at=st.lists(st.integers(0, 3000), max_size=6).map(lambda cycles: tuple(sorted(cycles))),
)
def test_fast_loop_equals_stepping_when_random_code_switches_banks(seed, irq_at):
    """An 8K image of random code (OUTL/ANL/ORL P1 in it switch banks) whose 2K banks each open
    with a switch: the compiled straight-line blocks of one bank must never run in another."""
    code = random.Random(seed).randbytes(8192)
    switch = bytes([0x99, 0xFC, 0x89, 0x01])  # ANL P1,#FCh; ORL P1,#01h
    image = b"".join(switch + code[bank * 2048 + len(switch) : (bank + 1) * 2048] for bank in range(4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        assert run(image, irq_at, 3000, fast=True) == run(image, irq_at, 3000, fast=False)


def run_skip(image: bytes, irq_at: tuple[int, ...], cycles: int, skip: bool):
    vdc = ScriptedVdc(irq_at=irq_at, t1_period=23, t1_high=4)
    console = Console(load_cartridge(image, "o2_rom"), vdc=vdc)
    console.cpu.skip_idle = skip
    records = []
    console.add_bus_listener(records.append)
    console.cpu.run_until(cycles)
    return console.cpu.state(), bytes(console.ram), records, vdc.writes


# Loop shapes the skipper knows, dropped into random code: poll A1, spin, DJNZ delay, T1 waits.
LOOPS = [
    bytes([0xB8, 0xA1, 0x80, 0x72, 0x00, 0x84, 0x00]),  # MOV R0,#A1h; MOVX A,@R0; JB3; JMP back
    bytes([0xB8, 0xA1, 0x80, 0x53, 0x08, 0xC6, 0x00]),  # MOV R0,#A1h; MOVX A,@R0; ANL A,#8; JZ back
    bytes([0xEF, 0x00]),  # DJNZ R7,$
    bytes([0x46, 0x00]),  # JNT1 $
    bytes([0x84, 0x00]),  # JMP $
    bytes([0x55, 0x16, 0x10, 0x84, 0x00]),  # STRT T; JTF out; JMP back to the JTF
]
LOOP_HEADS = [2, 2, 0, 0, 0, 1]
"""Offset of each loop's head (where its jump back goes) in LOOPS."""


@settings(max_examples=40, deadline=None)
@given(
    filler=st.binary(min_size=0, max_size=16),
    shape=st.integers(0, len(LOOPS) - 1),
    irq_at=st.lists(st.integers(0, 20000), max_size=4).map(lambda cycles: tuple(sorted(cycles))),
)
def test_idle_skipping_equals_stepping_on_random_code_around_loops(filler, shape, irq_at):
    image = bytearray(2048)
    image[0:2] = bytes([0x05, 0x25])  # EN I, EN TCNTI: interrupts may cut into the loop
    image[2 : 2 + len(filler)] = filler
    at = 2 + len(filler)
    loop = bytearray(LOOPS[shape])
    for index, byte in enumerate(loop):  # point the loop's jumps at its own head
        if byte == 0x00 and index and loop[index - 1] in (0x72, 0x84, 0xC6, 0xEF, 0x46):
            loop[index] = (0x400 + at + LOOP_HEADS[shape]) & 0xFF
    image[at : at + len(loop)] = loop
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        assert run_skip(bytes(image), irq_at, 20000, True) == run_skip(bytes(image), irq_at, 20000, False)
