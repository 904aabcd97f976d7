"""8048 core: the quirks in docs/hardware.md "The 8048" and MAME 0.251's timing, checked by running code."""

from __future__ import annotations

import warnings

import pytest
from machine_doubles import INTERRUPT_VECTORS, ScriptedVdc, bios_with, console_asm, console_with

from hilbridge.machine.bios import UnknownBiosWarning
from hilbridge.machine.timing import SampledT1Edges
from hilbridge.mcs48 import INSTRUCTIONS, UNDEFINED_OPCODES


def steps(console, count: int) -> None:
    for _ in range(count):
        console.step()


def quiet_bios(**entries: bytes) -> bytes:
    return bios_with(**entries)


@pytest.fixture(autouse=True)
def _ignore_unknown_bios():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        yield


def test_first_movx_write_is_stamped_at_the_end_of_its_instruction_cycle_14():
    console = console_asm(
        """
        org 400h
        dis i
        mov a,#0B4h
        outl p1,a
        mov r0,#0A0h
        mov r1,#00h
        clr a
        movx @r0,a
        """
    )
    records = []
    console.add_bus_listener(records.append)
    console.run_cycles(20)
    assert [(r.cycle, r.kind, r.address, r.value, r.p1) for r in records] == [(14, "W", 0xA0, 0, 0xB4)]
    assert records[0].target == "VDC"


@pytest.mark.parametrize("opcode", sorted(UNDEFINED_OPCODES))
def test_undefined_opcodes_run_as_one_cycle_nops(opcode):
    console = console_with(bytes([0x23, 0x5A, opcode]))  # MOV A,#5Ah ; undefined
    steps(console, 2)  # boot JMP, MOV
    before = (console.cpu.a, console.cpu.psw, bytes(console.cpu.ram), console.cycle)
    steps(console, 1)
    assert console.cycle == before[3] + 1
    assert console.cpu.pc == 0x403
    assert (console.cpu.a, console.cpu.psw, bytes(console.cpu.ram)) == before[:3]


def test_mov_a_psw_reads_bit_3_as_one_and_mov_psw_a_does_not_store_it():
    console = console_asm(
        """
        org 400h
        mov a,#0FFh
        mov psw,a
        mov a,psw
        mov r0,a
        clr a
        mov psw,a
        mov a,psw
        """
    )
    steps(console, 8)
    assert console.cpu.psw & 0x08 == 0
    assert console.cpu.ram[24] == 0xFF  # PSW FFh selected bank 1: R0 is RAM 24
    assert console.cpu.a == 0x08


@pytest.mark.parametrize(
    ("value", "psw", "result", "carry"),
    [
        (0x05, 0x40, 0x0B, 0),  # AC set: +06h, no carry (MAME 0.251 measurement)
        (0x00, 0x40, 0x06, 0),
        (0xFA, 0x00, 0x60, 1),  # +06h carries out, then +60h
        (0x12, 0x80, 0x72, 1),  # C set: +60h, C stays set
        (0x9A, 0x00, 0x00, 1),
        (0x45, 0x00, 0x45, 0),  # already BCD, C not set
        (0x45, 0x80, 0xA5, 1),  # DA A never clears C
    ],
)
def test_da_a_follows_the_intel_rule_as_mame_0251_runs_it(value, psw, result, carry):
    console = console_asm(
        f"""
        org 400h
        mov a,#{psw:03X}h
        mov psw,a
        mov a,#{value:03X}h
        da a
        """
    )
    steps(console, 5)
    assert (console.cpu.a, console.cpu.psw >> 7) == (result, carry)
    assert console.cpu.psw & 0x40 == psw & 0x40  # AC untouched


