"""The built firmware on an emulated RP2040 (rp2040js), booted through the real boot ROM."""

from __future__ import annotations

import errno
from collections.abc import Iterator

import pytest
import usb.core
from conftest import PROJECT_ROOT
from firmware_loop import (
    EMULATED_LINK,
    FLASH_SERIAL,
    RunningFirmware,
    boot_check,
    built_uf2,
    firmware_chip,
    running_firmware,
)

from hilbridge import __version__
from hilbridge.firmware.uf2 import read_uf2, write_uf2
from hilbridge.firmware.usb_descriptors import build, load_spec, parse_configuration, parse_device
from hilbridge.link import usb as link_usb
from hilbridge.link.adapter import Adapter
from hilbridge.link.protocol import PROTOCOL_VERSION
from hilbridge.link.transport import SerialTransport
from hilbridge.link.usb import UsbTransport, describe, find_adapters

SPEC = PROJECT_ROOT / "hilbridge" / "firmware" / "usb_descriptors.json"

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
    with Adapter(SerialTransport(firmware_chip().url), **EMULATED_LINK) as adapter:
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


@pytest.fixture(scope="module")
def vendor_firmware() -> Iterator[RunningFirmware]:
    """One chip on `--link vendor` for the tests that read its descriptors, say HELLO through pyusb and
    run control transfers: none changes what another looks at (the descriptors are read at enumeration,
    line coding and stalls are EP0 state, frames_bad counts link frames), so one boot serves all three."""
    with running_firmware("--link", "vendor") as firmware:
        yield firmware


def _string(descriptor_hex: str) -> str:
    data = bytes.fromhex(descriptor_hex)
    assert data[0] == len(data) and data[1] == 3
    return data[2:].decode("utf-16-le")


def test_descriptors_read_from_the_running_firmware_are_what_usb_transport_looks_for(vendor_firmware):
    descriptors = vendor_firmware.descriptors
    device = parse_device(bytes.fromhex(descriptors["device"]))
    assert (device.idVendor, device.idProduct) == (link_usb.ADAPTER_VID, link_usb.ADAPTER_PID)
    configuration, interfaces = parse_configuration(bytes.fromhex(descriptors["configuration"]))
    assert configuration.bNumInterfaces == len(interfaces) == 3
    vendor = [
        s for settings in interfaces for s in settings if s.bInterfaceClass == link_usb.INTERFACE_CLASS_VENDOR
    ]
    assert len(vendor) == 1
    endpoints = {(e.bEndpointAddress, e.bmAttributes & 3, e.wMaxPacketSize) for e in vendor[0].children}
    packet = link_usb.PACKET_SIZE
    assert endpoints == {(link_usb.BULK_OUT, 2, packet), (link_usb.BULK_IN, 2, packet)}
    # The CDC-ACM function is still there, its data endpoints distinct from the vendor interface's.
    cdc = [s for settings in interfaces for s in settings if s.bInterfaceClass == 0x0A]
    vendor_addresses = {link_usb.BULK_OUT, link_usb.BULK_IN}
    assert len(cdc) == 1 and not {e.bEndpointAddress for e in cdc[0].children} & vendor_addresses
    # Strings: English, the serial number from the flash's unique id, the product of usb_descriptors.json.
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
        "vendor": {"in": link_usb.BULK_IN & 0x0F, "out": link_usb.BULK_OUT & 0x0F},
    }


def test_hello_is_answered_over_the_vendor_bulk_interface_through_pyusb(vendor_firmware):
    backend = vendor_firmware.usb_backend()
    (found,) = find_adapters(backend)
    assert describe(found).serial == FLASH_SERIAL  # a string descriptor read from the chip
    with Adapter(UsbTransport(FLASH_SERIAL, backend=backend), **EMULATED_LINK) as adapter:
        assert adapter.info.protocol == PROTOCOL_VERSION and adapter.info.serial == FLASH_SERIAL
        assert adapter.status()["frames_bad"] == 0


GET_DESCRIPTOR, SET_LINE_CODING, GET_LINE_CODING, SET_CONTROL_LINE_STATE = 0x06, 0x20, 0x21, 0x22


def test_control_transfers_after_enumeration_are_answered_by_the_firmware(vendor_firmware):
    built = build(load_spec(SPEC))
    (device,) = find_adapters(vendor_firmware.usb_backend())
    # Descriptors read now are the generator's bytes, cut to the length asked, as the chip sends them.
    configuration = built["configuration"]
    assert device.ctrl_transfer(0x80, GET_DESCRIPTOR, 0x0200, 0, 255).tobytes() == configuration
    assert device.ctrl_transfer(0x80, GET_DESCRIPTOR, 0x0200, 0, 9).tobytes() == configuration[:9]
    assert device.ctrl_transfer(0x80, GET_DESCRIPTOR, 0x0100, 0, 18).tobytes() == built["device"]
    assert device.ctrl_transfer(0x80, 0x00, 0, 0, 2).tobytes() == b"\x00\x00"  # GET_STATUS
    assert device.ctrl_transfer(0x80, 0x08, 0, 0, 1).tobytes() == b"\x01"  # GET_CONFIGURATION
    # Line coding is state only the firmware holds: what is set is what comes back.
    device.detach_kernel_driver(0)  # as a program that talks to the CDC interface itself must
    coding = bytes([0x80, 0x25, 0x00, 0x00, 0, 0, 8])  # 9600 8N1
    assert device.ctrl_transfer(0x21, SET_LINE_CODING, 0, 0, coding) == len(coding)
    assert device.ctrl_transfer(0xA1, GET_LINE_CODING, 0, 0, 7).tobytes() == coding
    assert device.ctrl_transfer(0x21, SET_CONTROL_LINE_STATE, 0x0003, 0, None) == 0  # DTR, RTS
    # What the firmware does not answer it stalls: a vendor request, a string it does not have.
    for request in ((0xC0, 0x01, 0, 0, 4), (0x80, GET_DESCRIPTOR, 0x0309, 0x0409, 255)):
        with pytest.raises(usb.core.USBError) as stall:
            device.ctrl_transfer(*request)
        assert stall.value.errno == errno.EPIPE
    # And the next request is answered again.
    serial = device.ctrl_transfer(0x80, GET_DESCRIPTOR, 0x0303, 0x0409, 255).tobytes()
    assert serial[2:].decode("utf-16-le") == FLASH_SERIAL
