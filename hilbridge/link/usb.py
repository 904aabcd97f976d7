"""`UsbTransport`: the adapter's vendor-class bulk interface through pyusb.

The adapter enumerates as VID:PID 1209:4F32 (pid.codes open-source VID; the PID is a placeholder until
one is allocated), a composite of a CDC-ACM function and one vendor interface (class FFh) holding bulk
OUT 01h and bulk IN 81h; `hilbridge/firmware/usb_descriptors.json` takes these values from here.
Without root, access needs the udev rule in `docs/udev/60-hilbridge.rules`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hilbridge.link.errors import DeviceNotFound, LinkDisconnected

ADAPTER_VID = 0x1209
ADAPTER_PID = 0x4F32
INTERFACE_CLASS_VENDOR = 0xFF
BULK_OUT = 0x01
BULK_IN = 0x81
PACKET_SIZE = 64
READ_SIZE = 16384
UDEV_HINT = "without root, install docs/udev/60-hilbridge.rules (see docs/protocol.md, 'USB access')"


@dataclass(frozen=True, slots=True)
class UsbDeviceInfo:
    bus: int | None
    address: int | None
    serial: str | None
    product: str | None


def _usb():
    import usb.core
    import usb.util

    return usb.core, usb.util


def find_adapters(backend: Any = None, vid: int = ADAPTER_VID, pid: int = ADAPTER_PID) -> list[Any]:
    """pyusb devices with the adapter's VID:PID (an empty list when libusb is missing)."""
    core, _ = _usb()
    try:
        return list(core.find(find_all=True, idVendor=vid, idProduct=pid, backend=backend))
    except core.NoBackendError:
        return []


def describe(device: Any) -> UsbDeviceInfo:
    """Bus, address and strings of a device; strings are None where permissions forbid reading them."""
    core, _ = _usb()
    try:
        serial, product = device.serial_number, device.product
    except (core.USBError, ValueError):
        serial = product = None
    return UsbDeviceInfo(device.bus, device.address, serial, product)


def _configured(device: Any, core: Any) -> Any:
    """The active configuration, set only on an unconfigured device.

    The adapter is composite: on Linux `cdc_acm` holds its CDC interfaces, and usbfs refuses
    SET_CONFIGURATION (EBUSY) while another driver holds an interface of the device.
    """
    try:
        return device.get_active_configuration()
    except core.USBError:
        device.set_configuration()
        return device.get_active_configuration()


class UsbTransport:
    """Bulk transfers to one adapter chosen by VID:PID and, optionally, serial number."""

    def __init__(
        self,
        serial: str | None = None,
        *,
        vid: int = ADAPTER_VID,
        pid: int = ADAPTER_PID,
        backend: Any = None,
    ):
        core, util = _usb()
        self._core = core
        candidates = find_adapters(backend, vid, pid)
        chosen = None
        for device in candidates:
            if serial is None or describe(device).serial == serial:
                chosen = device
                break
        label = f"usb:{vid:04x}:{pid:04x}" + (f":{serial}" if serial else "")
        if chosen is None:
            raise DeviceNotFound(
                f"no USB adapter {label}"
                + (f" (found {len(candidates)} with another serial)" if candidates else ""),
                hint="check the cable; `hilbridge devices` lists adapters; " + UDEV_HINT,
            )
        self.name = label
        self.device = chosen
        try:
            interface = util.find_descriptor(
                _configured(chosen, core), bInterfaceClass=INTERFACE_CLASS_VENDOR
            )
            if interface is None:
                raise DeviceNotFound(f"{label} has no vendor bulk interface (wrong firmware?)")
            util.claim_interface(chosen, interface)
            self._out = util.find_descriptor(interface, bEndpointAddress=BULK_OUT)
            self._in = util.find_descriptor(interface, bEndpointAddress=BULK_IN)
        except core.USBError as error:
            raise DeviceNotFound(f"cannot open {label}: {error}", hint=UDEV_HINT) from None
        self._interface = interface

    def write(self, data: bytes) -> None:
        try:
            self._out.write(data, timeout=5000)
        except self._core.USBError as error:
            raise LinkDisconnected(f"{self.name}: {error}") from None

    def read(self, timeout: float) -> bytes:
        try:
            return bytes(self._in.read(READ_SIZE, timeout=max(1, int(timeout * 1000))))
        except self._core.USBTimeoutError:
            return b""
        except self._core.USBError as error:
            raise LinkDisconnected(f"{self.name}: {error}") from None

    def close(self) -> None:
        _, util = _usb()
        try:
            util.release_interface(self.device, self._interface)
            util.dispose_resources(self.device)
        except self._core.USBError:
            pass
