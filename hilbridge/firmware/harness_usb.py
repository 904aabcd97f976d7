"""A pyusb backend for the emulated firmware's vendor bulk interface, so `UsbTransport` runs unchanged.

The harness (`firmware/harness`, `--link vendor`) enumerates the firmware in rp2040js through real
control transfers, prints the raw device, configuration and string descriptors it read, and bridges
the vendor interface's bulk endpoints to a TCP port. This backend parses those bytes as libusb would
(interfaces by number, alternate settings, endpoints, class-specific extras), answers GET_DESCRIPTOR
from them, and carries bulk transfers to the TCP port; it accepts transfers only on the bulk endpoints
of the vendor interface the firmware declared, as a claimed interface on a real host would. As on a
Linux host, the device is already configured (the harness's host did that) and a CDC driver holds the
CDC interfaces, so SET_CONFIGURATION fails with EBUSY, as usbfs answers it then.
"""

from __future__ import annotations

import errno
import select
import socket
import struct
from dataclasses import dataclass, field
from typing import Any

import usb.backend
import usb.core

from hilbridge.errors import HilbridgeError
from hilbridge.firmware.usb_descriptors import LAYOUTS

GET_DESCRIPTOR = 0x06
DESCRIPTOR_DEVICE, DESCRIPTOR_CONFIGURATION, DESCRIPTOR_STRING = 1, 2, 3
DESCRIPTOR_INTERFACE, DESCRIPTOR_ENDPOINT = 4, 5
INTERFACE_CLASS_VENDOR = 0xFF
CDC_CLASSES = (0x02, 0x0A)  # communication and data interfaces, which cdc_acm binds
# The layouts the descriptor generator writes, read back with the two header bytes every descriptor has.
HEADER_FIELDS = (("bLength", "B"), ("bDescriptorType", "B"))
DEVICE_FIELDS, CONFIGURATION_FIELDS, INTERFACE_FIELDS, ENDPOINT_FIELDS = (
    HEADER_FIELDS + LAYOUTS[name][2] for name in ("device", "configuration", "interface", "endpoint")
)


@dataclass
class Descriptor:
    """The fields pyusb copies from a descriptor, and the class-specific bytes that follow it."""

    values: dict[str, int]
    extra: bytearray = field(default_factory=bytearray)
    children: list[Descriptor] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        if name in ("values", "extra", "children"):  # not yet set (copy, pickle)
            raise AttributeError(name)
        if name == "extra_descriptors":
            return list(self.extra)
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None


def _unpack(layout: tuple[tuple[str, str], ...], data: bytes, what: str) -> dict[str, int]:
    fmt = "<" + "".join(code for _, code in layout)
    if len(data) < struct.calcsize(fmt):
        raise HilbridgeError(f"{what} descriptor of {len(data)} bytes is too short")
    return dict(zip((name for name, _ in layout), struct.unpack_from(fmt, data), strict=True))


def parse_device(data: bytes) -> Descriptor:
    return Descriptor(_unpack(DEVICE_FIELDS, data, "device"))


def parse_configuration(data: bytes) -> tuple[Descriptor, list[list[Descriptor]]]:
    """The configuration and its interfaces (a list of alternate settings per interface number)."""
    configuration = Descriptor(_unpack(CONFIGURATION_FIELDS, data, "configuration"))
    if configuration.wTotalLength != len(data):
        raise HilbridgeError(
            f"configuration says {configuration.wTotalLength} bytes, the device sent {len(data)}"
        )
    interfaces: dict[int, list[Descriptor]] = {}
    current: Descriptor = configuration  # where class-specific descriptors that follow belong
    interface: Descriptor | None = None
    offset = configuration.bLength
    while offset < len(data):
        length = data[offset]
        if length < 2 or offset + length > len(data):
            raise HilbridgeError(f"configuration descriptor broken at byte {offset}")
        part, kind = data[offset : offset + length], data[offset + 1]
        if kind == DESCRIPTOR_INTERFACE:
            interface = current = Descriptor(_unpack(INTERFACE_FIELDS, part, "interface"))
            interfaces.setdefault(interface.bInterfaceNumber, []).append(interface)
        elif kind == DESCRIPTOR_ENDPOINT and interface is not None:
            current = Descriptor(_unpack(ENDPOINT_FIELDS, part, "endpoint"))
            current.values.update(bRefresh=0, bSynchAddress=0)  # audio-class fields, 0 as libusb reports
            interface.children.append(current)
        else:
            current.extra += part
        offset += length
    return configuration, [interfaces[number] for number in sorted(interfaces)]


def vendor_bulk_endpoints(interfaces: list[list[Descriptor]]) -> tuple[int, int, set[int]]:
    """Interface index and the bulk endpoint addresses of the first vendor-specific interface."""
    for index, settings in enumerate(interfaces):
        for setting in settings:
            if setting.bInterfaceClass == INTERFACE_CLASS_VENDOR:
                return index, setting.bInterfaceNumber, {e.bEndpointAddress for e in setting.children}
    raise HilbridgeError("the device has no vendor-specific interface")


