"""Idle-loop skipping is exact: the same bus records and state as stepping every instruction."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_runs import built_cart
from hypothesis import example, given, settings
from hypothesis import strategies as st
from machine_doubles import (
    INTERRUPT_VECTORS,
    MOVX_IN_RANDOM_CODE,
    ScriptedVdc,
    assemble_cart,
    cpu_with_movx_at,
)

from hilbridge.machine import idle
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.oracle.carts import load_manifest

VBLS = tuple(range(5000, 60000, 5983))

POLLERS = {
    "jb3": """
        org 400h
        mov a,#0B4h
        outl p1,a
        mov r0,#0A1h
wait:   movx a,@r0
        jb3 vbl
        jmp wait
vbl:    inc r6
        mov a,r6
        mov r1,#0A3h
        movx @r1,a
        jmp wait
""",
    "anl_jz_with_timer": """
        org 400h
        mov a,#0B4h
        outl p1,a
        strt t
        mov r0,#0A1h
wait:   movx a,@r0
        nop
        anl a,#08h
        jz wait
        mov a,t
        mov r1,#0A3h
        movx @r1,a
        jmp wait
""",
    "interrupt_driven": """
        org 400h
        jmp start
        jmp irq
start:  mov a,#0B4h
        outl p1,a
        mov r0,#0A2h
        en i
wait:   movx a,@r0
        jnz wait
        jmp wait
irq:    sel rb1
        mov r0,#0A1h
        movx a,@r0
        inc r7
        mov a,r7
        mov r1,#0A3h
        movx @r1,a
        retr
""",
}


def run(source: str, skip: bool, frames: int = 8, hstatus_period: int = 0):
    vdc = ScriptedVdc(irq_at=VBLS, t1_period=23, t1_high=4, hstatus_period=hstatus_period)
    console = Console(load_cartridge(assemble_cart(source), "o2_rom"), vdc=vdc)
    console.cpu.skip_idle = skip
    records: list = []
    console.add_bus_listener(records.append)
    console.run_frames(frames)
    return records, console.cpu.state(), vdc.writes, vdc.reads


@pytest.mark.parametrize("name", sorted(POLLERS))
def test_skipping_gives_the_same_records_as_stepping(name):
    skipped = run(POLLERS[name], skip=True)
    stepped = run(POLLERS[name], skip=False)
    assert skipped[:3] == stepped[:3]
    assert len(skipped[2]) >= 6  # the loop did see VBLs and wrote


@pytest.mark.parametrize("name", ["jb3", "anl_jz_with_timer"])
def test_skipping_replaces_most_reads(name):
    skipped, stepped = run(POLLERS[name], skip=True), run(POLLERS[name], skip=False)
    assert skipped[3] * 20 < stepped[3]  # far fewer real VDC reads...
    assert len([r for r in skipped[0] if r.kind == "R"]) == stepped[3]  # ...but every read reported


SPINNERS = {
    "jmp_self_until_interrupt": INTERRUPT_VECTORS
    + """        mov a,#80h
        mov t,a
        strt t
        en tcnti
        en i
spin:   jmp spin
irq:    mov r0,#0A1h
        movx a,@r0
        inc r6
        mov a,r6
        mov r1,#0A3h
        movx @r1,a
        retr
tirq:   inc r5
        mov a,r5
        mov r1,#0AAh
        movx @r1,a
        retr
""",
    "djnz_delay": """
        org 400h
        mov a,#0B4h
        outl p1,a
loop:   mov r7,#0
        djnz r7,$
        mov r6,#37
        djnz r6,$
        inc r5
        mov a,r5
        mov r1,#0A3h
        movx @r1,a
        jmp loop
""",
    "nop_delay_with_interrupts": INTERRUPT_VECTORS
    + """        mov a,#0F0h
        mov t,a
        strt t
        en tcnti
        en i
loop:   mov r7,#0
delay:  nop
        nop
        nop
        djnz r7,delay
        mov r6,#3
short:  nop
        djnz r6,short
        inc r5
        mov a,r5
        mov r1,#0A3h
        movx @r1,a
        jmp loop
irq:    mov r0,#0A1h
        movx a,@r0
        inc r4
        retr
tirq:   inc r3
        mov a,#0F0h
        mov t,a
        retr
""",
    "jni_hold": """
        org 400h
loop:   jni hold
        inc r6
        jmp loop
hold:   jni hold
        inc r5
        jmp loop
""",
    "jtf_wait": """
        org 400h
        mov a,#0B4h
        outl p1,a
round:  mov a,#0C0h
        mov t,a
        strt t
wait:   jtf over
        jmp wait
