"""Device names and discovery: what `-d DEVICE` may be, and what `hilbridge devices` lists.

| device name | transport |
|---|---|
| `sim`, `sim?cart=F&type=T&faults=...` | the simulated adapter, in this process |
| `usb`, `usb:SERIAL` | `UsbTransport`: the first adapter (or the one with that serial) by VID:PID |
| `usb-sim` | `UsbTransport` through pyusb's API with the simulated backend (for trying the USB path) |
| `/dev/ttyACM0`, `socket://host:port`, `rfc2217://...`, `loop://` | `SerialTransport` (any pyserial URL) |
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from hilbridge.firmware.version import FirmwareOutdated, outdated_warning
from hilbridge.link.adapter import Adapter
from hilbridge.link.errors import DeviceNotFound, LinkTimeout
from hilbridge.link.transport import InProcessTransport, SerialTransport, Transport
from hilbridge.link.usb import ADAPTER_PID, ADAPTER_VID, UsbTransport, describe, find_adapters

DEFAULT_DEVICE = "sim"
NETWORK_SCHEMES = ("socket", "rfc2217")
URL_FORM = (
    "a device URL looks like socket://HOST:PORT or rfc2217://HOST:PORT, e.g. socket://127.0.0.1:5000 "
    "(what `hilbridge sim serve --port 5000` prints)"
)


@dataclass(frozen=True, slots=True)
class DeviceEntry:
    name: str  # what to pass to -d
    kind: str  # "serial", "usb" or "sim"
    description: str


def check_network_url(url: str) -> None:
    """A socket:// or rfc2217:// URL needs a host and a port 1-65535; DeviceNotFound says what is wrong."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port_text = parts.netloc.rpartition(":")[2]
        raise DeviceNotFound(f"{url}: port {port_text} is not a TCP port (1-65535)", hint=URL_FORM) from None
    if not parts.hostname:
        raise DeviceNotFound(f"{url}: no host", hint=URL_FORM)
    if port is None:
        raise DeviceNotFound(f"{url}: no port", hint=URL_FORM)
    if port == 0:
        raise DeviceNotFound(f"{url}: port 0 is not a TCP port (1-65535)", hint=URL_FORM)


def open_transport(device: str | None) -> Transport:
    """The transport a device name stands for (see the module table)."""
    name = device or DEFAULT_DEVICE
    if name == "sim" or name.startswith("sim?"):
        from hilbridge.sim import build_endpoint

        return InProcessTransport(build_endpoint(name.partition("?")[2]), name=name)
    if name == "usb-sim":
        from hilbridge.sim import build_endpoint
        from hilbridge.sim.usb_backend import SimulatedUsbBackend

        return UsbTransport(backend=SimulatedUsbBackend(build_endpoint()))
    if name == "usb" or name.startswith("usb:"):
        return UsbTransport(name.partition(":")[2] or None)
    if name.partition("://")[0] in NETWORK_SCHEMES:
        check_network_url(name)
    return SerialTransport(name)


def open_adapter(device: str | None, **link_options: Any) -> Adapter:
    """Open `device` and shake hands with it; a HilbridgeError explains any failure."""
    transport = open_transport(device)
    try:
        adapter = Adapter(transport, **link_options)
    except LinkTimeout as error:
        transport.close()
        faults = _simulated_faults(device or DEFAULT_DEVICE)
        if faults is None:
            raise
        raise LinkTimeout(
            f"{error.message} under the simulated faults {faults}",
            hint="these fault rates lose too many frames for the handshake; lower drop, corrupt, dup, stall",
        ) from None
    except BaseException:
        transport.close()
        raise
    warning = outdated_warning(adapter.info.firmware)
    if warning:
        warnings.warn(f"{adapter.name}: {warning}", FirmwareOutdated, stacklevel=2)
    return adapter


def _simulated_faults(device: str) -> str | None:
    """The `faults=` setting of a `sim?...` device name, if it has one."""
    if not device.startswith("sim?"):
        return None
    from hilbridge.sim import parse_options

    return parse_options(device.partition("?")[2]).get("faults") or None


def list_devices() -> list[DeviceEntry]:
    """Serial ports with the adapter's USB VID:PID, USB adapters (vendor interface), and `sim`."""
    from serial.tools import list_ports

    entries = []
    for port in sorted(list_ports.comports(), key=lambda p: p.device):
        if port.vid == ADAPTER_VID and port.pid == ADAPTER_PID:
            serial = f" serial {port.serial_number}" if port.serial_number else ""
            entries.append(DeviceEntry(port.device, "serial", f"hilbridge adapter (USB CDC){serial}"))
    for device in find_adapters():
        info = describe(device)
        where = f"bus {info.bus} address {info.address}"
        if info.serial is None:
            entries.append(DeviceEntry("usb", "usb", f"{where}: no access (install the udev rule)"))
        else:
            entries.append(DeviceEntry(f"usb:{info.serial}", "usb", f"{where}: {info.product}"))
    entries.append(DeviceEntry("sim", "sim", "simulated adapter, demo cartridge (no hardware needed)"))
    return entries
