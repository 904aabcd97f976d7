"""VDC accesses keep the fast loop running (the stop is recomputed at the access) and stay exact."""

from __future__ import annotations

import warnings

from hypothesis import example, given, settings
from hypothesis import strategies as st
from machine_doubles import assemble_cart

from hilbridge.machine import idle
from hilbridge.machine.bios import UnknownBiosWarning
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
    if fast:
        console.cpu.run_until(CYCLES)
    else:
        console.cpu.target = CYCLES
        while console.cycle < CYCLES:
            console.cpu.step()
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
@given(
    image=st.binary(min_size=64, max_size=64),
    offset=st.integers(0, 48),
    a=st.integers(0, 255),
    psw=st.integers(0, 255),
    f1=st.booleans(),
    a11=st.sampled_from([0, 0x800]),
)
# a 64-instruction loop: JMP 07C3h, NOPs on to 07FFh, the PC wraps to the BIOS's JMP 0400h
@example(image=bytes([0x00, 0xE4, 0xC3]) + bytes(61), offset=0, a=0, psw=0, f1=False, a11=0)
def test_a_read_the_static_check_lets_pass_never_heads_a_polling_loop(image, offset, a, psw, f1, a11):
    """`idle.may_return` (which decides whether step() runs after a VDC read) must say yes wherever
    `idle.run_iteration` finds a loop, for any A, PSW, F1 and A11."""
    cart = bytearray(2048)
    cart[: len(image)] = image
    cart[offset] = 0x80  # MOVX A,@R0 at 0400h + offset
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        cpu = Console(load_cartridge(bytes(cart), "o2_rom")).cpu
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