over:   inc r5
        mov a,r5
        mov r1,#0A3h
        movx @r1,a
        jmp round
""",
    "t1_edges": """
        org 400h
        mov a,#0B4h
        outl p1,a
loop:   jnt1 $
        jt1 $
        inc r5
        mov a,r5
        mov r1,#0A3h
        movx @r1,a
        jmp loop
""",
    "jni_falling_through": """
        org 400h
        mov a,#0B4h
        outl p1,a
wait:   jni seen
        jmp wait
seen:   mov r0,#0A1h
        movx a,@r0
        inc r5
        mov a,r5
        mov r1,#0A3h
        movx @r1,a
        jmp wait
""",
    "keyboard_poll_until_t1": """
        org 400h
        mov a,#0B0h
        outl p1,a
wait:   mov a,#0F1h
        outl p2,a
        in a,p2
        ins a,bus
        jnt1 wait
        inc r5
        mov a,r5
        mov r1,#0A3h
        movx @r1,a
        jt1 $
        jmp wait
""",
}
SPINNERS["flag_delay_with_interrupts"] = SPINNERS["nop_delay_with_interrupts"].replace(
    "delay:  nop\n        nop\n", "delay:  nop\n        clr f0\n"
)
"""The same delay loop with a flag write in it: no longer a countdown block, an idle anchor."""


@pytest.mark.parametrize("name", sorted(SPINNERS))
def test_spin_loop_skipping_gives_the_same_records_as_stepping(name):
    skipped = run(SPINNERS[name], skip=True, frames=4)
    stepped = run(SPINNERS[name], skip=False, frames=4)
    assert skipped[:3] == stepped[:3]
    if name == "jni_hold":  # counts until the first VBL, then holds on the /INT level for good
        assert skipped[1]["ram"][6] > 100 and skipped[1]["pc"] == 0x405
    else:
        assert len(skipped[2]) >= 4


@pytest.mark.parametrize("region", ["ntsc", "pal"])
def test_t1_spin_loops_on_the_real_vdc_give_the_same_records_as_stepping(region):
    """`JNT1 $` / `JT1 $` are skipped only up to the VDC's next T1 change (hblank, vblank)."""
    runs = []
    for skip in (True, False):
        console = Console(load_cartridge(assemble_cart(SPINNERS["t1_edges"]), "o2_rom"), region=region)
        console.cpu.skip_idle = skip
        records: list = []
        console.add_bus_listener(records.append)
        console.run_frames(3)
        runs.append((records, console.cpu.state()))
    assert runs[0] == runs[1]
    assert len(runs[0][0]) > 3 * 200  # one write per line outside vblank


def test_delay_loops_are_skipped_not_stepped(monkeypatch):
    """A DJNZ delay loop of idle instructions is skipped (only NOPs and a DJNZ: a countdown block
    runs it, `test_cpu_countdown.py`)."""
    monkeypatch.setattr("hilbridge.machine.cpu.block_source", lambda *args, **kwargs: None)  # no blocks:
    nops = {}  # every NOP runs through its handler
    for skip in (True, False):
        console = Console(
            load_cartridge(assemble_cart(SPINNERS["flag_delay_with_interrupts"]), "o2_rom"),
            vdc=ScriptedVdc(irq_at=VBLS, t1_period=23, t1_high=4),
        )
        console.cpu.skip_idle = skip
        nop = console.cpu.handlers[0x00]
        count = [0]

        def counted(pc: int, cycle: int, nop=nop, count=count) -> int:
            count[0] += 1
            return nop(pc, cycle)

        console.cpu.handlers[0x00] = counted
        console.run_frames(4)
        nops[skip] = count[0]
    assert nops[True] * 20 < nops[False]


POLL_A_BIT_ZERO = """
        org 400h
        mov a,#0B4h
        outl p1,a
        mov r0,#0A1h
wait:   movx a,@r0
        jb0 wait
        jb3 vbl
        jmp wait
vbl:    mov r1,#0A3h
        movx @r1,a
        jmp wait
"""


@pytest.mark.parametrize(("name", "source"), [*sorted(POLLERS.items()), ("jb0", POLL_A_BIT_ZERO)])
def test_skipping_across_changes_of_ignored_status_bits_is_exact(name, source):
    # A1 bit 0 toggles every 11 cycles: loops that ignore it skip across, the one testing it cannot
    skipped = run(source, skip=True, hstatus_period=11)
    stepped = run(source, skip=False, hstatus_period=11)
    assert skipped[:3] == stepped[:3]
    assert {r.value & 1 for r in stepped[0] if r.kind == "R"} == {0, 1}


