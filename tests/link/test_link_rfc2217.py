"""RFC 2217 to `hilbridge sim serve --rfc2217`: the Telnet COM port side that the conformance suite
(which runs over rfc2217:// too) does not exercise: a pyserial client changing line settings and
timeouts after opening waits for the server's answer to each, and a dump through it is byte-exact.
"""

from __future__ import annotations

import queue
import socket
import struct
import threading

import pytest
import serial
from click.testing import CliRunner
from conftest import served_simulator
from serial import rfc2217

from hilbridge.cli.main import cli
from hilbridge.link.protocol import MESSAGES, FrameDecoder, encode_frame, pack_fields
from hilbridge.sim import build_device
from hilbridge.sim.demo import demo_image
from hilbridge.sim.serve import serve_socket

pytestmark = pytest.mark.filterwarnings("ignore:set(Daemon|Name)\\(\\) is deprecated:DeprecationWarning")


@pytest.fixture
def rfc2217_url():
    """A simulator served over RFC 2217 in a thread, for one connection."""
    urls: queue.Queue[str] = queue.Queue()
    server = threading.Thread(
        target=serve_socket,
        args=(build_device(), 0),
        kwargs={"announce": urls.put, "connections": 1, "rfc2217": True},
        daemon=True,
    )
    server.start()
    yield urls.get(timeout=10)
    server.join(10)


def _firmware_info(port: serial.SerialBase, seq: int) -> str:
    message = MESSAGES["FIRMWARE_INFO"]
    port.write(encode_frame(message.id, seq, pack_fields(message.request, {})))
    frames = FrameDecoder().feed(port.read_until(b"\x00"))
    assert [frame.seq for frame in frames] == [seq]
    return frames[0].payload.decode()


def test_line_settings_and_timeouts_changed_after_opening_are_answered(rfc2217_url):
    """pyserial raises SerialException when the server leaves a setting unanswered for 3 s."""
    port = serial.serial_for_url(rfc2217_url, baudrate=115200, timeout=5)
    try:
        assert "simulated adapter" in _firmware_info(port, 1)
        for baudrate in (300, 9600, 1_000_000, 3_000_000):
            port.baudrate = baudrate
        port.bytesize, port.parity, port.stopbits = serial.SEVENBITS, serial.PARITY_EVEN, serial.STOPBITS_TWO
        port.timeout = 0.5
        port.timeout = 5
        port.rtscts = True
        port.rtscts = False
        port.dtr, port.rts = False, False
        port.dtr, port.rts = True, True
        port.break_condition = True
        port.break_condition = False
        port.reset_input_buffer()
        port.reset_output_buffer()
        assert (port.cts, port.dsr, port.cd, port.ri) == (True, True, True, False)
        assert "simulated adapter" in _firmware_info(port, 2)  # line coding changes nothing on USB CDC
    finally:
        port.close()


def _subnegotiation(option: bytes, value: bytes) -> bytes:
    return rfc2217.IAC + rfc2217.SB + rfc2217.COM_PORT_OPTION + option + value + rfc2217.IAC + rfc2217.SE


def test_the_server_reports_a_setting_it_keeps_and_one_it_refuses(rfc2217_url):
    host, port = rfc2217_url.removeprefix("rfc2217://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(
            _subnegotiation(rfc2217.SET_BAUDRATE, struct.pack("!I", 57600))
            + _subnegotiation(rfc2217.SET_DATASIZE, b"\x03")  # 3 data bits: no such serial line
        )
        kept = _subnegotiation(rfc2217.SERVER_SET_BAUDRATE, struct.pack("!I", 57600))
        refused = _subnegotiation(rfc2217.SERVER_SET_DATASIZE, b"\x08")  # the size it still has
        received = b""
        while refused not in received:
            data = connection.recv(4096)
            assert data, received
            received += data
        assert kept in received


@pytest.mark.slow
def test_a_dump_over_rfc2217_is_byte_exact_and_resumes_across_disconnects(tmp_path):
    with served_simulator("--port", "0", "--rfc2217", "--faults", "disconnect=20000") as url:
        assert url.startswith("rfc2217://")
        output = tmp_path / "demo.bin"
        results = []
        for _ in range(6):
            results.append(CliRunner().invoke(cli, ["dump", "-d", url, "-o", str(output)]))
            if results[-1].exit_code == 0:
                break
            assert "dump interrupted" in results[-1].output, results[-1].output
        assert results[0].exit_code == 2 and results[-1].exit_code == 0
        assert "resumed an interrupted dump" in results[-1].output
        assert output.read_bytes() == demo_image()


def test_rfc2217_without_a_port_is_a_usage_error():
    result = CliRunner().invoke(cli, ["sim", "serve", "--pty", "--rfc2217"])
    assert result.exit_code == 2 and "--rfc2217 serves on a TCP port" in result.output
