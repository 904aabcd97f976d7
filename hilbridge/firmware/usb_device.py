"""The part of a pyusb backend that stands in for the adapter's USB device, shared by the simulated
adapter's (`hilbridge.sim.usb_backend`) and the emulated firmware's (`hilbridge.firmware.harness_usb`).

Our machines have no virtual USB (no dummy_hcd, USB/IP or gadgetfs), so `UsbTransport` is run through
the real pyusb code paths against a `usb.backend.IBackend` that holds one device, given by its raw
device and configuration descriptors and parsed as libusb parses them. It behaves as a Linux host shows
the composite adapter: already configured (the kernel did that at enumeration), `cdc_acm` holding the
CDC interfaces, so SET_CONFIGURATION and claiming those interfaces fail with EBUSY as usbfs answers
then, and bulk transfers go only to the endpoints of the vendor interface once it is claimed.
Descriptor getters raise IndexError for indices that do not exist: pyusb enumerates alternate settings
until they do. Control transfers and the bulk pipe are the subclass's: `control`, `send`, `receive`.
"""

from __future__ import annotations

import errno
from array import array

import usb.backend
import usb.core

from hilbridge.errors import HilbridgeError
from hilbridge.firmware.usb_descriptors import Descriptor, parse_configuration, parse_device
from hilbridge.link.usb import INTERFACE_CLASS_VENDOR

CDC_CLASSES = (0x02, 0x0A)  # communication and data interfaces, which cdc_acm binds
LIBUSB_ERROR_PIPE = -9  # what libusb reports for a STALL handshake (pyusb: errno EPIPE)
LIBUSB_ERROR_TIMEOUT = -7


class Stalled(Exception):
    """The device answered a control request with a STALL handshake."""


def stall_error(what: str) -> usb.core.USBError:
    return usb.core.USBError(what, error_code=LIBUSB_ERROR_PIPE, errno=errno.EPIPE)


def timeout_error() -> usb.core.USBTimeoutError:
    return usb.core.USBTimeoutError("timeout", error_code=LIBUSB_ERROR_TIMEOUT, errno=errno.ETIMEDOUT)


def vendor_bulk_endpoints(interfaces: list[list[Descriptor]]) -> tuple[int, set[int]]:
    """Interface number and bulk endpoint addresses of the first vendor-specific interface."""
    for settings in interfaces:
        for setting in settings:
            if setting.bInterfaceClass == INTERFACE_CLASS_VENDOR:
                return setting.bInterfaceNumber, {e.bEndpointAddress for e in setting.children}
    raise HilbridgeError("the device has no vendor-specific interface")


class DescriptorBackend(usb.backend.IBackend):
    """One device, its descriptors, the Linux host's configuration and drivers, and the vendor pipe."""

    def __init__(self, device: bytes, configuration: bytes, bus: int, address: int):
        self.device_bytes = device
        self.configuration_bytes = configuration
        self.device = parse_device(device)
        self.device.values.update(bus=bus, address=address, port_number=1, port_numbers=(1,), speed=2)
        self.configuration, self.interfaces = parse_configuration(configuration)
        self.vendor_interface, self.vendor_endpoints = vendor_bulk_endpoints(self.interfaces)
        self.configured = self.configuration.bConfigurationValue
        self.kernel_drivers = {
            settings[0].bInterfaceNumber
            for settings in self.interfaces
            if settings[0].bInterfaceClass in CDC_CLASSES
        }
        self.claimed: set[int] = set()
        self._device_id = object()

    # -- what a subclass provides ----------------------------------------------------------------
    def control(self, setup: bytes, data: bytes, timeout: float | None) -> bytes:
        """Run one control transfer (8-byte SETUP packet, the OUT data stage's bytes); the IN data
        stage's bytes. Raises Stalled, or USBTimeoutError after `timeout` seconds (None: no limit)."""
        raise NotImplementedError

    def send(self, data: bytes, timeout: float | None) -> None:
        """Bytes of one bulk OUT transfer on the vendor interface."""
        raise NotImplementedError

    def receive(self, size: int, timeout: float | None) -> bytes:
        """Up to `size` bytes of the vendor interface's bulk IN pipe; USBTimeoutError after `timeout`."""
        raise NotImplementedError

    # -- enumeration and descriptors ------------------------------------------------------------
    def enumerate_devices(self):
        yield self._device_id

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
        pass

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
        into_host = bool(bmRequestType & 0x80)
        setup = bytes([bmRequestType, bRequest]) + b"".join(
            value.to_bytes(2, "little") for value in (wValue, wIndex, len(data))
        )
        try:
            answer = self.control(setup, b"" if into_host else bytes(data), _seconds(timeout))
        except Stalled as stall:
            raise stall_error(str(stall) or "the device stalled the request") from None
        if not into_host:
            return len(data)
        return _fill(data, answer)

    def _require_vendor_endpoint(self, intf: int, ep: int, direction_in: bool) -> None:
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
        self.send(bytes(data), _seconds(timeout))
        return len(data)

    def bulk_read(self, dev_handle, ep, intf, buff, timeout):
        self._require_vendor_endpoint(intf, ep, direction_in=True)
        return _fill(buff, self.receive(len(buff), _seconds(timeout)))


def _seconds(timeout_ms: int) -> float | None:
    """pyusb's timeout in milliseconds as seconds; 0 waits for ever, as libusb does."""
    return timeout_ms / 1000 if timeout_ms else None


def _fill(buffer: array, data: bytes) -> int:
    """Copy what fits of `data` into pyusb's array buffer, as libusb fills the caller's buffer."""
    size = min(len(buffer), len(data))
    buffer[:size] = array("B", data[:size])
    return size
