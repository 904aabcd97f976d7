"""Compiled blocks must do what the fast loop does instruction by instruction, and that what
`step()` does: where a block's instruction moves the stop, where a block loops on itself and where
blocks end at the jumps, calls and returns between them."""

from __future__ import annotations

import warnings

import pytest
from fixture_runs import SPECS, cart_image
from hypothesis import example, given, settings
from hypothesis import strategies as st
from machine_doubles import RELOADING_VECTORS, ScriptedVdc, assemble_cart, step_all

from hilbridge.machine import idle
from hilbridge.machine.bios import UnknownBiosWarning
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.cpu import Cpu


class WriteScheduledIrqVdc(ScriptedVdc):
    """A scripted VDC on which a write of v > 0 to A0h raises /INT v cycles later (as enabling the
    sound interrupt can bring the next /INT close): the write moves the fast loop's stop."""

    def write(self, address: int, value: int, cycle: int) -> None:
        super().write(address, value, cycle)
        if address == 0xA0 and value:
            self.irq_at = sorted({*self.irq_at, cycle + value})


def run(image: bytes, cycles: int, fast: bool, vdc: ScriptedVdc, hot: int = 1, skip: bool = True):
    """`cycles` of `image` through run_until (fast) or step(): the state and everything reported."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        console = Console(load_cartridge(image, "o2_rom"), vdc=vdc)
    console.cpu.block_hot = hot
    console.cpu.skip_idle = skip
    records = []
    console.add_bus_listener(records.append)
    if fast:
        console.cpu.run_until(cycles)
    else:
        step_all(console.cpu, cycles)
    return console.cpu.state(), bytes(console.ram), records, vdc.writes


def assert_fast_equals_step(image: bytes, cycles: int, vdc_of, hot: int = 1):
    fast = run(image, cycles, True, vdc_of(), hot)
    assert fast == run(image, cycles, False, vdc_of(), hot)
    return fast


INTERRUPTS_AND_P1 = (
    RELOADING_VECTORS.replace("        mov a,#{reload}\n        mov t,a\n", "") + "        mov r0,#0A0h\n"
)
"""The vectors, interrupt routines that count in R5 and R6, the VDC selected and R0 at A0h."""
MOVED_STOP = (
    INTERRUPTS_AND_P1
    + """        en i
loop:   mov a,r6
        inc r6
        anl a,#{mask}
        movx @r0,a      ; /INT rises A cycles from here: maybe inside the rest of this block
        {tail}
        jmp loop
"""
)


@settings(max_examples=60, deadline=None)
@given(mask=st.sampled_from([0x07, 0x0F, 0x1F]), nops=st.integers(1, 12))
def test_a_block_stops_where_a_board_write_moved_the_stop_inside_its_rest(mask, nops):
    """The write's new stop may fall after the next instruction but before the block's end: the
    interrupt must still be taken at the instruction boundary step() takes it at."""
    image = assemble_cart(MOVED_STOP.format(mask=mask, tail="\n        nop" * nops))
    state = assert_fast_equals_step(image, 4000, lambda: WriteScheduledIrqVdc(t1_period=0))[0]
    assert state["ram"][5] > 0  # interrupts were taken


LOOPING = (
    RELOADING_VECTORS
    + """        mov r0,#0A0h
        mov r7,#{count}
        mov a,#{timer}
        mov t,a
        {setup}
loop:   {body}
        {branch} loop
        inc r4
        jmp start
