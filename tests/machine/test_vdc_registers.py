"""VDC register behaviour: masks, mirrors, lock-outs and read-back values.

The facts: docs/hardware.md, "VDC registers"."""

from __future__ import annotations

import pytest

from hilbridge.machine.timing import NTSC, PAL
from hilbridge.machine.vdc import Vdc, parse_register_map, register_map

CYCLE = 100  # well before the first VBL, display off


def fresh(region=NTSC) -> Vdc:
    return Vdc(region)


def test_map_covers_every_address_once() -> None:
    table = register_map()
    assert [info.address for info in table] == list(range(256))
    assert table[0xB3].canonical == 0xA3
    assert table[0x45].canonical == 0x41
    assert table[0x46].canonical == 0x46  # quad pointers are not mirrored


def test_map_rejects_overlapping_rows() -> None:
    row = "00\tFF\t1\tall\tFF\tvalue\t-\tno\t00"
    with pytest.raises(ValueError, match="twice"):
        parse_register_map(row + "\n" + row)
    with pytest.raises(ValueError, match="cover"):
        parse_register_map("00\t0F\t1\tpart\tFF\tvalue\t-\tno\t00")


@pytest.mark.parametrize(
    ("address", "written", "read_address", "expected"),
    [
        (0x10, 0x61, 0x10, 0x60),  # character Y bit 0 not connected
        (0x13, 0xFF, 0x13, 0x0F),  # character attribute b4-b7 not connected
        (0x43, 0xFF, 0x43, 0x0F),  # quad attribute likewise
        (0xD0, 0xFF, 0xD0, 0x01),  # horizontal grid row 8: bit 0 only
        (0x44, 0x5A, 0x40, 0x5A),  # quad Y of character 1 lands in character 0's
        (0x4D, 0x33, 0x41, 0x33),  # quad X mirror, quad 0 char 3
        (0xAA, 0xFF, 0xAA, 0xBF),  # AA bit 6 forced to 0
        (0xBA, 0x85, 0xAA, 0x85),  # B0-BF mirror A0-AF
        (0x80, 0xA5, 0x80, 0xA5),  # sprite shapes read back
        (0xC4, 0x77, 0xC4, 0x77),  # grid registers read back while the grid is off
    ],
)
def test_write_masks_and_mirrors(address: int, written: int, read_address: int, expected: int) -> None:
    vdc = fresh()
    vdc.write(address, written, CYCLE)
    assert vdc.read(read_address, CYCLE + 5) == expected


@pytest.mark.parametrize("address", [0x02, 0x06, 0x0A, 0x0E, 0xA3, 0xA7, 0xA8, 0xA9])
def test_write_only_registers_read_zero(address: int) -> None:
    vdc = fresh()
    vdc.write(address, 0x3F, CYCLE)
    assert vdc.read(address, CYCLE + 5) == 0
    assert vdc.registers[address] == 0x3F


@pytest.mark.parametrize("address", [0x03, 0x0F, 0xA6, 0xAB, 0xAF, 0xC9, 0xDF, 0xEA, 0xF0, 0xFF])
def test_unused_registers_ignore_writes(address: int) -> None:
    vdc = fresh()
    vdc.write(address, 0xFF, CYCLE)
    assert vdc.registers[address] == 0
    assert vdc.read(address, CYCLE + 5) == 0


def test_b3_is_a3() -> None:
    vdc = fresh()
    vdc.write(0xB3, 0x2A, CYCLE)
    assert vdc.registers[0xA3] == 0x2A and vdc.registers[0xB3] == 0


def test_display_on_locks_objects_but_not_shapes() -> None:
    vdc = fresh()
    vdc.write(0x10, 0x40, CYCLE)
    vdc.write(0xA0, 0x20, CYCLE + 5)
    vdc.write(0x00, 0x55, CYCLE + 10)
    vdc.write(0x80, 0x66, CYCLE + 15)
    assert vdc.registers[0x00] == 0, "object register written while the display is on"
    assert vdc.registers[0x80] == 0x66
    assert vdc.read(0x10, CYCLE + 20) == 0, "object registers read 0 while the display is on"
    assert vdc.read(0x80, CYCLE + 25) == 0x66
    vdc.write(0xA0, 0x00, CYCLE + 30)
    assert vdc.read(0x10, CYCLE + 35) == 0x40


def test_grid_on_locks_grid_registers() -> None:
    vdc = fresh()
    vdc.write(0xC0, 0x11, CYCLE)
    vdc.write(0xA0, 0x08, CYCLE + 5)
    vdc.write(0xC0, 0x22, CYCLE + 10)
    assert vdc.read(0xC0, CYCLE + 15) == 0
    vdc.write(0xA0, 0x00, CYCLE + 20)
    assert vdc.read(0xC0, CYCLE + 25) == 0x11
    assert vdc.read(0x10, CYCLE + 30) == 0  # objects unaffected by the grid lock


@pytest.mark.parametrize("region", [NTSC, PAL])
def test_state_round_trip(region) -> None:
    vdc = fresh(region)
    for offset, (address, value) in enumerate([(0x10, 0x60), (0x12, 0xD0), (0xA3, 0x38), (0xA0, 0x28)]):
        vdc.write(address, value, 50 + 5 * offset)
    vdc.run_to(20_000)
    copy = Vdc(region)
    copy.load_state(vdc.state())
    for cycle in range(20_000, 40_000, 997):
        assert copy.read(0xA1, cycle) == vdc.read(0xA1, cycle)
        assert copy.t1(cycle) == vdc.t1(cycle)
    copy.run_to(60_000)
    vdc.run_to(60_000)
    assert (copy.frame() == vdc.frame()).all()
