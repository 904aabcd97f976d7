"""The edge-collision cart (`fixtures/carts/video_edges.asm`) places what it says: every object
ends right before, or starts right after, its grid element, without covering a pixel of it (but
the two control scenes, which cover one or two pixels of the bar).

Whether the collision bits then equal MAME 0.251's is the oracle comparison (tests/oracle); this
checks the cart itself, from the emulator's frames (which equal MAME's pixel for pixel there)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from fixture_runs import built_cart

from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.oracle.carts import load_manifest

CARTS = Path(__file__).resolve().parents[2] / "fixtures" / "carts"
OBJECT, GRID = 9, 2  # palette indices: light red objects, green grid
LINE = 73  # a line every grid element of the cart (column 1, row 2) covers
ELEMENT_FIRST = 58  # column 1: (13 + 16) * 2
ELEMENT_LAST = {"bar": 61, "dot": 61, "horizontal": 93, "wide": 89}
WIDTH = {0: 16, 1: 32, 2: 16, 3: 16, 4: 16}  # object kinds: sprite, doubled, X9 sprite, character, quad
CONTROLS = {28: 2, 29: 1}  # scenes whose object covers this many pixels of the bar (they must collide)


def scenes() -> list[tuple[int, int, int, int]]:
    """(kind, X, A0, grid register) of each scene, read from the cart's table."""
    text = (CARTS / "video_edges.asm").read_text()
    table = text[text.index("scenes:") :]
    rows = re.findall(r"db\s+(\w+),\s*(\w+),\s*(\w+),\s*(\w+),\s*\w+", table)
    return [tuple(int(v.rstrip("h"), 16) if v.endswith("h") else int(v) for v in row) for row in rows]


def element(mode: int, register: int) -> str:
    if mode & 0x40:
        return "dot"
    if mode & 0x80:
        return "wide"
    return "horizontal" if register == 0xC1 else "bar"


def runs(row: np.ndarray, colour: int) -> list[tuple[int, int]]:
    """(first, last) x of each run of `colour` in `row`."""
    xs = np.flatnonzero(row == colour)
    breaks = np.flatnonzero(np.diff(xs) > 1)
    starts = np.concatenate(([0], breaks + 1))
    ends = np.concatenate((breaks, [len(xs) - 1]))
    return [(int(xs[a]), int(xs[b])) for a, b in zip(starts, ends, strict=True)]


@pytest.mark.slow
@pytest.mark.parametrize("region", ["ntsc", "pal"])
def test_every_object_is_next_to_its_grid_element_without_covering_it(region):
    spec = next(spec for spec in load_manifest(CARTS) if spec.name == "video_edges")
    console = Console(load_cartridge(built_cart(spec), spec.slot), region=region)
    table = scenes()
    assert len(table) == 32
    for number, (kind, x, mode, register) in enumerate(table):
        console.run_frames(8 * number + 5 - console.frame)  # the 4th frame of the scene
        row = console.vdc.frame()[LINE]
        name = element(mode, register)
        first = (x + 5) * 2 + (kind == 2)  # X9 moves a sprite one pixel right
        last = first + WIDTH[kind] - 1
        assert (first, last) in runs(row, OBJECT), f"scene {number}: object not at {first}-{last}"
        if number in CONTROLS:
            assert (last + 1, ELEMENT_LAST[name]) in runs(row, GRID)
            assert last - ELEMENT_FIRST + 1 == CONTROLS[number]
            continue
        assert (ELEMENT_FIRST, ELEMENT_LAST[name]) in runs(row, GRID), f"scene {number}: {name} covered"
        gap = 1 if kind == 2 else 0
        assert last == ELEMENT_FIRST - 1 - gap or first == ELEMENT_LAST[name] + 1 + gap, f"scene {number}"
