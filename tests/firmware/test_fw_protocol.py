"""The firmware's generated protocol tables, CRC, COBS, frames and payload layouts against the host's
(hilbridge.link.protocol): one source of truth, checked from the C side through `hb-core-test`."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from cobs import cobs
from conftest import PROJECT_ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hilbridge.link.capture_codec import FIELDS, WORD_SIZE
from hilbridge.link.errors import ProtocolError
from hilbridge.link.protocol import (
    CODES,
    CRC_RESIDUE,
    MAX_PAYLOAD,
    MESSAGES,
    PROTOCOL_VERSION,
    FrameDecoder,
    encode_frame,
)
from hilbridge.machine.cartridge import MAPPER_TYPES

KIND_NUMBERS = {"command": 0, "event": 1, "reply": 2}


def _generator_module():
    """firmware/tools/gen_protocol.py as a module (it is a stdlib-only script, not a package)."""
    spec = importlib.util.spec_from_file_location(
        "gen_protocol", PROJECT_ROOT / "firmware/tools/gen_protocol.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


C_RULES = _generator_module().RULES  # the mapper rules cart.c implements, in its enums' order
SETTINGS = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
PER_MESSAGE = settings(SETTINGS, max_examples=25)  # 34 layouts: the fixed fields vary little


def hexed(data: bytes) -> str:
    return data.hex() if data else "-"


def unhexed(text: str) -> bytes:
    return b"" if text == "-" else bytes.fromhex(text)


def fields_text(fields) -> str:
    return " ".join(f"{f.name}:{f.format}" for f in fields)


@pytest.fixture(scope="module")
def tables(core_test):
    core_test.process.stdin.write("tables\n")
    core_test.process.stdin.flush()
    rows = []
    while (line := core_test.process.stdout.readline().rstrip("\n")) != "END":
        rows.append(line.split("\t"))
    return rows


def test_generated_message_table_equals_the_python_one(tables):
    c_messages = {row[1]: row[2:] for row in tables if row[0] == "MESSAGE"}
    python = {
        m.name: [str(m.id), str(KIND_NUMBERS[m.kind]), fields_text(m.request), fields_text(m.response)]
        for m in MESSAGES.values()
    }
    assert c_messages == python


def test_generated_codes_equal_the_python_ones(tables):
    c_codes = [(row[1], row[2], int(row[3])) for row in tables if row[0] == "CODE"]
    assert c_codes == [(c.table, c.name, c.value) for c in CODES]


def test_generated_mapper_table_equals_the_registry(tables):
    ids = {c.name: c.value for c in CODES if c.table == "mapper"}
    c_mappers = {row[1]: row[2:] for row in tables if row[0] == "MAPPER"}
    python = {
        m.name: [
            str(ids.get(m.name, 0)),
            ",".join(map(str, m.sizes)),
            str(m.bank_size),
            str(C_RULES["bank_select"].index(m.bank_select)),
            str(C_RULES["high_window"].index(m.high_window)),
            str(m.program_offset),
            str(C_RULES["wrap"].index(m.wrap)),
            str(C_RULES["data_area"].index(m.data_area)),
        ]
        for m in MAPPER_TYPES.values()
    }
    assert c_mappers == python


def test_generated_constants_and_capture_word_layout(tables):
    constants = {row[1]: int(row[2]) for row in tables if row[0] == "CONST"}
    assert constants == {
        "PROTOCOL_VERSION": PROTOCOL_VERSION,
        "MAX_PAYLOAD": MAX_PAYLOAD,
        "CRC_RESIDUE": CRC_RESIDUE,
        "CAPTURE_WORD_SIZE": WORD_SIZE,
    }
    layout = {row[1]: (int(row[2]), int(row[3])) for row in tables if row[0] == "WORD"}
    assert layout == {name: (field.lsb, field.bits) for name, field in FIELDS.items()}
    record_fields = [layout[name] for name in ("tag", "delta", "address", "value")]
    covered = sorted(bit for lsb, bits in record_fields for bit in range(lsb, lsb + bits))
    assert covered == list(range(32))  # a record word's fields tile it, none overlapping


def test_crc_of_the_standard_check_string(core_test):
    # CRC-32/ISO-HDLC check value from the CRC catalogue: "123456789" -> CBF43926.
    assert core_test.ask("crc", b"123456789".hex()) == "cbf43926"
    assert core_test.ask("crc", "-") == "00000000"


@SETTINGS
@given(data=st.binary(max_size=3000))
def test_crc_equals_zlib(core_test, data):
    assert int(core_test.ask("crc", hexed(data)), 16) == zlib.crc32(data)


# The examples of the COBS description (Cheshire and Baker's encoding, as on Wikipedia).
COBS_VECTORS = [
    ("00", "0101"),
    ("0000", "010101"),
    ("11220033", "0311220233"),
    ("11223344", "0511223344"),
    ("11000000", "0211010101"),
    (bytes(range(1, 255)).hex(), "ff" + bytes(range(1, 255)).hex()),
    ("00" + bytes(range(1, 255)).hex(), "01ff" + bytes(range(1, 255)).hex()),
    (bytes(range(1, 256)).hex(), "ff" + bytes(range(1, 255)).hex() + "02ff"),
    (bytes(range(2, 256)).hex() + "00", "ff" + bytes(range(2, 256)).hex() + "0101"),
    (bytes(range(3, 256)).hex() + "0001", "fe" + bytes(range(3, 256)).hex() + "0201"),
]


@pytest.mark.parametrize(("raw", "encoded"), COBS_VECTORS)
def test_cobs_known_vectors(core_test, raw, encoded):
    assert core_test.ask("cobs", raw) == encoded


zero_rich = st.lists(st.sampled_from([0, 0, 1, 0xFF, 7]) | st.integers(0, 255), max_size=1200).map(bytes)


@SETTINGS
@given(data=zero_rich | st.binary(max_size=600))
def test_cobs_equals_the_python_library(core_test, data):
    assert core_test.ask("cobs", hexed(data)) == cobs.encode(data).hex()


@SETTINGS
@given(frame_type=st.integers(0, 255), seq=st.integers(0, 255), payload=zero_rich)
def test_frames_encode_as_python_encodes_them_and_decode_back(core_test, frame_type, seq, payload):
    wire = encode_frame(frame_type, seq, payload)
    assert core_test.ask("encode", frame_type, seq, hexed(payload)) == wire.hex()
    assert core_test.ask("decode", wire.hex()) == f"READY {frame_type} {seq} {hexed(payload)} PENDING 0"


# Runs of nonzero bytes about one COBS block long, so that blocks fill up before, inside and after a
# 4-byte record word.
block_runs = st.lists(
    st.integers(240, 270).map(lambda n: bytes((i % 255) + 1 for i in range(n))) | st.binary(max_size=12),
    max_size=6,
).map(b"".join)


@SETTINGS
@given(
    frame_type=st.integers(0, 255),
    seq=st.integers(0, 255),
    payload=zero_rich | block_runs,
    pieces=st.text(alphabet="rb", max_size=300),
)
def test_the_one_pass_frame_writer_writes_what_python_encodes(core_test, frame_type, seq, payload, pieces):
    """frame_writer (the capture stream's: COBS and CRC as the bytes come, 4-byte record words at once)
    puts the same bytes on the wire as the host's encoder."""
    wire = encode_frame(frame_type, seq, payload)
    assert core_test.ask("writer", frame_type, seq, hexed(payload), pieces or "-") == wire.hex()


def test_the_largest_frame_round_trips(core_test):
    payload = bytes(range(256)) * 255 + bytes(255)
    assert len(payload) == MAX_PAYLOAD
    wire = encode_frame(0x91, 3, payload)
    assert core_test.ask("encode", 0x91, 3, payload.hex()) == wire.hex()
    assert core_test.ask("decode", wire.hex()).startswith("READY 145 3 ")


def _python_decode(stream: bytes) -> list[str]:
    """What FrameDecoder makes of a stream, in the words of hb-core-test's decode answer."""
    decoder = FrameDecoder()
    results = []
    for piece in stream.split(b"\x00")[:-1]:
        bad = decoder.bad
        frames = decoder.feed(piece + b"\x00")
        results += [f"READY {f.type} {f.seq} {hexed(f.payload)}" for f in frames]
        if decoder.bad > bad:
            results.append("BAD")
        elif not frames:
            results.append("EMPTY")
    return results


segment = st.one_of(
    st.builds(encode_frame, st.integers(0, 255), st.integers(0, 255), st.binary(max_size=300)),
    st.builds(
        lambda wire, cut: wire[: max(1, len(wire) * cut // 100)] + b"\x00",
        st.builds(encode_frame, st.integers(0, 255), st.integers(0, 255), st.binary(max_size=80)),
        st.integers(0, 99),
    ),  # truncated
    st.builds(
        lambda wire, at, flip: (
            wire[: at % (len(wire) - 1)]
            + bytes([wire[at % (len(wire) - 1)] ^ flip or 1])
            + wire[at % (len(wire) - 1) + 1 :]
        ),
        st.builds(encode_frame, st.integers(0, 255), st.integers(0, 255), st.binary(max_size=80)),
        st.integers(0, 1000),
        st.integers(1, 255),
    ),  # one byte changed
    st.binary(max_size=40).map(lambda b: b + b"\x00"),  # garbage
)


@SETTINGS
@given(segments=st.lists(segment, min_size=1, max_size=12))
def test_decoder_keeps_and_drops_the_frames_python_keeps_and_drops(core_test, segments):
    stream = b"".join(segments)
    c_answer = core_test.ask("decode", stream.hex()).split(" PENDING")[0]
    c_results = []
    for item in (
        c_answer.replace("READY", "\nREADY").replace("BAD", "\nBAD").replace("EMPTY", "\nEMPTY").split("\n")
    ):
        if item.strip():
            c_results.append(item.strip())
    assert c_results == _python_decode(stream)


def _values_strategy(fields):
    fixed = {
        f.name: st.integers(0, (1 << (8 * {"B": 1, "H": 2, "I": 4}[f.format])) - 1)
        for f in fields
        if not f.is_tail
    }
    tail = [f for f in fields if f.is_tail]
    if tail:
        fixed[tail[0].name] = st.binary(max_size=300) if tail[0].format == "*" else st.text(max_size=60)
    return st.fixed_dictionaries(fixed)


LAYOUTS = [(m, direction) for m in MESSAGES.values() for direction in ("request", "response")]


@pytest.mark.parametrize(("message", "direction"), LAYOUTS, ids=[f"{m.name}-{d}" for m, d in LAYOUTS])
@PER_MESSAGE
@given(data=st.data())
def test_every_message_packs_and_unpacks_as_the_python_side(core_test, message, direction, data):
    fields = message.request if direction == "request" else message.response
    layout = message.request_layout if direction == "request" else message.response_layout
    values = data.draw(_values_strategy(fields))
    payload = layout.pack(values)
    numbers = ",".join(str(values[name]) for name in layout.names) or "-"
    tail = b""
    if layout.tail is not None:
        value = values[layout.tail.name]
        tail = value if isinstance(value, bytes) else value.encode("utf-8")
    side = 0 if direction == "request" else 1
    assert core_test.ask("pack", message.id, side, numbers, hexed(tail)) == hexed(payload)
    assert core_test.ask("unpack", message.id, side, hexed(payload)) == f"OK {numbers} {hexed(tail)}"
    # Lengths the Python side refuses, the C side refuses the same way.
    for wrong in (payload[:-1], payload + b"\x00"):
        try:
            layout.unpack(wrong, message.name)
            expected_ok = True
        except ProtocolError as error:
            expected_ok = False
            expected = "SHORT" if "short" in error.message else "LONG"
        answer = core_test.ask("unpack", message.id, side, hexed(wrong))
        if expected_ok:
            assert answer.startswith("OK ")
        else:
            assert answer == expected


# The byte functions of firmware/src/core/mem.c (the RP2040 build's memcpy, memmove, memset and memcmp)
# move aligned words between a byte head and tail: every alignment of either pointer (offsets 0-7) and
# every length up to 80 bytes (heads, tails, two and a half turns of the word loops) against the C
# library of the host build.
MEM_OFFSETS, MEM_LENGTHS = 8, 80
MEM_FILLS = 5  # memset: 00h, 5Ah, FFh, an int above 255 and -1 (memset stores the value's low byte)


def mem_cases(function: str) -> int:
    lengths = range(MEM_LENGTHS + 1)
    if function == "memset":
        return MEM_OFFSETS * len(lengths) * MEM_FILLS
    if function == "memcmp":  # the first difference at each position, or none
        return MEM_OFFSETS * MEM_OFFSETS * sum(n + 1 for n in lengths)
    return MEM_OFFSETS * MEM_OFFSETS * len(lengths)


@pytest.mark.parametrize("function", ["memcpy", "memmove", "memset", "memcmp"])
def test_the_freestanding_byte_functions_do_what_the_c_librarys_do(core_test, function):
    answer = core_test.ask("memsweep", function, MEM_OFFSETS, MEM_LENGTHS)
    assert answer == f"CASES {mem_cases(function)} MISMATCHES 0"


GENERATOR_INPUTS = [
    "hilbridge/link/messages.tsv",
    "hilbridge/link/codes.tsv",
    "hilbridge/link/capture_record.tsv",
    "hilbridge/link/protocol.py",
    "hilbridge/machine/mappers.tsv",
    "hilbridge/machine/mappers.py",
    "hilbridge/machine/__init__.py",
    "hilbridge/errors.py",
    "hilbridge/machine/cartridge.py",
    "hilbridge/__init__.py",
]


def _generate(root: Path, out: Path) -> subprocess.CompletedProcess:
    script = PROJECT_ROOT / "firmware" / "tools" / "gen_protocol.py"
    return subprocess.run([sys.executable, str(script), str(root), str(out)], capture_output=True, text=True)


def test_generator_refuses_a_table_it_cannot_generate_from(tmp_path):
    for name in GENERATOR_INPUTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT_ROOT / name, tmp_path / name)
    assert _generate(tmp_path, tmp_path / "ok").returncode == 0
    messages = tmp_path / "hilbridge/link/messages.tsv"
    messages.write_text(messages.read_text().replace("host_protocol:H", "host_protocol:Q"))
    result = _generate(tmp_path, tmp_path / "bad")
    assert (
        result.returncode == 1 and "messages.tsv: HELLO: bad field format 'host_protocol:Q'" in result.stderr
    )
    assert not (tmp_path / "bad").exists()


EXTRA_MAPPER = (
    "o2_big32\t5\t-\t32768\tno\t32768\tlatch_p10\t2048\tmirror_400\t0\tmask\tnone\t-\ta 32 KB latch cart\n"
)


def _tree_with_registry_row(tmp_path: Path, row: str) -> Path:
    for name in GENERATOR_INPUTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT_ROOT / name, tmp_path / name)
    registry = tmp_path / "hilbridge/machine/mappers.tsv"
    registry.write_text(registry.read_text() + row)
    return tmp_path


def test_a_registry_row_reaches_the_generated_mapper_table_and_codes(tmp_path):
    """A mapper added by one row of mappers.tsv (with rules cart.c has) is in the C table and codes."""
    root = _tree_with_registry_row(tmp_path, EXTRA_MAPPER)
    assert _generate(root, root / "gen").returncode == 0
    header = (root / "gen/protocol_gen.h").read_text()
    table = (root / "gen/protocol_gen.c").read_text()
    assert "#define HB_MAPPER_O2_BIG32 5u" in header
    assert f"#define HB_MAPPER_TYPE_COUNT {len(MAPPER_TYPES) + 1}u" in header
    assert "#define HB_MAX_IMAGE_SIZE 32768u" in header
    assert '{"o2_big32", 5u, 1u, {32768u}, 2048u, HB_BANK_SELECT_LATCH_P10,' in table
    assert '{"mapper", "o2_big32", 5u},' in table


def test_the_generator_refuses_an_uploadable_mapper_whose_rule_the_firmware_lacks(tmp_path):
    row = EXTRA_MAPPER.replace("latch_p10", "latch_any")
    root = _tree_with_registry_row(tmp_path, row)
    result = _generate(root, root / "gen")
    assert result.returncode == 1
    assert "o2_big32: protocol id 5, but cart.c lacks latch_any" in result.stderr
    without_id = _tree_with_registry_row(tmp_path / "no_id", row.replace("\t5\t", "\t-\t", 1))
    assert _generate(without_id, without_id / "gen").returncode == 0
    assert "o2_big32" not in (without_id / "gen/protocol_gen.c").read_text()


def test_the_generator_refuses_a_registry_its_loader_refuses(tmp_path):
    root = _tree_with_registry_row(tmp_path, EXTRA_MAPPER.replace("\t5\t", "\t1\t", 1))
    result = _generate(root, root / "gen")
    assert result.returncode == 1
    assert "mappers.tsv: error: protocol_id appears more than once: 1" in result.stderr
