"""A pyusb backend whose one device is a simulated adapter, for testing `UsbTransport` without USB.

The device has the firmware's own descriptors (`hilbridge.firmware.usb_descriptors`: the composite
CDC-ACM + vendor-bulk adapter) and is seen as a Linux host sees it (`hilbridge.firmware.usb_device`);
the vendor interface's bulk pipe carries the bytes to and from `endpoint`. Control transfers: the
GET_DESCRIPTOR requests a host makes (device, configuration, strings); anything else is stalled.
"""

from __future__ import annotations

import time

from hilbridge.firmware.usb_descriptors import (
    DESCRIPTOR_CONFIGURATION,
    DESCRIPTOR_DEVICE,
    DESCRIPTOR_STRING,
    build,
    load_spec,
    string_descriptors,
)
from hilbridge.firmware.usb_device import DescriptorBackend, Stalled, timeout_error
from hilbridge.link.transport import Endpoint

GET_DESCRIPTOR = 0x06
POLL_INTERVAL = 0.0002  # seconds between looks at the endpoint while a bulk read waits


class SimulatedUsbBackend(DescriptorBackend):
    """Enumerates one device (VID:PID of the adapter) that forwards bulk traffic to `endpoint`."""

    def __init__(self, endpoint: Endpoint, serial: str = "SIM-USB-0001", bus: int = 1, address: int = 7):
        built = build(load_spec())
        super().__init__(built["device"], built["configuration"], bus, address)
        self.endpoint = endpoint
        self.serial = serial
        self.strings = string_descriptors(built, serial)
        self._pending = bytearray()

    def reset_device(self, dev_handle):
        self._pending.clear()

    def control(self, setup: bytes, data: bytes, timeout: float | None) -> bytes:
        request_type, request, index, kind = setup[0], setup[1], setup[2], setup[3]
        if request_type == 0x80 and request == GET_DESCRIPTOR:
            descriptor = {
                DESCRIPTOR_DEVICE: self.device_bytes if index == 0 else None,
                DESCRIPTOR_CONFIGURATION: self.configuration_bytes if index == 0 else None,
                DESCRIPTOR_STRING: self.strings.get(index),
            }.get(kind)
            if descriptor is not None:
                return descriptor
        raise Stalled("request not supported by the simulated adapter")

    def send(self, data: bytes, timeout: float | None) -> None:
        self.endpoint.receive(data)

    def receive(self, size: int, timeout: float | None) -> bytes:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._pending:
            self._pending += self.endpoint.transmit()
            if self._pending:
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise timeout_error()
            time.sleep(POLL_INTERVAL)
        chunk = bytes(self._pending[:size])
        del self._pending[:size]
        return chunk
