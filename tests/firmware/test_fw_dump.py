"""Every mapper type dumped byte-exact with the real dumper (hilbridge.dumper) through the firmware's
protocol core: the host build on a pty, its slot holding the demo image of that type."""

from __future__ import annotations

import pytest
from conftest import served_firmware_host

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.discovery import open_adapter
from hilbridge.sim.demo import demo_image

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
