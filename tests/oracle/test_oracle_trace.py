"""The trace record format: parsing, writing back, and the first-difference comparison."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hilbridge.errors import HilbridgeError
from hilbridge.oracle.trace import (
    Access,
    FrameEnd,
    Trace,
    compare_runs,
    first_mismatch,
    parse_trace,
    up_to_cycle,
)

SAMPLE = """\
# mame=0.251 system=odyssey2 cycles_per_second=357955 frame_period=0.016715113234
W 12 B4 A0 00 0 243 240
R 5983 B4 A1 08 0 242 450
F 0 5983 40C
S 0 {vdc} {xram} {iram} B4 FF
P 0 0
W 5994 AC 10 01 1 243 214
F 1 11966 40C
P 1 0
# done frames=2
""".format(vdc="00" * 255 + "5A", xram="11" * 128, iram="22" * 64)


def test_sample_trace_fields():
    trace = parse_trace(SAMPLE)
    assert trace.header["system"] == "odyssey2"
    assert trace.complete
    assert [a.key for a in trace.accesses] == [("W", 12, 0xA0, 0), ("R", 5983, 0xA1, 8), ("W", 5994, 0x10, 1)]
    assert [a.target for a in trace.accesses] == ["VDC", "VDC", "RAM"]
    assert [(f.frame, f.cycle, f.pc) for f in trace.frames] == [(0, 5983, 0x40C), (1, 11966, 0x40C)]
    assert trace.states[0].vdc[255] == 0x5A and trace.states[0].xram == b"\x11" * 128
    assert trace.pixel_frames == [0, 0]
    assert len(trace.writes()) == 2 and len(trace.reads()) == 1


def test_target_follows_p1_decoding():
    # docs/hardware.md, "Glue logic": P13 = 0 selects the VDC; RAM needs P14 = 0, P16 = 0 and A7 = 0
    assert Access("W", 0, 0xB4, 0x90, 0).target == "VDC"
    assert Access("W", 0, 0xAC, 0x7F, 0).target == "RAM"
    assert Access("W", 0, 0xAC, 0x80, 0).target == "EXT"
    assert Access("W", 0, 0xEC, 0x10, 0).target == "EXT"  # P16 = 1: no external RD/WR


def test_unfinished_trace_is_not_complete():
    assert not parse_trace(SAMPLE.replace("# done frames=2\n", "")).complete


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("W 12 B4 A0", "needs 8 fields"),
        ("W 12 B4 A0 0G 0 243 240", "bad number"),
        ("X 1 2 3", "unknown trace record"),
        ("P 3 0", "out of order"),
        ("S 0 00 11 22 B4 FF", "256 + 128 + 64"),
    ],
)
def test_malformed_line_is_reported_with_its_line(line, message):
    with pytest.raises(HilbridgeError, match=re.escape(message)) as caught:
        parse_trace("# header\n" + line + "\n", "t.txt")
    assert str(caught.value.location) == "t.txt:2:1"


def access_lists(max_size: int, **tops: int) -> st.SearchStrategy[list[Access]]:
    """Lists of reads and writes whose other fields run from 0 to their `tops`."""
    fields = {name: st.integers(0, top) for name, top in tops.items()}
    return st.lists(st.builds(Access, kind=st.sampled_from("WR"), **fields), max_size=max_size)


accesses = access_lists(30, cycle=10**7, p1=255, addr=255, data=255, frame=1000, vpos=312, hpos=455).map(
    lambda items: sorted(items, key=lambda a: a.cycle)
)


@pytest.mark.slow
@given(accesses)
def test_text_round_trip(items):
    trace = parse_trace(SAMPLE)
    trace.accesses = list(items)
    again = parse_trace(trace.text())
    assert again.accesses == trace.accesses
    assert again.frames == trace.frames
    assert again.states == trace.states
    assert again.complete


@pytest.mark.slow
@given(accesses, st.data())
def test_first_mismatch_finds_the_first_changed_access(items, data):
    assert first_mismatch(items, list(items)) is None
    if not items:
        return
    index = data.draw(st.integers(0, len(items) - 1))
    changed = list(items)
    changed[index] = changed[index]._replace(data=changed[index].data ^ 1)
    found = first_mismatch(items, changed)
    assert found is not None
    assert found.index == index and found.theirs == changed[index]
    assert "differs" in found.report()


def test_beam_fields_are_not_compared_but_lengths_are():
    ours = [Access("W", 10, 0xB4, 0xA0, 0, 0, 1, 2)]
    theirs = [Access("W", 10, 0xB4, 0xA0, 0, 3, 4, 5)]
    assert first_mismatch(ours, theirs) is None
    missing = first_mismatch(ours, [])
    assert missing is not None and missing.theirs is None and "(no more accesses)" in missing.report()


def test_up_to_cycle_keeps_accesses_at_the_limit():
    items = [Access("W", cycle, 0, 0, 0) for cycle in (5, 10, 11)]
    assert [a.cycle for a in up_to_cycle(items, 10)] == [5, 10]


def test_truncate_keeps_whole_frames():
    trace = parse_trace(SAMPLE)
    trace.truncate(1)
    assert [f.frame for f in trace.frames] == [0]
    assert [a.cycle for a in trace.accesses] == [12, 5983]
    assert trace.pixel_frames == [0] and len(trace.states) == 1


def plain_first_mismatch(
    ours: list[Access], theirs: list[Access]
) -> tuple[int, Access | None, Access | None] | None:
    """The comparison as a loop over indices: the first index where (kind, cycle, addr, data)
    differ or one list ends."""
    for index in range(max(len(ours), len(theirs))):
        mine = ours[index] if index < len(ours) else None
        other = theirs[index] if index < len(theirs) else None
        if mine is None or other is None:
            return index, mine, other
        if (mine.kind, mine.cycle, mine.addr, mine.data) != (other.kind, other.cycle, other.addr, other.data):
            return index, mine, other
    return None


small_accesses = access_lists(6, cycle=3, p1=1, addr=1, data=1, frame=1, vpos=1, hpos=1)


@given(small_accesses, small_accesses, st.integers(0, 4), st.integers(-1, 4))
def test_first_mismatch_and_up_to_cycle_are_the_plain_loops(ours, theirs, shared, last_cycle):
    """The C-level comparison and cut against plain loops, on lists that share a prefix and differ
    in key fields, other fields, length and order of cycles."""
    theirs = ours[:shared] + theirs
    found = first_mismatch(ours, theirs)
    expected = plain_first_mismatch(ours, theirs)
    assert (found and (found.index, found.ours, found.theirs)) == expected
    if found is not None:
        assert found.before == tuple(ours[max(0, found.index - 3) : found.index])
    kept = [access for access in theirs if access.cycle <= last_cycle]
    assert up_to_cycle(theirs, last_cycle) == kept
    assert up_to_cycle(iter(theirs), last_cycle) == kept


def hex_spellings(limit: int) -> st.SearchStrategy[str]:
    """How a hex field may be spelt: as the trace writes it, or otherwise as int(text, 16) reads it."""
    return st.builds(str.format, st.sampled_from(["{:02X}", "{:x}", "{:03X}", "{:X}"]), st.integers(0, limit))


def decimal_spellings(low: int, high: int) -> st.SearchStrategy[str]:
    return st.builds(str.format, st.sampled_from(["{}", "{:04d}", "{:+d}"]), st.integers(low, high))


@given(
    st.lists(
        st.tuples(
            st.sampled_from("WR"),
            decimal_spellings(0, 10**8),
            hex_spellings(0x1FF),
            hex_spellings(0xFF),
            hex_spellings(0xFF),
            decimal_spellings(0, 5000),
            decimal_spellings(-2, 320),
            decimal_spellings(-1, 5000),
        ),
        max_size=8,
    )
)
@example([("W", "1436437", "AC", "5F", "CA", "240", "-1", "454")])  # MAME's vpos -1
def test_access_lines_parse_as_int_reads_every_field(rows):
    """The look-up tables (HEX, SMALL) give what int() gives, and int() takes any other spelling."""
    text = "".join(" ".join(row) + "\n" for row in rows)
    expected = [
        Access(kind, int(cycle), int(p1, 16), int(addr, 16), int(data, 16), int(frame), int(vpos), int(hpos))
        for kind, cycle, p1, addr, data, frame, vpos, hpos in rows
    ]
    parsed = parse_trace(text).accesses
    assert parsed == expected
    assert all(type(access) is Access for access in parsed)


def test_compare_runs_cuts_both_at_the_earlier_end_of_the_frames_asked():
    def run(ends: list[int], cycles: list[int]) -> Trace:
        trace = Trace(frames=[FrameEnd(frame, end, 0x400) for frame, end in enumerate(ends)])
        trace.accesses = [Access("W", cycle, 0xB4, 0xA0, 1, 0, 0, 0) for cycle in cycles]
        return trace

    ours, theirs = run([100, 200], [50, 99, 150, 199, 201]), run([101, 198], [50, 99, 150, 198, 205])
    compared, mismatch = compare_runs(ours, theirs, 1)  # cut at 100: 50 and 99 on both sides
    assert ([a.cycle for a in compared], mismatch) == ([50, 99], None)
    compared, mismatch = compare_runs(ours, theirs)  # cut at 198: ours has 199 there, theirs 198
    assert [a.cycle for a in compared] == [50, 99, 150, 198]
    assert mismatch is not None and (mismatch.index, mismatch.ours, mismatch.theirs.cycle) == (3, None, 198)