class HarnessUsbBackend(usb.backend.IBackend):
    """One device: the descriptors the harness read from the firmware, bulk traffic over its TCP port."""

    def __init__(self, url: str, descriptors: dict[str, Any], bus: int = 1, address: int = 1):
        host, _, port = url.removeprefix("socket://").rpartition(":")
        self.device_bytes = bytes.fromhex(descriptors["device"])
        self.configuration_bytes = bytes.fromhex(descriptors["configuration"])
        self.strings = {int(index): bytes.fromhex(text) for index, text in descriptors["strings"].items()}
        self.device = parse_device(self.device_bytes)
        self.device.values.update(bus=bus, address=address, port_number=1, port_numbers=(1,), speed=2)
        self.configuration, self.interfaces = parse_configuration(self.configuration_bytes)
        _, self.vendor_interface, self.vendor_endpoints = vendor_bulk_endpoints(self.interfaces)
        self.socket = socket.create_connection((host, int(port)))
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.configured = self.configuration.bConfigurationValue
        self.kernel_drivers = {
            settings[0].bInterfaceNumber
            for settings in self.interfaces
            if settings[0].bInterfaceClass in CDC_CLASSES
        }
        self.claimed: set[int] = set()
        self._handle = object()

    # -- enumeration and descriptors ------------------------------------------------------------
    def enumerate_devices(self):
        yield self._handle

    def get_device_descriptor(self, dev):
        return self.device

    def get_configuration_descriptor(self, dev, config):
        if config != 0:
            raise IndexError(config)
        return self.configuration

    def get_interface_descriptor(self, dev, intf, alt, config):
        if config != 0 or intf >= len(self.interfaces) or alt >= len(self.interfaces[intf]):
            raise IndexError((intf, alt, config))
        return self.interfaces[intf][alt]

    def get_endpoint_descriptor(self, dev, ep, intf, alt, config):
        endpoints = self.get_interface_descriptor(dev, intf, alt, config).children
        if ep >= len(endpoints):
            raise IndexError((ep, intf, alt, config))
        return endpoints[ep]

    # -- device handle ----------------------------------------------------------------------------
    def open_device(self, dev):
        return self

    def close_device(self, dev_handle):
        self.socket.close()

    def set_configuration(self, dev_handle, config_value):
        if self.kernel_drivers:
            raise usb.core.USBError("interfaces held by the CDC driver", errno=errno.EBUSY)
        self.configured = config_value

    def get_configuration(self, dev_handle):
        return self.configured

    def set_interface_altsetting(self, dev_handle, intf, altsetting):
        pass

    def claim_interface(self, dev_handle, intf):
        if intf in self.kernel_drivers:
            raise usb.core.USBError("interface held by the CDC driver", errno=errno.EBUSY)
        self.claimed.add(intf)

    def release_interface(self, dev_handle, intf):
        self.claimed.discard(intf)

    def is_kernel_driver_active(self, dev_handle, intf):
        return intf in self.kernel_drivers

    def detach_kernel_driver(self, dev_handle, intf):
        self.kernel_drivers.discard(intf)

    def attach_kernel_driver(self, dev_handle, intf):
        self.kernel_drivers.add(intf)

    def clear_halt(self, dev_handle, ep):
        pass

    # -- transfers ------------------------------------------------------------------------------
    def ctrl_transfer(self, dev_handle, bmRequestType, bRequest, wValue, wIndex, data, timeout):
        if bmRequestType & 0x80 and bRequest == GET_DESCRIPTOR:
            kind, index = wValue >> 8, wValue & 0xFF
            descriptor = {
                DESCRIPTOR_DEVICE: self.device_bytes if index == 0 else None,
                DESCRIPTOR_CONFIGURATION: self.configuration_bytes if index == 0 else None,
                DESCRIPTOR_STRING: self.strings.get(index),
            }.get(kind)
            if descriptor is not None:
                size = min(len(data), len(descriptor))
                data[:size] = type(data)("B", descriptor[:size])
                return size
        raise usb.core.USBError(
            "request not answered by the harness's recorded descriptors", errno=errno.EPIPE
        )

    def _require_vendor_endpoint(self, intf, ep, direction_in: bool):
        if intf not in self.claimed:
            raise usb.core.USBError("interface not claimed", errno=errno.EBUSY)
        if (
            intf != self.vendor_interface
            or ep not in self.vendor_endpoints
            or bool(ep & 0x80) != direction_in
        ):
            raise usb.core.USBError(f"endpoint {ep:02x} is not the vendor interface's", errno=errno.EINVAL)

    def bulk_write(self, dev_handle, ep, intf, data, timeout):
        self._require_vendor_endpoint(intf, ep, direction_in=False)
        try:
            self.socket.sendall(bytes(data))
        except OSError as error:
            raise usb.core.USBError(f"harness link: {error}", errno=errno.ENODEV) from None
        return len(data)

    def bulk_read(self, dev_handle, ep, intf, buff, timeout):
        self._require_vendor_endpoint(intf, ep, direction_in=True)
        ready, _, _ = select.select([self.socket], [], [], timeout / 1000)
        if not ready:
            raise usb.core.USBTimeoutError("timeout", error_code=-7, errno=errno.ETIMEDOUT)
        try:
            chunk = self.socket.recv(len(buff))
        except OSError as error:
            raise usb.core.USBError(f"harness link: {error}", errno=errno.ENODEV) from None
        if not chunk:
            raise usb.core.USBError("the harness closed the link", errno=errno.ENODEV)
        buff[: len(chunk)] = type(buff)("B", chunk)
        return len(chunk)
