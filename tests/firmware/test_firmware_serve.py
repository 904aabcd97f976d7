"""Upload + serve through the emulated firmware, verified by the fetches the harness makes: the
console plays the reference emulator's slot accesses while the firmware emulates the cartridge, and
every /PSEN fetch must find the emulator's byte driven on D0-D7 by the firmware's serve engine."""

from __future__ import annotations

import struct
import zlib

import pytest
from conftest import write_bus_trace
from firmware_loop import EMULATED_LINK, firmware_chip

from hilbridge.link.adapter import Adapter
from hilbridge.link.transport import SerialTransport
from hilbridge.sim.demo import demo_image

pytestmark = pytest.mark.slow
CARTRIDGES = [("o2_rom", 4096), ("o2_rally", 16384), ("o2_4in1", 4096), ("o2_ktaa", 12288)]


@pytest.mark.parametrize(("mapper", "size"), CARTRIDGES)
def test_served_image_answers_every_fetch_of_the_reference_emulator(tmp_path, mapper, size):
    image = demo_image(mapper, size)
    trace = write_bus_trace(image, mapper, tmp_path / "cart.trace", frames=2).read_bytes()
    fetches = sum(1 for at in range(0, len(trace), 9) if struct.unpack_from("<IB", trace, at)[1] == 0)
    firmware = firmware_chip("--console", str(tmp_path / "cart.trace"))
    with Adapter(SerialTransport(firmware.url), **EMULATED_LINK) as adapter:
        assert adapter.upload(image, mapper) == zlib.crc32(image)
        assert adapter.emulation(True)["crc32"] == zlib.crc32(image)
        done = firmware.wait_event("console-done", timeout=600)
        assert adapter.emulation(False)["enabled"] == 0
    assert done["mode"] == "serve" and done["fetches"] == fetches > 1000
    assert done["wrong"] == 0, done["examples"]
