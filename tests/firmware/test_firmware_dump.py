"""Every mapper dumped byte-exact through the emulated firmware: the dumper's detection, passes and
verification over USB CDC, the firmware's SIO dump engine, and the harness playing the cartridge."""

from __future__ import annotations

import json

import pytest
import serial
from firmware_loop import EMULATED_LINK, cart_table, firmware_chip

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.adapter import Adapter
from hilbridge.link.errors import LinkError
from hilbridge.link.transport import InProcessTransport, SerialTransport
from hilbridge.sim.demo import demo_image
from hilbridge.sim.faults import FaultPlan, FaultyEndpoint

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
    url = firmware_chip("--cart-table", str(table)).url
    with Adapter(SerialTransport(url), **EMULATED_LINK) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin")
    assert (result.detection.mapper, len(result.image)) == (mapper, size)
    assert result.verified and not result.unstable
    assert (tmp_path / "out.bin").read_bytes() == image


class PortEndpoint:
    """A pyserial port as a byte endpoint (receive/transmit), so the simulator's fault injection
    (hilbridge.sim.faults) can sit between the emulated firmware's link and the host's."""

    busy = False
    silent_until_written = False  # its bytes come from another process

    def __init__(self, url: str):
        self.port = serial.serial_for_url(url, timeout=0)

    def receive(self, data: bytes) -> None:
        self.port.write(data)

    def transmit(self, limit: int | None = None) -> bytes:
        return self.port.read(self.port.in_waiting or 1)

    def close(self) -> None:
        self.port.close()


def test_a_dump_through_the_firmware_is_exact_with_bytes_dropped_corrupted_and_duplicated(tmp_path):
    image = demo_image("o2_rom", 8192)
    # 0.1 % a byte of each fault: each kind hits both directions tens of times, and the host's pieces
    # still shrink and grow again (at 0.5 % they sat at the smallest size: twice the requests)
    plan = FaultPlan(drop=0.001, corrupt=0.001, dup=0.001, seed=11)
    endpoint = PortEndpoint(firmware_chip("--cart-table", str(cart_table(image, "o2_rom", tmp_path))).url)
    faulty = InProcessTransport(FaultyEndpoint(endpoint, plan), name="firmware")
    with Adapter(faulty, **EMULATED_LINK) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin")
        assert adapter.link.stats.bad_frames > 0 and adapter.link.stats.retransmits > 0
        assert adapter.status()["frames_bad"] > 0  # the firmware refused damaged requests too
    endpoint.close()
    assert result.verified and (tmp_path / "out.bin").read_bytes() == image


def test_a_dump_through_the_firmware_cut_off_midway_resumes_and_finishes_byte_exact(tmp_path):
    image = demo_image("o2_rally", 16384)
    output = tmp_path / "rally.bin"
    url = firmware_chip("--cart-table", str(cart_table(image, "o2_rally", tmp_path))).url
    endpoint = PortEndpoint(url)
    cut = FaultyEndpoint(endpoint, FaultPlan(disconnect=50000))
    # the cut is a byte count: requests sent again on a loaded machine's timeouts must not use
    # those bytes up before the first page is written (a disconnect ends the session at once)
    patient = {**EMULATED_LINK, "min_timeout": 2.0}
    with (
        Adapter(InProcessTransport(cut, name="firmware"), **patient) as adapter,
        pytest.raises(LinkError),
    ):
        dump_cartridge(adapter, output)
    endpoint.close()
    assert not output.exists()
    state = json.loads((tmp_path / "rally.bin.partial.json").read_text())
    assert 0 < sum(len(done) for done in state["done"]) < 2 * 16
    with Adapter(SerialTransport(url), **EMULATED_LINK) as adapter:  # the same adapter, a new session
        result = dump_cartridge(adapter, output)
    assert result.resumed and result.verified
    assert output.read_bytes() == image
    assert not list(tmp_path.glob("*.partial*"))
