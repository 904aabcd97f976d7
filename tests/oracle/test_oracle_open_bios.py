"""Issue 13: the open BIOS's test carts (fixtures/bios) keep the routines' contracts, checked from the
bus trace of our emulator, and MAME 0.251 given the open BIOS produces the same trace (and pixels)."""

from __future__ import annotations

from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from conftest import require_tool

from hilbridge.machine.bios import open_bios
from hilbridge.machine.console import JOYSTICK_BITS, KEYBOARD
from hilbridge.oracle.carts import CartSpec, build_cart, load_manifest
from hilbridge.oracle.emulator import EmulatorRun, run_emulator
from hilbridge.oracle.mame import MameRun, run_mame
from hilbridge.oracle.trace import Access, compare_runs

BIOS_CARTS = Path(__file__).resolve().parents[2] / "fixtures" / "bios"
SPECS: dict[str, CartSpec] = {spec.name: spec for spec in load_manifest(BIOS_CARTS)}


def _options(name: str) -> dict:
    spec = SPECS[name]
    return {
        "frames": spec.frames, "slot": spec.slot, "reads": spec.reads, "pixels": spec.pixels,
        "inputs": spec.inputs, "bios": open_bios().image,
    }  # fmt: skip


def run_group(name: str, region: str = "ntsc") -> pytest.MarkDecorator:
    """The xdist group of the tests that read one cart's runs in `region`: one worker makes them once
    (`emulator` and `mame` keep them in its process)."""
    return pytest.mark.xdist_group(f"open-bios-{name}-{region}")


@cache
def emulator(name: str, region: str = "ntsc") -> EmulatorRun:
    return run_emulator(build_cart(SPECS[name]), region=region, **_options(name))


@cache
def mame(name: str, region: str) -> MameRun:
    return run_mame(build_cart(SPECS[name]), region=region, **_options(name))


def ram_writes(accesses: list[Access]) -> list[Access]:
    """Writes that reach the external RAM: P14 = 0 and P16 = 0 (port-1 bits: hilbridge/machine/console.py)."""
    return [a for a in accesses if a.kind == "W" and not a.p1 & 0x50 and a.addr < 0x80]


def vdc_writes(accesses: list[Access]) -> list[Access]:
    return [a for a in accesses if a.kind == "W" and not a.p1 & 0x08]


def by_frame(writes: list[Access], address: int) -> dict[int, int]:
    """The last value written to `address` in each frame."""
    return {a.frame: a.data for a in writes if a.addr == address}


