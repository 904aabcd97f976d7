"""The firmware's protocol core (host build, `hilbridge-fw-host --stdio`) against the simulated adapter:
the same requests give the same replies and error codes, duplicates are answered from memory, captures
carry the reference emulator's bus activity record for record, and random, truncated and wrong frames
into the sanitizer build give only ERROR replies and leave the next HELLO answered."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import zlib

import pytest
from conftest import BUS_TRACE_RECORD, PROJECT_ROOT, firmware_host_build, require_tool, write_bus_trace
from fuzz_frames import assert_fuzz_replies, fuzz_frames
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hilbridge.link.adapter import capture_records
from hilbridge.link.protocol import (
    ERROR_CODES,
    MESSAGES,
    PROTOCOL_VERSION,
    Frame,
    FrameDecoder,
    encode_frame,
    parse_device_frame,
)
from hilbridge.machine.cartridge import CART_P1_MASK, MAPPER_TYPES, load_cartridge
from hilbridge.sim.capture import CaptureStream
from hilbridge.sim.demo import DEMO_MAPPER, demo_image
from hilbridge.sim.device import SimulatedAdapter

FW_MAX_PAYLOAD = 32768  # CORE_MAX_PAYLOAD of firmware/src/core/adapter_core.h, checked by HELLO below
ERROR_TYPE = MESSAGES["ERROR"].reply_type


def wire(name: str, seq: int, **values) -> bytes:
    message = MESSAGES[name]
    return encode_frame(message.id, seq, message.request_layout.pack(values))


class FwHost:
    """hilbridge-fw-host --stdio, one request at a time."""

    def __init__(self, *arguments: str, program: str = "hilbridge-fw-host"):
        path = firmware_host_build() / program
        self.process = subprocess.Popen(
            [str(path), "--stdio", *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self.decoder = FrameDecoder()
        self.frames: list[Frame] = []

    def send(self, data: bytes) -> None:
        self.process.stdin.write(data)

    def next_frame(self) -> Frame:
        while not self.frames:
            data = os.read(self.process.stdout.fileno(), 65536)
            assert data, "the host program ended"
            self.frames += self.decoder.feed(data)
        return self.frames.pop(0)

    def request(self, data: bytes) -> Frame:
        self.send(data)
        return self.next_frame()

    def close(self) -> int:
        self.process.stdin.close()
        rest = self.process.stdout.read()
        self.frames += self.decoder.feed(rest)
        self.process.stdout.close()
        return self.process.wait(timeout=20)


def sim_answer(device: SimulatedAdapter, data: bytes) -> Frame:
    device.receive(data)
    (frame,) = FrameDecoder().feed(device.transmit())
    return frame


@pytest.fixture
def demo_file(tmp_path):
    path = tmp_path / "demo.bin"
    path.write_bytes(demo_image())
    return path


def test_hello_announces_protocol_capabilities_and_the_core_payload_limit(demo_file):
    host = FwHost("--cart", str(demo_file), "--type", DEMO_MAPPER, "--serial", "TEST-7")
    _, reply = parse_device_frame(host.request(wire("HELLO", 1, host_protocol=PROTOCOL_VERSION)))
    assert reply["protocol"] == PROTOCOL_VERSION and reply["serial"] == "TEST-7"
    assert reply["max_payload"] == FW_MAX_PAYLOAD and reply["capabilities"] == 0x3F
    refused = host.request(wire("HELLO", 2, host_protocol=PROTOCOL_VERSION + 1))
    assert refused.type == ERROR_TYPE and refused.payload[0] == ERROR_CODES["VERSION_MISMATCH"]
    assert host.close() == 0


# -- the same requests as the simulated adapter ---------------------------------------------------
byte = st.integers(0, 255)
address = st.one_of(st.integers(0, 0x110), st.integers(0x3F0, 0x1010), st.integers(0, 0xFFFF))
length = st.one_of(st.integers(0, 0x110), st.sampled_from([0x400, 0xC00, 0xC01]), st.integers(0, 0xFFFF))
sizes = sorted({s for m in MAPPER_TYPES.values() for s in m.sizes} | {0, 1, 16384, 16385, 100000})


def request(name: str, **fields) -> st.SearchStrategy:
    return st.tuples(st.just(name), st.fixed_dictionaries(fields))


requests = st.one_of(
    request("HELLO", host_protocol=st.sampled_from([PROTOCOL_VERSION, 0, 2, 4, 0xFFFF])),
    request("SET_PORTS", p1=byte, p2=byte),
    request(
        "CART_READ", p1=byte, p2=byte, strobe=st.sampled_from([0, 1, 1, 2]), address=address, length=length
    ),
    request(
        "CART_READ_REPEAT",
        p1=byte,
        p2=st.just(0),
        strobe=st.sampled_from([0, 1]),
        address=address,
        length=st.integers(0, 0xC00),
        count=st.integers(0, 12),
    ),
    request("CART_WRITE", p1=byte, p2=st.just(0), address=byte, value=byte),
    request("UPLOAD_BEGIN", mapper=st.integers(0, 5), size=st.sampled_from(sizes)),
    request(
        "UPLOAD_DATA",
        offset=st.one_of(st.integers(0, 16384), st.integers(0, 2**32 - 1)),
        data=st.binary(max_size=200),
    ),
    request("UPLOAD_END"),
    request("EMULATION", enable=st.sampled_from([0, 1, 1, 2])),
)


def compare_with_sim(folder, mapper: str, size: int, steps) -> None:
    """Send `steps` to the host build and to the simulated adapter, each holding the demo cartridge of
    `mapper`; the replies must agree (error codes; payloads of successful replies)."""
    image = demo_image(mapper, size)
    path = folder / "cart.bin"
    path.write_bytes(image)
    host = FwHost("--cart", str(path), "--type", mapper)
    device = SimulatedAdapter(load_cartridge(image, mapper))
    emulating = False
    for seq, (name, values) in enumerate(steps, start=1):
        data = wire(name, seq % 256, **values)
        ours = host.request(data)
        assert ours.seq == seq % 256
        if name == "UPLOAD_DATA" and emulating:
            # docs/protocol.md: uploading while emulation is on gives BUSY (the simulator refuses
            # only UPLOAD_BEGIN then, and writes the data into a buffer it does not serve).
            assert (ours.type, ours.payload[0]) == (ERROR_TYPE, ERROR_CODES["BUSY"])
            continue
        passes = values.get("count", 1)
        if name.startswith("CART_READ") and values["length"] * passes > FW_MAX_PAYLOAD - 2 and passes:
            assert (ours.type, ours.payload[0]) == (ERROR_TYPE, ERROR_CODES["BAD_ARGUMENT"]), values
            continue
        theirs = sim_answer(device, data)
        assert ours.type == theirs.type, (name, values, ours, theirs)
        if ours.type == ERROR_TYPE:
            assert ours.payload[0] == theirs.payload[0], (name, values, ours.payload, theirs.payload)
        elif name == "HELLO":
            assert ours.payload[:2] == theirs.payload[:2]
        else:
            assert ours.payload == theirs.payload, (name, values)
        if name == "EMULATION" and ours.type != ERROR_TYPE:
            emulating = bool(ours.payload[0])
    assert host.close() == 0


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    mapper_size=st.sampled_from([("o2_rom", 4096), ("o2_4in1", 4096), ("o2_rally", 16384)]),
    steps=st.lists(requests, min_size=1, max_size=25),
)
def test_every_request_is_answered_as_the_simulated_adapter_answers_it(tmp_path_factory, mapper_size, steps):
    compare_with_sim(tmp_path_factory.mktemp("cart"), *mapper_size, steps)


def _read(address: int, length: int, strobe: int = 0, p1: int = 0xFF, count: int | None = None):
    fields = {"p1": p1, "p2": 0, "strobe": strobe, "address": address, "length": length}
    return ("CART_READ", fields) if count is None else ("CART_READ_REPEAT", {**fields, "count": count})


# Every argument check on both sides of its boundary, in an order that also walks the upload states.
BOUNDARY_STEPS = [
    ("UPLOAD_DATA", {"offset": 0, "data": b"x"}),
    ("UPLOAD_END", {}),
    ("EMULATION", {"enable": 1}),
    *[_read(a, n) for a, n in [(0x3FF, 1), (0x400, 1), (0x400, 0), (0xFFF, 1), (0xFFF, 2), (0x400, 0xC00)]],
    *[_read(a, n, strobe=1) for a, n in [(0, 1), (0, 0x100), (0xFF, 1), (0xFF, 2), (0x100, 1), (0, 0)]],
    _read(0x400, 16, strobe=2),
    *[_read(0x400, 0xC00, count=c) for c in (0, 1, 10)],
    _read(0x400, 0xA, count=255),
    ("CART_WRITE", {"p1": 0xEE, "p2": 0, "address": 0x80, "value": 3}),
    _read(0x400, 0x40, p1=0xEE),
    *[("UPLOAD_BEGIN", {"mapper": m, "size": n}) for m, n in [(0, 2048), (5, 2048), (1, 0), (1, 16385)]],
    ("UPLOAD_BEGIN", {"mapper": 1, "size": 16384}),
    ("EMULATION", {"enable": 1}),  # 16 KB is no o2_rom size
    ("UPLOAD_BEGIN", {"mapper": 1, "size": 2048}),
    ("UPLOAD_DATA", {"offset": 2047, "data": b"ab"}),
    ("UPLOAD_DATA", {"offset": 2**32 - 1, "data": b"ab"}),
    ("UPLOAD_DATA", {"offset": 2046, "data": b"ab"}),
    ("UPLOAD_DATA", {"offset": 0, "data": bytes(range(256)) * 4}),
    ("UPLOAD_END", {}),
    ("EMULATION", {"enable": 1}),
    ("EMULATION", {"enable": 1}),
    ("UPLOAD_BEGIN", {"mapper": 1, "size": 2048}),
    ("UPLOAD_END", {}),
    ("EMULATION", {"enable": 0}),
    ("EMULATION", {"enable": 0}),
    ("UPLOAD_BEGIN", {"mapper": 3, "size": 8192}),
    ("EMULATION", {"enable": 1}),
    ("SET_PORTS", {"p1": 0x12, "p2": 0x34}),
    ("HELLO", {"host_protocol": PROTOCOL_VERSION - 1}),
]


@pytest.mark.parametrize(("mapper", "size"), [("o2_rom", 4096), ("o2_4in1", 4096), ("o2_rally", 16384)])
def test_every_argument_check_agrees_with_the_simulated_adapter_at_its_boundary(tmp_path, mapper, size):
    compare_with_sim(tmp_path, mapper, size, BOUNDARY_STEPS)


def test_empty_slot_gives_no_cartridge_but_uploads_and_emulation_still_work():
    host = FwHost()
    read = host.request(wire("CART_READ", 1, p1=0xFF, p2=0, strobe=0, address=0x400, length=4))
    assert (read.type, read.payload[0]) == (ERROR_TYPE, ERROR_CODES["NO_CARTRIDGE"])
    capture = host.request(wire("CAPTURE_START", 2, what=1))
    assert (capture.type, capture.payload[0]) == (ERROR_TYPE, ERROR_CODES["NO_CARTRIDGE"])
    image = demo_image("o2_ktaa", 6144)
    assert host.request(wire("UPLOAD_BEGIN", 3, mapper=4, size=len(image))).type == 0xA0
    assert host.request(wire("UPLOAD_DATA", 4, offset=0, data=image)).type == 0xA1
    _, end = parse_device_frame(host.request(wire("UPLOAD_END", 5)))
    assert end == {"size": 6144, "crc32": zlib.crc32(image)}
    _, state = parse_device_frame(host.request(wire("EMULATION", 6, enable=1)))
    assert state == {"enabled": 1, "mapper": 4, "size": 6144, "crc32": zlib.crc32(image)}
    assert host.request(wire("CAPTURE_START", 7, what=1)).type == 0xB0
    _, totals = parse_device_frame(host.request(wire("CAPTURE_STOP", 8)))
    assert totals == {"chunks": 0, "records": 0, "dropped": 0}  # no bus trace: nothing seen
    assert host.close() == 0


def test_repeated_write_is_answered_from_memory_and_not_executed_again(tmp_path):
    image = demo_image("o2_rally", 16384)
    (tmp_path / "r.bin").write_bytes(image)
    host = FwHost("--cart", str(tmp_path / "r.bin"), "--type", "o2_rally")
    model = load_cartridge(image, "o2_rally")
    latch = wire("CART_WRITE", 9, p1=0xEE, p2=0, address=0x80, value=2)
    first = host.request(latch)
    assert host.request(wire("CART_WRITE", 10, p1=0xEE, p2=0, address=0x80, value=5)).type == 0x92
    again = host.request(latch)  # a retransmission: must not set the latch back to 2
    assert again == first
    model.write(0x80, 5, 0xEE, 0)
    _, read = parse_device_frame(
        host.request(wire("CART_READ", 11, p1=0xEE, p2=0, strobe=0, address=0x400, length=16))
    )
    assert read["data"] == bytes(model.fetch(a, 0xEE, 0) for a in range(0x400, 0x410))
    _, status = parse_device_frame(host.request(wire("STATUS", 12)))
    assert status["duplicates"] == 1 and status["frames_in"] == 5
    host.request(wire("HELLO", 13, host_protocol=PROTOCOL_VERSION))  # a new session forgets
    assert host.request(latch).type == 0x92
    _, status = parse_device_frame(host.request(wire("STATUS", 14)))
    assert status["duplicates"] == 1
    assert host.close() == 0


def test_long_duplicate_read_is_read_again(demo_file):
    host = FwHost("--cart", str(demo_file), "--type", DEMO_MAPPER)
    read = wire("CART_READ_REPEAT", 40, p1=0xFF, p2=0, strobe=0, address=0x400, length=0xC00, count=3)
    first = host.request(read)
    assert host.request(read) == first and len(first.payload) == 2 + 3 * 0xC00
    _, status = parse_device_frame(host.request(wire("STATUS", 41)))
    assert status["duplicates"] == 1
    assert host.close() == 0


# -- captures -------------------------------------------------------------------------------------
def tokens(frames) -> list[tuple]:
    """Records and markers in stream order (chunk boundaries aside), for comparing two streams."""
    out = []
    for frame_type, payload in frames:
        message = MESSAGES[{0x60: "CAPTURE_CHUNK", 0x61: "RESET_DETECTED", 0x62: "FRAME_SYNC"}[frame_type]]
        values = message.response_layout.unpack(payload, message.name)
        if message.name == "CAPTURE_CHUNK":
            out += [
                (r.cycle, r.kind, r.address, r.value, r.p1 & CART_P1_MASK) for r in capture_records(values)
            ]
        else:
            out.append((message.name, *values.values()))
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("mapper", "size", "what"), [("o2_rom", 4096, 0x0F), ("o2_rally", 16384, 0x05)])
def test_capture_carries_the_reference_emulators_bus_activity(tmp_path, mapper, size, what):
    frames = 6
    image = demo_image(mapper, size)
    (tmp_path / "cart.bin").write_bytes(image)
    trace = write_bus_trace(image, mapper, tmp_path / "bus.trace", frames)
    host = FwHost("--cart", str(tmp_path / "cart.bin"), "--type", mapper, "--bus-trace", str(trace))
    assert host.request(wire("CAPTURE_START", 1, what=what)).type == 0xB0
    stream = CaptureStream(load_cartridge(image, mapper), what)
    expected = tokens(event for _ in range(frames) for event in stream.next_events())
    got, chunk_seqs = [], []
    while len(got) < len(expected):
        frame = host.next_frame()
        assert frame.seq == 0
        if frame.type == 0x60:
            chunk_seqs.append(int.from_bytes(frame.payload[:4], "little"))
        got += tokens([(frame.type, frame.payload)])
    assert got == expected
    assert chunk_seqs == list(range(len(chunk_seqs)))
    _, totals = parse_device_frame(host.request(wire("CAPTURE_STOP", 2)))
    assert totals == {"chunks": len(chunk_seqs), "records": stream.records, "dropped": 0}
    assert host.close() == 0


U32 = 2**32
access_gaps = st.one_of(
    st.integers(0, 3), st.integers(0, 511), st.integers(512, 70000), st.integers(0, U32 - 1)
)
trace_accesses = st.lists(
    st.tuples(
        access_gaps,
        st.integers(0, 2),
        st.integers(0x407, 0xFFF),  # not 0400h/0406h: their markers are tested above
        st.integers(0, 255),
        st.sampled_from([0xFF, 0xEC, 0x13, 0x12, 0x01, 0x00, 0x10, 0x7F]),
    ),
    min_size=1,
    max_size=700,  # several chunks of 253 words
)


def expected_capture(accesses: list[tuple[int, int, int, int, int]], what: int) -> list[tuple]:
    """What docs/protocol.md §4.1 puts in the stream for these accesses: a P1 record where the slot's
    P1 bits change (if P1 is captured), each access of a captured kind, every record's P1 being the
    slot's bits."""
    out, told = [], CART_P1_MASK
    for cycle, kind, address, value, p1 in accesses:
        slot = p1 & CART_P1_MASK
        if slot != told and what >> 3 & 1:
            out.append((cycle, "P1", 0, slot, slot))
            told = slot
        if what >> kind & 1:
            out.append((cycle, ("FETCH", "MOVX_READ", "MOVX_WRITE")[kind], address, value, slot))
            told = slot
    return out


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drafts=trace_accesses, start=st.integers(0, U32 - 1), what=st.integers(1, 15))
def test_the_firmwares_record_words_decode_to_the_accesses_it_saw(tmp_path_factory, drafts, start, what):
    """The C writer (adapter_core.c's record path, frame_writer_put_word) against the host's decoder:
    random accesses, gaps of any length (TIME words, u32 wrap-around), P1 changes with and without
    P1 records (P1_LATCH words), chunks closed as they fill."""
    folder = tmp_path_factory.mktemp("trace")
    accesses, cycle = [], start
    for gap, kind, address, value, p1 in drafts:
        cycle = (cycle + gap) % U32
        accesses.append((cycle, kind, address, value, p1))
    trace = folder / "bus.trace"
    trace.write_bytes(b"".join(BUS_TRACE_RECORD.pack(*access) for access in accesses))
    (folder / "cart.bin").write_bytes(demo_image())
    host = FwHost("--cart", str(folder / "cart.bin"), "--type", DEMO_MAPPER, "--bus-trace", str(trace))
    assert host.request(wire("CAPTURE_START", 1, what=what)).type == 0xB0
    expected = expected_capture(accesses, what)
    got: list[tuple] = []
    while len(got) < len(expected):
        frame = host.next_frame()
        assert frame.type == MESSAGES["CAPTURE_CHUNK"].id
        _, values = parse_device_frame(frame)
        got += [(r.cycle, r.kind, r.address, r.value, r.p1) for r in capture_records(values)]
    assert got == expected
    _, totals = parse_device_frame(host.request(wire("CAPTURE_STOP", 2)))
    assert totals["records"] == len(expected) and totals["dropped"] == 0
    assert host.close() == 0


# -- fuzz -----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_fuzzed_frames_get_only_error_replies_and_the_next_hello_is_answered(demo_file):
    rng = random.Random(10)
    data, expected = fuzz_frames(rng, 10_000)
    data += wire("HELLO", 77, host_protocol=PROTOCOL_VERSION)
    program = firmware_host_build() / "hilbridge-fw-host-asan"
    result = subprocess.run(
        [str(program), "--stdio", "--cart", str(demo_file), "--type", DEMO_MAPPER],
        input=data,
        capture_output=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-3000:]
    decoder = FrameDecoder()
    replies = [f for f in decoder.feed(result.stdout) if f.type & 0x80]  # not events
    assert decoder.bad == 0
    assert_fuzz_replies(replies, expected)


@pytest.mark.slow
def test_core_builds_for_the_rp2040_without_a_c_library(tmp_path):
    require_tool("arm-none-eabi-gcc")
    command = ["make", "-s", "-C", str(PROJECT_ROOT / "firmware"), "freestanding-check"]
    result = subprocess.run(
        [*command, f"BUILD_DIR={tmp_path}", f"PYTHON={sys.executable}"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
