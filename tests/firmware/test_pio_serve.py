"""The serve engines (firmware/pio/serve.pio, serve_movx.pio) in pioemu, fed with the slot activity
of the reference emulator running the fixture cartridges: every fetch answered with the byte the
emulator fetched, for every mapper, NTSC and PAL, within the latency budget; the bus driven only
inside the strobe windows."""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest
from bus_waves import Layout, SlotAccess, slot_accesses, waveform
from cart_fixtures import SERVED, TABLE_BASE, TABLE_SIZE, image, latch_states, serve_tables
from pio_harness import DMA_CYCLES, Harness, require_module, tool

from hilbridge.machine.bus import FETCH, READ, WRITE

WINDOW_CYCLES = 5000  # machine cycles from reset: the BIOS start and the cartridge's first frame
MAX_ACCESSES = 400
SYNC_CYCLES = 2  # GPIO input synchroniser, not modelled by pioemu
BUFFER_NS = 25  # 74LVC245 in (about 5 ns) + 74HCT541 out (about 20 ns) [unv]
BUDGET_NS = 200
CPU_LATCH_CYCLES = 150  # the sniff interrupt reacting to an o2_rally latch write [unv]
pytestmark = pytest.mark.slow


@dataclass
class Served:
    latencies: list[int]  # PIO cycles from the strobe edge to the byte on D0-D7 with /OE low
    releases: list[int]  # PIO cycles from the strobe's end to D0-D7 released
    answered: int


def _drive_log(harness: Harness, data_mask: int, d0: int) -> list[tuple[int, int | None]]:
    log: list[tuple[int, int | None]] = [(0, None)]

    def on_step(_before: object, after: object) -> None:
        level = harness.driven(after, data_mask)
        driven = None if level is None else level >> d0
        if log[-1][1] != driven:
            log.append((after.clock, driven))

    harness.on_step = on_step
    return log


def _level_at(log: list[tuple[int, object]], clock: int, default: object) -> object:
    index = bisect.bisect_right([when for when, _ in log], clock) - 1
    return log[index][1] if index >= 0 else default


def _changes_from(log: list[tuple[int, object]], clock: int) -> list[tuple[int, object]]:
    return log[bisect.bisect_left([when for when, _ in log], clock) :]


def serve(accesses: list[SlotAccess], region: str, program_name: str, tables: tuple[bytes, ...],
          mapper_latch: bool, answers: list[int | None]) -> Served:  # fmt: skip
    """Run one serve program over the accesses; `answers[i]` is the byte access i must get (None:
    the engine must stay off the bus)."""
    pioemu = require_module("pioemu", "rp2040-pio-emulator")
    require_module("adafruit_pioasm", "adafruit-circuitpython-pioasm")
    program = tool("gen_pio").assemble(program_name)
    layout = Layout.load(region)
    d0 = layout.pins["D0"]
    data_mask = 0xFF << d0
    wave, _origin, windows = waveform(accesses, layout, drive_fetch_data=False)

    def lookup(word: int) -> int:
        table = (word >> 14) - TABLE_BASE
        assert 0 <= table < len(tables), f"table base {word >> 14:#x}"
        return tables[table][word & (TABLE_SIZE - 1)]

    state = pioemu.State(transmit_fifo=deque([TABLE_BASE]))
    harness = Harness(program, wave, state=state, dma_table=lookup)
    log = _drive_log(harness, data_mask, d0)
    idle = program.public_labels["idle"]
    for access, (_start, end) in zip(accesses, windows, strict=True):
        if mapper_latch and access.kind == WRITE and access.address & 0x80 and not access.p1 & 0x10:
            harness.run(end + CPU_LATCH_CYCLES)
            assert harness.state.program_counter == idle, "a latch write must find the engine idle"
            harness.exec_jump(program.public_labels["start"], TABLE_BASE + (access.value & (len(tables) - 1)))
    harness.run(windows[-1][1] + 200)
    oe_log = harness.sideset_log
    latencies, releases, answered = [], [], 0
    for index, (expected, (start, end)) in enumerate(zip(answers, windows, strict=True)):
        if expected is None:
            assert all(value is None for clock, value in log if start <= clock <= end), (
                f"access {index} driven"
            )
            continue
        valid = next((clock for clock, value in log if start <= clock <= end and value is not None), None)
        assert valid is not None, f"access {index} ({accesses[index]}) not answered"
        enabled = next(clock for clock, level in _changes_from(oe_log, start) if level == 0)
        valid = max(valid, enabled)
        assert _level_at(log, end - 1, None) == expected, f"access {index} ({accesses[index]}): wrong byte"
        latencies.append(valid - start)
        released = next(clock for clock, value in _changes_from(log, end) if value is None)
        assert _level_at(oe_log, released, 1) == 1
        releases.append(released - end)
        answered += 1
    # the bus is never driven outside a strobe window (plus its release time)
    starts = [start for start, _ in windows]
    slack = max(releases, default=0)
    for clock, value in log:
        if value is not None:
            index = bisect.bisect_right(starts, clock) - 1
            assert index >= 0 and clock <= windows[index][1] + slack, f"driven at {clock} outside a window"
    return Served(latencies, releases, answered)


