"""Protocol conformance: one suite, run unchanged over every transport to the simulated adapter.

Transports: in-process; pyserial `socket://` to `hilbridge sim serve --port 0` in another process;
pyserial `rfc2217://` to `hilbridge sim serve --port 0 --rfc2217` (Telnet COM port control, every 0xFF
escaped) in another process; a pty served by `hilbridge sim serve --pty` in another process, opened
through pyserial; pyusb through the simulated backend. The same suite runs against the firmware:
`fw-host`, its C protocol core built for the PC (`make -C firmware host`) on a pty, holding the demo
cartridge and playing the reference emulator's bus trace into captures; and `firmware`, the RP2040
image itself booted in rp2040js with the demo cartridge played on its GPIOs (`tests/firmware_loop.py`),
over USB CDC, (`firmware-uart`) over its UART fallback and (`firmware-usb`) over its vendor bulk
interface through pyusb (`UsbTransport` on a backend holding the descriptors the harness read from the
firmware, its control transfers run on the emulated chip, `hilbridge.firmware.harness_usb`).
Expected cartridge
bytes come from the cartridge model, not from the link.
"""

from __future__ import annotations

import contextlib
import time
import zlib

import pytest
from conftest import served_firmware_host, served_simulator, write_bus_trace
from firmware_loop import EMULATED_LINK, FLASH_SERIAL, demo_cart_table, running_firmware

from hilbridge.link.adapter import Adapter, capture_records
from hilbridge.link.errors import DeviceError
from hilbridge.link.protocol import (
    MESSAGES,
    PROTOCOL_VERSION,
    encode_frame,
    pack_fields,
)
from hilbridge.link.transport import InProcessTransport, SerialTransport
from hilbridge.link.usb import UsbTransport
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.sim import build_device
from hilbridge.sim.demo import DEMO_MAPPER, demo_image
from hilbridge.sim.usb_backend import SimulatedUsbBackend

TRANSPORTS = (
    "in-process",
    "socket",
    "rfc2217",
    "pty",
    "usb",
    "fw-host",
    pytest.param("firmware", marks=pytest.mark.slow),
    pytest.param("firmware-uart", marks=pytest.mark.slow),
    pytest.param("firmware-usb", marks=pytest.mark.slow),
)
# What a device says about itself where it is not the simulated adapter: serial, FIRMWARE_INFO text,
# capabilities.
ALL_CAPABILITIES = {"CART_READ", "CART_WRITE", "EMULATION", "CAPTURE"}
IDENTITY = {
    "fw-host": ("FWHOST-0001", "hilbridge firmware core", ALL_CAPABILITIES),
    "firmware": (FLASH_SERIAL, "adapter firmware", ALL_CAPABILITIES),
    "firmware-uart": (FLASH_SERIAL, "adapter firmware", ALL_CAPABILITIES),
    "firmware-usb": (FLASH_SERIAL, "adapter firmware", ALL_CAPABILITIES),
}
pytestmark = pytest.mark.filterwarnings(  # pyserial's rfc2217 client thread setup
    "ignore:set(Daemon|Name)\\(\\) is deprecated:DeprecationWarning"
)