"""
)
BODIES = (
    "inc r3",
    "mov a,r3",
    "dec r2",
    "add a,#5Ah",
    "xrl a,r2",
    "mov a,t",
    "nop",
    "movx @r0,a",  # a write to A0h: /INT some cycles later (WriteScheduledIrqVdc)
    "jtf out",
    "jt1 out",
    "mov a,psw",
    "sel rb1",
    "sel rb0",
    "mov psw,a",  # the bank (and the stack pointer) from A
)
BRANCHES = ("jnz", "jz", "djnz r7,", "jmp", "jt1", "jnt1", "jtf", "jnc", "jb0")
SETUPS = (
    "",
    "strt t",
    "en tcnti\n        strt t",
    "en i",
    "en i\n        en tcnti\n        strt t",
    "strt cnt",
)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(
    body=st.lists(st.sampled_from(BODIES), max_size=5),
    branch=st.sampled_from(BRANCHES),
    setup=st.sampled_from(SETUPS),
    timer=st.integers(0, 255),
    reload=st.integers(0xE0, 0xFF),
    count=st.integers(0, 255),
    targets=st.lists(st.integers(1, 6000), max_size=4).map(sorted),
    irq_at=st.lists(st.integers(0, 6000), max_size=4).map(lambda cycles: tuple(sorted(cycles))),
    skip=st.booleans(),
)
def test_a_block_looping_on_itself_stops_where_stepping_would(
    body, branch, setup, timer, reload, count, targets, irq_at, skip
):
    """A loop compiled into one block that starts its next pass itself: timer overflows (flag and
    interrupt), /INT (scheduled and raised by its own writes), the counter on T1, tests of T1 and
    of the timer flag, register bank switches and the ends of runs all fall where stepping has them;
    with no body, one-instruction loops (`djnz r7,$`, `jmp $`), which idle skipping (`skip`) would
    otherwise take."""
    source = LOOPING.format(
        reload=reload, count=count, timer=timer, setup=setup, body="\n        ".join(body), branch=branch
    )
    source = source.replace("inc r4\n", "inc r4\nout:    inc r4\n")
    image = assemble_cart(source)

    def vdc():
        return WriteScheduledIrqVdc(irq_at=irq_at, t1_period=23, t1_high=4)

    fast = run_in_steps(image, [*targets, 6000], vdc(), skip)
    assert fast == run(image, 6000, False, vdc(), skip=False)


def run_in_steps(image: bytes, targets: list[int], vdc: ScriptedVdc, skip: bool = True):
    """`run` through run_until, in several runs that end at `targets` (idle skipping on or off)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        console = Console(load_cartridge(image, "o2_rom"), vdc=vdc)
    console.cpu.block_hot = 1
    console.cpu.skip_idle = skip
    records = []
    console.add_bus_listener(records.append)
    for target in targets:
        console.cpu.run_until(target)
    return console.cpu.state(), bytes(console.ram), records, vdc.writes


CHAINING = (
    INTERRUPTS_AND_P1
    + """        {setup}
main:   call sub1
        {between}
        call sub2
        jmp main
sub1:   {body1}
        ret
sub2:   {body2}
        ret
"""
)
ROUTINE_BODIES = (
    "inc r3",
    "mov a,r3",
    "add a,#0C3h",
    "movx @r0,a",  # a write to A0h: /INT some cycles later (WriteScheduledIrqVdc)
    "sel mb1",  # JMPs and CALLs then go to the other 2 KB half
    "sel mb0",
    "mov r1,#8\n        inc @r1",  # the return address on the stack moves on by one
    "call sub2",
    "jnz sub2",
    "jt1 sub1",
    "mov a,t",
    "nop",
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    body1=st.lists(st.sampled_from(ROUTINE_BODIES), max_size=4),
    between=st.lists(st.sampled_from(ROUTINE_BODIES), max_size=3),
    body2=st.lists(st.sampled_from(ROUTINE_BODIES), max_size=4),
    setup=st.sampled_from(SETUPS),
    targets=st.lists(st.integers(1, 6000), max_size=3).map(sorted),
    irq_at=st.lists(st.integers(0, 6000), max_size=4).map(lambda cycles: tuple(sorted(cycles))),
)
@example(
    body1=["call sub2"],
    between=[],
    body2=["inc r3", "sel mb1", "jt1 sub1"],
    setup="strt t",
    targets=[],
    irq_at=(),
)
def test_blocks_ending_at_jumps_calls_and_returns_equal_stepping(
    body1, between, body2, setup, targets, irq_at
):
    """Blocks end at CALL, JMP and RET, and a JMP back to a block's start loops (when A11 is as
    compiled); a SEL MB1, a moved return address or an interrupt on the way must give what stepping
    gives."""
    joined = "\n        ".join
    image = assemble_cart(
        CHAINING.format(setup=setup, body1=joined(body1), between=joined(between), body2=joined(body2))
    )

    def vdc():
        return WriteScheduledIrqVdc(irq_at=irq_at, t1_period=23, t1_high=4)

    fast = run_in_steps(image, [*targets, 6000], vdc())
    assert fast == run(image, 6000, False, vdc())