def _window(name: str, mapper: str, region: str) -> list[SlotAccess]:
    return slot_accesses(image(name), mapper, region, WINDOW_CYCLES)[:MAX_ACCESSES]


def _budget_cycles() -> int:
    return (BUDGET_NS - BUFFER_NS) // 8 - SYNC_CYCLES


@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize(("name", "mapper"), SERVED)
def test_every_fetch_gets_the_emulators_byte_in_time(name: str, mapper: str, region: str) -> None:
    accesses = _window(name, mapper, region)
    fetches = [access for access in accesses if access.kind == FETCH]
    assert len(fetches) > 100
    tables = serve_tables(image(name), mapper)
    latch = latch_states(image(name), mapper) > 1
    # the serve program only watches /PSEN: feed it the fetches, and the writes for the latch
    shown = [access for access in accesses if access.kind in (FETCH, WRITE)]
    answers = [access.value if access.kind == FETCH else None for access in shown]
    served = serve(shown, region, "serve", tables, latch, answers)
    assert served.answered == len(fetches)
    assert max(served.latencies) <= _budget_cycles(), served.latencies
    assert max(served.latencies) - min(served.latencies) <= 1  # no jitter beyond the DMA's
    assert max(served.releases) * 8 + BUFFER_NS <= 224 - 0  # tDR, PAL


def test_rally_latch_changes_what_is_served() -> None:
    accesses = _window("bank_rally", "o2_rally", "ntsc")
    latch_writes = [a for a in accesses if a.kind == WRITE and a.address & 0x80 and not a.p1 & 0x10]
    assert latch_writes, "the fixture writes the o2_rally latch"
    assert len({a.value for a in latch_writes}) > 1


def test_4in1_data_rom_answers_movx_reads_only_with_p11() -> None:
    name, mapper = "bank_4in1", "o2_4in1"
    accesses = slot_accesses(image(name), mapper, "ntsc", 30000)
    reads = [access for access in accesses if access.kind == READ][:150]
    assert any(read.p1 & 0x02 for read in reads) and any(not read.p1 & 0x02 for read in reads)
    tables = serve_tables(image(name), mapper)
    answers = [tables[0][read.address | (read.p1 & 3) << 12] if read.p1 & 0x02 else None for read in reads]
    served = serve(reads, "ntsc", "serve_movx", tables, False, answers)
    assert served.answered == sum(answer is not None for answer in answers)
    assert max(served.latencies) <= _budget_cycles()


def test_latency_is_what_the_docs_state() -> None:
    """docs/hardware.md quotes the serve latency with the DMA model it counts."""
    accesses = [a for a in _window("cpu_alu", "o2_rom", "pal") if a.kind == FETCH][:40]
    served = serve(accesses, "pal", "serve", serve_tables(image("cpu_alu"), "o2_rom"), False,
                   [a.value for a in accesses])  # fmt: skip
    text = (Path(__file__).resolve().parents[2] / "docs" / "hardware.md").read_text(encoding="utf-8")
    assert f"DMA_CYCLES = {DMA_CYCLES}" in text
    assert f"{max(served.latencies)} PIO cycles from the /PSEN edge" in text
