"""The two pyusb backends that stand in for the adapter's USB device: the simulated adapter's and the one
in front of the harness (here on a local echo port and a stand-in for the harness's control port).

`UsbTransport` opens both as a Linux host sees the composite adapter: already configured, its CDC
interfaces held by a driver (usbfs refuses SET_CONFIGURATION then), the vendor interface free. The
harness backend sends every control transfer to the control port and returns what comes back.
"""

from __future__ import annotations

import contextlib
import errno
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import usb.core
import usb.util

from hilbridge.firmware.harness_usb import HarnessUsbBackend
from hilbridge.firmware.usb_descriptors import build, load_spec, parse_configuration, string_descriptors
from hilbridge.firmware.usb_device import DescriptorBackend
from hilbridge.link import usb as link_usb
from hilbridge.link.adapter import Adapter
from hilbridge.link.usb import UsbTransport, describe, find_adapters
from hilbridge.sim import build_device
from hilbridge.sim.usb_backend import SimulatedUsbBackend

SERIAL = "HB0123456789ABCDEF"
BUILT = build(load_spec())
RECORDED = {"device": BUILT["device"].hex(), "configuration": BUILT["configuration"].hex()}
GET_DESCRIPTOR = 0x06


def descriptor_answers(setup: bytes, data: bytes) -> bytes | None:
    """GET_DESCRIPTOR from the generator's bytes, as the firmware answers it; None (a STALL) otherwise."""
    strings = string_descriptors(BUILT, SERIAL)
    if setup[:2] != bytes([0x80, GET_DESCRIPTOR]):
        return None
    index, kind = setup[2], setup[3]
    answer = {1: BUILT["device"], 2: BUILT["configuration"], 3: strings.get(index)}.get(kind)
    length = int.from_bytes(setup[6:8], "little")
    return None if answer is None else answer[:length]


