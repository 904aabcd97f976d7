"""The .hbcap file: round trips, damage read up to the last good chunk, refusals."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.capture import file as hbcap
from hilbridge.capture.file import CaptureReader, CaptureWriter, write_capture
from hilbridge.capture.stream import CaptureHeader, FrameSync, Gap, ResetDetected
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import CaptureRecord

HEADER = CaptureHeader(source="sim", cart_sha1="ab" * 20, mapper="o2_rom", region="pal", inputs="3 press A\n")
KINDS = ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1")

records = st.builds(
    CaptureRecord,
    cycle=st.integers(0, 2**64 - 1),
    kind=st.sampled_from(KINDS),
    address=st.integers(0, 0xFFFF),
    value=st.integers(0, 255),
    p1=st.integers(0, 255),
)
items = st.one_of(
    records,
    st.builds(ResetDetected, cycle=st.integers(0, 2**64 - 1)),
    st.builds(FrameSync, frame=st.integers(0, 2**32 - 1), cycle=st.integers(0, 2**64 - 1)),
    st.builds(
        Gap, reason=st.text(max_size=40), chunks=st.integers(0, 2**32 - 1), records=st.integers(0, 2**32 - 1)
    ),
)


def read_all(path, **options):
    with CaptureReader(path, **options) as reader:
        return reader.header, list(reader.items()), reader.warnings


@settings(max_examples=60, deadline=None)
@given(st.lists(items, max_size=300), st.integers(64, 4096))
def test_round_trip_of_any_item_stream(tmp_path_factory, stream, chunk_target):
    path = tmp_path_factory.mktemp("cap") / "run.hbcap"
    original = hbcap.CHUNK_TARGET
    hbcap.CHUNK_TARGET = chunk_target  # small chunks: many chunk boundaries and cycle_high changes
    try:
        write_capture(path, HEADER, stream)
    finally:
        hbcap.CHUNK_TARGET = original
    header, back, warnings = read_all(path)
    assert header == HEADER
    assert back == stream
    assert warnings == []


def small_capture(path, count=40):
    stream = [ResetDetected(2)]
    for index in range(count):
        stream.append(CaptureRecord(1000 + 3 * index, KINDS[index % 4], 0x400 + index, index, 0xFF))
        if index % 10 == 9:
            stream.append(FrameSync(index // 10, 1001 + 3 * index))
    original = hbcap.CHUNK_TARGET
    hbcap.CHUNK_TARGET = 60  # several chunks in a small file
    try:
        write_capture(path, HEADER, stream)
    finally:
        hbcap.CHUNK_TARGET = original
    return stream


def header_size(data: bytes) -> int:
    _, _, length = struct.unpack_from("<8sHI", data)
    return 14 + length + 4


def test_truncated_at_every_offset_reads_a_prefix_then_a_gap(tmp_path):
    path = tmp_path / "run.hbcap"
    stream = small_capture(path)
    data = path.read_bytes()
    first_chunk = header_size(data)
    cut = tmp_path / "cut.hbcap"
    for size in range(len(data)):
        cut.write_bytes(data[:size])
        if size < first_chunk:
            with pytest.raises(HilbridgeError):
                read_all(cut)
            continue
        _, back, warnings = read_all(cut)
        assert isinstance(back[-1], Gap), size
        assert back[:-1] == stream[: len(back) - 1], size
        assert len(warnings) == 1, size
    _, back, warnings = read_all(path)
    assert back == stream and warnings == []


def test_bit_flip_after_the_header_stops_at_the_last_good_chunk(tmp_path):
    path = tmp_path / "run.hbcap"
    stream = small_capture(path)
    data = path.read_bytes()
    flipped = tmp_path / "flipped.hbcap"
    for offset in range(header_size(data), len(data)):
        for bit in (0, 7):
            damaged = bytearray(data)
            damaged[offset] ^= 1 << bit
            flipped.write_bytes(damaged)
            _, back, warnings = read_all(flipped)
            assert isinstance(back[-1], Gap) and "damaged" in back[-1].reason, offset
            assert back[:-1] == stream[: len(back) - 1]
            assert len(warnings) == 1 and "last good chunk" in warnings[0]


def test_bit_flip_in_the_header_is_refused(tmp_path):
    path = tmp_path / "run.hbcap"
    small_capture(path)
    data = bytearray(path.read_bytes())
    data[20] ^= 0x04
    path.write_bytes(data)
    with pytest.raises(HilbridgeError, match="header is damaged"):
        read_all(path)


def test_unknown_version_is_refused_with_the_reason(tmp_path):
    path = tmp_path / "run.hbcap"
    small_capture(path)
    data = bytearray(path.read_bytes())
    struct.pack_into("<H", data, 8, 9)
    path.write_bytes(data)
    with pytest.raises(HilbridgeError, match="version 9 is not supported; this hilbridge reads version 1"):
        read_all(path)


def test_not_a_capture_is_refused(tmp_path):
    path = tmp_path / "run.hbcap"
    path.write_bytes(b"PK\x03\x04 a zip file")
    with pytest.raises(HilbridgeError, match="not a hilbridge capture"):
        read_all(path)


def test_capture_of_another_cartridge_is_refused(tmp_path):
    path = tmp_path / "run.hbcap"
    small_capture(path)
    assert read_all(path, expected_sha1="AB" * 20)[0] == HEADER  # case does not matter
    with pytest.raises(HilbridgeError, match="another cartridge"):
        read_all(path, expected_sha1="cd" * 20)
    sniffed = tmp_path / "sniffed.hbcap"
    write_capture(sniffed, CaptureHeader(source="adapter"), [])
    _, _, warnings = read_all(sniffed, expected_sha1="cd" * 20)
    assert "SHA-1 is unchecked" in warnings[0]


def test_writer_refuses_to_overwrite_and_needs_the_directory(tmp_path):
    path = tmp_path / "run.hbcap"
    path.write_bytes(b"keep me")
    with pytest.raises(HilbridgeError, match="exists"):
        CaptureWriter(path, HEADER)
    assert path.read_bytes() == b"keep me"
    with pytest.raises(HilbridgeError, match="directory does not exist"):
        CaptureWriter(tmp_path / "missing" / "run.hbcap", HEADER)


def test_an_interrupted_capture_leaves_a_readable_partial_file_only(tmp_path):
    path = tmp_path / "run.hbcap"
    original = hbcap.CHUNK_TARGET
    hbcap.CHUNK_TARGET = 60
    try:
        with pytest.raises(KeyboardInterrupt), CaptureWriter(path, HEADER) as writer:
            for index in range(50):
                writer.write(CaptureRecord(index, "FETCH", 0x400, 0, 0xFF))
            raise KeyboardInterrupt
    finally:
        hbcap.CHUNK_TARGET = original
    assert not path.exists()
    _, back, warnings = read_all(tmp_path / "run.hbcap.part")
    assert back[:-1] == [CaptureRecord(index, "FETCH", 0x400, 0, 0xFF) for index in range(50)]
    assert isinstance(back[-1], Gap) and "interrupted" in back[-1].reason and warnings
    with pytest.raises(HilbridgeError, match="partial file is in the way"):
        CaptureWriter(path, HEADER)  # the partial capture is not thrown away unasked
    CaptureWriter(path, HEADER, overwrite=True).finish()
    assert path.exists() and not (tmp_path / "run.hbcap.part").exists()


def test_writer_memory_does_not_grow_with_the_capture(tmp_path):
    with CaptureWriter(tmp_path / "run.hbcap", HEADER) as writer:
        for index in range(200_000):
            writer.write(CaptureRecord(index, "FETCH", 0x400, 0, 0xFF))
            assert len(writer._payload) + 9 * len(writer._run) <= hbcap.CHUNK_TARGET + 16
    assert writer.chunks > 50
