"""The harness's reset command gives a chip that answers as a freshly started harness's does: the tests
that share one harness per module (a cartridge or console each) rely on it instead of a new process."""

from __future__ import annotations

import firmware_loop
import pytest
import serial
from conftest import stop_the_shared_firmware
from firmware_loop import EMULATED_LINK, RunningFirmware, built_uf2, cart_table, running_firmware

from hilbridge.link.adapter import Adapter
from hilbridge.link.transport import SerialTransport
from hilbridge.sim.demo import demo_image

pytestmark = pytest.mark.slow
# STATUS fields that say what the chip has been through (not how many frames a loaded machine resent,
# nor how long it has been up, which depend on the host's timing)
STATE_FIELDS = ("frames_bad", "emulating", "capturing", "capture_chunks", "capture_dropped", "resets_seen")


def replies(firmware: RunningFirmware) -> dict:
    """What the chip answers to the same requests: its descriptors, HELLO, its state and the cartridge's
    first bytes."""
    with Adapter(SerialTransport(firmware.url), **EMULATED_LINK) as adapter:
        status = adapter.status()
        return {
            "descriptors": firmware.descriptors,
            "info": adapter.info,
            "firmware": adapter.firmware_info(),
            "state": {name: status[name] for name in STATE_FIELDS},
            "cart": adapter.read(0x400, 128),
        }


def test_a_reset_chip_answers_as_a_freshly_started_one_with_the_new_cartridge(tmp_path):
    first = demo_image("o2_rom", 2048)
    second = demo_image("o2_rally", 16384)
    second_table = str(cart_table(second, "o2_rally", tmp_path))
    with running_firmware("--cart-table", second_table, uf2=built_uf2()) as fresh:
        expected = replies(fresh)
    first_table = str(cart_table(first, "o2_rom", tmp_path))
    with running_firmware("--cart-table", first_table, uf2=built_uf2()) as shared:
        with Adapter(SerialTransport(shared.url), **EMULATED_LINK) as adapter:
            adapter.upload(first, "o2_rom")
            assert adapter.emulation(True)["enabled"] == 1
        port = serial.serial_for_url(shared.url)
        port.write(b"\x07garbage\x00")  # a damaged frame: frames_bad counts it
        port.close()
        used = replies(shared)
        assert used["state"] != expected["state"] and used["cart"] != expected["cart"]
        reset = shared.reset("--cart-table", second_table)
        assert reset["event"] == "reset"
        assert replies(shared) == expected


def test_stopping_the_shared_firmware_stops_a_harness_this_process_keeps() -> None:
    """What tests/conftest.py runs after every module: the shared harness is closed and forgotten, so
    the next `firmware_chip` starts a new one."""
    closed: list[bool] = []
    firmware_loop._SHARED.stack.callback(closed.append, True)
    firmware_loop._SHARED.running = firmware_loop.RunningFirmware.__new__(firmware_loop.RunningFirmware)
    stop_the_shared_firmware()
    assert closed == [True] and firmware_loop._SHARED.running is None
