"""capture.lua's lines into capture items (`CaptureLines`, parsed a block at a time, column by column)
against the rule written out line by line, on random instruction streams cut into random blocks."""

from __future__ import annotations

from itertools import accumulate, pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.capture.mame import FETCHES, RESET_ADDRESS, VSYNC_HOOK, CaptureLines
from hilbridge.capture.stream import FrameSync, ResetDetected, expanded
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import CaptureRecord
from hilbridge.machine.cartridge import CART_P1_MASK

ALL_KINDS = ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1")
NAMES = {"F": "FETCH", "R": "MOVX_READ", "W": "MOVX_WRITE"}


def line_by_line(lines: list[str], kinds: tuple[str, ...], end_cycle: int | None) -> tuple[list, bool]:
    """The items, and whether the end was reached, taking one line after another."""
    items: list = []
    start = remaining = syncs = 0
    p1_bits = 0xFF & CART_P1_MASK
    for line in lines:
        if not line or line[0] in "#E":
            continue
        kind, *fields = line.split()
        stamp, address, value, p1 = int(fields[0]), *(int(field, 16) for field in fields[1:])
        if kind == "F":
            if remaining == 0:
                start, remaining = stamp, FETCHES[value]
            remaining -= 1
            stamp = start
        if end_cycle is not None and stamp >= end_cycle:
            return items, True
        if p1 & CART_P1_MASK != p1_bits:
            p1_bits = p1 & CART_P1_MASK
            if "P1" in kinds:
                items.append(CaptureRecord(stamp, "P1", 0, p1_bits, p1))
        if NAMES[kind] in kinds:
            items.append(CaptureRecord(stamp, NAMES[kind], address, value, p1))
        if kind == "F" and address == RESET_ADDRESS:
            items.append(ResetDetected(stamp))
        elif kind == "F" and address == VSYNC_HOOK:
            items.append(FrameSync(syncs, stamp))
            syncs += 1
    return items, False


def as_block(lines: list[str], ending: str = "\n", last_ended: bool = True) -> bytes:
    """Lines as capture.lua writes them to its file (with "\r\n" on Windows; a file MAME did not
    finish may end inside its last line)."""
    text = ending.join(lines)
    return (text + ending if last_ended and lines else text).encode()


@st.composite
def capture_lines(draw) -> list[str]:
    """A run of instructions as capture.lua writes them: each instruction's fetches, sometimes a
    MOVX access after them, frame lines and comments between."""
    lines = ["# mame=0.251 system=odyssey2 rate=1789772"]
    cycle = draw(st.integers(0, 1000))
    for _ in range(draw(st.integers(0, 60))):
        opcode = draw(st.integers(0, 255))
        address = draw(st.sampled_from([0x400, 0x402, 0x406, 0x7FE, 0xC00, 0xFFF]))
        p1 = draw(st.sampled_from([0xFF, 0xFC, 0xEC, 0xB4, 0x13]))
        for fetch in range(FETCHES[opcode]):
            value = opcode if fetch == 0 else draw(st.integers(0, 255))
            lines.append(f"F {cycle} {address + fetch:X} {value:X} {p1:X}")
            cycle += draw(st.integers(0, 2))
        if draw(st.booleans()):
            kind = draw(st.sampled_from("RW"))
            lines.append(f"{kind} {cycle} {draw(st.integers(0, 255)):X} {draw(st.integers(0, 255)):X} {p1:X}")
        if draw(st.integers(0, 9)) == 0:
            lines.append(f"E 1 {cycle}")
        cycle += draw(st.integers(1, 3))
    if draw(st.booleans()):
        lines.append("# done")
    return lines


@settings(max_examples=50)  # each example is up to 60 instructions cut into blocks
@given(
    lines=capture_lines(),
    sizes=st.lists(st.integers(1, 30), max_size=12),
    kinds=st.sampled_from([ALL_KINDS, ("FETCH", "MOVX_WRITE"), ("MOVX_WRITE", "MOVX_READ", "P1")]),
    end_cycle=st.one_of(st.none(), st.integers(0, 1200)),
    ending=st.sampled_from(["\n", "\r\n"]),
    last_ended=st.booleans(),
)
def test_blocks_of_lines_give_the_items_of_taking_them_one_by_one(
    lines, sizes, kinds, end_cycle, ending, last_ended
) -> None:
    parser = CaptureLines(kinds, end_cycle)
    edges = sorted({0, len(lines), *(edge for edge in accumulate(sizes) if edge < len(lines))})
    items = []
    for first, last in pairwise(edges):
        items += parser.items(as_block(lines[first:last], ending, last_ended or last < len(lines)))
    expected, ended = line_by_line(lines, kinds, end_cycle)
    assert list(expanded(iter(items))) == expected
    assert parser.ended == ended
    if not ended:
        assert parser.done == (lines[-1] == "# done")


@pytest.mark.parametrize(
    "line",
    [
        "X 10 400 0 FF",
        "F 10 400 0",
        "F 10 400 0 FF 1",
        "F ten 400 0 FF",
        "F 10 4G0 0 FF",
        "F 10 400 100 FF",
        "F 10 400 0 FF ",
        "F  10 400 0 FF",
        "FF 10 400 0",
        "F 10 400 0 -1",
        "F 10 10000 0 FF",
        "W 1234567890123456789 0 0 FF",
    ],
)
def test_a_line_capture_lua_never_writes_is_a_clean_error(line: str) -> None:
    with pytest.raises(HilbridgeError):
        CaptureLines(ALL_KINDS, None).items(as_block(["F 1 400 84 FF", line]))
