"""The project's opcode table agrees with the reference table taken from MAME's 8048 core."""

import csv

from hilbridge.mcs48 import INSTRUCTIONS, UNDEFINED_OPCODES


def test_every_opcode_present_once():
    assert [i.opcode for i in INSTRUCTIONS] == list(range(256))


def test_undefined_opcodes_are_the_26_nmos_holes():
    expected = {
        0x01,
        0x06,
        0x0B,
        0x22,
        0x33,
        0x38,
        0x3B,
        0x63,
        0x66,
        0x73,
        0x82,
        0x87,
        0x8B,
        0x9B,
        0xA2,
        0xA6,
        0xB7,
        0xC0,
        0xC1,
        0xC2,
        0xC3,
        0xD6,
        0xE0,
        0xE1,
        0xE2,
        0xF3,
    }
    assert expected == UNDEFINED_OPCODES


def test_lengths_and_cycles_match_reference(shared_reference):
    with open(shared_reference / "data" / "mcs48_opcodes.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for row in rows:
        ours = INSTRUCTIONS[int(row["opcode"], 16)]
        assert ours.length == int(row["bytes"]), row
        assert ours.cycles == int(row["cycles"]), row
        if ours.defined:
            assert row["mnemonic_8048"].startswith(ours.mnemonic + (" " if ours.operands else "")), row
