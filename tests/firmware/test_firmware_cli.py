"""`hilbridge firmware flash | info` and the outdated-firmware warning, with fake drives in tmp_path."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from hilbridge.cli.main import cli
from hilbridge.firmware import flash as flash_module
from hilbridge.firmware.uf2 import seal_boot2, write_uf2
from hilbridge.firmware.version import FirmwareOutdated, outdated_warning, version_tuple
from hilbridge.link.discovery import open_adapter
from hilbridge.link.protocol import PROTOCOL_VERSION

RP2040_INFO = "UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"


@pytest.fixture
def uf2(tmp_path) -> Path:
    path = tmp_path / "adapter.uf2"
    path.write_bytes(write_uf2(seal_boot2(b"\x00\xbf") + bytes(range(256)) * 4))
    return path


def drive(tmp_path: Path, name: str, info: str | None) -> Path:
    path = tmp_path / "media" / name
    path.mkdir(parents=True)
    if info is not None:
        (path / "INFO_UF2.TXT").write_text(info)
    (path / "INDEX.HTM").write_text("<html></html>")
    return path


def run(*arguments: str):
    return CliRunner().invoke(cli, ["firmware", *arguments])


def test_flash_copies_the_uf2_onto_an_rp2040_drive(tmp_path, uf2):
    target = drive(tmp_path, "RPI-RP2", RP2040_INFO)
    result = run("flash", str(uf2), "--drive", str(target))
    assert result.exit_code == 0, result.output
    assert (target / uf2.name).read_bytes() == uf2.read_bytes()


def test_flash_finds_the_mounted_drive(tmp_path, uf2, monkeypatch):
    target = drive(tmp_path, "RPI-RP2", RP2040_INFO)
    drive(tmp_path, "USBSTICK", "Board-ID: SOMETHING-ELSE\n")
    monkeypatch.setattr(flash_module, "MOUNT_ROOTS", (str(tmp_path / "media"),))
    monkeypatch.setattr(flash_module, "MOUNT_TABLE", tmp_path / "no-mounts")
    result = run("flash", str(uf2))
    assert result.exit_code == 0, result.output
    assert (target / uf2.name).is_file()


def test_no_drive_mounted_says_what_to_do(tmp_path, uf2, monkeypatch):
    monkeypatch.setattr(flash_module, "MOUNT_ROOTS", (str(tmp_path / "media"),))
    monkeypatch.setattr(flash_module, "MOUNT_TABLE", tmp_path / "no-mounts")
    result = run("flash", str(uf2))
    assert result.exit_code == 2
    assert "no RPI-RP2 drive is mounted" in result.output and "BOOTSEL" in result.output


@pytest.mark.parametrize("info", [None, "Board-ID: SAMD21-XYZ\n", "just a text file\n"])
def test_a_drive_that_is_not_an_rp2040_is_refused_and_left_alone(tmp_path, uf2, info):
    target = drive(tmp_path, "RPI-RP2", info)
    before = sorted(p.name for p in target.iterdir())
    result = run("flash", str(uf2), "--drive", str(target))
    assert result.exit_code == 2 and "not an RP2040" in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in target.iterdir()) == before


def test_a_uf2_for_another_family_is_refused(tmp_path):
    target = drive(tmp_path, "RPI-RP2", RP2040_INFO)
    other = tmp_path / "samd.uf2"
    other.write_bytes(write_uf2(seal_boot2(b"") + bytes(600), family=0x68ED2B88))
    result = run("flash", str(other), "--drive", str(target))
    assert result.exit_code == 2 and "family" in result.output
    assert not (target / other.name).exists()


def test_a_truncated_uf2_is_refused(tmp_path, uf2):
    target = drive(tmp_path, "RPI-RP2", RP2040_INFO)
    short = tmp_path / "short.uf2"
    short.write_bytes(uf2.read_bytes()[:-700])
    result = run("flash", str(short), "--drive", str(target))
    assert result.exit_code == 2 and "truncated" in result.output
    assert not (target / short.name).exists()


def test_flash_onto_a_missing_directory_is_refused(tmp_path, uf2):
    result = run("flash", str(uf2), "--drive", str(tmp_path / "nowhere"))
    assert result.exit_code == 2 and "not a mounted drive" in result.output


def test_info_prints_hello_and_firmware_info():
    result = run("info", "-d", "sim")
    assert result.exit_code == 0, result.output
    assert f"protocol      {PROTOCOL_VERSION}" in result.output and "serial        SIM-0001" in result.output
    assert "simulated adapter" in result.output  # FIRMWARE_INFO's build text


def test_versions_compare_numerically():
    assert version_tuple("0.10.0") > version_tuple("0.9.9")
    assert version_tuple("1.2") == (1, 2, 0)
    assert outdated_warning("0.1.0", "0.1.0") is None
    assert outdated_warning("0.2.0", "0.1.9") is None
    assert "older" in (outdated_warning("0.0.9", "0.1.0") or "")


def test_opening_an_adapter_with_older_firmware_warns(monkeypatch):
    from hilbridge.sim import device

    monkeypatch.setattr(device, "FIRMWARE_VERSION", (0, 0, 1))
    with pytest.warns(FirmwareOutdated, match="firmware 0.0.1, older"):
        open_adapter("sim").close()
    monkeypatch.setattr(device, "FIRMWARE_VERSION", (99, 0, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        open_adapter("sim").close()


def test_a_drive_found_through_the_mount_table(tmp_path, monkeypatch):
    target = drive(tmp_path, "RPI-RP2", RP2040_INFO)
    table = tmp_path / "mounts"
    table.write_text(f"/dev/sdb1 {target} vfat rw 0 0\n/dev/sda1 / ext4 rw 0 0\n")
    monkeypatch.setattr(flash_module, "MOUNT_ROOTS", ())
    monkeypatch.setattr(flash_module, "MOUNT_TABLE", table)
    assert flash_module.find_drive() == target


@pytest.mark.slow
def test_build_writes_a_valid_uf2_whose_boot2_and_vectors_are_in_place(tmp_path):
    from conftest import require_tool

    from hilbridge.firmware.uf2 import read_uf2

    require_tool("arm-none-eabi-gcc")
    pytest.importorskip("adafruit_pioasm")
    result = run("build", "--jobs", "2", "--build-dir", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    uf2 = tmp_path / "out" / "hilbridge-adapter.uf2"
    assert f"{uf2}  " in result.output
    image = read_uf2(uf2.read_bytes()).image  # family, blocks and boot2 CRC checked
    stack, reset = int.from_bytes(image[0x100:0x104], "little"), int.from_bytes(image[0x104:0x108], "little")
    assert stack == 0x20040000 and 0x10000100 < reset < 0x10000000 + len(image) and reset & 1
    assert image == (tmp_path / "out" / "hilbridge-adapter.bin").read_bytes().ljust(len(image), b"\0")
