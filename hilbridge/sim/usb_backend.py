"""A pyusb backend whose one device is a simulated adapter, for testing `UsbTransport` without USB.

Our machines have no virtual USB (no dummy_hcd, USB/IP or gadgetfs), so the real pyusb code paths
(`usb.core.find`, descriptors, string descriptors over control transfers, bulk endpoints, timeouts)
are exercised against this `usb.backend.IBackend`. Descriptor getters raise IndexError for indices
that do not exist: pyusb enumerates alternate settings until they do.
"""

from __future__ import annotations

import errno
import time
from dataclasses import dataclass, field

import usb.backend
import usb.core

from hilbridge.link.usb import ADAPTER_PID, ADAPTER_VID, BULK_IN, BULK_OUT, PACKET_SIZE
from hilbridge.link.usb import INTERFACE_CLASS_VENDOR as VENDOR_CLASS

STRINGS = {1: "hilbridge", 2: "hilbridge cartridge adapter (simulated)"}
GET_DESCRIPTOR = 0x06
STRING_DESCRIPTOR = 0x03


@dataclass
class _Descriptor:
    """Attribute bag with the fields pyusb copies from a descriptor."""

    values: dict = field(default_factory=dict)

    def __getattr__(self, name):
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None


class SimulatedUsbBackend(usb.backend.IBackend):
    """Enumerates one device (VID:PID of the adapter) that forwards bulk traffic to `endpoint`."""

    def __init__(self, endpoint, serial: str = "SIM-USB-0001", bus: int = 1, address: int = 7):
        self.endpoint = endpoint
        self.serial = serial
        self.bus = bus
        self.address = address
        self.configured = 0
        self.claimed: set[int] = set()
        self._pending = bytearray()
        self._device = object()

    # -- enumeration and descriptors ------------------------------------------------------------
    def enumerate_devices(self):
        yield self._device

    def get_device_descriptor(self, dev):
        return _Descriptor(
            {
                "bLength": 18,
                "bDescriptorType": 1,
                "bcdUSB": 0x0200,
                "bDeviceClass": 0,
                "bDeviceSubClass": 0,
                "bDeviceProtocol": 0,
                "bMaxPacketSize0": 64,
                "idVendor": ADAPTER_VID,
                "idProduct": ADAPTER_PID,
                "bcdDevice": 0x0100,
                "iManufacturer": 1,
                "iProduct": 2,
                "iSerialNumber": 3,
                "bNumConfigurations": 1,
                "address": self.address,
                "bus": self.bus,
                "port_number": 1,
                "port_numbers": (1,),
                "speed": 2,
            }
        )

    def get_configuration_descriptor(self, dev, config):
        if config != 0:
            raise IndexError(config)
        return _Descriptor(
            {
                "bLength": 9,
                "bDescriptorType": 2,
                "wTotalLength": 32,
                "bNumInterfaces": 1,
                "bConfigurationValue": 1,
                "iConfiguration": 0,
                "bmAttributes": 0x80,
                "bMaxPower": 50,
                "extra_descriptors": [],
            }
        )

    def get_interface_descriptor(self, dev, intf, alt, config):
        if config != 0 or intf != 0 or alt != 0:
            raise IndexError((intf, alt, config))
        return _Descriptor(
            {
                "bLength": 9,
                "bDescriptorType": 4,
                "bInterfaceNumber": 0,
                "bAlternateSetting": 0,
                "bNumEndpoints": 2,
                "bInterfaceClass": VENDOR_CLASS,
                "bInterfaceSubClass": 0,
                "bInterfaceProtocol": 0,
                "iInterface": 0,
                "extra_descriptors": [],
            }
        )

    def get_endpoint_descriptor(self, dev, ep, intf, alt, config):
        if config != 0 or intf != 0 or alt != 0 or ep not in (0, 1):
            raise IndexError((ep, intf, alt, config))
        return _Descriptor(
            {
                "bLength": 7,
                "bDescriptorType": 5,
                "bEndpointAddress": (BULK_OUT, BULK_IN)[ep],
                "bmAttributes": 0x02,
                "wMaxPacketSize": PACKET_SIZE,
                "bInterval": 0,
                "bRefresh": 0,
                "bSynchAddress": 0,
                "extra_descriptors": [],
            }
        )

    # -- device handle ----------------------------------------------------------------------------
    def open_device(self, dev):
        return self

    def close_device(self, dev_handle):
        pass

    def set_configuration(self, dev_handle, config_value):
        self.configured = config_value

    def get_configuration(self, dev_handle):
        return self.configured

    def set_interface_altsetting(self, dev_handle, intf, altsetting):
        pass

    def claim_interface(self, dev_handle, intf):
        self.claimed.add(intf)

    def release_interface(self, dev_handle, intf):
        self.claimed.discard(intf)

    def is_kernel_driver_active(self, dev_handle, intf):
        return False

    def detach_kernel_driver(self, dev_handle, intf):
        pass

    def attach_kernel_driver(self, dev_handle, intf):
        pass

    def clear_halt(self, dev_handle, ep):
        pass

    def reset_device(self, dev_handle):
        self._pending.clear()

    # -- transfers ------------------------------------------------------------------------------
    def ctrl_transfer(self, dev_handle, bmRequestType, bRequest, wValue, wIndex, data, timeout):
        if bmRequestType & 0x80 and bRequest == GET_DESCRIPTOR and wValue >> 8 == STRING_DESCRIPTOR:
            index = wValue & 0xFF
            if index == 0:
                body = (0x0409).to_bytes(2, "little")
            else:
                text = {**STRINGS, 3: self.serial}.get(index)
                if text is None:
                    raise usb.core.USBError("invalid string index", errno=errno.EPIPE)
                body = text.encode("utf-16-le")
            descriptor = bytes((2 + len(body), STRING_DESCRIPTOR)) + body
            size = min(len(data), len(descriptor))
            data[:size] = type(data)("B", descriptor[:size])
            return size
        raise usb.core.USBError("request not supported by the simulated adapter", errno=errno.EPIPE)

    def _require_claimed(self, intf):
        if intf not in self.claimed:
            raise usb.core.USBError("interface not claimed", errno=errno.EBUSY)

    def bulk_write(self, dev_handle, ep, intf, data, timeout):
        self._require_claimed(intf)
        if ep != BULK_OUT:
            raise usb.core.USBError("not an OUT endpoint", errno=errno.EINVAL)
        self.endpoint.receive(bytes(data))
        return len(data)

    def bulk_read(self, dev_handle, ep, intf, buff, timeout):
        self._require_claimed(intf)
        if ep != BULK_IN:
            raise usb.core.USBError("not an IN endpoint", errno=errno.EINVAL)
        deadline = time.monotonic() + timeout / 1000
        while not self._pending:
            self._pending += self.endpoint.transmit()
            if self._pending:
                break
            if time.monotonic() >= deadline:
                raise usb.core.USBTimeoutError("timeout", error_code=-7, errno=errno.ETIMEDOUT)
            time.sleep(0.0002)
        size = min(len(buff), len(self._pending))
        buff[:size] = type(buff)("B", bytes(self._pending[:size]))
        del self._pending[:size]
        return size