@pytest.fixture(params=TRANSPORTS, scope="module")
def adapter(request, tmp_path_factory):
    with contextlib.ExitStack() as served:
        if request.param == "fw-host":
            folder = tmp_path_factory.mktemp("fw-host")
            (folder / "demo.bin").write_bytes(demo_image())
            trace = write_bus_trace(demo_image(), DEMO_MAPPER, folder / "demo.trace")
            cart = ("--cart", str(folder / "demo.bin"), "--type", DEMO_MAPPER, "--bus-trace", str(trace))
            transport = SerialTransport(served.enter_context(served_firmware_host(*cart)))
        elif request.param == "in-process":
            transport = InProcessTransport(build_device())
        elif request.param == "usb":
            transport = UsbTransport(backend=SimulatedUsbBackend(build_device()))
        elif request.param == "socket":
            transport = SerialTransport(served.enter_context(served_simulator("--port", "0")))
        elif request.param == "rfc2217":
            url = served.enter_context(served_simulator("--port", "0", "--rfc2217"))
            assert url.startswith("rfc2217://")
            transport = SerialTransport(url)
        elif request.param in ("firmware", "firmware-uart", "firmware-usb"):
            folder = tmp_path_factory.mktemp("firmware")
            trace = write_bus_trace(demo_image(), DEMO_MAPPER, folder / "demo.trace")
            # The console at the 8048's own pace: the firmware captures the demo without a drop
            # there (tests/firmware/test_firmware_capture.py), over the UART fallback too.
            console = ("--console", str(trace), "--console-slowdown", "1")
            link = ("--link", {"firmware-uart": "uart", "firmware-usb": "vendor"}.get(request.param, "usb"))
            running = served.enter_context(
                running_firmware("--cart-table", str(demo_cart_table()), *console, *link)
            )
            if request.param == "firmware-usb":
                transport = UsbTransport(backend=running.usb_backend())
            else:
                transport = SerialTransport(running.url)
        else:
            transport = SerialTransport(served.enter_context(served_simulator("--pty")))
        device = Adapter(transport, **(EMULATED_LINK if request.param.startswith("firmware") else {}))
        yield device
        device.close()


@pytest.fixture(scope="module")
def demo():
    return load_cartridge(demo_image(), DEMO_MAPPER)


def test_hello_reports_version_capabilities_and_serial(adapter, request):
    serial, build, capabilities = IDENTITY.get(
        request.node.callspec.params["adapter"], ("SIM-0001", "simulated adapter", ALL_CAPABILITIES)
    )
    assert adapter.info.protocol == PROTOCOL_VERSION
    assert capabilities <= adapter.info.capabilities
    assert adapter.info.serial == serial
    assert build in adapter.firmware_info()


def test_program_reads_match_the_cartridge_model_in_every_bank(adapter, demo):
    for bank in range(4):
        p1 = 0xFC | bank
        expected = bytes(demo.fetch(address, p1, 0) for address in range(0x400, 0x1000))
        assert adapter.read(0x400, 0xC00, p1=p1) == expected


def test_movx_read_of_a_plain_rom_is_not_driven(adapter):
    assert adapter.read(0x00, 0x100, p1=0xFF, strobe="MOVX_READ") == b"\xff" * 0x100


def test_out_of_range_read_is_refused_with_bad_argument(adapter):
    with pytest.raises(DeviceError) as refused:
        adapter.read(0x100, 16)
    assert refused.value.name == "BAD_ARGUMENT"
    assert adapter.read(0x400, 4) == demo_image()[:4]  # the link still works afterwards


def test_unknown_message_and_garbage_are_survived(adapter):
    link = adapter.link
    link.transport.write(b"\x17garbage\x00\x00\xff\xfe" + bytes(range(1, 200)) + b"\x00")
    link.transport.write(encode_frame(0x55, 200, b"??"))
    # a late duplicate reply of an earlier exchange (a retransmission's answer, seen over the slow
    # emulated chip) may come first: the link drops those by their sequence number, and so does this
    frames = []
    for _ in range(50):
        frames += [f for f in link._decoder.feed(link.transport.read(0.05)) if f.seq == 200]
        if frames:
            break
    assert frames and frames[0].type == 0xFF and frames[0].seq == 200
    assert frames[0].payload[0] == 2  # UNKNOWN_MESSAGE
    assert adapter.status()["frames_bad"] >= 1


def test_duplicate_request_is_answered_from_memory_not_run_again(adapter):
    before = adapter.status()["duplicates"]
    message = MESSAGES["FIRMWARE_INFO"]
    wire = encode_frame(message.id, 77, pack_fields(message.request, {}))
    adapter.link.transport.write(wire + wire)
    data = b""
    deadline = time.monotonic() + 30.0  # the emulated firmware on a loaded machine can take seconds
    while data.count(b"\x00") < 2 and time.monotonic() < deadline:
        data += adapter.link.transport.read(0.05)
    replies = adapter.link._decoder.feed(data)
    assert [f.seq for f in replies] == [77, 77] and replies[0] == replies[1]
    assert adapter.status()["duplicates"] == before + 1