ACCUMULATOR = (
    INTERRUPTS_AND_P1
    + """        mov r1,#20h
        mov a,#{seed}
        {setup}
loop:   {body}
        jmp loop
out:    inc r4
        jmp loop
sub:    {routine}
        ret
"""
)
A_AND_PSW = (
    "add a,r2",
    "addc a,#0A7h",
    "addc a,@r1",
    "da a",
    "rlc a",
    "rrc a",
    "cpl a",
    "swap a",
    "xrl a,r4",
    "cpl c",
    "clr c",
    "cpl f0",
    "mov a,psw",
    "mov psw,a",  # the bank and the stack pointer from A
    "sel rb1",
    "sel rb0",
    "xch a,r2",
    "xch a,@r1",
    "xchd a,@r1",
    "mov r3,a",
    "inc a",
    "call sub",  # the stack pointer in PSW, a routine that changes A and PSW
    "movx @r0,a",  # the board reads A: a write to A0h, /INT some cycles later
    "movx a,@r0",  # the board sets A
    "mov t,a",  # the timer reads A
    "mov a,t",  # and sets it
    "movd p5,a",  # the expander reads A
    "movd a,p4",  # and sets it
    "in a,p1",
    "jc out",  # side exits with A and PSW changed before them
    "jnc out",
    "jz out",
    "jnz out",
    "jb7 out",
    "jf0 out",
    "jtf out",
    "jt1 out",
    "djnz r7,out",
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    body=st.lists(st.sampled_from(A_AND_PSW), min_size=1, max_size=12),
    routine=st.lists(st.sampled_from(A_AND_PSW[:20]), max_size=3),
    setup=st.sampled_from(SETUPS),
    seed=st.integers(0, 255),
    targets=st.lists(st.integers(1, 6000), max_size=3).map(sorted),
    irq_at=st.lists(st.integers(0, 6000), max_size=4).map(lambda cycles: tuple(sorted(cycles))),
)
def test_blocks_keeping_a_and_psw_in_locals_equal_stepping(body, routine, setup, seed, targets, irq_at):
    """A block keeps A and PSW in locals (`blocks.CACHED`): they must reach the CPU before every
    instruction that calls the board or a CPU method (which read A), be read again after it (which
    may set A), and be written back at every exit: side exits, the stop tests, the loop's passes."""
    joined = "\n        ".join
    source = ACCUMULATOR.format(seed=seed, setup=setup, body=joined(body), routine=joined(routine))
    image = assemble_cart(source)

    def vdc():
        return WriteScheduledIrqVdc(irq_at=irq_at, t1_period=23, t1_high=4)

    fast = run_in_steps(image, [*targets, 6000], vdc())
    assert fast == run(image, 6000, False, vdc())


def fixture_console(name: str) -> Console:
    """A console on fixture cart `name`, its slot as the cart's spec says."""
    return Console(load_cartridge(cart_image(name), SPECS[name].slot))


@pytest.mark.parametrize("name", ["bank_rally", "bank_o2rom_8k", "bank_ktaa", "cpu_alu"])
def test_a_block_compiles_once_per_start_and_program_view(name, monkeypatch):
    """Compiling is worth it only once: a block whose start the fast loop counted in one bank's
    view must not be compiled into the view a bank switch brought (it was compiled again and again
    on bank_rally, 485 times in 600 frames), and PCs inside compiled blocks, where the loop comes
    one by one after a run's start or an interrupt, do not each compile a copy of the rest."""
    console = fixture_console(name)
    compiled: list[tuple[int, int]] = []
    original = Cpu._block_function

    def counted(cpu: Cpu, pc: int, source: str):
        compiled.append((id(cpu.blocks), pc))
        return original(cpu, pc, source)

    monkeypatch.setattr(Cpu, "_block_function", counted)
    console.run_frames(300)
    assert len(compiled) == len(set(compiled))
    assert len(compiled) <= 40


