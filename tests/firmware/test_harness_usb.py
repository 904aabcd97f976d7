"""The pyusb backend for the harness's vendor link, on the generator's descriptors and a local echo port.

`UsbTransport` opens it as a Linux host sees the composite adapter: already configured, its CDC
interfaces held by a driver (usbfs refuses SET_CONFIGURATION then), the vendor interface free.
"""

from __future__ import annotations

import errno
import socket
import threading
from pathlib import Path

import pytest
import usb.core

from hilbridge.firmware.harness_usb import HarnessUsbBackend, parse_configuration
from hilbridge.firmware.usb_descriptors import build, load_spec, string_descriptor
from hilbridge.link import usb as link_usb
from hilbridge.link.usb import UsbTransport, describe, find_adapters

SPEC = Path(__file__).resolve().parents[2] / "firmware" / "usb" / "descriptors.json"
SERIAL = "HB0123456789ABCDEF"


def recorded_descriptors() -> dict:
    """What the harness prints, made from the generator's bytes instead of a running chip."""
    built = build(load_spec(SPEC))
    strings = {"0": "04030904"}
    for index, name in enumerate(built["string_names"], start=1):
        strings[str(index)] = string_descriptor(built["strings"][name] or SERIAL).hex()
    return {
        "device": built["device"].hex(),
        "configuration": built["configuration"].hex(),
        "strings": strings,
    }


@pytest.fixture
def echo_url():
    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        connection, _ = server.accept()
        with connection:
            while data := connection.recv(4096):
                connection.sendall(data)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"socket://127.0.0.1:{server.getsockname()[1]}"
    server.close()


def test_parsing_keeps_class_specific_descriptors_where_libusb_puts_them():
    configuration, interfaces = parse_configuration(bytes.fromhex(recorded_descriptors()["configuration"]))
    assert [settings[0].bInterfaceClass for settings in interfaces] == [0x02, 0x0A, 0xFF]
    assert configuration.extra_descriptors[:2] == [8, 11]  # the interface association
    extra, kinds = interfaces[0][0].extra_descriptors, []
    while extra:
        kinds.append((extra[1], extra[2]))
        extra = extra[extra[0] :]
    assert kinds == [(0x24, 0x00), (0x24, 0x01), (0x24, 0x02), (0x24, 0x06)]  # CDC header, call, ACM, union
    assert [len(settings[0].children) for settings in interfaces] == [1, 2, 2]


def test_usb_transport_opens_the_configured_composite_device_and_moves_bytes(echo_url):
    backend = HarnessUsbBackend(echo_url, recorded_descriptors())
    (device,) = find_adapters(backend)
    assert describe(device).serial == SERIAL
    transport = UsbTransport(SERIAL, backend=backend)
    try:
        transport.write(b"\x00hello\x00")
        received = b""
        while len(received) < 7:
            received += transport.read(1.0)
        assert received == b"\x00hello\x00"
    finally:
        transport.close()
    assert backend.kernel_drivers == {0, 1}  # the CDC driver kept its interfaces


def test_the_backend_refuses_what_a_linux_host_refuses(echo_url):
    backend = HarnessUsbBackend(echo_url, recorded_descriptors())
    with pytest.raises(usb.core.USBError) as busy:
        backend.set_configuration(None, 1)
    assert busy.value.errno == errno.EBUSY
    backend.claim_interface(None, 2)
    with pytest.raises(usb.core.USBError):
        backend.bulk_write(None, 0x02, 2, b"x", 100)  # the CDC data endpoint, not the vendor interface's
    with pytest.raises(usb.core.USBError):
        backend.bulk_write(None, link_usb.BULK_IN, 2, b"x", 100)  # an IN endpoint
    with pytest.raises(usb.core.USBTimeoutError):
        backend.bulk_read(None, link_usb.BULK_IN, 2, bytearray(64), 10)