@pytest.mark.parametrize(
    ("body", "value", "care"),
    [
        ("jb3 exit\n        jmp wait", 0x00, 0x08),
        ("anl a,#0Ch\n        jz wait", 0x00, 0x0C),
        ("orl a,#0F0h\n        xrl a,#0FFh\n        jz wait", 0x0F, 0x0F),
        ("jnz wait", 0x01, 0xFF),
        ("anl a,#80h\n        jb3 exit\n        jnz wait", 0x80, 0x80),
    ],
)
def test_the_poll_path_knows_which_bits_of_the_read_it_depends_on(body, value, care):
    source = f"""
        org 400h
        mov r0,#0A1h
wait:   movx a,@r0
        {body}
exit:   jmp exit
"""
    console = Console(load_cartridge(assemble_cart(source), "o2_rom"), vdc=ScriptedVdc(t1_period=0))
    cpu, head = console.cpu, 0x402
    ram = bytearray(64)
    ram[0] = 0xA1
    state = (value, 0, 0, 0, False, bytes(ram), False, False)
    loop = idle.run_iteration(cpu.prog, head + 1, head, state).loop
    assert loop is not None and loop.care == care


KEYBOARD_POLL = """
        org 400h
wait:   mov a,#{row}
        outl p2,a
        in a,p2
        jb4 wait
        jmp wait
"""


@pytest.mark.parametrize(
    ("row", "p2", "idle_found"),
    [(0xF1, 0xF1, True), (0xF1, 0xF2, False)],  # the row select rewrites P2: idle only if unchanged
)
def test_a_keyboard_poll_is_idle_while_its_port_writes_change_nothing(row, p2, idle_found):
    console = Console(load_cartridge(assemble_cart(KEYBOARD_POLL.format(row=row)), "o2_rom"))
    state = (row, 0, 0, 0, False, bytes(64), False, False)  # A as the iteration before left it
    ports = idle.Ports(p1=0xB0, p2=p2, in_p1=0xFF, in_p2=0xFF, bus=0xFF)
    analysis = idle.run_iteration(console.cpu.prog, 0x400, -1, state, ports)
    assert (analysis.loop is not None) == idle_found and analysis.ports
    if idle_found:
        assert analysis.loop.ports and analysis.loop.period == 2 + 2 + 2 + 2  # MOV, OUTL, IN, JB4 taken
    assert idle.run_iteration(console.cpu.prog, 0x400, -1, state).loop is None  # no ports known


def test_a_jni_falling_through_is_idle_until_int_rises():
    source = """
        org 400h
wait:   jni out
        jmp wait
out:    jmp out
"""
    console = Console(load_cartridge(assemble_cart(source), "o2_rom"))
    low = idle.run_iteration(console.cpu.prog, 0x400, -1, (0, 0, 0, 0, False, bytes(64), False, False))
    assert low.irq and low.loop is not None and low.loop.irq
    high = idle.run_iteration(console.cpu.prog, 0x400, -1, (0, 0, 0, 0, False, bytes(64), False, True))
    assert high.loop is None  # /INT requested: it jumps out


FIXTURE_CARTS = {
    spec.name: spec for spec in load_manifest(Path(__file__).resolve().parents[2] / "fixtures" / "carts")
}


@pytest.mark.slow
@pytest.mark.parametrize("region", ["ntsc", "pal"])
@pytest.mark.parametrize("name", sorted(FIXTURE_CARTS))
def test_skipping_equals_stepping_on_every_fixture_cart(name: str, region: str) -> None:
    """Every oracle test cart (with its input movie) gives the same records, CPU state and frames
    with idle skipping as without."""
    spec = FIXTURE_CARTS[name]
    runs = []
    for skip in (True, False):
        console = Console(load_cartridge(built_cart(spec), spec.slot), region=region)
        console.cpu.skip_idle = skip
        records: list = []
        console.add_bus_listener(records.append)
        frames = []
        for frame in range(6):
            spec.inputs.apply(console, frame)
            console.run_frames(1)
            frames.append(console.vdc.frame().tobytes())
        runs.append((records, console.cpu.state(), frames))
    assert runs[0] == runs[1]
    assert runs[0][0], "the cart made MOVX accesses"


NOP_POLL = """
        org 400h
        jmp start
start:  dis i
        mov a,#0B4h
        outl p1,a
        mov r0,#0A1h
wait:   movx a,@r0      ; the status register: a polling loop the CPU skips
        nop
        jb3 vbl
        jmp wait
vbl:    inc r6
        jmp wait
"""