@contextlib.contextmanager
def serving(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    server = socket.create_server(("127.0.0.1", 0))

    def serve():
        with contextlib.suppress(OSError):
            connection, _ = server.accept()
            with connection:
                handle(connection)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"socket://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()


def echo(connection: socket.socket) -> None:
    while data := connection.recv(4096):
        connection.sendall(data)


class ControlPort:
    """The harness's control port: JSON lines in, `answer(setup, data)` out (None: STALL), each request
    recorded; `delay` seconds before each answer."""

    def __init__(self, answer=descriptor_answers, delay: float = 0.0):
        self.answer = answer
        self.delay = delay
        self.requests: list[tuple[bytes, bytes]] = []

    def __call__(self, connection: socket.socket) -> None:
        with connection.makefile("rb") as lines:
            for line in lines:
                request = json.loads(line)
                setup, data = bytes.fromhex(request["setup"]), bytes.fromhex(request["data"])
                self.requests.append((setup, data))
                answer = self.answer(setup, data)
                time.sleep(self.delay)
                reply = {"id": request["id"], "status": "stall" if answer is None else "ack"}
                reply["data"] = (answer or b"").hex()
                connection.sendall(json.dumps(reply).encode() + b"\n")


@pytest.fixture
def control_port():
    return ControlPort()


@pytest.fixture
def harness_backend(control_port):
    with serving(echo) as url, serving(control_port) as control_url:
        backend = HarnessUsbBackend(url, control_url, RECORDED, slowdown=1.0)
        yield backend
        backend.close_device(None)


@pytest.fixture(params=["sim", "harness"])
def backend(request) -> DescriptorBackend:
    if request.param == "sim":
        return SimulatedUsbBackend(build_device(), serial=SERIAL)
    return request.getfixturevalue("harness_backend")


def test_parsing_keeps_class_specific_descriptors_where_libusb_puts_them():
    configuration, interfaces = parse_configuration(BUILT["configuration"])
    assert [settings[0].bInterfaceClass for settings in interfaces] == [0x02, 0x0A, 0xFF]
    assert configuration.extra_descriptors[:2] == [8, 11]  # the interface association
    extra, kinds = interfaces[0][0].extra_descriptors, []
    while extra:
        kinds.append((extra[1], extra[2]))
        extra = extra[extra[0] :]
    assert kinds == [(0x24, 0x00), (0x24, 0x01), (0x24, 0x02), (0x24, 0x06)]  # CDC header, call, ACM, union
    assert [len(settings[0].children) for settings in interfaces] == [1, 2, 2]


def test_both_devices_are_the_firmware_s_composite_adapter(backend):
    (device,) = find_adapters(backend)
    assert describe(device).serial == SERIAL
    assert describe(device).product == load_spec()["strings"]["product"]
    interfaces = device.get_active_configuration().interfaces()
    assert [interface.bInterfaceClass for interface in interfaces] == [0x02, 0x0A, 0xFF]
    assert device.ctrl_transfer(0x80, GET_DESCRIPTOR, 0x0200, 0, 255).tobytes() == BUILT["configuration"]
    assert device.ctrl_transfer(0x80, GET_DESCRIPTOR, 0x0100, 0, 8).tobytes() == BUILT["device"][:8]


def test_usb_transport_opens_the_configured_composite_device_and_moves_bytes(harness_backend):
    transport = UsbTransport(SERIAL, backend=harness_backend)
    try:
        transport.write(b"\x00hello\x00")
        received = b""
        while len(received) < 7:
            received += transport.read(1.0)
        assert received == b"\x00hello\x00"
    finally:
        transport.close()
    assert harness_backend.kernel_drivers == {0, 1}  # the CDC driver kept its interfaces


def test_usb_transport_shakes_hands_with_the_simulated_adapter():
    backend = SimulatedUsbBackend(build_device())
    with Adapter(UsbTransport("SIM-USB-0001", backend=backend)) as adapter:
        assert adapter.info.serial == "SIM-0001"  # HELLO's serial, not the USB one
    assert backend.kernel_drivers == {0, 1} and backend.claimed == set()


def test_both_refuse_what_a_linux_host_refuses(backend):
    with pytest.raises(usb.core.USBError) as busy:
        backend.set_configuration(None, 1)
    assert busy.value.errno == errno.EBUSY
    with pytest.raises(usb.core.USBError) as held:
        backend.claim_interface(None, 1)  # the CDC data interface
    assert held.value.errno == errno.EBUSY
    with pytest.raises(usb.core.USBError) as unclaimed:
        backend.bulk_write(None, link_usb.BULK_OUT, 2, b"x", 100)
    assert unclaimed.value.errno == errno.EBUSY
    backend.claim_interface(None, 2)
    for endpoint in (0x02, link_usb.BULK_IN):  # the CDC data endpoint; an IN endpoint
        with pytest.raises(usb.core.USBError) as wrong:
            backend.bulk_write(None, endpoint, 2, b"x", 100)
        assert wrong.value.errno == errno.EINVAL
    with pytest.raises(usb.core.USBTimeoutError):
        backend.bulk_read(None, link_usb.BULK_IN, 2, usb.util.create_buffer(64), 10)


def test_a_request_the_device_does_not_know_stalls(backend):
    (device,) = find_adapters(backend)
    for request_type, request in ((0xC0, 0x42), (0x80, 0x77)):  # a vendor request; no such standard one
        with pytest.raises(usb.core.USBError) as stall:
            device.ctrl_transfer(request_type, request, 0, 0, 4)
        assert (stall.value.errno, stall.value.backend_error_code) == (errno.EPIPE, -9)  # libusb's PIPE


def test_the_harness_backend_forwards_each_control_transfer_as_pyusb_made_it(harness_backend, control_port):
    (device,) = find_adapters(harness_backend)
    control_port.answer = lambda setup, data: b"\x01\x02\x03" if setup[0] & 0x80 else b""
    assert device.ctrl_transfer(0xC1, 0x42, 0x1234, 0x0002, 10).tobytes() == b"\x01\x02\x03"
    assert device.ctrl_transfer(0x41, 0x43, 0, 0x0002, b"\x05\x06") == 2  # an OUT data stage
    assert control_port.requests == [
        (bytes.fromhex("c142341202000a00"), b""),
        (bytes.fromhex("4143000002000200"), b"\x05\x06"),
    ]


def test_a_late_control_answer_is_not_taken_for_the_next(harness_backend, control_port):
    (device,) = find_adapters(harness_backend)
    control_port.answer = lambda setup, data: setup[2:3]  # answers with the request's wValue low byte
    control_port.delay = 0.3
    with pytest.raises(usb.core.USBTimeoutError):
        device.ctrl_transfer(0xC0, 0x01, 0xAA, 0, 1, timeout=50)
    control_port.delay = 0.0
    assert device.ctrl_transfer(0xC0, 0x01, 0xBB, 0, 1, timeout=2000).tobytes() == b"\xbb"


def test_control_timeouts_are_stretched_for_the_emulated_chip(harness_backend, control_port):
    (device,) = find_adapters(harness_backend)
    control_port.answer = lambda setup, data: b"\x01"
    control_port.delay = 0.3
    harness_backend.slowdown = 20.0  # 50 ms stands for a second
    assert device.ctrl_transfer(0xC0, 0x01, 0, 0, 1, timeout=50).tobytes() == b"\x01"
