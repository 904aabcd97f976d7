"""Issue 13: the open BIOS's clock (initclock, doclock, the frame counter of vsyncirq) keeps the contract
of g7kbios chapter 7 and 17.12 / 17.18 (docs/bios.md): iram 3Eh bits 0-5 count frames 0-59, bit 6
counts the clock up, bit 7 stops it; minutes and seconds are BCD in external RAM 01h / 02h."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st
from open_bios_support import bios_cart, code, run_to_done

from hilbridge.bridge.screen import screen_text
from hilbridge.machine.bios import open_bios
from hilbridge.machine.console import Console

CLOCK, MINUTES, SECONDS = 0x3E, 0x01, 0x02
STOP, FORWARD = 0x80, 0x40


def bcd(value: int) -> int:
    return (value // 10) << 4 | value % 10


class DoclockCaller:
    """One console whose cart calls doclock from a stub, run again for every example."""

    def __init__(self) -> None:
        image, symbols = bios_cart(code("mov r4,#40h", "mov r6,#0Eh", "call_at: call doclock"))
        self.console = Console(image, bios=open_bios())
        self.call_at, self.done = symbols["CALL_AT"], symbols["DONE"]
        while self.console.cpu.pc != self.done:
            self.console.step()

    def call(self, clock: int, minutes: int, seconds: int) -> tuple[int, int, int]:
        """(iram 3Eh, minutes, seconds) after doclock with these before."""
        cpu, ram = self.console.cpu, self.console.ram
        cpu.ram[CLOCK], ram[MINUTES], ram[SECONDS] = clock, minutes, seconds
        cpu.pc = self.call_at
        while cpu.pc != self.done:
            self.console.step()
        return cpu.ram[CLOCK], ram[MINUTES], ram[SECONDS]


DOCLOCK = DoclockCaller()


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 99), st.integers(0, 59), st.booleans())
def test_doclock_counts_one_second_in_bcd_when_the_counter_is_at_59(minutes, seconds, up):
    clock = (FORWARD if up else 0) | 59
    total = minutes * 60 + seconds + (1 if up else -1)
    if not up and total < 0:
        return  # counting down from 00:00 does not happen: the clock stops there
    total %= 100 * 60
    after = DOCLOCK.call(clock, bcd(minutes), bcd(seconds))
    assert after[1:] == (bcd(total // 60), bcd(total % 60))
    stopped = not up and total == 0
    assert after[0] == clock | (STOP if stopped else 0)  # 00:00 counting down stops the clock


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 0xFF), st.integers(0, 99), st.integers(0, 59))
def test_doclock_leaves_the_time_alone_unless_running_and_at_59(clock, minutes, seconds):
    if clock & 0x3F == 59 and not clock & STOP:
        clock ^= 1  # a running clock at 59 counts: take a neighbour
    assert DOCLOCK.call(clock, bcd(minutes), bcd(seconds)) == (clock, bcd(minutes), bcd(seconds))


def test_vsyncirq_counts_frames_0_to_59_and_keeps_the_clock_bits():
    image, _ = bios_cart(code("mov r0,#3Eh", f"mov @r0,#{STOP | FORWARD | 50}", "en i", "loop: jmp loop"))
    console = Console(image, bios=open_bios())
    counts = []
    for _ in range(20):
        console.run_frames(1)
        counts.append(console.cpu.ram[CLOCK])
    assert all(value & 0xC0 == 0xC0 for value in counts)
    low = [value & 0x3F for value in counts]
    wrap = low.index(0)
    assert low[wrap - 1] == 59 and low[wrap : wrap + 5] == [0, 1, 2, 3, 4]
    assert all((b - a) % 60 == 1 for a, b in pairwise(low))


def test_initclock_and_doclock_show_the_time_as_mm_ss():
    body = code(
        "call gfxoff", "mov r3,#20h", "mov r4,#40h", "mov r6,#0Eh", "call initclock",
        "call extramenable", "mov r0,#1", "mov a,#12h", "movx @r0,a", "inc r0", "mov a,#34h", "movx @r0,a",
        "mov r0,#3Eh", f"mov @r0,#{FORWARD | 59}", "call vdcenable", "mov r4,#40h", "mov r6,#0Eh",
        "call doclock", "call vdcenable", "call gfxon", "call waitvsync", "call waitvsync",
    )  # fmt: skip
    console = run_to_done(body)
    registers = console.vdc.registers
    assert (registers[0x40], registers[0x41], registers[0x50], registers[0x51]) == (0x40, 0x20, 0x40, 0x28)
    assert "12:35" in screen_text(registers, "ntsc")
    assert console.cpu.ram[CLOCK] & FORWARD
