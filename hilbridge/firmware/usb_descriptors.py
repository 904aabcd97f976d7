"""USB descriptors of the adapter, packed from `usb_descriptors.json` (beside this module, so the simulated
adapter's USB device has them in an installed package too) into the firmware's C header, and parsed back
from bytes as libusb parses them (for the pyusb backends of `hilbridge.firmware.usb_device`).

A value written as a name in capitals (VID:PID, the vendor interface's class, endpoint addresses and
packet size) is taken from `hilbridge.link.usb`, so the firmware enumerates as what `hilbridge devices`
and `UsbTransport` look for. Run by `firmware/Makefile`:
`python -m hilbridge.firmware.usb_descriptors JSON OUT.h`.
"""

from __future__ import annotations

import json
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.link import usb

# Descriptor layouts (USB 2.0 chapter 9, CDC 1.2): type code, subtype (class-specific), fields.
LAYOUTS: dict[str, tuple[int, int | None, tuple[tuple[str, str], ...]]] = {
    "device": (
        1,
        None,
        (
            ("bcdUSB", "H"),
            ("bDeviceClass", "B"),
            ("bDeviceSubClass", "B"),
            ("bDeviceProtocol", "B"),
            ("bMaxPacketSize0", "B"),
            ("idVendor", "H"),
            ("idProduct", "H"),
            ("bcdDevice", "H"),
            ("iManufacturer", "B"),
            ("iProduct", "B"),
            ("iSerialNumber", "B"),
            ("bNumConfigurations", "B"),
        ),
    ),
    "configuration": (
        2,
        None,
        (
            ("wTotalLength", "H"),
            ("bNumInterfaces", "B"),
            ("bConfigurationValue", "B"),
            ("iConfiguration", "B"),
            ("bmAttributes", "B"),
            ("bMaxPower", "B"),
        ),
    ),
    "interface": (
        4,
        None,
        (
            ("bInterfaceNumber", "B"),
            ("bAlternateSetting", "B"),
            ("bNumEndpoints", "B"),
            ("bInterfaceClass", "B"),
            ("bInterfaceSubClass", "B"),
            ("bInterfaceProtocol", "B"),
            ("iInterface", "B"),
        ),
    ),
    "endpoint": (
        5,
        None,
        (("bEndpointAddress", "B"), ("bmAttributes", "B"), ("wMaxPacketSize", "H"), ("bInterval", "B")),
    ),
    "interface_association": (
        11,
        None,
        (
            ("bFirstInterface", "B"),
            ("bInterfaceCount", "B"),
            ("bFunctionClass", "B"),
            ("bFunctionSubClass", "B"),
            ("bFunctionProtocol", "B"),
            ("iFunction", "B"),
        ),
    ),
    "cdc_header": (0x24, 0x00, (("bcdCDC", "H"),)),
    "cdc_call_management": (0x24, 0x01, (("bmCapabilities", "B"), ("bDataInterface", "B"))),
    "cdc_acm": (0x24, 0x02, (("bmCapabilities", "B"),)),
    "cdc_union": (0x24, 0x06, (("bControlInterface", "B"), ("bSubordinateInterface0", "B"))),
}
SPEC = Path(__file__).with_name("usb_descriptors.json")
LANGUAGE_EN_US = 0x0409
DESCRIPTOR_DEVICE, DESCRIPTOR_CONFIGURATION, DESCRIPTOR_STRING = 1, 2, 3
DESCRIPTOR_INTERFACE, DESCRIPTOR_ENDPOINT = 4, 5


def pack(kind: str, fields: dict[str, Any]) -> bytes:
    code, subtype, layout = LAYOUTS[kind]
    body = b"".join(struct.pack("<" + fmt, fields[name]) for name, fmt in layout)
    head = bytes([code]) if subtype is None else bytes([code, subtype])
    return bytes([1 + len(head) + len(body)]) + head + body


def string_descriptor(text: str) -> bytes:
    encoded = text.encode("utf-16-le")
    return bytes([2 + len(encoded), DESCRIPTOR_STRING]) + encoded


def string_descriptors(built: dict[str, Any], serial: str) -> dict[int, bytes]:
    """The string descriptors by index, as the firmware answers them: 0 the language list, and `serial`
    where usb_descriptors.json leaves the text to the firmware (null)."""
    strings = {0: bytes([4, DESCRIPTOR_STRING]) + LANGUAGE_EN_US.to_bytes(2, "little")}
    for index, name in enumerate(built["string_names"], start=1):
        strings[index] = string_descriptor(built["strings"][name] or serial)
    return strings


def _host_constant(value: Any) -> Any:
    """A name such as "BULK_OUT" is that constant of `hilbridge.link.usb`; other values are literal."""
    if isinstance(value, str) and value.isupper():
        try:
            return getattr(usb, value)
        except AttributeError:
            raise HilbridgeError(
                f"usb_descriptors.json names {value!r}, which hilbridge.link.usb does not define"
            ) from None
    return value