FLAG_CHAIN = (
    INTERRUPTS_AND_P1
    + """        mov r2,#{r2}
        mov r3,#{r3}
        mov a,#{seed}
loop:   {body}
        mov r4,a
        mov a,psw
        mov r5,a        ; the flags each pass ends with
        mov a,r4
        jmp loop
out:    inc r6
        jmp loop
"""
)
FLAG_USERS = (
    "add a,r2",
    "add a,#0C9h",
    "add a,r3",
    "addc a,r3",  # reads the carry the ADD before set
    "addc a,#17h",
    "rlc a",
    "da a",  # reads C and AC
    "mov a,psw",
    "cpl c",
    "jc out",
    "jnc out",
    "movx @r0,a",  # a call out: the PSW reaches the CPU first
    "mov r7,a",
)


@pytest.mark.slow  # 5-12 s; the development loop has the other blocks = stepping tests
@settings(max_examples=200, deadline=None)
@given(
    body=st.lists(st.sampled_from(FLAG_USERS), min_size=2, max_size=10),
    seed=st.integers(0, 255),
    r2=st.integers(0, 255),
    r3=st.integers(0, 255),
)
def test_flags_of_a_chain_of_adds_equal_stepping(body, seed, r2, r3):
    """A block computes C and AC once for ADDs in a row (`blocks._drop_overwritten_flags`); an ADDC,
    a DA, a MOV A,PSW, a carry branch or a call out between them must still see each one's flags."""
    source = FLAG_CHAIN.format(body="\n        ".join(body), seed=seed, r2=r2, r3=r3)
    image = assemble_cart(source)
    fast = run_in_steps(image, [3000], WriteScheduledIrqVdc(t1_period=0))
    assert fast == run(image, 3000, False, WriteScheduledIrqVdc(t1_period=0))


@pytest.mark.parametrize("name", ["bank_rally", "timer_counter"])
def test_the_static_spin_search_runs_once_per_start_and_program_view(name, monkeypatch):
    """Whether a hot PC may anchor a spin loop depends only on the program view's bytes: asked
    again at each round of a covered PC (timer_counter asked ~600 times in 600 frames), it cost
    more than the fast loop it guards."""
    console = fixture_console(name)
    asked: list[tuple[int, int]] = []
    original = idle.may_return

    def counted(prog, start, goal, allow_movx):
        if not allow_movx:
            asked.append((id(console.cpu.blocks), start))
        return original(prog, start, goal, allow_movx)

    monkeypatch.setattr(idle, "may_return", counted)
    console.run_frames(300)
    assert asked and len(asked) == len(set(asked))


SHARED = (
    INTERRUPTS_AND_P1
    + """        mov r1,#{pointer}
        {setup}
main:   call work
        sel rb1
        call work
        sel rb0
        call nest
        {between}
        jmp main
nest:   call work
        ret
work:   {body1}
        call put
        {body2}
        ret
put:    {routine}
        ret
"""
)
"""One routine (`work`, with a short routine run inline) run in both register banks and at two
stack depths: a block compiled for one must hand the others to their variants."""
SHARED_BODIES = (
    "inc r2",
    "mov a,r2",
    "add a,r3",
    "mov r3,a",
    "xch a,r4",
    "djnz r7,$+2",
    "movx @r0,a",
    "mov @r1,a",  # R1 at the stack (or a register): the return address may change
    "inc @r1",
    "xchd a,@r1",
    "mov a,psw",
    "mov psw,a",  # the bank and the stack pointer from A
    "sel rb1",
    "sel rb0",
    "jz out",
    "cpl a",
)