def test_add_and_addc_set_carry_and_auxiliary_carry():
    console = console_asm(
        """
        org 400h
        mov a,#0F8h
        add a,#08h
        mov r2,a
        mov a,psw
        mov r3,a
        mov a,#01h
        addc a,#01h
        """
    )
    steps(console, 8)
    assert console.cpu.ram[2] == 0x00
    assert console.cpu.ram[3] & 0xC0 == 0xC0  # C and AC
    assert console.cpu.a == 0x03  # 1 + 1 + carry


def test_pc_increment_wraps_inside_the_2k_half():
    console = console_with(b"\x04\xff")  # JMP 0FFh... then to 7FFh via the code below
    console.cpu.pc = 0x7FF
    console.prog[0x7FF] = 0x00  # NOP at the end of the lower half... (BIOS/cart view are bytes)
    console.step()
    assert console.cpu.pc == 0x000
    console.cpu.pc = 0xFFF
    console.prog[0xFFF] = 0x00
    console.step()
    assert console.cpu.pc == 0x800


def test_conditional_jump_at_the_last_byte_of_a_page_jumps_into_the_next_page():
    console = console_asm(
        """
        org 400h
        jmp 4FFh
        org 4FFh
        jnc 520h
        """
    )
    steps(console, 3)
    assert console.cpu.pc == 0x520


def test_jmp_takes_a11_from_sel_mb1_but_not_while_an_interrupt_is_serviced():
    vdc = ScriptedVdc(irq_at=(20,), t1_period=0)
    bios = quiet_bios(irq=b"\xf5\x04\x10")  # 003h: SEL MB1 ; JMP 010h (A11 forced 0)
    console = console_asm(
        """
        org 400h
        en i
        sel mb1
        jmp 100h
        """,
        vdc=vdc,
        bios=bios,
    )
    console.prog[0x900] = 0x00
    steps(console, 4)
    assert console.cpu.pc == 0x900  # JMP with MB1 outside an interrupt
    while not console.cpu.irq_in_progress:
        console.step()
    assert console.cpu.pc == 0x004  # entered at 003h and ran SEL MB1
    console.step()
    assert console.cpu.pc == 0x010


def test_call_pushes_pc_and_psw_high_bits_ret_keeps_psw_retr_restores_it():
    console = console_asm(
        """
        org 400h
        mov a,#0A0h
        mov psw,a
        call sub
        mov r7,a
        call sub2
        jmp $
sub:    clr c
        clr f0
        mov a,psw
        ret
sub2:   cpl c
        retr
        """
    )
    steps(console, 4)
    assert console.cpu.psw & 0x07 == 1
    assert (console.cpu.ram[8], console.cpu.ram[9]) == (0x05, 0x04 | 0xA0)
    steps(console, 4)
    assert console.cpu.psw == 0x00  # RET popped the PC only: C/F0 stay cleared, SP back to 0
    steps(console, 4)
    assert console.cpu.psw & 0x80 == 0  # RETR restored the pushed PSW (C was set in sub2)
    assert console.cpu.pc == 0x408


def test_stack_pointer_wraps_after_eight_levels():
    console = console_asm(
        """
        org 400h
sub:    call sub
        """
    )
    steps(console, 1 + 9)
    assert console.cpu.psw & 0x07 == 1
    assert console.cpu.ram[8] == 0x02 and console.cpu.ram[9] == 0x04


def test_movp_uses_the_current_page_and_movp3_page_3():
    console = console_asm(
        """
        org 400h
        mov a,#10h
        movp a,@a
        mov r2,a
        mov a,#0F0h
        movp3 a,@a
        mov r3,a
        mov a,#20h
        jmpp @a
        org 410h
        db 77h
        org 420h
        db 30h
        """
    )
    steps(console, 9)
    assert console.cpu.ram[2] == 0x77
    assert console.cpu.ram[3] == console.prog[0x3F0]
    assert console.cpu.pc == 0x430


def test_djnz_and_register_banks():
    console = console_asm(
        """
        org 400h
        sel rb1
        mov r7,#3
loop:   djnz r7,loop
        sel rb0
        mov r7,#9
        """
    )
    steps(console, 1 + 2 + 3 + 2)
    assert console.cpu.ram[31] == 0 and console.cpu.ram[7] == 9


