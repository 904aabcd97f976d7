"""Each test cart's MAME trace shows what the cart is meant to show (the oracle checks itself).

These read MAME's traces only; whether our emulator agrees is test_oracle_compare.py. Each test is
in the compare group of the run it reads (`in_groups`), so under xdist it runs on the worker that has
just read that run for test_oracle_compare.py, instead of reading it again on another.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fixture_runs import REGIONS, SPECS, cart_image, compare_group, mame_run
from oracle_support import mame_installed  # noqa: F401 (autouse fixture)

from hilbridge.oracle.trace import Access

pytestmark = [pytest.mark.mame, pytest.mark.slow]


def in_groups(*names: str) -> list:
    """(name, region) parameters for a test of the carts `names`, each in the compare group of its run."""
    return [
        pytest.param(name, region, marks=compare_group(name, region)) for name in names for region in REGIONS
    ]


def ram_writes(name: str, region: str = "ntsc") -> list[Access]:
    return [a for a in mame_run(name, region).trace.writes() if a.target == "RAM"]


@compare_group("cpu_addressing", "ntsc")
def test_trace_covers_every_frame_and_state_matches_writes():
    run = mame_run("cpu_addressing", "ntsc")
    trace = run.trace
    assert [f.frame for f in trace.frames] == list(range(SPECS["cpu_addressing"].frames))
    # the frame-end RAM dump equals the replay of all RAM writes made before that frame end
    ram = bytearray(128)
    writes = iter(w for w in trace.writes() if w.target == "RAM")
    pending = next(writes)
    checked = 0
    for state in trace.states[:100]:
        end = trace.frames[state.frame].cycle
        while pending is not None and pending.cycle < end - 4:
            ram[pending.addr] = pending.data
            pending = next(writes, None)
        if pending is None or pending.cycle > end + 4:  # no write straddles this frame end
            assert state.xram == bytes(ram), f"frame {state.frame}"
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(("name", "region"), in_groups("bank_o2rom_4k", "bank_o2rom_8k", "bank_ktaa"))
def test_p1_selects_the_bank(name, region):
    spec = SPECS[name]
    writes = mame_run(name, region).trace.writes()  # RAM, and EXT where the pointer passes 7Fh
    assert len(writes) >= 3 * 8 * (spec.frames - 10)
    high_routine = 0x0C if spec.slot == "o2_ktaa" else 0x04  # o2_rom: 0C80h runs the bank's 0480h
    for number, (bank, ident, called) in enumerate(zip(*[iter(writes)] * 3, strict=False)):
        selected = bank.p1 & (spec.banks - 1)
        assert (bank.data, ident.data, called.data) == (
            selected,
            selected * 0x10 + 0x0A,
            selected * 0x10 + high_routine,
        ), f"write #{number}"
    assert writes[0].data == spec.banks - 1  # reset leaves P1 = FFh: the last bank


@compare_group("bank_rally", "ntsc")
def test_rally_latch_selects_the_bank_and_p10_the_last():
    writes = mame_run("bank_rally", "ntsc").trace.writes()
    latch = None
    seen = set()
    for previous, access in itertools.pairwise(writes):
        if access.target != "RAM" or previous.target == "RAM":
            continue
        if previous.addr & 0x80:
            latch = previous.data
        if access.p1 & 0x01:
            assert access.data == 7  # P10 = 1: the last bank whatever the latch holds
        elif latch is not None:
            assert access.data == latch & 7
            seen.add(access.data)
    assert seen == set(range(8))


@compare_group("bank_4in1", "ntsc")
def test_4in1_data_rom_reads_pages_of_the_image():
    image = cart_image("bank_4in1")
    reads = [a for a in mame_run("bank_4in1", "ntsc").trace.reads() if a.p1 == 0xBE]
    assert len(reads) == 8 * SPECS["bank_4in1"].frames
    for number, group in enumerate(zip(*[iter(reads)] * 8, strict=False)):
        page = number % 8  # the cart reads page (frame AND 7)
        assert [r.data for r in group] == [image[page * 256 + r.addr] for r in group], number


@compare_group("xram", "ntsc")
def test_xram_holds_what_was_written_and_copy_mode_reaches_the_vdc():
    trace = mame_run("xram", "ntsc").trace
    accesses = trace.accesses
    sums = [i for i, a in enumerate(accesses) if a.kind == "W" and a.target == "RAM" and a.addr == 0x7F]
    checked = 0
    for index in sums:
        fill = [a for a in accesses[max(0, index - 400) : index] if a.kind == "W" and a.target == "RAM"]
        sums_read = [a for a in accesses[max(0, index - 200) : index] if a.kind == "R" and a.target == "RAM"]
        if len(fill) < 128 or len(sums_read) < 128:
            continue
        frame_value = fill[-128].data  # RAM[0] = 0 XOR frame
        assert [a.data for a in fill[-128:]] == [addr ^ frame_value for addr in range(128)]
        assert [a.data for a in sums_read[-128:]] == [addr ^ frame_value for addr in range(128)]
        assert accesses[index].data == sum(addr ^ frame_value for addr in range(128)) & 0xFF
        copies = [a for a in accesses[index : index + 200] if a.kind == "W" and a.p1 == 0xE4]
        assert [a.addr for a in copies] == list(range(0x80, 0x88))
        assert [a.data for a in copies] == [addr ^ frame_value for addr in range(8)]
        checked += 1
    assert checked > 500


@compare_group("vdc_regs", "ntsc")
def test_vdc_register_masks_mirrors_and_locks():
    accesses = mame_run("vdc_regs", "ntsc").trace.accesses
    last_write: dict[int, int] = {}
    passes = 0
    index = 0
    while index < len(accesses):
        access = accesses[index]
        if access.kind == "W":
            last_write[access.addr] = access.data
        run = accesses[index : index + 256]
        if len(run) == 256 and all(a.kind == "R" and a.addr == n for n, a in enumerate(run)):
            read = {a.addr: a.data for a in run}
            assert read[0x10] == last_write[0x10] & 0xFE  # character Y: bit 0 not connected
            assert read[0x13] == last_write[0x13] & 0x0F  # character attribute: b4-b7 not connected
            assert read[0x02] == 0  # sprite attributes read back 0
            assert read[0xA3] == 0  # colour register is write-only
            assert read[0xD0] == last_write[0xD0] & 0x01  # grid row 8: bit 0 only
            assert read[0x80] == last_write[0x80]  # sprite shapes are plain RAM
            assert read[0xC3] == last_write[0xC3]
            window = accesses[index + 256 : index + 300]
            locks = [a for a in window if a.kind == "R"][:3]
            shape_write = next(a for a in window if a.kind == "W" and a.addr == 0x80)
            assert [a.addr for a in locks] == [0x00, 0x80, 0xC0]
            assert locks[0].data == 0  # display on: 00h-7Fh read 0 and ignore writes
            assert locks[1].data == shape_write.data  # shapes stay writable with the display on
            assert locks[2].data == 0  # grid on: C0h and above read 0
            passes += 1
            index += 256
            continue
        index += 1
    assert passes > 300  # a pass can take longer than a frame


@compare_group("timer_counter", "ntsc")
def test_timer_counts_every_32_cycles():
    writes = ram_writes("timer_counter", "ntsc")
    rounds = 0
    for index, access in enumerate(writes[:-5]):
        if access.addr != 0 or writes[index + 1].addr != 1:
            continue
        start, first, second, stopped, restarted = writes[index : index + 5]
        assert start.data == 0
        for read in (first, second):  # each T read is 3 cycles before its MOVX stamp
            elapsed = read.cycle - start.cycle
            assert abs(read.data - elapsed // 32) <= 1, (read, elapsed)
        assert stopped.data - second.data in (0, 1)  # STOP TCNT keeps the count
        assert restarted.data == stopped.data  # STRT T clears the prescaler only
        rounds += 1
    assert rounds > 500


@compare_group("interrupts", "ntsc")
def test_vdc_interrupt_is_a_level_held_until_a1_is_read():
    writes = [a for a in mame_run("interrupts", "ntsc").trace.writes() if a.addr >= 0x40]
    markers = [a for a in writes if a.data == 0xE1]
    status = [a for a in mame_run("interrupts", "ntsc").trace.reads() if a.addr == 0xA1]
    assert all(a.data & 0x08 for a in status)  # every interrupt read of A1 shows VBL
    # three entries (two re-entries with /INT still low) for each A1 read
    assert len(markers) >= 3 * (len(status) - 3) - 3


@compare_group("video_objects", "ntsc")
def test_8244_hides_characters_above_line_14_and_8245_does_not():
    light_red = 9  # character 0: colour 1, always bright; nothing else light red above line 24
    top_ntsc = mame_run("video_objects", "ntsc").pixels[:, :24, :]
    top_pal = mame_run("video_objects", "pal").pixels[:, :24, :]
    assert not np.any(top_ntsc == light_red)
    assert np.any(top_pal[:, 8:22, :] == light_red)


@compare_group("video_objects", "ntsc")
def test_collision_reads_report_overlaps():
    reads = [a for a in mame_run("video_objects", "ntsc").trace.reads() if a.addr == 0xA2]
    assert len(reads) >= SPECS["video_objects"].frames - 2
    assert len({a.data for a in reads}) > 4


@compare_group("input_read", "ntsc")
def test_pressed_keys_and_sticks_reach_the_ports():
    writes = [a for a in mame_run("input_read", "ntsc").trace.writes() if a.p1 == 0xA8 and a.addr < 0x20]
    by_frame: dict[int, dict[int, int]] = {}
    for access in writes:
        by_frame.setdefault(access.frame, {})[access.addr] = access.data
    assert by_frame[10][4 * 4] == 0xF4  # row 4, nothing pressed: P24-P27 = 1
    assert by_frame[30][4 * 4] == 0xE4  # A (row 4 bit 0) pressed at frame 20: P24 = 0, 7 - 0 = 7
    assert by_frame[70][0] == 0x00  # 3 and 7 pressed: the encoder reports the highest, 7
    assert by_frame[90][0] == 0x80  # only 3 left: 7 - 3 = 4
    assert by_frame[135][0 * 4 + 1] == 0xFE  # JOY.0 up answers select 0
    assert by_frame[165][1 * 4 + 1] == 0xF3  # JOY.1 down + left answer select 1
    assert by_frame[165][0 * 4 + 1] == 0xFF


@compare_group("video_collisions", "ntsc")
def test_every_collision_scene_collides():
    run = mame_run("video_collisions", "ntsc")
    reports = [a for a in run.trace.writes() if a.addr == 0xA6]  # A2 of the frame before, per frame
    for scene in range(8):
        # frames 8*scene+1 .. 8*scene+8 drew this scene; frame 8*scene+8 had mask FFh
        assert any(reports[8 * scene + k].data for k in range(1, 9)), f"scene {scene}"
    overlaps = {(a.frame - 1) // 8 % 8 for a in run.trace.reads() if a.addr == 0xA1 and a.data & 0x80}
    assert {3, 4} <= overlaps  # characters over characters: A1 b7, not A2


@pytest.mark.parametrize(("name", "region"), in_groups("video_edges"))
def test_objects_next_to_the_grid_do_not_collide_and_the_controls_do(name, region):
    """video_edges: 30 scenes put an object at the pixel next to a grid element, 2 controls make it
    cover one or two pixels. MAME 0.251 reports only the controls: it has no edge rule there."""
    reports = [a.data for a in mame_run(name, region).trace.writes() if a.addr == 0xA6]
    for scene in range(32):
        # frames 8*scene+1 .. 8*scene+8 drew this scene, one enable mask each
        seen = reports[8 * scene + 1 : 8 * scene + 9]
        if scene == 28:  # character (A2 b7) over the vertical bar (b4)
            assert {0x80, 0x10, 0x90} <= set(seen), f"scene {scene}: {seen}"
        elif scene == 29:  # sprite 0 (b0) over the vertical bar
            assert {0x01, 0x10, 0x11} <= set(seen), f"scene {scene}: {seen}"
        else:
            assert not any(seen), f"scene {scene}: {seen}"