def test_a_replaced_handler_runs_in_every_pass_of_a_loop_skipping_would_jump_over() -> None:
    """`Cpu.replace_handler` (as a deviating console replaces DA A): the idle analysis works from
    the instructions' own statements, as compiled blocks do, so loops are no longer skipped and the
    handler runs in every pass, as stepping runs it."""
    image = assemble_cart(NOP_POLL)
    calls = {"skipping": 0, "stepping": 0}

    def run(skip: bool, counter: str) -> dict:
        console = Console(load_cartridge(image, "o2_rom"))
        console.cpu.skip_idle = skip
        original = console.cpu.handlers[0x00]

        def counted(pc: int, cycle: int) -> int:
            calls[counter] += 1
            return original(pc, cycle)

        console.cpu.replace_handler(0x00, counted)
        console.run_frames(6)
        return console.cpu.state()

    assert run(True, "skipping") == run(False, "stepping")
    assert calls["skipping"] == calls["stepping"] > 1000


POLL_WITH_A_FRAME_COUNT = """
        org 400h
        mov a,#0B4h
        outl p1,a
        mov r0,#0A1h
wait:   movx a,@r0      ; 0405h
        jb3 vbl
        jmp wait
vbl:    inc r6
        mov r1,#0A3h
        movx @r1,a
        jmp wait
"""
"""A poll whose exit counts frames in R6 and then writes the VDC (a form no idle loop holds)."""


@pytest.mark.parametrize(("value", "idle_found"), [(0x00, True), (0x08, False)])
def test_a_polls_analysis_stops_where_no_path_leads_back(value: int, idle_found: bool) -> None:
    """With the CPU's `reaches`, an analysis that leaves the poll for good stops there: the same
    answer, found without reading R6 (a frame count would otherwise make each exit a new case)."""
    cpu = Console(load_cartridge(assemble_cart(POLL_WITH_A_FRAME_COUNT), "o2_rom")).cpu
    ram = bytearray(64)
    ram[0], ram[6] = 0xA1, 41
    state = (value, 0, 0, 0, False, bytes(ram), False, False)
    followed = idle.run_iteration(cpu.prog, 0x406, 0x405, state)
    stopped = idle.run_iteration(cpu.prog, 0x406, 0x405, state, reaches=cpu._poll_reaches(0x405))
    assert (stopped.loop is not None) == idle_found
    assert stopped == followed if idle_found else 6 in followed.touched and stopped.touched == ()


def test_a_polls_exit_is_analysed_once_not_at_every_frame(monkeypatch) -> None:
    """The exit's failed analysis holds for every frame count: later exits find it cached."""
    analysed = 0
    original = idle.run_iteration

    def counted(*args: object, **kwargs: object) -> idle.Analysis:
        nonlocal analysed
        analysed += 1
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(idle, "run_iteration", counted)
    skipped = run(POLL_WITH_A_FRAME_COUNT, skip=True)
    stepped = run(POLL_WITH_A_FRAME_COUNT, skip=False)
    assert skipped[:3] == stepped[:3]
    assert len(skipped[2]) >= 6 and analysed <= 3  # six exits and more, each writing the VDC


# MOVX A,@R0; JB3 06h; JMP 400h: a poll, idle with bit 3 clear; the NOPs after it never come back
POLL_THEN_NOPS = bytes([0x80, 0x72, 0x06, 0x84, 0x00]) + bytes(59)


@settings(max_examples=150, deadline=None)
@given(**MOVX_IN_RANDOM_CODE, ram=st.binary(min_size=64, max_size=64))
@example(image=POLL_THEN_NOPS, offset=0, a=0, psw=0, f1=False, a11=0, ram=bytes(64))  # bit 3 clear
@example(image=POLL_THEN_NOPS, offset=0, a=8, psw=0, f1=False, a11=0, ram=bytes(64))  # bit 3 set
def test_stopping_where_no_path_leads_back_never_changes_the_answer(image, offset, a, psw, f1, a11, ram):
    """Any code after a MOVX, any state: with `reaches` the loop found is the same, and the
    answer depends on no more than without it (what it read is a part of what that read)."""
    cpu = cpu_with_movx_at(image, offset)
    head = 0x400 + offset
    state = (a, psw & 0xF7, int(f1), a11, False, ram, False, False)
    followed = idle.run_iteration(cpu.prog, head + 1, head, state)
    stopped = idle.run_iteration(cpu.prog, head + 1, head, state, reaches=cpu._poll_reaches(head))
    assert stopped.loop == followed.loop
    assert set(stopped.touched) <= set(followed.touched)
    assert stopped.t1 <= followed.t1 and stopped.irq <= followed.irq and stopped.ports <= followed.ports