@run_group("bios_math")
def test_bios_math_results_are_the_contracts():
    writes = ram_writes(emulator("bios_math").trace.accesses)
    cells = {address: by_frame(writes, address) for address in range(0x0C)}
    frames = sorted(cells[0])[1:]  # the first frame holds init's clearing only
    assert len(frames) > 250
    for frame in frames:
        n = cells[0x0B][frame]  # the cart's own count of its loops
        dividend, divisor = n ^ 0xA5, n % 13 + 1
        quotient, remainder = divmod(dividend, divisor)
        assert (cells[0][frame], cells[1][frame], cells[2][frame]) == (quotient, remainder, remainder)
        assert cells[3][frame] == n * (n ^ 0x5A) & 0xFF
        y, char, colour = 2 * n & 0xFF, n & 0x3F, n
        pointer = (8 * char - y // 2) & 0x1FF
        assert (cells[4][frame], cells[5][frame]) == (pointer & 0xFF, (colour & 0x0E) | pointer >> 8)
    assert len(set(cells[0x0B].values())) > 250  # a new number nearly every frame
    randoms = [(by_frame(writes, 0x0C)[frame], by_frame(writes, 0x0D)[frame]) for frame in frames]
    assert all(first <= 7 and second <= 15 for first, second in randoms)
    assert len(set(randoms)) > 8  # the running timer makes them differ


@run_group("bios_math")
def test_bios_math_joystick_results_follow_the_inputs():
    writes = ram_writes(emulator("bios_math").trace.accesses)
    dx, dy, fire, direction = (by_frame(writes, address) for address in (7, 8, 9, 0x0A))
    # inputs (carts.tsv): frames 50-99 up + right, 120-199 right... 1C = down, left, fire
    assert (dx[80], dy[80], fire[80], direction[80]) == (1, 0xFF, 0, 1)
    assert (dx[150], dy[150], fire[150], direction[150]) == (0xFF, 1, 1, 5)
    assert (dx[250], dy[250], fire[250], direction[250]) == (0, 0, 0, 8)


@run_group("bios_math")
def test_bios_math_getjoystick_leaves_the_raw_bits_in_r1():
    raw = by_frame(ram_writes(emulator("bios_math").trace.accesses), 0x0E)
    pressed = {80: ("up", "right"), 150: ("down", "left", "fire"), 250: ()}  # the inputs of carts.tsv
    for frame, names in pressed.items():
        assert raw[frame] == ~sum(JOYSTICK_BITS[name] for name in names) & 0xFF  # 0 = pressed


@run_group("bios_vsync_hook")
def test_bios_vsync_hook_entering_vsyncirq_at_0030h_keeps_waitvsync_and_the_frame_counter():
    counter = by_frame(ram_writes(emulator("bios_vsync_hook").trace.accesses), 0x00)
    frames = sorted(counter)[2:]
    assert len(frames) > 150  # waitvsync returned every frame
    for before, after in pairwise(frames):
        assert (counter[after] & 0x3F) == ((counter[before] & 0x3F) + after - before) % 60


@run_group("bios_game")
def test_bios_game_prints_hello_and_reads_the_keys():
    accesses = emulator("bios_game").trace.accesses
    registers = bytearray(256)
    for write in vdc_writes(accesses):
        registers[write.addr] = write.data
    codes = []
    for n in range(5):
        y, pointer = registers[0x10 + 4 * n], registers[0x12 + 4 * n] | (registers[0x13 + 4 * n] & 1) << 8
        codes.append((pointer + y // 2) & 0x1FF)
    names = {row * 8 + bit: key for key, (row, bit) in KEYBOARD.items()}
    assert "".join(names[code // 8] for code in codes) == "HELLO"
    keys = by_frame(ram_writes(accesses), 0x10)
    row, bit = KEYBOARD["A"]
    assert keys[80] == row * 8 + bit and keys[120] == 0xFF


@pytest.mark.mame
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "region"),
    [
        pytest.param(name, region, marks=run_group(name, region))
        for name in sorted(SPECS)
        for region in ("ntsc", "pal")
    ],
)
def test_open_bios_carts_equal_mame(name, region):
    require_tool("mame")
    theirs, ours = mame(name, region), emulator(name, region)
    expected, mismatch = compare_runs(ours.trace, theirs.trace)
    assert mismatch is None, f"{name} {region}: {mismatch.report()}"
    assert len(expected) > SPECS[name].frames
    if SPECS[name].pixels:
        for frame in range(SPECS[name].frames):
            assert np.array_equal(ours.frame_pixels(frame), theirs.frame_pixels(frame)), frame


@run_group("bios_sound")
def test_bios_sound_plays_every_documented_tune_and_a_cartridge_tune_through_parsesnd():
    accesses = emulator("bios_sound").trace.accesses
    played = [a.data for a in ram_writes(accesses) if a.addr == 0][1:]  # after init's clearing
    pointers = [0x28, 0x2E, 0x3C, 0x4A, 0x56, 0x5A, 0x5E, 0x6A, 0x80]  # g7000.h's tune_*, then the cart's
    assert len(played) > len(pointers)  # every tune ends: the cart went round at least once
    assert played == [pointers[n % len(pointers)] for n in range(len(played))]
    sound = [(a.frame, a.addr, a.data) for a in vdc_writes(accesses) if 0xA7 <= a.addr <= 0xAA]
    sound_control = [data for _frame, addr, data in sound if addr == 0xAA]
    assert {0xAC, 0x9C, 0x9A, 0x96, 0x93, 0} <= set(sound_control)  # tones, noise, explode's fading, off
    # the cart's tune, fed to parsesnd by its own sound hook (bios_sound.asm): tone 4 for 4 frames,
    # control 9Ah for 5, silence for 3, a jump over tone 15 to tone 7 for 2 frames, the end
    ram = [a for a in ram_writes(accesses) if a.addr == 0]
    start = next(a.frame for a, b in pairwise(ram) if a.data == 0x6A and b.data == 0x80)
    own = [(frame, addr, data) for frame, addr, data in sound if start < frame and addr in (0xA7, 0xAA)][:6]
    frames = [frame - own[0][0] for frame, _addr, _data in own]
    assert [(addr, data) for _frame, addr, data in own] == [
        (0xA7, 0xF0),
        (0xAA, 0xAC),
        (0xAA, 0x9A),
        (0xAA, 0),
        (0xA7, 0xFF),
        (0xAA, 0x9C),
    ]
    assert frames == [0, 0, 4, 9, 12, 12]


@run_group("bios_tables")
def test_bios_tables_digit_and_bank_routines():
    accesses = emulator("bios_tables").trace.accesses
    writes = ram_writes(accesses)
    p1, number = by_frame(writes, 0x20), by_frame(writes, 0x21)
    frames = sorted(number)[1:]
    assert len(frames) > 250
    for frame in frames:  # bank3, bank02, bank01, bank0 from P1 bits 1-0 = 11 in turn
        assert p1[frame] & 3 == (3, 2, 1, 0)[number[frame] % 4]
    digits = [a.data for a in vdc_writes(accesses) if a.addr == 0x16]
    expected = [(8 * (n & 15) - 0x20) & 0xFF for n in range(16)]  # y 40h: pointer 8 * code - 20h
    assert all(value in expected for value in digits) and len(set(digits)) == 16


@run_group("bios_clock")
def test_bios_clock_counts_up_over_a_minute_then_down_over_one():
    accesses = emulator("bios_clock").trace.accesses
    pointer = {(8 * digit - 0x20) & 0xFF: digit for digit in range(10)}  # y 40h: 8 * code - 20h
    blank = 8 * 0x0C - 0x20  # initclock's blank: the digits come after it
    shown: dict[int, list[int]] = {}  # VDC address of a digit's byte 2 -> the digits written, in turn
    for access in vdc_writes(accesses):
        if access.addr in (0x42, 0x52, 0x56, 0x4A) and access.data == blank:
            shown[access.addr] = []
        elif access.addr in shown and access.data in pointer:
            digits = shown.setdefault(access.addr, [])
            if not digits or digits[-1] != pointer[access.data]:
                digits.append(pointer[access.data])
    assert shown[0x4A] == [9, 0, 1, 0, 9, 8, 7]  # seconds units: 00:59 01:00 01:01, then down to 00:57
    assert shown[0x56] == [5, 0, 5]  # seconds tens
    assert shown[0x52] == [0, 1, 0]  # minutes units
    clock = [a.data for a in ram_writes(accesses) if a.addr == 0x10][1:]  # after init's clearing
    assert all(value & 0x3F < 60 for value in clock) and clock[0] & 0x40 and not clock[-1] & 0xC0
