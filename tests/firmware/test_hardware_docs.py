"""The hardware data and its docs agree: docs/hardware.md quotes the pin map generated from
firmware/board/pins.tsv, the netlist connects every GPIO and slot contact of the pin map where the
pin map says, and pins_gen.h carries every pin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pio_harness import PROJECT_ROOT, tool

DOC = PROJECT_ROOT / "docs" / "hardware.md"
NETLIST = PROJECT_ROOT / "firmware" / "board" / "netlist.txt"
CONTACTS = [str(number) for number in range(1, 16)] + list("ABCDEFGHJKLMNPR")


def parse_netlist(path: Path = NETLIST) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    parts: dict[str, list[str]] = {}
    nets: dict[str, list[str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        if line.startswith("part "):
            _, ref, _kind, *pin_names = line.split()
            assert ref not in parts, f"line {number}: part {ref} twice"
            parts[ref] = pin_names
        elif line.startswith("net "):
            name, _, ends = line[4:].partition(": ")
            assert name not in nets, f"line {number}: net {name} twice"
            nets[name] = ends.split()
        else:
            pytest.fail(f"netlist.txt line {number}: neither part nor net")
    return parts, nets


def test_doc_quotes_the_generated_pin_table() -> None:
    gen_pins = tool("gen_pins")
    table = gen_pins.markdown_table(gen_pins.load_pins())
    text = DOC.read_text(encoding="utf-8")
    quoted = re.search(r"<!-- pins.tsv:[^\n]*-->\n(.*?)<!-- end of pins.tsv -->", text, re.S)
    assert quoted is not None
    assert quoted.group(1) == table


def test_every_net_names_real_part_pins_once() -> None:
    parts, nets = parse_netlist()
    seen: dict[str, str] = {}
    for name, ends in nets.items():
        assert len(ends) >= 2 or name.endswith("_LEAD"), f"net {name} connects nothing"
        for end in ends:
            ref, _, pin = end.partition(".")
            assert ref in parts, f"net {name}: unknown part {ref}"
            assert pin in parts[ref], f"net {name}: {ref} has no pin {pin}"
            assert end not in seen, f"{end} is in nets {seen.get(end)} and {name}"
            seen[end] = name


def test_netlist_follows_the_pin_map() -> None:
    pins = tool("gen_pins").load_pins()
    _parts, nets = parse_netlist()
    where = {end: name for name, ends in nets.items() for end in ends}
    for pin in pins:
        assert where.get(f"M1.GP{pin.gpio}") == pin.symbol, f"GPIO {pin.gpio} is not on net {pin.symbol}"
        if pin.slot != "-":
            assert where.get(f"J2.{pin.slot}") == f"S_{pin.symbol}", f"cartridge contact {pin.slot}"
            assert where.get(f"J1.{pin.slot}") == f"C_{pin.symbol}", f"console contact {pin.slot}"
    for contact in CONTACTS:  # every contact of both connectors is wired
        assert f"J1.{contact}" in where and f"J2.{contact}" in where, contact


def test_console_and_cartridge_meet_only_through_the_bus_switches() -> None:
    """While DUMP is high the console side must be isolated: no net holds both J1 and J2 contacts
    except contact B (passed through on purpose) and ground."""
    _parts, nets = parse_netlist()
    for name, ends in nets.items():
        refs = {end.partition(".")[0] for end in ends}
        if {"J1", "J2"} <= refs:
            assert name in ("B_PIN", "GND"), name
    switches = {"U8", "U9", "U10", "U11"}
    assert {end.partition(".")[0] for end in nets["DUMP"]} >= switches


def test_header_defines_every_pin() -> None:
    gen_pins = tool("gen_pins")
    pins = gen_pins.load_pins()
    header = gen_pins.c_header(pins)
    for pin in pins:
        assert f"#define PIN_{pin.symbol} {pin.gpio}u" in header
    assert len({pin.gpio for pin in pins}) == gen_pins.GPIO_COUNT  # the board brings out all 30


def test_bad_pin_maps_are_refused(tmp_path: Path) -> None:
    gen_pins = tool("gen_pins")
    good = gen_pins.PINS_TSV.read_text(encoding="utf-8")
    duplicate = good.replace("1\tA1\tA1\tH", "0\tA1\tA1\tH")
    for text, message in (
        (duplicate, "duplicate gpio"),
        (good.replace("\tin\tout\t", "\tsideways\tout\t", 1), "direction"),
    ):
        path = tmp_path / "pins.tsv"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(gen_pins.PinMapError, match=message):
            gen_pins.load_pins(path)
