"""Test doubles for the emulator-core tests: a scripted VDC and helpers that build tiny cartridges."""

from __future__ import annotations

import bisect
import warnings

from hypothesis import strategies as st

from hilbridge.machine.bios import UnknownBiosWarning
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.cpu import Cpu
from hilbridge.machine.timing import NTSC, Region, SampledT1Edges, T1Edges

NEVER = 1 << 62
RELOADING_VECTORS = """
        org 400h
        jmp start
        jmp irq
        jmp tirq
irq:    mov r1,#0A1h
        movx a,@r1      ; acknowledge /INT
        inc r5
        retr
tirq:   inc r6
        mov a,#{reload}
        mov t,a
        retr
start:  mov a,#0B4h
        outl p1,a
"""
"""A cartridge program's start (a `str.format` template): the vectors, interrupt routines that count
in R5 (/INT, acknowledged) and R6 (the timer, reloaded with `reload`), then the VDC selected."""


def step_all(cpu: Cpu, cycles: int) -> None:
    """Step `cpu` one instruction at a time up to `cycles`, the reference the fast loop is held to;
    the target set as run_until sets it (idle skipping stops there too). The loop reads the CPU's
    cycle and its bound `step` directly: through `Console.cycle` it cost a tenth of the stepping."""
    cpu.target = cycles
    step = cpu.step
    while cpu.cycle < cycles:
        step()