def test_in_a_p1_returns_pins_and_latch():
    console = console_asm(
        """
        org 400h
        anl p1,#0F0h
        in a,p1
        """
    )
    steps(console, 3)
    assert console.cpu.a == 0xF0


def test_timer_counts_every_32_cycles_after_strt_t_clears_the_prescaler():
    nops = "\n".join("        nop" for _ in range(100))
    console = console_asm(
        f"""
        org 400h
        clr a
        mov t,a
        strt t
{nops}
        mov a,t
        """
    )
    steps(console, 1 + 3)
    start = console.cycle
    steps(console, 101)
    assert console.cpu.a == (console.cycle - start) // 32 == 3


def test_timer_overflow_with_interrupt_disabled_sets_the_flag_once_and_no_interrupt_later():
    console = console_asm(
        """
        org 400h
        mov a,#0FFh
        mov t,a
        strt t
wait:   jtf over
        jmp wait
over:   en tcnti
        jtf wrong
        mov r5,#1
        jmp $
wrong:  mov r5,#2
        """
    )
    console.run_cycles(200)
    assert console.cpu.ram[5] == 1
    assert not console.cpu.irq_in_progress


def test_timer_interrupt_enters_vector_7_with_two_cycles():
    console = console_asm(
        """
        org 400h
        mov a,#0FFh
        mov t,a
        en tcnti
        strt t
        jmp $
        """,
        bios=quiet_bios(timer=b"\x04\x07"),  # 007h: JMP 007h
    )
    steps(console, 5)
    strt_end = console.cycle
    while not console.cpu.irq_in_progress:
        console.step()
    # overflow 32 cycles after STRT T; the JMP $ ending there flags it; the next boundary enters
    # (2 cycles) and runs the JMP at 007h (2 cycles)
    assert console.cycle - strt_end == 32 + 2 + 2
    assert console.cpu.pc == 0x007


def test_external_interrupt_has_priority_over_the_timer():
    vdc = ScriptedVdc(irq_at=(30,), t1_period=0)
    console = console_asm(
        """
        org 400h
        mov a,#0FFh
        mov t,a
        strt t
        en tcnti
        en i
        jmp $
        """,
        vdc=vdc,
        bios=quiet_bios(irq=b"\x04\x03", timer=b"\x04\x07"),
    )
    console.run_cycles(120)
    assert console.cpu.pc == 0x003
    assert console.cpu.timer_overflow  # the timer request waits behind the external one


def test_level_interrupt_reenters_after_retr_until_a1_is_read():
    vdc = ScriptedVdc(irq_at=(30,), t1_period=0)
    bios = quiet_bios(irq=b"\x1e\x93")  # INC R6 ; RETR
    console = console_asm(
        """
        org 400h
        en i
        jmp $
        """,
        vdc=vdc,
        bios=bios,
    )
    console.run_cycles(200)
    assert console.cpu.ram[6] > 10  # re-entered again and again: /INT is a level


def test_reading_a1_releases_the_interrupt_level():
    vdc = ScriptedVdc(irq_at=(30,), t1_period=0)
    bios = quiet_bios(irq=b"\x1e\xb8\xa1\x80\x93")  # INC R6 ; MOV R0,#A1h ; MOVX A,@R0 ; RETR
    console = console_asm(
        """
        org 400h
        mov a,#0B4h
        outl p1,a
        en i
        jmp $
        """,
        vdc=vdc,
        bios=bios,
    )
    console.run_cycles(300)
    assert console.cpu.ram[6] == 1


