"""The generated USB descriptors: the VID:PID discovery looks for, a CDC-ACM layout a host accepts, the
vendor interface `UsbTransport` opens; and the parser the pyusb backends read them back with."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hilbridge.errors import HilbridgeError
from hilbridge.firmware.usb_descriptors import (
    LAYOUTS,
    build,
    header,
    load_spec,
    pack,
    parse_configuration,
    parse_device,
)
from hilbridge.link.usb import (
    ADAPTER_PID,
    ADAPTER_VID,
    BULK_IN,
    BULK_OUT,
    INTERFACE_CLASS_VENDOR,
    PACKET_SIZE,
)

SPEC = Path(__file__).resolve().parents[2] / "hilbridge" / "firmware" / "usb_descriptors.json"


def split(descriptors: bytes) -> list[bytes]:
    parts, offset = [], 0
    while offset < len(descriptors):
        length = descriptors[offset]
        assert length >= 2
        parts.append(descriptors[offset : offset + length])
        offset += length
    assert offset == len(descriptors)
    return parts


def test_device_descriptor_carries_the_adapter_vid_pid():
    device = build(load_spec(SPEC))["device"]
    assert len(device) == device[0] == 18 and device[1] == 1
    vid, pid = struct.unpack_from("<HH", device, 8)
    assert (vid, pid) == (ADAPTER_VID, ADAPTER_PID)


def test_configuration_totals_and_counts_are_consistent():
    configuration = build(load_spec(SPEC))["configuration"]
    parts = split(configuration)
    assert struct.unpack_from("<H", parts[0], 2)[0] == len(configuration)
    interfaces = [p for p in parts if p[1] == 4]
    assert parts[0][4] == len(interfaces) == 3
    for index, interface in enumerate(interfaces):
        start = parts.index(interface)
        following = parts[start + 1 :]
        stop = next((i for i, p in enumerate(following) if p[1] == 4), len(following))
        assert interface[4] == sum(1 for p in following[:stop] if p[1] == 5), index


def endpoints_of(parts: list[bytes], interface_class: int) -> list[bytes]:
    start = next(i for i, p in enumerate(parts) if p[1] == 4 and p[5] == interface_class)
    following = parts[start + 1 :]
    stop = next((i for i, p in enumerate(following) if p[1] == 4), len(following))
    return [p for p in following[:stop] if p[1] == 5]


def test_cdc_data_interface_has_one_bulk_endpoint_each_way():
    parts = split(build(load_spec(SPEC))["configuration"])
    endpoints = endpoints_of(parts, 10)
    assert sorted((p[2] & 0x80, p[3] & 3, struct.unpack_from("<H", p, 4)[0]) for p in endpoints) == [
        (0x00, 2, 64),
        (0x80, 2, 64),
    ]


def test_header_names_the_runtime_serial_string():
    text = header(load_spec(SPEC))
    assert "#define USB_STRING_RUNTIME 3u" in text and "usb_config_descriptor" in text


def test_vendor_interface_has_the_bulk_endpoints_usb_transport_opens():
    parts = split(build(load_spec(SPEC))["configuration"])
    endpoints = endpoints_of(parts, INTERFACE_CLASS_VENDOR)
    assert sorted((p[2], p[3] & 3, struct.unpack_from("<H", p, 4)[0]) for p in endpoints) == sorted(
        [(BULK_OUT, 2, PACKET_SIZE), (BULK_IN, 2, PACKET_SIZE)]
    )


def test_no_two_interfaces_share_an_endpoint_address():
    addresses = [p[2] for p in split(build(load_spec(SPEC))["configuration"]) if p[1] == 5]
    assert len(addresses) == len(set(addresses)) == 5


def test_a_name_hilbridge_link_usb_does_not_define_is_an_error():
    spec = load_spec(SPEC)
    spec["configuration"][-1]["bEndpointAddress"] = "BULK_SIDEWAYS"
    with pytest.raises(HilbridgeError, match="BULK_SIDEWAYS"):
        build(spec)


@given(
    st.fixed_dictionaries(
        {name: st.integers(0, 0xFFFF if code == "H" else 0xFF) for name, code in LAYOUTS["device"][2]}
    )
)
def test_a_packed_device_descriptor_parses_back_to_its_fields(fields):
    parsed = parse_device(pack("device", fields))
    assert parsed.values == {"bLength": 18, "bDescriptorType": 1, **fields}


@given(st.lists(st.sampled_from(["endpoint", "cdc_header", "cdc_union"]), max_size=6))
def test_class_specific_descriptors_go_to_the_interface_before_them(kinds):
    items = {
        "endpoint": {"bEndpointAddress": 0x81, "bmAttributes": 2, "wMaxPacketSize": 64, "bInterval": 0},
        "cdc_header": {"bcdCDC": 0x0110},
        "cdc_union": {"bControlInterface": 0, "bSubordinateInterface0": 1},
    }
    interface = {"bInterfaceNumber": 0, "bAlternateSetting": 0, "bNumEndpoints": kinds.count("endpoint")}
    interface |= {"bInterfaceClass": 2, "bInterfaceSubClass": 2, "bInterfaceProtocol": 0, "iInterface": 0}
    body = pack("interface", interface) + b"".join(pack(kind, items[kind]) for kind in kinds)
    head = {"wTotalLength": 9 + len(body), "bNumInterfaces": 1, "bConfigurationValue": 1}
    head |= {"iConfiguration": 0, "bmAttributes": 0x80, "bMaxPower": 50}
    _, interfaces = parse_configuration(pack("configuration", head) + body)
    (setting,) = interfaces[0]
    assert len(setting.children) == kinds.count("endpoint")
    before_first_endpoint = kinds[: kinds.index("endpoint")] if "endpoint" in kinds else kinds
    expected = b"".join(pack(kind, items[kind]) for kind in before_first_endpoint)
    assert bytes(setting.extra) == expected  # what follows an endpoint is the endpoint's, as in libusb


def test_a_configuration_whose_total_disagrees_is_an_error():
    configuration = bytearray(build(load_spec(SPEC))["configuration"])
    with pytest.raises(HilbridgeError, match="configuration says"):
        parse_configuration(bytes(configuration[:-1]))
