"""VDC accesses keep the fast loop running (the stop is recomputed at the access) and stay exact."""

from __future__ import annotations

import bisect

import pytest
from hypothesis import example, given, settings
from machine_doubles import MOVX_IN_RANDOM_CODE, ScriptedVdc, assemble_cart, cpu_with_movx_at

from hilbridge.machine import idle
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.cpu import Cpu

WRITER = """
        org 400h
        jmp start
        jmp irq
start:  mov a,#0B4h
        outl p1,a
        en i
        mov r0,#10h
        mov r1,#0A2h
loop:   inc r6
        mov a,r6
        movx @r0,a
        movx a,@r1
        mov r5,a
        inc r0
        mov a,r0
        anl a,#3Fh
        mov r0,a
        jmp loop
irq:    sel rb1
        mov r4,a
        mov r0,#0A1h
        movx a,@r0
        inc r7
        mov a,r4
        retr
"""
"""Writes the object registers 10h-3Fh and reads A2h non-stop, interrupts on; the handler reads A1."""

CYCLES = 60_000


def run_cycles(console: Console, fast: bool) -> None:
    """Run `console` for CYCLES: in the fast loop, or by `step()` alone (the reference)."""
    if fast:
        console.cpu.run_until(CYCLES)
    else:
        console.cpu.target = CYCLES
        while console.cycle < CYCLES:
            console.cpu.step()


def run(fast: bool, monkeypatch) -> tuple[object, list, int]:
    console = Console(load_cartridge(assemble_cart(WRITER), "o2_rom"))
    records: list = []
    console.add_bus_listener(records.append)
    steps = 0
    step = Cpu.step

    def counted(cpu: Cpu) -> None:
        nonlocal steps
        steps += 1
        step(cpu)

    monkeypatch.setattr(Cpu, "step", counted)
    run_cycles(console, fast)
    monkeypatch.setattr(Cpu, "step", step)
    return console.cpu.state(), records, steps


def test_vdc_writes_and_reads_with_interrupts_on_stay_in_the_fast_loop_exactly(monkeypatch):
    fast_state, fast_records, fast_steps = run(True, monkeypatch)
    slow_state, slow_records, _ = run(False, monkeypatch)
    assert fast_records == slow_records
    assert fast_state == slow_state
    accesses = sum(record.address >= 0x10 for record in fast_records)
    assert accesses > 1000
    assert fast_steps * 20 < accesses  # step() only around interrupts, not per access
    assert sum(record.address == 0xA1 for record in fast_records) >= 2  # the handler ran


@settings(max_examples=80, deadline=None)
@given(**MOVX_IN_RANDOM_CODE)
# a 64-instruction loop: JMP 07C3h, NOPs on to 07FFh, the PC wraps to the BIOS's JMP 0400h
@example(image=bytes([0x00, 0xE4, 0xC3]) + bytes(61), offset=0, a=0, psw=0, f1=False, a11=0)
def test_a_read_the_static_check_lets_pass_never_heads_a_polling_loop(image, offset, a, psw, f1, a11):
    """`idle.may_return` (which decides whether step() runs after a VDC read) must say yes wherever
    `idle.run_iteration` finds a loop, for any A, PSW, F1 and A11."""
    cpu = cpu_with_movx_at(image, offset)
    cpu.psw, cpu.f1, cpu.jump_a11 = psw, int(f1), a11
    head = 0x400 + offset
    state = (a, psw, int(f1), a11, False, bytes(cpu.ram), False, False)
    if idle.run_iteration(cpu.prog, head + 1, head, state).loop is not None:
        assert idle.may_return(cpu.prog, head + 1, head, allow_movx=True)


