"""Cartridge database: identification by checksum, mapper rules, CLI, and agreement with MAME's list."""

from __future__ import annotations

import csv
import hashlib
import zlib
from dataclasses import replace

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from hilbridge import cartdb
from hilbridge.cli.main import cli
from hilbridge.errors import HilbridgeError


def _entry_for(name: str, *parts: bytes, mapper: str = "o2_rom") -> cartdb.Cartridge:
    """A synthetic list entry whose program area is `parts` (files loaded one after the other)."""
    roms = []
    offset = 0
    for index, part in enumerate(parts):
        roms.append(
            cartdb.RomFile(
                dataarea="rom",
                dataarea_size=sum(map(len, parts)),
                name=f"{name}_{index}.bin",
                offset=offset,
                size=len(part),
                crc32=f"{zlib.crc32(part):08x}",
                sha1=hashlib.sha1(part).hexdigest(),
                loadflag="",
            )
        )
        offset += len(part)
    return cartdb.Cartridge(name, f"{name} test", "2026", "nobody", "", mapper, False, "", tuple(roms))


@pytest.fixture
def synthetic_list(monkeypatch):
    """Replace the list with synthetic entries built from bytes we make here (no copyrighted ROMs)."""
    first = bytes(range(256)) * 8
    second = bytes((7 * i + 3) & 0xFF for i in range(4096))
    split_a, split_b = b"\x11" * 4096, b"\x22" * 8192
    listed = (
        _entry_for("first", first),
        _entry_for("second", second, mapper="o2_4in1"),
        _entry_for("split", split_a, split_b, mapper="o2_rally"),
    )
    monkeypatch.setattr(cartdb, "entries", lambda: listed)
    return {"first": first, "second": second, "split": split_a + split_b}


def test_identify_finds_the_entry_by_checksum(synthetic_list):
    matches = cartdb.identify(synthetic_list["second"])
    assert [(m.cartridge.name, m.exact) for m in matches] == [("second", True)]
    assert cartdb.mapper_for(synthetic_list["second"]) == "o2_4in1"


def test_identify_concatenates_multi_file_entries_by_offset(synthetic_list):
    assert [m.cartridge.name for m in cartdb.identify(synthetic_list["split"])] == ["split"]
    swapped = synthetic_list["split"][4096:] + synthetic_list["split"][:4096]
    assert cartdb.identify(swapped) == []


def test_one_changed_byte_is_unknown(synthetic_list):
    image = bytearray(synthetic_list["first"])
    image[100] ^= 0x01
    assert cartdb.identify(bytes(image)) == []
    assert cartdb.mapper_for(bytes(image)) is None


def test_crc_collision_is_reported_as_inexact(synthetic_list, monkeypatch):
    """Same CRC32 but another SHA-1 (as a list error or a collision would give) is a CRC-only match."""
    entry = _entry_for("first", synthetic_list["first"])
    wrong_sha = replace(entry, roms=(replace(entry.roms[0], sha1="0" * 40),))
    monkeypatch.setattr(cartdb, "entries", lambda: (wrong_sha,))
    [match] = cartdb.identify(synthetic_list["first"])
    assert not match.exact
    assert cartdb.mapper_for(synthetic_list["first"]) is None


@given(st.binary(min_size=1, max_size=64))
def test_checksums_match_the_list_spelling(data):
    sums = cartdb.checksums(data)
    assert len(sums.crc32) == 8 and sums.crc32 == sums.crc32.lower()
    assert int(sums.crc32, 16) == zlib.crc32(data)
    assert len(sums.sha1) == 40


@pytest.mark.parametrize(
    ("size", "mapper"),
    [
        (2048, "o2_rom"),
        (4096, "o2_rom"),
        (8192, "o2_rom"),
        (12288, "o2_rom"),
        (16384, "o2_rally"),
    ],
)
def test_mapper_from_size_follows_mame(size, mapper):
    assert cartdb.mapper_from_size(size) == mapper


def test_mapper_from_size_rejects_empty():
    with pytest.raises(HilbridgeError):
        cartdb.mapper_from_size(0)


@pytest.mark.parametrize("size", [3, 1000, 2049, 1 << 20])
def test_a_size_no_cartridge_has_is_not_a_cartridge_image(size):
    with pytest.raises(HilbridgeError, match="not a cartridge image") as refused:
        cartdb.mapper_from_size(size)
    assert "2048, 3072, 4096, 6144, 8192, 12288, 16384" in refused.value.hint


