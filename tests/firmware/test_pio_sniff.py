"""The sniff engine (firmware/pio/sniff.pio) in pioemu plus the sniff decoder in C (built with gcc
for the host): fed with the slot activity of the reference emulator on the fixture cartridges, NTSC
and PAL, the accesses it reports equal the emulator's (fetches compressed to non-sequential
targets, 0400h and 0406h always kept), with the emulator's cycle stamps."""

from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest
from bus_waves import Layout, SlotAccess, slot_accesses, waveform
from c_build import BUS_SOURCES, shared_library
from cart_fixtures import SERVED, image
from conftest import require_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pio_harness import Harness, require_module, tool

from hilbridge.machine.bus import FETCH, READ, WRITE

WINDOW_CYCLES = 4000
MAX_ACCESSES = 350
KINDS = {0: FETCH, 1: READ, 2: WRITE}
IN_PINS_26 = 0x401A  # `in pins, 26`: the sample instruction
ACCESS = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint8, ctypes.c_uint8
)


class Sink(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p), ("access", ACCESS)]


def header_constant(name: str) -> int:
    text = (BUS_SOURCES / "sniff_decode.h").read_text(encoding="utf-8")
    return int(re.search(rf"#define {name} (\d+)u", text).group(1))


@pytest.fixture(scope="module")
def decoder_library(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    gcc = require_tool("gcc")
    return shared_library(gcc, [BUS_SOURCES / "sniff_decode.c"], tmp_path_factory.mktemp("sniff"), "sniff")


def sniff(accesses: list[SlotAccess], region: str) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Run sniff.pio over the accesses: the (ticks, pins) events, the sample clocks and, per sample,
    the cycles since the start of the polling pass that saw the strobe."""
    require_module("pioemu", "rp2040-pio-emulator")
    require_module("adafruit_pioasm", "adafruit-circuitpython-pioasm")
    program = tool("gen_pio").assemble("sniff")
    layout = Layout.load(region)
    wave, _origin, windows = waveform(accesses, layout)
    words: list[int] = []
    samples: list[int] = []
    offsets: list[int] = []
    poll_start = [0]

    def on_step(before: object, _after: object) -> None:
        if before.program_counter == program.wrap_target:
            poll_start[0] = before.clock
        if program.opcodes[before.program_counter] == IN_PINS_26:
            samples.append(before.clock)
            offsets.append(before.clock - poll_start[0])

    harness = Harness(program, wave, drain=lambda _clock, word: words.append(word), on_step=on_step)
    harness.run(windows[-1][1] + 400)
    return list(zip(words[0::2], words[1::2], strict=True)), samples, offsets


def decode(
    library: ctypes.CDLL,
    events: list[tuple[int, int]],
    cycle_q8: int,
    pieces: list[int] | None = None,
    general: bool = False,
) -> list[tuple[int, str, int, int, int]]:
    """The decoder's accesses for the events, fed as the firmware feeds them (sniff_decoder_feed_events:
    all at once, or in `pieces` of so many events, the rest at the end); `pieces=[1] * n` is one call of
    that per event; `general`: one sniff_decoder_feed per event (the general path alone)."""
    out: list[tuple[int, str, int, int, int]] = []

    @ACCESS
    def access(_context: object, cycle: int, kind: int, address: int, value: int, p1: int) -> None:
        out.append((cycle, KINDS[kind], address, value, p1))

    decoder = ctypes.create_string_buffer(256)
    sink = Sink(None, access)
    library.sniff_decoder_init(decoder, ctypes.byref(sink), ctypes.c_uint32(cycle_q8))
    if general:
        for ticks, pins in events:
            library.sniff_decoder_feed(decoder, ctypes.c_uint32(ticks), ctypes.c_uint32(pins))
        return out
    words = (ctypes.c_uint32 * (2 * len(events)))(*[word for event in events for word in event])
    at = 0
    for size in [*(pieces or []), len(events)]:
        size = min(size, len(events) - at)
        library.sniff_decoder_feed_events(decoder, ctypes.byref(words, 8 * at), ctypes.c_uint32(2 * size))
        at += size
    return out


def expected(accesses: list[SlotAccess]) -> list[tuple[int, str, int, int, int]]:
    """The documented compression and stamps: fetches only where the PC did not just step (plus
    0400h/0406h), MOVX stamped at the end of the instruction, cycles relative to the first access;
    MOVX addresses are A0-A7."""
    base = accesses[0].cycle
    out = []
    next_fetch = None
    for access in accesses:
        if access.kind == FETCH:
            if access.address != next_fetch or access.address in (0x400, 0x406):
                out.append((access.cycle - base, FETCH, access.address, access.value, access.p1))
            next_fetch = (access.address & 0x800) | ((access.address + 1) & 0x7FF)
        else:
            out.append((access.cycle + 1 - base, access.kind, access.address & 0xFF, access.value, access.p1))
    return out


def _cycle_q8(region: str) -> int:
    return round(tool("gen_timing").load_timing().cycle_pio(region) * 256)


@pytest.mark.slow
@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize(("name", "mapper"), SERVED)
def test_capture_equals_the_emulators_slot_activity(decoder_library: ctypes.CDLL, name: str, mapper: str,
                                                    region: str) -> None:  # fmt: skip
    accesses = slot_accesses(image(name), mapper, region, WINDOW_CYCLES)[:MAX_ACCESSES]
    events, _samples, _offsets = sniff(accesses, region)
    assert len(events) == len(accesses), "one event per strobe, none lost"
    got = decode(decoder_library, events, _cycle_q8(region))
    want = expected(accesses)
    assert got == want
    assert len(want) < len(accesses)  # the compression left sequential fetches out


@pytest.mark.parametrize("region", ["ntsc", "pal"])
def test_event_timing_model_matches_the_program(region: str) -> None:
    """The decoder's model: sample offsets per path and 8 cycles per tick plus SNIFF_EVENT_EXTRA
    between two samples, exactly, in PIO cycles (fetch, write and read paths all taken)."""
    accesses = slot_accesses(image("xram"), "o2_rom", region, 40000)
    reads = [i for i, a in enumerate(accesses) if a.kind == READ]
    writes = [i for i, a in enumerate(accesses) if a.kind == WRITE]
    assert reads and writes
    start = max(0, min(reads[0], writes[0]) - 5)
    window = accesses[start : start + 60]
    if not any(a.kind == READ for a in window) or not any(a.kind == WRITE for a in window):
        window = accesses[reads[0] - 30 : reads[0] + 30]
    events, samples, offsets = sniff(window, region)
    per_tick = header_constant("SNIFF_CYCLES_PER_TICK")
    extra = header_constant("SNIFF_EVENT_EXTRA")
    fetch_write = header_constant("SNIFF_SAMPLE_FETCH_WRITE")
    path = {FETCH: fetch_write, WRITE: fetch_write, READ: header_constant("SNIFF_SAMPLE_READ")}
    kinds = [a.kind for a in window]
    assert {FETCH, READ, WRITE} <= set(kinds)
    assert offsets == [path[kind] for kind in kinds]
    for index in range(1, len(events)):
        ticks = (events[index - 1][0] - events[index][0]) & 0xFFFFFFFF
        assert samples[index] - samples[index - 1] == per_tick * ticks + extra + path[kinds[index]]


def test_sample_points_fall_inside_the_data_windows() -> None:
    """With the 2-cycle input synchroniser and the polling jitter, every sample lies after the data
    is valid and before the strobe ends, for both regions (bus_timing.tsv)."""
    for region in ("ntsc", "pal"):
        layout = Layout.load(region)
        for kind, name, valid in ((FETCH, "psen", "tRD2"), (WRITE, "wr", None), (READ, "rd", "tRD1")):
            path = header_constant("SNIFF_SAMPLE_READ" if kind == READ else "SNIFF_SAMPLE_FETCH_WRITE")
            path -= header_constant("SNIFF_SEEN_READ" if kind == READ else "SNIFF_SEEN_FETCH_WRITE")
            start, end = layout.strobes[name]
            width = (end - start) * layout.osc
            earliest, latest = 2 + path, 2 + path + header_constant("SNIFF_CYCLES_PER_TICK")
            assert latest < width, (region, kind)
            if valid is not None:
                assert earliest > layout.delays[valid], (region, kind)


def test_a_full_fifo_stalls_instead_of_losing_silently() -> None:
    """Without draining, the program blocks on `push block` (RXSTALL in FDEBUG, which the C glue
    counts as drops) instead of overwriting."""
    pioemu = require_module("pioemu", "rp2040-pio-emulator")
    accesses = slot_accesses(image("cpu_alu"), "o2_rom", "ntsc", 400)[:12]
    program = tool("gen_pio").assemble("sniff")
    wave, _origin, windows = waveform(accesses, Layout.load("ntsc"))
    state = pioemu.State(x_register=0xFFFFFFFF)
    for _before, after in pioemu.emulate(
        program.opcodes,
        stop_when=lambda _opcode, s: s.clock >= windows[-1][1],
        initial_state=state,
        input_source=wave.at,
        shift_isr_right=False,
        jmp_pin=program.engine.jmp_pin,
        wrap_target=program.wrap_target,
        wrap_top=program.wrap,
    ):
        state = after
    assert len(state.receive_fifo) == 4
    assert program.opcodes[state.program_counter] & 0xE0FF == 0x8020  # stalled on `push block`


def test_docs_quote_the_sample_points() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "hardware.md").read_text(encoding="utf-8")
    for name in ("SNIFF_SAMPLE_FETCH_WRITE", "SNIFF_SAMPLE_READ"):
        assert f"{header_constant(name)} PIO cycles" in text


def synthetic_events(
    accesses: list[SlotAccess], cycle_pio: float, jitter_seed: int = 5
) -> list[tuple[int, int]]:
    """Events as sniff.pio would push them for `accesses` on a console whose machine cycle is
    `cycle_pio` PIO cycles: the timing model test_event_timing_model_matches_the_program checks
    against the real program, run forwards (ticks from the sample times)."""
    import random

    rng = random.Random(jitter_seed)
    layout = Layout.load("pal")
    pin = layout.pins
    fetch_write, read = header_constant("SNIFF_SAMPLE_FETCH_WRITE"), header_constant("SNIFF_SAMPLE_READ")
    seen_read = header_constant("SNIFF_SEEN_READ")
    overhead = 0
    events = []
    for access in accesses:
        path, seen = (read, seen_read) if access.kind == READ else (fetch_write, 0)
        edge = 1000 + access.cycle * cycle_pio + 6 * cycle_pio / 15
        sample = edge + rng.randrange(8) - seen + path
        ticks = int((sample - overhead - path) // 8)
        overhead += path + 3
        strobe = {FETCH: 1 << pin["PSEN_N"], WRITE: 1 << pin["WR_N"], READ: 0}[access.kind]
        idle = (1 << pin["PSEN_N"] | 1 << pin["WR_N"]) & ~strobe | (
            1 << pin["E"] if access.kind == READ else 0
        )
        pins = idle | layout.address_bits(access) | access.value << pin["D0"]
        events.append(((0xFFFFFFFF - ticks) & 0xFFFFFFFF, pins))
    return events


@pytest.mark.parametrize("ppm", [0, 150])
def test_decoder_finds_pal_and_the_console_clock_from_the_vsync_hook(
    decoder_library: ctypes.CDLL, ppm: int
) -> None:
    """A PAL console whose crystal is `ppm` fast, decoded from the NTSC default: after two 0406h
    fetches the region is known, after 16 more frames the cycle length; from then on every stamp is
    exact even across gaps of thousands of cycles (BIOS waits leave the slot silent)."""
    frame = 7929 + 1 / 3
    accesses = []
    for number in range(24):
        start = round(number * frame)
        accesses.append(SlotAccess(start, FETCH, 0x406, 0x44, 0x13))
        accesses.append(SlotAccess(start + 1, FETCH, 0x407, 0x00, 0x13))
        accesses.append(SlotAccess(start + 3, WRITE, 0x0A0, 0x55, 0x03))
        accesses.append(SlotAccess(start + 7200, FETCH, 0x500, 0x12, 0x13))  # after a long silence
    cycle_pal = tool("gen_timing").load_timing().cycle_pio("pal") / (1 + ppm * 1e-6)
    got = decode(decoder_library, synthetic_events(accesses, cycle_pal), _cycle_q8("ntsc"))
    want = expected(accesses)
    assert len(got) == len(want)
    assert [g[1:] for g in got] == [w[1:] for w in want]
    per_frame = 3  # 0406h, the write, 0500h (0407h is sequential)
    calibrated = per_frame * 18  # two frames for the region, sixteen more for the length
    assert len(got) > calibrated
    assert [g[0] - got[calibrated][0] for g in got[calibrated:]] == [
        w[0] - want[calibrated][0] for w in want[calibrated:]
    ]
    if ppm:  # the nominal PAL length alone is not good enough over 7200 cycles at 150 ppm
        nominal = decode(decoder_library, synthetic_events(accesses, cycle_pal), _cycle_q8("pal"))
        early = slice(0, per_frame * 16)
        assert [g[0] for g in nominal[early]] != [w[0] - want[0][0] for w in want[early]]


# The strategies bus_activity draws from, built once: hypothesis works out a strategy's properties
# (label, emptiness, its sampled values checked) on every draw of a strategy made inside the
# composite, which took about half of the test's time; the values drawn are the same.
ACCESS_COUNTS = st.integers(1, 60)
GAPS = st.sampled_from([1, 1, 2, 3, 40, 7200, 20000, 300000])
ACCESS_KINDS = st.sampled_from([FETCH, FETCH, FETCH, READ, WRITE])
FETCH_ADDRESSES = st.sampled_from([0x400, 0x401, 0x406, 0x407, 0x500, 0x501, 0xFFF])
BYTES = st.integers(0, 0xFF)
P1_VALUES = st.sampled_from([0, 3, 0x13])


@st.composite
def bus_activity(draw: st.DrawFn) -> list[SlotAccess]:
    """Accesses with the gaps that take the decoder's other paths: back to back, BIOS silences of
    thousands of cycles, a console held for more than FAST_TICKS (2^19 ticks, 12,000 cycles), and
    the 0400h/0406h fetches, sequential or not."""
    cycle, out = 0, []
    for _ in range(draw(ACCESS_COUNTS)):
        cycle += draw(GAPS)
        kind = draw(ACCESS_KINDS)
        address = draw(FETCH_ADDRESSES if kind == FETCH else BYTES)
        out.append(SlotAccess(cycle, kind, address, draw(BYTES), draw(P1_VALUES)))
    return out


@pytest.mark.slow  # 150 examples of up to 300 draws each: 3-7 s
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(accesses=bus_activity(), pieces=st.lists(st.integers(0, 8), max_size=12))
def test_the_fast_loop_decodes_as_the_general_path(
    decoder_library: ctypes.CDLL, accesses: list[SlotAccess], pieces: list[int]
) -> None:
    """sniff_decoder_feed_events (the firmware's loop, its state in locals, split anywhere) gives
    the accesses and stamps of one sniff_decoder_feed per event, which the emulator tests check."""
    events = synthetic_events(accesses, tool("gen_timing").load_timing().cycle_pio("ntsc"))
    general = decode(decoder_library, events, _cycle_q8("ntsc"), general=True)
    assert decode(decoder_library, events, _cycle_q8("ntsc"), pieces=pieces) == general
    assert [g[1:] for g in general] == [w[1:] for w in expected(accesses)]
