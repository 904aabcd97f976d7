"""The simulator's socket server: one client at a time, BUSY for others, idle timeout, clean ends."""

from __future__ import annotations

import queue
import socket
import subprocess
import sys
import threading
import time

import pytest
from serial import rfc2217

from hilbridge.errors import HilbridgeError
from hilbridge.link.discovery import open_adapter
from hilbridge.link.errors import DeviceError
from hilbridge.sim import build_device
from hilbridge.sim.demo import demo_image
from hilbridge.sim.faults import FaultPlan
from hilbridge.sim.serve import serve_socket

pytestmark = pytest.mark.filterwarnings("ignore:set(Daemon|Name)\\(\\) is deprecated:DeprecationWarning")


@pytest.fixture
def serve():
    """Start serve_socket in a thread; returns (url, reports)."""
    threads = []

    def start(connections: int, **options):
        urls: queue.Queue[str] = queue.Queue()
        reports: list[str] = []
        device = options.pop("device", None) or build_device()
        thread = threading.Thread(
            target=serve_socket,
            args=(device, 0),
            kwargs={"announce": urls.put, "connections": connections, "report": reports.append, **options},
            daemon=True,
        )
        thread.start()
        threads.append(thread)
        return urls.get(timeout=10), reports

    yield start
    for thread in threads:
        thread.join(15)
        assert not thread.is_alive()


def _address(url: str) -> tuple[str, int]:
    host, port = url.split("://")[1].split(":")
    return host, int(port)


def test_a_malformed_rfc2217_subnegotiation_ends_only_that_connection(serve):
    url, reports = serve(2, rfc2217=True)
    with socket.create_connection(_address(url), timeout=5) as bad:
        bad.sendall(rfc2217.IAC + rfc2217.SB + rfc2217.COM_PORT_OPTION + rfc2217.SET_BAUDRATE)
        bad.sendall(rfc2217.IAC + rfc2217.SE)  # SET-BAUDRATE without its four value bytes
        while bad.recv(4096):
            pass  # the server closes this connection
    with open_adapter(url) as adapter:
        assert adapter.read(0x400, 4, p1=0xFC) == demo_image()[:4]
    assert reports and "ended" in reports[0]


def test_a_second_client_is_refused_with_busy_while_one_is_connected(serve):
    url, _ = serve(2)
    with open_adapter(url) as first:
        with pytest.raises(DeviceError, match=r"BUSY.*serving another client"):
            open_adapter(url)
        assert first.read(0x400, 2, p1=0xFC) == demo_image()[:2]


def test_an_idle_client_holding_half_a_frame_is_dropped_after_the_idle_timeout(serve):
    url, reports = serve(2, idle_timeout=0.5)
    with socket.create_connection(_address(url), timeout=5) as idle:
        idle.sendall(b"\x05\x01\x02")  # the start of a frame, never finished
        started = time.monotonic()
        assert idle.recv(4096) == b""
        assert time.monotonic() - started < 4
    with open_adapter(url) as adapter:
        assert adapter.read(0x400, 2, p1=0xFC) == demo_image()[:2]
    assert any("idle" in report for report in reports)


def test_emulation_left_on_by_one_client_is_off_for_the_next(serve):
    device = build_device()
    url, _ = serve(2, device=device)
    with open_adapter(url) as first:
        first.upload(demo_image("o2_rom", 2048), "o2_rom")
        assert first.emulation(True)["enabled"]
    deadline = time.monotonic() + 5
    while device.emulated is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    with open_adapter(url) as second:
        assert second.status()["emulating"] == 0


def test_a_port_in_use_is_a_clean_error():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(HilbridgeError, match="in use"):
            serve_socket(build_device(), port, announce=lambda url: None)
        run = subprocess.run(
            [sys.executable, "-m", "hilbridge", "sim", "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert run.returncode == 2 and "Traceback" not in run.stderr and "in use" in run.stderr


@pytest.mark.parametrize("spec", ["drop=0.5,corrupt=0.5", "drop=0.4,corrupt=0.4,dup=0.3"])
def test_fault_probabilities_adding_up_to_one_or_more_are_refused(spec):
    with pytest.raises(HilbridgeError, match="add up to"):
        FaultPlan.parse(spec)