@pytest.mark.parametrize("size", [3, 1 << 20])
def test_carts_identify_refuses_junk_with_the_valid_sizes(tmp_path, size):
    from click.testing import CliRunner

    from hilbridge.cli.main import cli

    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(size))
    result = CliRunner().invoke(cli, ["carts", "identify", str(junk)])
    assert result.exit_code == 2 and "not a cartridge image" in result.output
    assert "o2_rom" not in result.output and "2048, 3072" in result.output


def test_real_list_shape():
    listed = [c for c in cartdb.entries() if c.source == "videopac.tsv"]
    assert len(listed) == 193
    assert {c.mapper for c in listed} == set(cartdb.MAPPERS)
    assert len({c.name for c in listed}) == len(listed)
    conquest = cartdb.by_name("conquest")
    assert conquest.mapper == "o2_rom"
    assert [(r.size, r.crc32) for r in conquest.program_roms] == [(4096, "afc093fd")]
    for cartridge in listed:
        if cartridge.cloneof:
            cartdb.by_name(cartridge.cloneof)


def test_file_name_for_dumps():
    assert cartdb.by_name("conquest").file_name == "vp_41.bin"
    assert cartdb.by_name("neutron").file_name == "neutron.bin"  # the list names its file without .bin
    assert cartdb.by_name("voice").file_name == "voice.bin"  # no program ROM of its own


def test_cli_list_everything():
    result = CliRunner().invoke(cli, ["carts", "list"])
    assert result.exit_code == 0
    assert len(result.output.splitlines()) == len(cartdb.entries())


def test_by_name_unknown_is_user_error():
    with pytest.raises(HilbridgeError, match="nosuchgame"):
        cartdb.by_name("nosuchgame")


def test_reload_rows_do_not_count_as_files():
    """Air Battle's 12 KB file is loaded twice by MAME; a dump of it is the 12 KB file alone."""
    air_battle = cartdb.by_name("airbattl")
    assert air_battle.program_size == 12288
    assert any(rom.is_reload for rom in air_battle.roms)


def test_shared_list_rows_all_present(shared_reference):
    """Every row of the MAME list (../shared copy) is in our TSV with the same file, offset and hashes."""
    with (shared_reference / "data" / "videopac_softlist.tsv").open(encoding="utf-8") as handle:
        source = list(csv.DictReader(handle, delimiter="\t"))
    ours = {
        (c.name, rom.dataarea, rom.name, rom.offset, rom.loadflag): (c, rom)
        for c in cartdb.entries()
        if c.source == "videopac.tsv"
        for rom in c.roms
    }
    assert len(ours) == len(source) == 200
    for row in source:
        key = (row["name"], row["dataarea"], row["rom_name"], int(row["rom_offset"] or 0), row["loadflag"])
        cartridge, rom = ours[key]
        assert (rom.crc32, rom.sha1, rom.size) == (row["crc32"], row["sha1"], int(row["rom_size"] or 0))
        assert (cartridge.mapper, cartridge.description, cartridge.cloneof) == (
            row["slot"],
            row["description"],
            row["cloneof"],
        )
        assert cartridge.b_pin == (row["b_pin"] == "1")


def test_cli_identify_known_and_unknown(synthetic_list, tmp_path):
    known = tmp_path / "known.bin"
    known.write_bytes(synthetic_list["first"])
    result = CliRunner().invoke(cli, ["carts", "identify", str(known)])
    assert result.exit_code == 0, result.output
    assert "first: first test" in result.output
    assert f"{zlib.crc32(synthetic_list['first']):08x}" in result.output
    unknown = tmp_path / "unknown.bin"
    unknown.write_bytes(b"\x00" * 16384)
    result = CliRunner().invoke(cli, ["carts", "identify", str(unknown)])
    assert result.exit_code == 0
    assert "unknown" in result.output and "o2_rally" in result.output


def test_cli_identify_bad_files(tmp_path):
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    for path in (empty, tmp_path / "missing.bin"):
        result = CliRunner().invoke(cli, ["carts", "identify", str(path)])
        assert result.exit_code == 2
        assert f"{path}: error:" in result.output


def test_cli_list_filters_by_mapper():
    result = CliRunner().invoke(cli, ["carts", "list", "--mapper", "o2_rally"])
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.output.splitlines()]
    assert sorted(names) == sorted(c.name for c in cartdb.entries() if c.mapper == "o2_rally")
    assert len(names) == 4


def test_hilbridge_list_rows_are_the_images_they_name():
    from hilbridge.sim.demo import demo_image

    own = [c for c in cartdb.entries() if c.source == "hilbridge.tsv"]
    assert [c.name for c in own] == ["hilbridge_demo"]
    [rom] = own[0].program_roms
    sums = cartdb.checksums(demo_image())
    assert (rom.crc32, rom.sha1) == (sums.crc32, sums.sha1)
