"""BIOS: our boot BIOS rebuilds byte for byte, boots the cartridge; user images are checked."""

from __future__ import annotations

import hashlib

import pytest
from machine_doubles import ScriptedVdc, program_cart

from hilbridge.errors import HilbridgeError
from hilbridge.machine.bios import (
    BIOS_SIZE,
    UnknownBiosWarning,
    boot_bios,
    build_boot_bios,
    check_bios,
    known_bioses,
    read_bios,
)
from hilbridge.machine.console import Console


def test_boot_bios_rebuilds_identically_with_our_assembler():
    assert build_boot_bios() == boot_bios().image


def test_boot_bios_hands_reset_and_both_interrupts_to_the_cartridge():
    # cartridge: 400h JMP 410h ; 402h JMP 420h ; 404h JMP 430h
    code = bytes([0x84, 0x10, 0x84, 0x20, 0x84, 0x30])
    console = Console(program_cart(code), vdc=ScriptedVdc(t1_period=0))
    console.step()
    console.step()
    assert console.cpu.pc == 0x410
    for vector, expected in ((0x003, 0x420), (0x007, 0x430)):
        console.cpu.pc = vector
        console.step()
        console.step()
        assert console.cpu.pc == expected


def test_unknown_bios_runs_with_a_warning():
    image = bytes(BIOS_SIZE)
    assert {entry.file for entry in known_bioses()} >= {"o2bios.rom", "c52.rom", "g7400.bin"}
    with pytest.warns(UnknownBiosWarning, match="unknown BIOS"):
        result = check_bios(image, "zeros.rom")
    assert result.known is None and result.image == image


def test_a_listed_dump_is_recognised_by_its_sha1(monkeypatch):
    import warnings

    from hilbridge.machine import bios

    image = bytes(range(256)) * 4
    listed = bios.KnownBios("test console", "test.rom", hashlib.sha1(image).hexdigest())
    monkeypatch.setattr(bios, "known_bioses", lambda: (*known_bioses(), listed))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bios.check_bios(image, "test.rom").known == listed


@pytest.mark.parametrize("size", [0, 1023, 1025, 2048])
def test_wrong_size_bios_is_an_error(tmp_path, size):
    path = tmp_path / "bios.rom"
    path.write_bytes(bytes(size))
    with pytest.raises(HilbridgeError, match="1024 bytes"):
        read_bios(path)


def test_unreadable_bios_is_an_error(tmp_path):
    with pytest.raises(HilbridgeError, match="cannot read"):
        read_bios(tmp_path / "missing.rom")
