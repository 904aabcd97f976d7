"""The built firmware on an emulated RP2040 (rp2040js), booted through the real boot ROM."""

from __future__ import annotations

import pytest
from conftest import PROJECT_ROOT
from firmware_loop import (
    EMULATED_LINK,
    FLASH_SERIAL,
    boot_check,
    built_uf2,
    running_firmware,
    served_firmware,
)

from hilbridge import __version__
from hilbridge.firmware.harness_usb import HarnessUsbBackend, parse_configuration, parse_device
from hilbridge.firmware.uf2 import read_uf2, write_uf2
from hilbridge.firmware.usb_descriptors import build, load_spec
from hilbridge.link import usb
from hilbridge.link.adapter import Adapter
from hilbridge.link.protocol import PROTOCOL_VERSION
from hilbridge.link.transport import SerialTransport
from hilbridge.link.usb import UsbTransport, describe, find_adapters

SPEC = PROJECT_ROOT / "firmware" / "usb" / "descriptors.json"

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


def _string(descriptor_hex: str) -> str:
    data = bytes.fromhex(descriptor_hex)
    assert data[0] == len(data) and data[1] == 3
    return data[2:].decode("utf-16-le")


def test_descriptors_read_from_the_running_firmware_are_what_usb_transport_looks_for():
    with running_firmware("--link", "vendor") as firmware:
        descriptors = firmware.descriptors
    device = parse_device(bytes.fromhex(descriptors["device"]))
    assert (device.idVendor, device.idProduct) == (usb.ADAPTER_VID, usb.ADAPTER_PID)
    configuration, interfaces = parse_configuration(bytes.fromhex(descriptors["configuration"]))
    assert configuration.bNumInterfaces == len(interfaces) == 3
    vendor = [
        s for settings in interfaces for s in settings if s.bInterfaceClass == usb.INTERFACE_CLASS_VENDOR
    ]
    assert len(vendor) == 1
    endpoints = {(e.bEndpointAddress, e.bmAttributes & 3, e.wMaxPacketSize) for e in vendor[0].children}
    assert endpoints == {(usb.BULK_OUT, 2, usb.PACKET_SIZE), (usb.BULK_IN, 2, usb.PACKET_SIZE)}
    # The CDC-ACM function is still there, its data endpoints distinct from the vendor interface's.
    cdc = [s for settings in interfaces for s in settings if s.bInterfaceClass == 0x0A]
    assert len(cdc) == 1 and not {e.bEndpointAddress for e in cdc[0].children} & {usb.BULK_OUT, usb.BULK_IN}
    # Strings: English, the serial number from the flash's unique id, the product of descriptors.json.
    assert bytes.fromhex(descriptors["strings"]["0"]) == bytes([4, 3, 0x09, 0x04])
    assert _string(descriptors["strings"][str(device.iSerialNumber)]) == FLASH_SERIAL
    spec = load_spec(SPEC)
    assert _string(descriptors["strings"][str(device.iProduct)]) == spec["strings"]["product"]
    # What came over the emulated control pipe is what the generator packed into the firmware.
    built = build(spec)
    assert bytes.fromhex(descriptors["device"]) == built["device"]
    assert bytes.fromhex(descriptors["configuration"]) == built["configuration"]
    # The harness routes the endpoints it found in them.
    cdc_in, cdc_out = (
        next(e.bEndpointAddress & 0x0F for e in cdc[0].children if bool(e.bEndpointAddress & 0x80) == into)
        for into in (True, False)
    )
    assert descriptors["pipes"] == {
        "cdc": {"in": cdc_in, "out": cdc_out},
        "vendor": {"in": usb.BULK_IN & 0x0F, "out": usb.BULK_OUT & 0x0F},
    }


def test_hello_is_answered_over_the_vendor_bulk_interface_through_pyusb():
    with running_firmware("--link", "vendor") as firmware:
        backend = HarnessUsbBackend(firmware.url, firmware.descriptors)
        (found,) = find_adapters(backend)
        assert describe(found).serial == FLASH_SERIAL
        with Adapter(UsbTransport(FLASH_SERIAL, backend=backend), **EMULATED_LINK) as adapter:
            assert adapter.info.protocol == PROTOCOL_VERSION and adapter.info.serial == FLASH_SERIAL
            assert adapter.status()["frames_bad"] == 0
