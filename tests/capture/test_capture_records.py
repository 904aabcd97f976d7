"""RecordBatch.records()'s bulk construction against a plain loop, and what a CaptureRecord equals."""

from __future__ import annotations

import io
import json

import numpy as np

from hilbridge.capture.export import item_json, write_json
from hilbridge.capture.stream import CaptureHeader, FrameSync, RecordBatch, ResetDetected
from hilbridge.link.adapter import CaptureRecord
from hilbridge.link.capture_codec import RECORD_DTYPE
from hilbridge.link.protocol import CAPTURE_KINDS


def plain_records(batch: RecordBatch) -> list[CaptureRecord]:
    """The records one by one through the constructor, as RecordBatch.records() built them before."""
    names = {value: name for name, value in CAPTURE_KINDS.items()}
    return [
        CaptureRecord(int(row["cycle"]), names.get(int(row["kind"]), f"?{int(row['kind'])}"),
                      int(row["address"]), int(row["value"]), int(row["p1"]))
        for row in batch.rows
    ]  # fmt: skip


def test_records_in_bulk_are_the_records_of_a_plain_loop() -> None:
    generator = np.random.default_rng(7)
    rows = np.empty(5000, RECORD_DTYPE)
    rows["cycle"] = np.cumsum(generator.integers(0, 3, 5000)) + (1 << 40)
    rows["kind"] = generator.integers(0, 256, 5000)  # known kinds and numbers this hilbridge does not know
    rows["address"] = generator.integers(0, 1 << 16, 5000)
    rows["value"] = generator.integers(0, 256, 5000)
    rows["p1"] = generator.integers(0, 256, 5000)
    batch = RecordBatch(rows)
    records = batch.records()
    assert records == plain_records(batch)
    assert all(type(record) is CaptureRecord for record in records)
    assert all(type(field) is int for field in (records[0].cycle, records[0].address, records[0].p1))
    assert {record.kind for record in records} >= {"FETCH", "MOVX_READ", "MOVX_WRITE", "P1", "?200"}
    assert RecordBatch(rows[:0]).records() == []


def test_a_record_equals_records_of_the_same_values_only() -> None:
    record = CaptureRecord(cycle=5, kind="FETCH", address=0x400, value=0x84, p1=0xFF)
    assert record == CaptureRecord(5, "FETCH", 0x400, 0x84, 0xFF)
    assert hash(record) == hash(CaptureRecord(5, "FETCH", 0x400, 0x84, 0xFF))
    assert record != CaptureRecord(5, "FETCH", 0x400, 0x84, 0xFE)
    assert record != ResetDetected(5) and ResetDetected(5) != record
    assert record != FrameSync(0, 5)
    fields = (record.cycle, record.kind, record.address, record.value, record.p1)
    assert fields == (5, "FETCH", 0x400, 0x84, 0xFF)


def test_a_record_exports_as_json_with_its_field_names() -> None:
    record = CaptureRecord(7, "MOVX_WRITE", 0xA0, 0x5A, 0xB7)
    assert item_json(record) == {
        "item": "record", "cycle": 7, "kind": "MOVX_WRITE", "address": 0xA0, "value": 0x5A, "p1": 0xB7,
    }  # fmt: skip
    out = io.StringIO()
    write_json(CaptureHeader(source="sim"), [record, ResetDetected(9)], out)
    assert json.loads(out.getvalue())["items"] == [item_json(record), {"item": "reset", "cycle": 9}]