def build(spec: dict[str, Any]) -> dict[str, Any]:
    """Packed descriptors: device, configuration (with computed totals), strings, endpoints."""
    string_names = list(spec["strings"])  # string index i + 1
    device = {key: _host_constant(value) for key, value in spec["device"].items()}
    for key in ("iManufacturer", "iProduct", "iSerialNumber"):
        device[key] = string_names.index(device[key]) + 1
    items = [
        {key: value if key == "name" else _host_constant(value) for key, value in item.items()}
        for item in spec["configuration"]
    ]
    endpoints: dict[str, tuple[int, int]] = {}
    interfaces = 0
    packed: list[bytes] = []
    for position, item in enumerate(items):
        fields = {key: value for key, value in item.items() if key not in ("type", "name")}
        if item["type"] == "interface":
            interfaces += 1
            following = items[position + 1 :]
            ends = next((i for i, other in enumerate(following) if other["type"] == "interface"), None)
            fields["bNumEndpoints"] = sum(1 for other in following[:ends] if other["type"] == "endpoint")
        if item["type"] == "endpoint":
            endpoints[item["name"]] = (item["bEndpointAddress"], item["wMaxPacketSize"])
        packed.append(fields)  # type: ignore[arg-type]
    body = [pack(item["type"], fields) for item, fields in zip(items[1:], packed[1:], strict=True)]
    total = 9 + sum(len(part) for part in body)
    head = pack("configuration", {**packed[0], "wTotalLength": total, "bNumInterfaces": interfaces})
    strings = {name: text for name, text in spec["strings"].items()}
    return {
        "device": pack("device", device),
        "configuration": head + b"".join(body),
        "strings": strings,
        "string_names": string_names,
        "endpoints": endpoints,
        "ep0_size": device["bMaxPacketSize0"],
    }


# -- parsing ---------------------------------------------------------------------------------------
HEADER_FIELDS = (("bLength", "B"), ("bDescriptorType", "B"))  # the two bytes every descriptor starts with
DEVICE_FIELDS, CONFIGURATION_FIELDS, INTERFACE_FIELDS, ENDPOINT_FIELDS = (
    HEADER_FIELDS + LAYOUTS[name][2] for name in ("device", "configuration", "interface", "endpoint")
)


@dataclass
class Descriptor:
    """The fields pyusb copies from a descriptor, the class-specific bytes that follow it (libusb's
    `extra`) and, for an interface, its endpoints."""

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


# -- the C header ----------------------------------------------------------------------------------
def _c_bytes(data: bytes) -> str:
    rows = [", ".join(f"0x{b:02x}" for b in data[i : i + 12]) for i in range(0, len(data), 12)]
    return "{\n    " + ",\n    ".join(rows) + ",\n}"


def header(spec: dict[str, Any]) -> str:
    built = build(spec)
    lines = [
        "/* Generated by hilbridge.firmware.usb_descriptors from hilbridge/firmware/usb_descriptors.json. */",
        "#ifndef HILBRIDGE_USB_DESCRIPTORS_H",
        "#define HILBRIDGE_USB_DESCRIPTORS_H",
        "#include <stdint.h>",
        f"#define USB_EP0_SIZE {built['ep0_size']}u",
        f"#define USB_LANGUAGE_ID 0x{LANGUAGE_EN_US:04x}u",
        f"#define USB_STRING_COUNT {len(built['string_names'])}u",
    ]
    for name, (address, size) in built["endpoints"].items():
        lines += [f"#define USB_EP_{name} 0x{address:02x}u", f"#define USB_EP_{name}_SIZE {size}u"]
    serial_index = None
    for index, name in enumerate(built["string_names"], start=1):
        lines.append(f"#define USB_STRING_{name.upper()} {index}u")
        if built["strings"][name] is None:
            serial_index = index
    lines.append(f"#define USB_STRING_RUNTIME {serial_index or 0}u /* filled in by the firmware */")
    lines.append(f"static const uint8_t usb_device_descriptor[] = {_c_bytes(built['device'])};")
    lines.append(f"static const uint8_t usb_config_descriptor[] = {_c_bytes(built['configuration'])};")
    texts = [built["strings"][name] or "" for name in built["string_names"]]
    lines.append(
        "static const char *const usb_strings[] = {" + ", ".join(json.dumps(text) for text in texts) + "};"
    )
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def load_spec(path: Path = SPEC) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise HilbridgeError(error.msg, SourceLocation(str(path), error.lineno, error.colno)) from None


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m hilbridge.firmware.usb_descriptors descriptors.json OUT.h", file=sys.stderr)
        return 2
    Path(argv[1]).write_text(header(load_spec(Path(argv[0]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