class ScriptedVdc:
    """A `VideoChip` with scripted signals: /INT asserted at given cycles until A1 is read, T1 high on
    a fixed period, A1 bit 0 ("hstatus") toggling every `hstatus_period` cycles (0: never), a plain
    register file for everything else, and the frames of `region` in exact rational time."""

    def __init__(
        self,
        irq_at: tuple[int, ...] = (),
        t1_period: int = 23,
        t1_high: int = 4,
        hstatus_period: int = 0,
        region: Region = NTSC,
    ) -> None:
        self.frame_end_cycle = region.frame_end_cycle
        self.irq_at = sorted(irq_at)
        self.hstatus_period = hstatus_period
        self.t1_period = t1_period
        self.t1_high = t1_high
        self.registers = bytearray(256)
        self.acknowledged = -1  # cycle of the last A1 read
        self.cleared_at = -1  # cycle of the last A1 read that saw /INT and so cleared it
        self.writes: list[tuple[int, int, int]] = []
        self.lum: list[tuple[bool, int]] = []
        self.run_to_calls: list[int] = []
        self.reads = 0

    def reset(self) -> None:
        self.acknowledged = -1

    def _last_assert(self, cycle: int) -> int:
        index = bisect.bisect_right(self.irq_at, cycle)
        return self.irq_at[index - 1] if index else -1

    def irq(self, cycle: int) -> bool:
        last = self._last_assert(cycle)
        return last >= 0 and last > self.acknowledged

    def t1(self, cycle: int) -> bool:
        if not self.t1_period:
            return False
        return cycle % self.t1_period >= self.t1_period - self.t1_high

    def next_t1_change(self, cycle: int) -> int:
        if not self.t1_period:
            return NEVER
        phase = cycle % self.t1_period
        rise = self.t1_period - self.t1_high
        return cycle - phase + (rise if phase < rise else self.t1_period)

    def t1_edges(self) -> T1Edges:
        return PeriodicT1Edges(self)

    def next_irq_event(self, cycle: int) -> int:
        index = bisect.bisect_right(self.irq_at, cycle)
        return self.irq_at[index] if index < len(self.irq_at) else NEVER

    def _hstatus(self, cycle: int) -> int:
        return (cycle // self.hstatus_period) & 1 if self.hstatus_period else 0

    def peek(self, address: int, cycle: int) -> int:
        if address == 0xA1:
            return (0x08 if self.irq(cycle) else 0x00) | self._hstatus(cycle)
        return self.registers[address]

    def peek_reads(self, address: int, first: int, period: int, count: int) -> list[int]:
        return [self.peek(address, first + index * period) for index in range(count)]

    def skip_reads(self, address: int, first: int, period: int, count: int) -> None:
        """A skipped read here changes nothing `peek` of the last one depends on."""

    def read_horizon(self, address: int, cycle: int, mask: int = 0xFF) -> int:
        """A1 (the only register with side effects here) reads the same until /INT next rises, unless
        the read at `cycle` saw /INT and so cleared it: then the next read already differs."""
        if address != 0xA1:
            return NEVER
        if mask & 0x08 and self.cleared_at == cycle:
            return cycle + 1
        index = bisect.bisect_right(self.irq_at, cycle)
        horizon = self.irq_at[index] if index < len(self.irq_at) else NEVER
        if mask & 0x01 and self.hstatus_period:
            horizon = min(horizon, (cycle // self.hstatus_period + 1) * self.hstatus_period)
        return horizon

    def read(self, address: int, cycle: int) -> int:
        self.reads += 1
        if address == 0xA1:
            value = (0x08 if self.irq(cycle) else 0x00) | self._hstatus(cycle)
            self.acknowledged = cycle
            if value & 0x08:
                self.cleared_at = cycle
            return value
        return self.registers[address]

    def write(self, address: int, value: int, cycle: int) -> None:
        self.registers[address] = value
        self.writes.append((cycle, address, value))

    def set_lum(self, bright: bool, cycle: int) -> None:
        self.lum.append((bright, cycle))

    def run_to(self, cycle: int) -> None:
        self.run_to_calls.append(cycle)

    def state(self) -> dict:
        return {"registers": bytes(self.registers), "acknowledged": self.acknowledged}

    def load_state(self, state: dict) -> None:
        self.registers[:] = state["registers"]
        self.acknowledged = state["acknowledged"]

    def state_problems(self, state: dict, frame: int) -> list[str]:
        return []


INTERRUPT_VECTORS = """
        org 400h
        jmp start
        jmp irq
        jmp tirq
start:  mov a,#0B4h
        outl p1,a
"""
"""A test cart's start: our boot BIOS's reset, /INT and timer vectors (400h, 402h, 404h) jump to
`start`, `irq` and `tirq`; P1 = B4h (VDC and external bus on, external RAM and keyboard off)."""


def program_cart(code: bytes, at: int = 0x400, size: int = 2048, fill: int = 0x00):
    """A cartridge whose CPU address `at` holds `code` (standard mapper, last bank)."""
    image = bytearray([fill]) * size
    offset = (at - 0x400) % 0x800 + (size - 0x800)
    image[offset : offset + len(code)] = code
    return load_cartridge(bytes(image), "o2_rom")


def console_with(code: bytes, *, bios: bytes | None = None, vdc: ScriptedVdc | None = None, **kw) -> Console:
    """A console running `code` at 0400h on our boot BIOS with a scripted VDC."""
    return Console(program_cart(code, **kw), bios=bios, vdc=vdc or ScriptedVdc(t1_period=0))


MOVX_IN_RANDOM_CODE = {
    "image": st.binary(min_size=64, max_size=64),
    "offset": st.integers(0, 48),
    "a": st.integers(0, 255),
    "psw": st.integers(0, 255),
    "f1": st.booleans(),
    "a11": st.sampled_from([0, 0x800]),
}
"""Strategies for the idle analysis's property tests: 64 random bytes at 0400h with a MOVX A,@R0 at
0400h + offset (`cpu_with_movx_at`), and the A, PSW, F1 and A11 it runs from."""


def cpu_with_movx_at(image: bytes, offset: int) -> Cpu:
    """The CPU of a console (real VDC) whose 2 KB cartridge starts with `image`, with MOVX A,@R0
    written at 0400h + `offset`."""
    cart = bytearray(2048)
    cart[: len(image)] = image
    cart[offset] = 0x80
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        return Console(load_cartridge(bytes(cart), "o2_rom")).cpu


def bios_with(**entries: bytes) -> bytes:
    """A 1 KB BIOS image: `reset`, `irq`, `timer` code at 000h, 003h, 007h (default: boot BIOS)."""
    image = bytearray(1024)
    image[0:2] = b"\x84\x00"
    image[3:5] = b"\x84\x02"
    image[7:9] = b"\x84\x04"
    for name, at in (("reset", 0), ("irq", 3), ("timer", 7)):
        if name in entries:
            image[at : at + len(entries[name])] = entries[name]
    return bytes(image)


def assemble_cart(source: str, size: int = 2048) -> bytes:
    """Assemble `source` (asl syntax, addresses 0400h-0BFFh) into a standard cartridge image."""
    from hilbridge.toolchain.assembler import assemble_text

    result = assemble_text("        cpu 8048\n" + source, name="test.asm")
    image = bytearray(size)
    for index, byte in enumerate(result.image):
        address = result.origin + index
        if 0x400 <= address < 0xC00:
            image[(address - 0x400) % 0x800 + size - 0x800] = byte
    return bytes(image)


def console_asm(source: str, *, vdc: ScriptedVdc | None = None, bios: bytes | None = None) -> Console:
    """A console with a 2 KB cartridge assembled from `source`, on a scripted VDC."""
    cart = load_cartridge(assemble_cart(source), "o2_rom")
    return Console(cart, bios=bios, vdc=vdc or ScriptedVdc(t1_period=0))


class PeriodicT1Edges:
    """`SampledT1Edges` for the ScriptedVdc's periodic T1, in closed form instead of a scan per cycle
    (which made a search of up to 16,384 `t1()` calls per counter event).

    T1 is high at phases P-H..P-1 of each period P, so it falls exactly at the samples whose cycle is
    a multiple of P (and at `first` when the sample before it, `previous`, was high and T1 is low).
    With no period, no high phase or no low phase T1 never changes: only that first sample can fall,
    and the search gives up where `SampledT1Edges` does.
    """

    def __init__(self, vdc: ScriptedVdc) -> None:
        self.t1 = vdc.t1
        self.period = vdc.t1_period if 0 < vdc.t1_high < vdc.t1_period else 0  # 0: T1 is constant

    def falls(self, previous: int, first: int, last: int) -> int:
        if last < first:
            return 0
        at_first = int(bool(previous) and not self.t1(first))
        if not self.period:
            return at_first
        return at_first + last // self.period - first // self.period

    def fall_sample(self, previous: int, first: int, count: int) -> int:
        if previous and not self.t1(first):
            if count == 1:
                return first
            count -= 1
        if not self.period:
            return first + SampledT1Edges.SEARCH_CYCLES
        return (first // self.period + count) * self.period
