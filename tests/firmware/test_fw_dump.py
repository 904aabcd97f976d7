"""Every mapper type dumped byte-exact with the real dumper (hilbridge.dumper) through the firmware's
protocol core: the host build on a pty, its slot holding the demo image of that type; and a host that
vanishes mid-stream does not stop the next one."""

from __future__ import annotations

import os
import subprocess
import threading
import zlib

import pytest
import serial
from conftest import firmware_host_build, served_firmware_host

from hilbridge.dumper.dump import dump_cartridge
from hilbridge.link.adapter import Adapter
from hilbridge.link.discovery import open_adapter
from hilbridge.link.protocol import MESSAGES, encode_frame
from hilbridge.link.transport import InProcessTransport
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.sim.demo import demo_image
from hilbridge.sim.faults import FaultPlan, FaultyEndpoint


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


class StdioCore:
    """hilbridge-fw-host --stdio as a byte endpoint (receive/transmit), so the simulator's fault
    injection (hilbridge.sim.faults) can sit between it and the host's link."""

    def __init__(self, *arguments: str):
        program = firmware_host_build() / "hilbridge-fw-host"
        self.process = subprocess.Popen(
            [str(program), "--stdio", *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self._output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while data := os.read(self.process.stdout.fileno(), 65536):
            with self._lock:
                self._output += data

    busy = False
    silent_until_written = False  # its bytes come from another process

    def receive(self, data: bytes) -> None:
        self.process.stdin.write(data)

    def transmit(self, limit: int | None = None) -> bytes:
        with self._lock:
            data = bytes(self._output)
            self._output.clear()
        return data

    def close(self) -> int:
        self.process.stdin.close()
        self._reader.join(timeout=20)
        self.process.stdout.close()
        return self.process.wait(timeout=20)


@pytest.mark.slow
@pytest.mark.parametrize(("mapper", "size"), [("o2_rom", 8192), ("o2_4in1", 4096), ("o2_rally", 16384)])
def test_dumps_through_the_core_are_exact_with_bytes_dropped_corrupted_and_duplicated(tmp_path, mapper, size):
    cart = tmp_path / "cart.bin"
    cart.write_bytes(demo_image(mapper, size))
    core = StdioCore("--cart", str(cart), "--type", mapper)
    plan = FaultPlan(drop=0.01, corrupt=0.01, dup=0.01, seed=size % 97)
    with Adapter(InProcessTransport(FaultyEndpoint(core, plan), name="fw-host")) as adapter:
        result = dump_cartridge(adapter, tmp_path / "out.bin")
        assert adapter.link.stats.bad_frames > 0 and adapter.link.stats.retransmits > 0
        assert adapter.status()["frames_bad"] > 0  # the core dropped damaged requests too
    assert result.detection.mapper == mapper
    assert (tmp_path / "out.bin").read_bytes() == demo_image(mapper, size)
    assert core.close() == 0
