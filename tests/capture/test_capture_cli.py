"""`hilbridge capture`, `capture show`, `capture export`: refusals, and exports that other tools read."""

from __future__ import annotations

import csv
import itertools
import json
import subprocess

import pytest
from click.testing import CliRunner
from conftest import require_tool
from vcdvcd import VCDVCD

from hilbridge.capture.file import CaptureReader, write_capture
from hilbridge.capture.stream import CaptureHeader, FrameSync, Gap, ResetDetected
from hilbridge.cli.main import cli
from hilbridge.link.adapter import CaptureRecord

HEADER = CaptureHeader(source="adapter", cart_sha1="12" * 20, mapper="o2_rom", region="ntsc")
ITEMS = [
    CaptureRecord(2, "FETCH", 0x400, 0x84, 0xFF),
    ResetDetected(2),
    CaptureRecord(2, "FETCH", 0x401, 0x0C, 0xFF),
    CaptureRecord(4, "FETCH", 0x40C, 0x99, 0xFF),
    CaptureRecord(4, "FETCH", 0x40D, 0xB7, 0xFF),
    CaptureRecord(6, "P1", 0, 0x13, 0xB7),
    CaptureRecord(6, "FETCH", 0x40E, 0x23, 0xB7),
    CaptureRecord(6, "FETCH", 0x40F, 0x5A, 0xB7),
    CaptureRecord(9, "MOVX_WRITE", 0xA0, 0x5A, 0xB7),
    CaptureRecord(9, "P1", 0, 0x02, 0xA6),
    CaptureRecord(9, "FETCH", 0xBFE, 0x81, 0xA6),
    CaptureRecord(11, "MOVX_READ", 0x3C, 0xE1, 0xA6),
    FrameSync(0, 12),
    Gap("2 capture chunk(s) lost on the link", chunks=2),
    CaptureRecord(4000, "FETCH", 0x406, 0x44, 0xA6),
    CaptureRecord(4002, "MOVX_WRITE", 0x7F, 0x00, 0xA6),
]
STROBE_EDGES = {"FETCH": ("PSEN_n", "0"), "MOVX_WRITE": ("WR_n", "0"), "MOVX_READ": ("E", "1")}


def run(*arguments: str):
    return CliRunner().invoke(cli, list(arguments))


@pytest.fixture
def capture_file(tmp_path):
    path = tmp_path / "run.hbcap"
    write_capture(path, HEADER, ITEMS)
    return path


def test_capture_show_and_refusals(tmp_path):
    out = tmp_path / "run.hbcap"
    result = run("capture", "-d", "sim", "-o", str(out), "--frames", "2")
    assert result.exit_code == 0, result.output
    assert f"wrote {out}:" in result.output and "0 gaps" in result.output
    before = out.read_bytes()
    result = run("capture", "-d", "sim", "-o", str(out), "--frames", "1")
    assert result.exit_code == 2 and "output exists (use --force" in result.output
    assert out.read_bytes() == before
    assert run("capture", "-d", "sim", "-o", str(out), "--frames", "1", "--force").exit_code == 0
    assert out.read_bytes() != before
    result = run("capture", "-d", "sim", "-o", str(tmp_path / "no" / "run.hbcap"), "--frames", "1")
    assert result.exit_code == 2 and "output directory does not exist" in result.output
    result = run("capture", "-d", str(out), "-o", str(out), "--force")
    assert result.exit_code == 2 and "the output is one of the inputs" in result.output
    result = run("capture", "-d", "sim", "-o", str(out), "--frames", "1", "--seconds", "1", "--force")
    assert result.exit_code == 2 and "not both" in result.output
    assert not list(tmp_path.glob("*.part"))
    shown = run("capture", "show", str(out))
    assert shown.exit_code == 0
    assert "source: sim" in shown.output and "gaps: 0" in shown.output
    assert "first records (cycle kind address value p1):" in shown.output


def test_capture_with_a_movie_records_it_in_the_header(tmp_path):
    movie = tmp_path / "keys.txt"
    movie.write_text("0 press A\n")
    out = tmp_path / "run.hbcap"
    assert run("capture", "-d", "sim", "-o", str(out), "--frames", "1", "--input", str(movie)).exit_code == 0
    with CaptureReader(out) as reader:
        assert reader.header.inputs == "0 press A\n"
    movie.write_text("0 press Ä\n")
    result = run("capture", "-d", "sim", "-o", str(out), "--frames", "1", "--input", str(movie), "--force")
    assert result.exit_code == 2 and f"{movie}:1:9: error: unknown key" in result.output


def test_show_lists_counts_and_gaps(capture_file):
    result = run("capture", "show", str(capture_file), "--records", "3")
    assert result.exit_code == 0, result.output
    assert "records: 13 (FETCH 8, MOVX_READ 1, MOVX_WRITE 2, P1 2)" in result.output
    assert "frame syncs: 1, resets: 1, gaps: 1" in result.output
    assert "gap: 2 capture chunk(s) lost on the link (chunks 2, records 0)" in result.output
    assert "         4 FETCH      40C 99 FF" in result.output


