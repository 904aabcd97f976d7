"""Every mapper dumped byte-exact through the emulated firmware: the dumper's detection, passes and
verification over USB CDC, the firmware's SIO dump engine, and the harness playing the cartridge."""

from __future__ import annotations

import pytest
from firmware_loop import EMULATED_LINK, built_uf2, cart_table, served_firmware

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.adapter import Adapter
from hilbridge.link.transport import SerialTransport
from hilbridge.sim.demo import demo_image

pytestmark = pytest.mark.slow
CARTRIDGES = [
    ("o2_rom", 2048),
    ("o2_rom", 4096),
    ("o2_rom", 8192),
    ("o2_4in1", 4096),
    ("o2_rally", 16384),
    ("o2_ktaa", 12288),
]


@pytest.mark.parametrize(("mapper", "size"), CARTRIDGES)
def test_every_mapper_is_detected_and_dumped_exactly(tmp_path, mapper, size):
    image = demo_image(mapper, size)
    table = cart_table(image, mapper, tmp_path)
    with (
        served_firmware("--cart-table", str(table), uf2=built_uf2()) as url,
        Adapter(SerialTransport(url), **EMULATED_LINK) as adapter,
    ):
        result = dump_cartridge(adapter, tmp_path / "out.bin")
    assert (result.detection.mapper, len(result.image)) == (mapper, size)
    assert result.verified and not result.unstable
    assert (tmp_path / "out.bin").read_bytes() == image
