"""Every mapper type dumped byte-exact with the real dumper (hilbridge.dumper) through the firmware's
protocol core: the host build on a pty, its slot holding the demo image of that type; and a host that
vanishes mid-stream does not stop the next one."""

from __future__ import annotations

import zlib

import pytest
import serial
from conftest import served_firmware_host

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.discovery import open_adapter
from hilbridge.link.protocol import MESSAGES, encode_frame
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.sim.demo import demo_image


def wire(name: str, seq: int, **values) -> bytes:
    return encode_frame(MESSAGES[name].id, seq, MESSAGES[name].request_layout.pack(values))


CARTRIDGES = [
    ("o2_rom", 2048),
    ("o2_rom", 4096),
    ("o2_rom", 8192),
    ("o2_4in1", 4096),
    ("o2_rally", 8192),
    ("o2_rally", 16384),
    ("o2_ktaa", 3072),
    ("o2_ktaa", 6144),
    ("o2_ktaa", 12288),
]


@pytest.mark.parametrize(("mapper", "size"), CARTRIDGES)
def test_every_mapper_type_is_detected_and_dumped_exactly_through_the_core(tmp_path, mapper, size):
    cart = tmp_path / "cart.bin"
    cart.write_bytes(demo_image(mapper, size))
    with served_firmware_host("--cart", str(cart), "--type", mapper) as path, open_adapter(path) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin")
        assert adapter.info.board_id == 0x5101
    assert (result.detection.mapper, len(result.image)) == (mapper, size)
    assert result.verified and not result.unstable
    assert (tmp_path / "out.bin").read_bytes() == demo_image(mapper, size)


def test_a_host_that_vanishes_mid_frame_leaves_the_next_session_working(tmp_path):
    image = demo_image("o2_rally", 16384)
    cart = tmp_path / "cart.bin"
    cart.write_bytes(image)
    with served_firmware_host("--cart", str(cart), "--type", "o2_rally") as path:
        upload = MESSAGES["UPLOAD_DATA"].request_layout.pack({"offset": 0, "data": image[:4000]})
        long_read = {"p1": 0xFF, "p2": 0, "strobe": 0, "address": 0x400, "length": 0xC00, "count": 10}
        with serial.Serial(path) as port:
            port.write(wire("CART_READ_REPEAT", 1, **long_read))  # a 30 KB reply nobody reads
            port.write(encode_frame(MESSAGES["UPLOAD_DATA"].id, 2, upload)[:2500])  # half a request
        with open_adapter(path) as adapter:
            assert adapter.read(0x400, 0xC00, p1=0xFF) == load_cartridge(image, "o2_rally").program_view(0xFF)
            assert adapter.upload(image, "o2_rally") == zlib.crc32(image)