def test_show_of_a_damaged_file_warns(capture_file):
    data = capture_file.read_bytes()
    capture_file.write_bytes(data[:-3])
    result = run("capture", "show", str(capture_file))
    assert result.exit_code == 0
    assert "warning:" in result.output and "gaps: 2" in result.output  # the one in the file, the damage


def test_export_csv_and_json_hold_every_item(capture_file, tmp_path):
    csv_path, json_path = tmp_path / "run.csv", tmp_path / "run.json"
    result = run("capture", "export", str(capture_file), "--csv", str(csv_path), "--json", str(json_path))
    assert result.exit_code == 0, result.output
    with csv_path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(ITEMS)
    assert rows[8] == {
        "item": "record", "cycle": "9", "kind": "MOVX_WRITE", "address": "0A0", "value": "5A", "p1": "B7",
        "frame": "", "chunks": "", "records": "", "reason": "",
    }  # fmt: skip
    assert rows[13]["item"] == "gap" and rows[13]["chunks"] == "2"
    document = json.loads(json_path.read_text())
    assert document["header"]["cart_sha1"] == "12" * 20
    assert document["items"][12] == {"item": "frame_sync", "frame": 0, "cycle": 12}
    assert len(document["items"]) == len(ITEMS)
    again = run("capture", "export", str(capture_file), "--csv", str(csv_path))
    assert again.exit_code == 2 and "output exists" in again.output
    assert run("capture", "export", str(capture_file), "--csv", str(capture_file), "--force").exit_code == 2


def export_vcd(capture_file, tmp_path):
    vcd_path = tmp_path / "run.vcd"
    result = run("capture", "export", str(capture_file), "--vcd", str(vcd_path))
    assert result.exit_code == 0, result.output
    return vcd_path


def records_of(kind):
    return [item for item in ITEMS if isinstance(item, CaptureRecord) and item.kind == kind]


def test_vcd_signals_equal_the_capture_in_a_python_vcd_reader(capture_file, tmp_path):
    vcd = VCDVCD(str(export_vcd(capture_file, tmp_path)))
    assert vcd.timescale["unit"] == "ns" and vcd.timescale["magnitude"] == 10

    def at(name, time):
        return vcd[f"slot.{name}"][time]

    for kind, (strobe, active) in STROBE_EDGES.items():
        edges = [time for time, value in vcd[f"slot.{strobe}"].tv if value == active]
        records = records_of(kind)
        assert len(edges) == len(records), kind
        for time, record in zip(edges, records, strict=True):
            width = 12 if kind == "FETCH" else 8
            address = [at(f"A{bit}", time) for bit in range(12)]
            assert address[:width] == [str(record.address >> bit & 1) for bit in range(width)]
            assert all(value == "x" for value in address[width:])  # MOVX: A8-A11 are not on the record
            assert [at(f"D{bit}", time) for bit in range(8)] == [
                str(record.value >> bit & 1) for bit in range(8)
            ]
            assert [at(pin, time) for pin in ("P10", "P11", "P14")] == [
                str(record.p1 >> bit & 1) for bit in (0, 1, 4)
            ]
    # a machine cycle is 15 / 5 369 317 s = 279.4 units of 10 ns; fetches of one cycle share it
    fetch_edges = [time for time, value in vcd["slot.PSEN_n"].tv if value == "0"]
    assert fetch_edges[0] == 558 and 558 < fetch_edges[1] < 558 + 279
    for marker, count in (("reset", 1), ("frame_sync", 1), ("gap", 1)):
        assert sum(value == "1" for _, value in vcd[f"markers.{marker}"].tv) == count


def test_vcd_opens_in_sigrok(capture_file, tmp_path):
    sigrok = require_tool("sigrok-cli")
    vcd_path = export_vcd(capture_file, tmp_path)
    shown = subprocess.run(
        [sigrok, "-I", "vcd", "-i", str(vcd_path), "--show"], capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert "Channels: 29" in shown.stdout and "- PSEN_n: logic" in shown.stdout
    decoded = subprocess.run(  # compress: idle stretches shortened, so the sample count stays small
        [sigrok, "-I", "vcd:compress=20", "-i", str(vcd_path), "-O", "csv"], capture_output=True, text=True
    )
    assert decoded.returncode == 0, decoded.stderr
    lines = decoded.stdout.splitlines()
    channels = next(line for line in lines if line.startswith("; Channels"))
    names = [name.strip() for name in channels.split(":", 1)[1].split(",")]
    rows = [line for line in lines if line and line[0] in "01"]
    samples = [dict(zip(names, row.split(","), strict=True)) for row in rows]
    fetches = [
        sample
        for before, sample in itertools.pairwise(samples)
        if before["PSEN_n"] == "1" and sample["PSEN_n"] == "0"
    ]
    assert [sum(int(s[f"A{bit}"]) << bit for bit in range(12)) for s in fetches] == [
        r.address for r in records_of("FETCH")
    ]
    assert [sum(int(s[f"D{bit}"]) << bit for bit in range(8)) for s in fetches] == [
        r.value for r in records_of("FETCH")
    ]