def test_counter_mode_counts_falling_edges_of_t1():
    vdc = ScriptedVdc(t1_period=23, t1_high=4)
    console = console_asm(
        """
        org 400h
        clr a
        mov t,a
        strt cnt
        jmp $
        """,
        vdc=vdc,
    )
    steps(console, 4)
    start = console.cycle
    console.run_cycles(23 * 50)
    edges = SampledT1Edges(vdc.t1).falls(vdc.t1(start - 1), start, console.cycle - 1)
    assert console.cpu.timer_value(console.cycle) == edges
    assert 49 <= edges <= 51


def test_jt1_and_jnt1_sample_t1_at_the_end_of_the_instruction():
    vdc = ScriptedVdc(t1_period=23, t1_high=4)  # T1 high at cycles 19-22 of every 23
    console = console_asm(
        """
        org 400h
wait:   jnt1 wait
        mov a,t
        """,
        vdc=vdc,
    )
    while console.cpu.pc != 0x402:
        console.step()
    # JNT1 ends at cycles 4, 6, 8, ...; T1 is high from cycle 19: the JNT1 ending at 20 falls through
    assert console.cycle == 20


def test_jni_hack_takes_the_polled_branch_before_entering_the_interrupt():
    vdc = ScriptedVdc(irq_at=(21,), t1_period=0)
    console = console_asm(
        """
        org 400h
        en i
poll:   jni taken
        jmp poll
taken:  jmp $
        """,
        vdc=vdc,
        bios=quiet_bios(irq=b"\x04\x03"),  # JMP 003h: stay in the handler
    )
    console.run_cycles(60)
    sp = (console.cpu.psw & 7) - 1
    pushed = console.cpu.ram[8 + 2 * sp] | (console.cpu.ram[9 + 2 * sp] & 0x0F) << 8
    assert console.cpu.irq_in_progress
    assert pushed == 0x405  # the JNI target, although the JNI itself fell through


def test_every_opcode_takes_the_cycles_of_the_table():
    for opcode, instruction in enumerate(INSTRUCTIONS):
        console = console_with(bytes([opcode, 0x00]))
        console.step()
        start = console.cycle
        console.step()
        assert console.cycle - start == instruction.cycles, instruction.text


def test_reset_state_is_as_mame_and_intel_give_it():
    console = console_with(b"")
    cpu = console.cpu
    assert (cpu.pc, cpu.p1, cpu.p2, cpu.bus, cpu.a11) == (0, 0xFF, 0xFF, 0xFF, 0)
    assert not (cpu.xirq_enabled or cpu.tirq_enabled or cpu.irq_in_progress or cpu.timer_flag)
    assert cpu.timer_mode == 0 and cpu.psw & 0x3F == 0
    assert (console.p1, console.p2) == (0xFF, 0xFF)


@pytest.mark.parametrize(("drop", "timer_entries"), [(False, 1), (True, 0)])
def test_dis_tcnti_drops_a_pending_timer_interrupt(drop, timer_entries):
    # the timer overflows while the external handler runs; the request waits for RETR unless the
    # handler does DIS TCNTI (EN TCNTI again does not bring it back)
    drop_code = "dis tcnti\n        en tcnti" if drop else "nop\n        nop"
    console = console_asm(
        INTERRUPT_VECTORS
        + f"""
        mov a,#0F0h
        mov t,a
        strt t
        en tcnti
        en i
        jmp $
irq:    mov r0,#0A1h
        movx a,@r0
        mov r7,#0
        djnz r7,$
        djnz r7,$
        {drop_code}
        retr
tirq:   inc r5
        retr
        """,
        vdc=ScriptedVdc(irq_at=(30,), t1_period=0),
    )
    console.run_cycles(2000)
    assert console.cpu.ram[5] == timer_entries


def test_movp_at_the_last_byte_of_a_page_reads_the_next_page():
    console = console_asm(
        """
        org 400h
        mov a,#10h
        jmp 4FFh
        org 4FFh
        movp a,@a
        org 510h
        db 5Ah
        org 410h
        db 0A5h
        """
    )
    steps(console, 4)
    assert console.cpu.a == 0x5A
