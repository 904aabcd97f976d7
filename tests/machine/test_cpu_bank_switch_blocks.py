"""A block that switches banks: the fast loop takes the new bank's compiled blocks before it counts
or compiles anything, so code entered right after a switch is compiled once per bank, not again
at every switch into it (bank_rally recompiled such a block about once a frame)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.cpu import Cpu
from hilbridge.oracle.carts import build_cart, load_manifest

FIXTURE_CARTS = Path(__file__).resolve().parents[2] / "fixtures" / "carts"


@pytest.mark.parametrize("name", ["bank_rally", "bank_ktaa", "bank_o2rom_8k"])
def test_bank_switching_carts_compile_their_blocks_once(name: str, monkeypatch) -> None:
    [spec] = [spec for spec in load_manifest(FIXTURE_CARTS) if spec.name == name]
    console = Console(load_cartridge(build_cart(spec), spec.slot))
    compiled: list[tuple[int, int]] = []  # (PC, the bank's block list)
    compile_block = Cpu._block_function

    def counted(cpu: Cpu, pc: int, source: str):
        compiled.append((pc, id(cpu.blocks)))
        return compile_block(cpu, pc, source)

    monkeypatch.setattr(Cpu, "_block_function", counted)
    console.run_frames(180)
    assert len(console.cpu.block_sets) > 1, "the cart switches banks"
    again = sorted({pc for pc, blocks in compiled if compiled.count((pc, blocks)) > 1})
    assert not again, f"{len(compiled) - len(set(compiled))} blocks compiled again, at {again}"
