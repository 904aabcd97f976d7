"""The built firmware on an emulated RP2040 (rp2040js), booted through the real boot ROM."""

from __future__ import annotations

import pytest
from firmware_loop import (
    EMULATED_LINK,
    FLASH_SERIAL,
    boot_check,
    built_uf2,
    running_firmware,
    served_firmware,
)

from hilbridge import __version__
from hilbridge.firmware.uf2 import read_uf2, write_uf2
from hilbridge.link.adapter import Adapter
from hilbridge.link.protocol import PROTOCOL_VERSION
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


def test_hello_is_answered_over_emulated_usb_cdc():
    with served_firmware() as url, Adapter(SerialTransport(url), **EMULATED_LINK) as adapter:
        assert adapter.info.protocol == PROTOCOL_VERSION
        assert adapter.info.firmware == __version__
        assert adapter.info.max_payload >= 4096
        # The serial number is the flash chip's unique id (command 4Bh), as the harness's flash holds it.
        assert adapter.info.serial == FLASH_SERIAL
        assert adapter.firmware_info().startswith(f"hilbridge adapter firmware {__version__}")
        assert adapter.status()["frames_bad"] == 0


def test_hello_is_answered_over_the_uart_fallback_on_its_pins():
    with running_firmware("--link", "uart") as firmware:
        with Adapter(SerialTransport(firmware.url), **EMULATED_LINK) as adapter:
            assert adapter.info.protocol == PROTOCOL_VERSION and adapter.info.serial == FLASH_SERIAL
            assert adapter.status()["frames_bad"] == 0
        pins = firmware.wait_event("uart-pins", timeout=10)
    assert pins == {"event": "uart-pins", "tx": 2, "rx": 2, "uart": True}  # function 2: UART0