@pytest.mark.slow  # ~16 s; the development loop has the other blocks = stepping tests
@settings(max_examples=150, deadline=None)
@given(
    body1=st.lists(st.sampled_from(SHARED_BODIES), max_size=4),
    body2=st.lists(st.sampled_from(SHARED_BODIES), max_size=3),
    routine=st.lists(st.sampled_from(SHARED_BODIES), max_size=4),
    between=st.sampled_from(("", "inc r5", "mov a,psw\n        anl a,#0F8h\n        mov psw,a")),
    pointer=st.sampled_from((0x0A, 0x0C, 0x0D, 0x20)),
    setup=st.sampled_from(SETUPS),
    hot=st.sampled_from((1, 2, 5)),
    targets=st.lists(st.integers(1, 8000), max_size=3).map(sorted),
    irq_at=st.lists(st.integers(0, 8000), max_size=4).map(lambda cycles: tuple(sorted(cycles))),
)
def test_blocks_run_in_other_banks_and_stack_depths_equal_stepping(
    body1, body2, routine, between, pointer, setup, hot, targets, irq_at
):
    """A block has its registers' and stack's addresses as numbers for the bank and stack pointer it
    was compiled for: run with others it must run their variant (or, until that is hot, one
    instruction), loop back only where both are as at its entry, and a RET after an inline routine
    must read the return address back whenever a write through R1 or a new PSW may have moved it."""
    joined = "\n        ".join
    source = SHARED.format(
        pointer=pointer,
        setup=setup,
        body1=joined(body1),
        body2=joined(body2),
        routine=joined(routine),
        between=between,
    )
    image = assemble_cart(source + "out:    inc r6\n        jmp main\n")

    def vdc():
        return WriteScheduledIrqVdc(irq_at=irq_at, t1_period=23, t1_high=4)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownBiosWarning)
        console = Console(load_cartridge(image, "o2_rom"), vdc=vdc())
    console.cpu.block_hot = hot
    records: list[object] = []
    console.add_bus_listener(records.append)
    for target in [*targets, 8000]:
        console.cpu.run_until(target)
    fast = console.cpu.state(), bytes(console.ram), records, console.vdc.writes
    assert fast == run(image, 8000, False, vdc(), hot)


REGISTER_TRAFFIC = (
    INTERRUPTS_AND_P1
    + """        mov r1,#{pointer}
        mov a,#{seed}
loop:   {body}
        jmp loop
"""
)
REGISTER_MOVES = (
    *(
        form.format(n=n)
        for form in (
            "inc r{n}",
            "dec r{n}",
            "mov r{n},a",
            "mov r{n},#5Ah",
            "mov a,r{n}",
            "add a,r{n}",
            "xch a,r{n}",
        )
        for n in (2, 3, 7)
    ),
    "mov @r1,a",  # through a pointer that may hold a register's address
    "inc @r1",
    "mov a,@r1",
    "movx @r0,a",
)


@settings(max_examples=100, deadline=None)
@given(
    body=st.lists(st.sampled_from(REGISTER_MOVES), min_size=2, max_size=8),
    pointer=st.sampled_from([2, 3, 7, 0x20]),
    seed=st.integers(0, 255),
)
@example(body=["inc r2", "mov a,r2"], pointer=0x20, seed=0)  # INC then MOV A: `_forward_writes`
@example(body=["inc r2", "mov a,r3"], pointer=0x20, seed=0)
@example(body=["mov r3,a", "mov @r1,a", "mov a,r3"], pointer=3, seed=9)
def test_blocks_writing_and_reading_registers_equal_stepping(body, pointer, seed):
    """Register writes and reads back to back, also through @R1 at a register (the block compiler
    forwards a register's new value to A: `blocks._forward_writes`)."""
    image = assemble_cart(REGISTER_TRAFFIC.format(body="\n        ".join(body), pointer=pointer, seed=seed))
    assert_fast_equals_step(image, 3000, lambda: ScriptedVdc(t1_period=0))