def test_repeated_reads_return_every_pass_of_the_cartridge_model(adapter, demo):
    p1 = 0xFD
    expected = bytes(demo.fetch(address, p1, 0) for address in range(0x400, 0x1000))
    reply = adapter.link.request(
        "CART_READ_REPEAT", p1=p1, p2=0, strobe=0, address=0x400, length=0xC00, count=5
    )
    assert reply["address"] == 0x400 and reply["data"] == expected * 5  # one 15 KB frame
    assert adapter.read_repeated(0x800, 0x400, 11, p1=p1) == [expected[0x400:0x800]] * 11


def test_repeated_read_longer_than_the_largest_payload_is_refused(adapter):
    fields = {"p1": 0xFF, "p2": 0, "strobe": 0, "address": 0x400, "length": 0xC00}
    too_many = adapter.info.max_payload // 0xC00 + 1
    for count in (0, too_many):
        with pytest.raises(DeviceError) as refused:
            adapter.link.request("CART_READ_REPEAT", **fields, count=count)
        assert refused.value.name == "BAD_ARGUMENT"


def test_pipelined_reads_come_back_in_order(adapter, demo):
    requests = [
        ("CART_READ", {"p1": 0xFC, "p2": 0, "strobe": 0, "address": 0x400 + 16 * i, "length": 16})
        for i in range(100)
    ]
    replies = adapter.link.transact(requests)
    expected = bytes(demo.fetch(a, 0xFC, 0) for a in range(0x400, 0x400 + 1600))
    assert b"".join(reply["data"] for reply in replies) == expected


def test_upload_is_verified_by_read_back_crc_and_emulation_toggles(adapter):
    image = demo_image("o2_rally", 16384)
    assert adapter.upload(image, "o2_rally") == zlib.crc32(image)
    state = adapter.emulation(True)
    assert (state["enabled"], state["mapper"], state["size"], state["crc32"]) == (
        1,
        "o2_rally",
        16384,
        zlib.crc32(image),
    )
    assert adapter.status()["emulating"] == 1
    with pytest.raises(DeviceError) as busy:
        adapter.upload(image, "o2_rally")
    assert busy.value.name == "BUSY"
    assert adapter.emulation(False)["enabled"] == 0


def test_latch_write_switches_banks_only_on_a_latch_cartridge(adapter, demo):
    before = adapter.read(0x400, 64, p1=0xFE)
    adapter.write(0x80, 1, p1=0xEE)
    expected = bytes(demo.fetch(a, 0xFE, 0) for a in range(0x400, 0x440))
    assert adapter.read(0x400, 64, p1=0xFE) == before == expected


@pytest.mark.slow
def test_capture_streams_numbered_chunks_with_frame_sync(adapter):
    adapter.capture_start(("FETCH", "MOVX_WRITE"))
    events = []
    deadline = time.monotonic() + 120  # the emulated firmware's console runs far slower than sim's
    while time.monotonic() < deadline:
        events += adapter.capture_events(0.05)
        if sum(1 for name, _ in events if name == "FRAME_SYNC") >= 2:
            break
    totals = adapter.capture_stop()
    events += adapter.capture_events(0.05)
    chunks = [values for name, values in events if name == "CAPTURE_CHUNK"]
    assert [c["chunk_seq"] for c in chunks] == list(range(len(chunks)))
    records = [r for c in chunks for r in capture_records(c)]
    assert records and all(r.kind in ("FETCH", "MOVX_WRITE") for r in records)
    assert any(r.kind == "FETCH" and r.address == 0x406 for r in records)
    assert [r.cycle for r in records] == sorted(r.cycle for r in records)
    assert totals["chunks"] >= len(chunks) and totals["dropped"] == 0
    assert any(name == "FRAME_SYNC" for name, _ in events)
