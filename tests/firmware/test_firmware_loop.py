"""The built firmware on an emulated RP2040 (rp2040js), booted through the real boot ROM."""

from __future__ import annotations

import pytest
from firmware_loop import boot_check, built_uf2, served_firmware

from hilbridge.firmware.uf2 import read_uf2, write_uf2
from hilbridge.link.transport import SerialTransport

pytestmark = pytest.mark.slow


def test_the_uf2_boots_through_the_boot_rom():
    report = boot_check(built_uf2())
    assert report["booted"] is True


def test_a_uf2_with_a_corrupted_boot2_crc_does_not_boot(tmp_path):
    image = bytearray(read_uf2(built_uf2().read_bytes()).image)
    image[252] ^= 0x01  # the stored CRC no longer matches boot2
    bad = tmp_path / "bad.uf2"
    bad.write_bytes(write_uf2(bytes(image)))
    report = boot_check(bad, cycles=8_000_000)
    assert report["booted"] is False
    assert "usb-connected" in report["events"]  # the boot ROM fell back to its own USB boot device


def test_usb_cdc_carries_bytes_both_ways():
    with served_firmware() as url:
        transport = SerialTransport(url)
        try:
            transport.write(b"\x00")
            assert transport.read(2.0) is not None
        finally:
            transport.close()