def test_the_static_check_tells_a_poll_from_a_plain_read():
    source = """
        org 400h
        mov r0,#0A1h
poll:   movx a,@r0
        anl a,#08h
        jz poll
        movx a,@r0
        mov r5,a
        jmp poll
"""
    cpu = Console(load_cartridge(assemble_cart(source), "o2_rom")).cpu
    assert idle.may_return(cpu.prog, 0x403, 0x402, allow_movx=True)  # after the MOVX: ANL, JZ back
    # after the MOVX at 0406h: MOV R5,A and a JMP back to the other MOVX, not to this one
    assert not idle.may_return(cpu.prog, 0x407, 0x406, allow_movx=True)


class RearmingVdc(ScriptedVdc):
    """A `ScriptedVdc` on which every fifth read of A2 asks for /INT a cycle later: a read
    that brings the next /INT before the fast loop's stop, which `Cpu.vdc_read` must move."""

    def __init__(self) -> None:
        super().__init__(t1_period=0)
        self.a2_reads = 0

    def read(self, address: int, cycle: int) -> int:
        if address == 0xA2:
            self.a2_reads += 1
            if self.a2_reads % 5 == 0:
                bisect.insort(self.irq_at, cycle + 1)
        return super().read(address, cycle)

    def state(self) -> dict:
        return {**super().state(), "irq_at": tuple(self.irq_at)}


READ_LOOP = """
        org 400h
        jmp start
        jmp irq
start:  mov a,#0B4h
        outl p1,a
        {interrupts}
        mov r0,#0A2h
        mov r1,#10h
loop:   movx a,@r0      ; A2, in a block: it heads no poll (the write below is no idle form)
        inc r6
        mov a,r6
        movx @r1,a
        jmp loop
irq:    sel rb1
        mov r0,#0A1h
        movx a,@r0      ; acknowledges /INT
        inc r7
        retr
"""


def run_read_loop(interrupts: str, fast: bool, monkeypatch, recorded: bool) -> tuple[object, list, dict, int]:
    """The loop's run (the fast loop, or step() alone) and how often the board called vdc_read;
    recorded (the console's whole MOVX decode) or not (its VDC-only path)."""
    vdc = RearmingVdc()
    image = assemble_cart(READ_LOOP.format(interrupts=interrupts))
    console = Console(load_cartridge(image, "o2_rom"), vdc=vdc)
    records: list = []
    if recorded:
        console.add_bus_recorder(lambda *access: records.append(access))
    calls = 0
    vdc_read = Cpu.vdc_read

    def counted(cpu: Cpu, cycle: int) -> None:
        nonlocal calls
        calls += 1
        vdc_read(cpu, cycle)

    monkeypatch.setattr(Cpu, "vdc_read", counted)
    run_cycles(console, fast)
    monkeypatch.setattr(Cpu, "vdc_read", vdc_read)
    return console.cpu.state(), records, vdc.state(), calls


@pytest.mark.parametrize("recorded", [True, False])
def test_a_read_that_brings_int_closer_moves_the_stop_in_a_block(monkeypatch, recorded: bool) -> None:
    """With /INT enabled a block's read that heads no poll still has `vdc_read` called: the
    interrupts a read asks for are taken where stepping takes them."""
    fast = run_read_loop("en i", True, monkeypatch, recorded)
    slow = run_read_loop("en i", False, monkeypatch, recorded)
    assert fast[:3] == slow[:3]
    assert fast[0]["ram"][31] > 50  # R7 of bank 1: interrupts taken


@pytest.mark.parametrize("recorded", [True, False])
def test_a_block_read_that_heads_no_poll_skips_vdc_read_while_int_is_masked(
    monkeypatch, recorded: bool
) -> None:
    """With /INT masked `vdc_read` would do nothing at such a read: the board is not made to call it."""
    fast = run_read_loop("dis i", True, monkeypatch, recorded)
    slow = run_read_loop("dis i", False, monkeypatch, recorded)
    assert fast[:3] == slow[:3]
    reads = slow[3]  # stepping: the board calls vdc_read at every read
    assert reads > 1000 and fast[3] * 50 < reads
    assert not recorded or reads == sum(1 for record in fast[1] if record[1] == "R")
