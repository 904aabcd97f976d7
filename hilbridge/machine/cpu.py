"""The Intel 8048 core: all 256 opcodes, cycle-exact as MAME 0.251 runs them (console.md §2).

Speed comes from pre-decoding: `SEMANTICS` below says, per instruction form, what an opcode does;
at start-up one Python function per opcode is generated from it and the `hilbridge.mcs48` table
(lengths and cycle counts come only from that table). A handler takes the address after its opcode
byte and the cycle at the *end* of the instruction (MAME burns the cycles before the I/O) and returns
the next PC. The fast loop runs handlers back to back while nothing can happen; everything that
needs care (interrupt entry, timer overflow, counter mode, the JNI hack, bus tracing) goes through
`step()`, which is the reference semantics the fast loop must equal.

The CPU knows nothing about the console: it talks to a *board* object with these methods, all
stamped with the machine cycle at which the access happens:

    movx_read(address, cycle) -> int        movx_write(address, value, cycle)
    port_write(port, value, cycle)          port_read(port, cycle) -> int      (pins, port 1 or 2)
    bus_read(cycle) -> int                  bus_write(value, cycle)
    t0(cycle) -> bool   t1(cycle) -> bool   irq(cycle) -> bool  (the /INT line, level)
    next_irq_event(cycle) -> int   first cycle > cycle at which irq() can change by itself
    next_t1_change(cycle) -> int   a cycle > cycle no later than the first at which t1() differs
    t1_falls(previous, first, last) -> int   falling T1 edges seen by sampling once per cycle at
                                cycles first..last, the sample before them being `previous`
    t1_fall_sample(previous, first, count) -> int   the sample cycle of the count-th such edge from
                                `first` (or an earlier cycle: the counter is then re-checked there)
    read_horizon(address, cycle, mask) -> int   first cycle at which re-reading `address` may
                                differ in the bits of `mask` (or a read would have side effects)
    peek_read(address, cycle) -> int   what a read would return, without side effects
    repeat_reads(address, first, period, count)   report reads skipped in a polling loop
    program_fetch(address, cycle)           only called while fetch tracing is on

Program memory is one 4 KB bytearray, `prog`, that the board keeps up to date (BIOS + the current
cartridge bank); reads never go through a call.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from hilbridge.mcs48 import INSTRUCTIONS, Instruction

C_FLAG = 0x80
AC_FLAG = 0x40
F0_FLAG = 0x20
BS_FLAG = 0x10
TIMER_PRESCALE = 32
NEVER = 1 << 62

TIMER_STOPPED, TIMER_RUNNING, COUNTER_RUNNING = 0, 1, 2


class Board(Protocol):
    def movx_read(self, address: int, cycle: int) -> int: ...
    def movx_write(self, address: int, value: int, cycle: int) -> None: ...
    def port_write(self, port: int, value: int, cycle: int) -> None: ...
    def port_read(self, port: int, cycle: int) -> int: ...
    def bus_read(self, cycle: int) -> int: ...
    def bus_write(self, value: int, cycle: int) -> None: ...
    def t0(self, cycle: int) -> bool: ...
    def t1(self, cycle: int) -> bool: ...
    def irq(self, cycle: int) -> bool: ...
    def next_irq_event(self, cycle: int) -> int: ...
    def next_t1_change(self, cycle: int) -> int: ...
    def t1_falls(self, previous: int, first: int, last: int) -> int: ...
    def t1_fall_sample(self, previous: int, first: int, count: int) -> int: ...
    def read_horizon(self, address: int, cycle: int, mask: int = 0xFF) -> int: ...
    def peek_read(self, address: int, cycle: int) -> int: ...
    def repeat_reads(self, address: int, first: int, period: int, count: int) -> None: ...
    def program_fetch(self, address: int, cycle: int) -> None: ...


# -- per-form semantics ---------------------------------------------------------------------------
# Python statements in the body of `def handler(pc, cyc)`. Names available: P (program memory),
# M (64-byte internal RAM), C (the Cpu), B (the board). `pc` is the address after the opcode byte.
# Placeholders: {n} register number, {i} indirect register, {b} bit, {p} expander port, {page}
# (addr11 bits 8-10 from the opcode). Macros: ARG fetches an operand byte into `arg`;
# REG is the register's RAM index; IND the indirect target; NEXT returns the PC after the operand.
ARG = "arg = P[pc]"
NEXT = "return (pc & 0x800) | ((pc + 1) & 0x7FF)"
REG = "(C.rb | {n})"
IND = "(M[C.rb | {i}] & 0x3F)"


def _add(src: str, carry: bool) -> str:
    carry_in = " + (C.psw >> 7)" if carry else ""
    return (
        f"d = {src}\na = C.a\nt = a + d{carry_in}\n"
        f"C.psw = (C.psw & 0x3F) | ((t >> 1) & 0x80) | ((((a & 15) + (d & 15){carry_in}) << 2) & 0x40)\n"
        "C.a = t & 0xFF"
    )


def _jcc(condition: str) -> str:
    return f"{ARG}\nif {condition}:\n    return (pc & 0xF00) | arg\n{NEXT}"


# A jump to its own address ("$") is a spin loop: flag it so that step() can skip it exactly.
SPIN = "if t + 1 == pc:\n    C.spin = t\n    C.stop = 0\n"


def _spin_jcc(condition: str) -> str:
    return f"{ARG}\nif {condition}:\n    t = (pc & 0xF00) | arg\n" + _indent(SPIN) + f"    return t\n{NEXT}"


def _indent(text: str) -> str:
    return "".join("    " + line + "\n" for line in text.splitlines())


SOURCES = {"Rn": f"M[{REG}]", "@Ri": f"M[{IND}]", "#imm8": "arg"}


def _alu(form_op: str, operand: str) -> str:
    src = SOURCES[operand]
    pre = f"{ARG}\n" if operand == "#imm8" else ""
    post = f"\n{NEXT}" if operand == "#imm8" else "\nreturn pc"
    if form_op == "ADD":
        return pre + _add(src, False) + post
    if form_op == "ADDC":
        return pre + _add(src, True) + post
    symbol = {"ANL": "&", "ORL": "|", "XRL": "^"}[form_op]
    return f"{pre}C.a {symbol}= {src}{post}"


SEMANTICS: dict[str, str] = {
    "NOP": "return pc",
    "(undefined)": "return pc",  # MAME: a 1-cycle no-op (silicon undocumented)
    "ENT0 CLK": "return pc",  # T0 clock output: not connected on the console
    "CLR A": "C.a = 0\nreturn pc",
    "CPL A": "C.a ^= 0xFF\nreturn pc",
    "INC A": "C.a = (C.a + 1) & 0xFF\nreturn pc",
    "DEC A": "C.a = (C.a - 1) & 0xFF\nreturn pc",
    "SWAP A": "a = C.a\nC.a = ((a << 4) | (a >> 4)) & 0xFF\nreturn pc",
    "RL A": "a = C.a\nC.a = ((a << 1) | (a >> 7)) & 0xFF\nreturn pc",
    "RR A": "a = C.a\nC.a = ((a >> 1) | (a << 7)) & 0xFF\nreturn pc",
    "RLC A": (
        "a = C.a\nC.a = ((a << 1) | (C.psw >> 7)) & 0xFF\nC.psw = (C.psw & 0x7F) | (a & 0x80)\nreturn pc"
    ),
    "RRC A": (
        "a = C.a\nC.a = (a >> 1) | (C.psw & 0x80)\nC.psw = (C.psw & 0x7F) | ((a << 7) & 0x80)\nreturn pc"
    ),
    # DA A as MAME 0.251 runs it (console.md §2.3): +06h may set C on a carry out, never clears it.
    "DA A": (
        "a = C.a\npsw = C.psw\n"
        "if (a & 0x0F) > 9 or psw & 0x40:\n    if a > 0xF9:\n        psw |= 0x80\n    a = (a + 6) & 0xFF\n"
        "if (a & 0xF0) > 0x90 or psw & 0x80:\n    a = (a + 0x60) & 0xFF\n    psw |= 0x80\n"
        "C.a = a\nC.psw = psw\nreturn pc"
    ),
    "CLR C": "C.psw &= 0x7F\nreturn pc",
    "CPL C": "C.psw ^= 0x80\nreturn pc",
    "CLR F0": "C.psw &= 0xDF\nreturn pc",
    "CPL F0": "C.psw ^= 0x20\nreturn pc",
    "CLR F1": "C.f1 = 0\nreturn pc",
    "CPL F1": "C.f1 ^= 1\nreturn pc",
    "MOV A,Rn": f"C.a = M[{REG}]\nreturn pc",
    "MOV A,@Ri": f"C.a = M[{IND}]\nreturn pc",
    "MOV A,#imm8": f"C.a = P[pc]\n{NEXT}",
    "MOV Rn,A": f"M[{REG}] = C.a\nreturn pc",
    "MOV @Ri,A": f"M[{IND}] = C.a\nreturn pc",
    "MOV Rn,#imm8": f"M[{REG}] = P[pc]\n{NEXT}",
    "MOV @Ri,#imm8": f"M[{IND}] = P[pc]\n{NEXT}",
    # PSW bit 3 reads as 1 and is not stored (console.md §2.2).
    "MOV A,PSW": "C.a = C.psw | 0x08\nreturn pc",
    "MOV PSW,A": "C.psw = C.a & 0xF7\nC.rb = 24 if C.psw & 0x10 else 0\nreturn pc",
    "XCH A,Rn": f"r = {REG}\nC.a, M[r] = M[r], C.a\nreturn pc",
    "XCH A,@Ri": f"r = {IND}\nC.a, M[r] = M[r], C.a\nreturn pc",
    "XCHD A,@Ri": (
        f"r = {IND}\nold = M[r]\na = C.a\nM[r] = (old & 0xF0) | (a & 0x0F)\nC.a = (a & 0xF0) | (old & 0x0F)\n"
        "return pc"
    ),
    "INC Rn": f"r = {REG}\nM[r] = (M[r] + 1) & 0xFF\nreturn pc",
    "INC @Ri": f"r = {IND}\nM[r] = (M[r] + 1) & 0xFF\nreturn pc",
    "DEC Rn": f"r = {REG}\nM[r] = (M[r] - 1) & 0xFF\nreturn pc",
    # a delay loop `DJNZ Rn,$` or NOPs and a DJNZ back to the first one is a spin loop too
    "DJNZ Rn,addr8": (
        f"r = {REG}\nv = (M[r] - 1) & 0xFF\nM[r] = v\n{ARG}\nif v:\n    t = (pc & 0xF00) | arg\n"
        "    if t + 1 == pc or (P[t] == 0 and t < pc and P.count(0, t, pc - 1) == pc - 1 - t):\n"
        f"        C.spin = t\n        C.stop = 0\n    return t\n{NEXT}"
    ),
    # `JTF $+2 ... JMP $-2`-style waits (JTF at the target, the JMP right after it) are spin loops too
    "JMP addr11": (
        f"{ARG}\nt = {{page}} | arg | C.jump_a11\n{SPIN}"
        "elif t + 3 == pc and P[t] == 0x16 and not C.timer_flag:\n    C.spin = t\n    C.stop = 0\n"
        "return t"
    ),
    "CALL addr11": (
        f"{ARG}\nret = (pc & 0x800) | ((pc + 1) & 0x7FF)\npsw = C.psw\nsp = psw & 7\n"
        "M[8 + 2 * sp] = ret & 0xFF\nM[9 + 2 * sp] = (ret >> 8) | (psw & 0xF0)\n"
        "C.psw = (psw & 0xF0) | ((sp + 1) & 7)\nreturn {page} | arg | C.jump_a11"
    ),
    "RET": (
        "sp = (C.psw - 1) & 7\nC.psw = (C.psw & 0xF0) | sp\n"
        "return (M[8 + 2 * sp] | (M[9 + 2 * sp] << 8)) & 0xFFF"
    ),
    "RETR": (
        "sp = (C.psw - 1) & 7\nhigh = M[9 + 2 * sp]\nC.psw = (high & 0xF0) | sp\n"
        "C.rb = 24 if high & 0x10 else 0\nC.irq_in_progress = False\nC.jump_a11 = C.a11\nC.stop = 0\n"
        "return (M[8 + 2 * sp] | (high << 8)) & 0xFFF"
    ),
    "JMPP @A": "return (pc & 0xF00) | P[(pc & 0xF00) | C.a]",
    "MOVP A,@A": "C.a = P[(pc & 0xF00) | C.a]\nreturn pc",
    "MOVP3 A,@A": "C.a = P[0x300 | C.a]\nreturn pc",
    "JC addr8": _jcc("C.psw & 0x80"),
    "JNC addr8": _jcc("not C.psw & 0x80"),
    "JZ addr8": _jcc("not C.a"),
    "JNZ addr8": _jcc("C.a"),
    "JF0 addr8": _jcc("C.psw & 0x20"),
    "JF1 addr8": _jcc("C.f1"),
    "JBb addr8": _jcc("C.a & (1 << {b})"),
    "JT0 addr8": _jcc("B.t0(cyc)"),
    "JNT0 addr8": _jcc("not B.t0(cyc)"),
    "JT1 addr8": _spin_jcc("B.t1(cyc)"),
    "JNT1 addr8": _spin_jcc("not B.t1(cyc)"),
    # JTF reads and clears the timer flag. JNI tests MAME's latched /INT state, which only changes
    # between instructions, so it sees the level at the instruction's start; when it falls through
    # it arms MAME's JNI hack for the next interrupt check (handled in Cpu.step).
    "JTF addr8": (
        f"{ARG}\nflag = C.timer_flag\nC.timer_flag = False\nif flag:\n    return (pc & 0xF00) | arg\n{NEXT}"
    ),
    "JNI addr8": (
        f"{ARG}\nif B.irq(cyc - 2):\n    t = (pc & 0xF00) | arg\n" + _indent(SPIN) + "    return t\n"
        f"C.irq_polled = pc\nC.stop = 0\n{NEXT}"
    ),
    "SEL RB0": "C.psw &= 0xEF\nC.rb = 0\nreturn pc",
    "SEL RB1": "C.psw |= 0x10\nC.rb = 24\nreturn pc",
    "SEL MB0": "C.a11 = 0\nC.jump_a11 = 0\nreturn pc",
    "SEL MB1": "C.a11 = 0x800\nC.jump_a11 = 0 if C.irq_in_progress else 0x800\nreturn pc",
    "EN I": "C.xirq_enabled = True\nC.stop = 0\nreturn pc",
    "DIS I": "C.xirq_enabled = False\nreturn pc",
    "EN TCNTI": "C.tirq_enabled = True\nC.stop = 0\nreturn pc",
    "DIS TCNTI": "C.tirq_enabled = False\nC.timer_overflow = False\nreturn pc",
    "MOV A,T": "C.a = C.timer_value(cyc)\nreturn pc",
    "MOV T,A": "C.set_timer(C.a, cyc)\nreturn pc",
    "STRT T": "C.start_timer(cyc)\nreturn pc",
    "STRT CNT": "C.start_counter(cyc)\nreturn pc",
    "STOP TCNT": "C.stop_timer(cyc)\nreturn pc",
    # The board calls C.vdc_read / C.vdc_written when the access reached the VDC (events may have
    # moved); last_read_pc is set first so that vdc_read knows which MOVX it was.
    "MOVX A,@Ri": "C.last_read_pc = pc\nC.a = B.movx_read(M[C.rb | {i}], cyc)\nreturn pc",
    "MOVX @Ri,A": "B.movx_write(M[C.rb | {i}], C.a, cyc)\nreturn pc",
    "INS A,BUS": "C.a = B.bus_read(cyc)\nreturn pc",
    "OUTL BUS,A": "C.bus = C.a\nB.bus_write(C.a, cyc)\nreturn pc",
    "ANL BUS,#imm8": f"{ARG}\nC.bus = B.bus_read(cyc) & arg\nB.bus_write(C.bus, cyc)\n{NEXT}",
    "ORL BUS,#imm8": f"{ARG}\nC.bus = B.bus_read(cyc) | arg\nB.bus_write(C.bus, cyc)\n{NEXT}",
    "IN A,P1": "C.a = B.port_read(1, cyc) & C.p1\nreturn pc",
    "IN A,P2": "C.a = B.port_read(2, cyc) & C.p2\nreturn pc",
    "OUTL P1,A": "C.p1 = C.a\nB.port_write(1, C.p1, cyc)\nreturn pc",
    "OUTL P2,A": "C.p2 = C.a\nB.port_write(2, C.p2, cyc)\nreturn pc",
    "ANL P1,#imm8": f"C.p1 &= P[pc]\nB.port_write(1, C.p1, cyc)\n{NEXT}",
    "ORL P1,#imm8": f"C.p1 |= P[pc]\nB.port_write(1, C.p1, cyc)\n{NEXT}",
    "ANL P2,#imm8": f"C.p2 &= P[pc]\nB.port_write(2, C.p2, cyc)\n{NEXT}",
    "ORL P2,#imm8": f"C.p2 |= P[pc]\nB.port_write(2, C.p2, cyc)\n{NEXT}",
    # 8243 expander protocol on P20-P23 (nothing answers on an Odyssey²; MAME does the same port
    # traffic). Operation codes: read 0, write 1, or 2, and 3.
    "MOVD A,Pp": "C.expander(0, {p}, cyc)\nreturn pc",
    "MOVD Pp,A": "C.expander(1, {p}, cyc)\nreturn pc",
    "ORLD Pp,A": "C.expander(2, {p}, cyc)\nreturn pc",
    "ANLD Pp,A": "C.expander(3, {p}, cyc)\nreturn pc",
}
for _operation in ("ADD", "ADDC", "ANL", "ORL", "XRL"):
    for _operand in ("Rn", "@Ri", "#imm8"):
        SEMANTICS[f"{_operation} A,{_operand}"] = _alu(_operation, _operand)


def form_of(instruction: Instruction) -> tuple[str, dict[str, int]]:
    """The SEMANTICS key of an opcode and the numbers its placeholders take."""
    values: dict[str, int] = {"page": (instruction.opcode >> 5) << 8}
    mnemonic = instruction.mnemonic
    if mnemonic.startswith("JB") and mnemonic[2:].isdigit():
        values["b"] = int(mnemonic[2:])
        mnemonic = "JBb"
    operands = []
    for operand in instruction.operands:
        if len(operand) == 2 and operand[0] == "R" and operand[1].isdigit():
            values["n"] = int(operand[1])
            operand = "Rn"
        elif operand in ("@R0", "@R1"):
            values["i"] = int(operand[2])
            operand = "@Ri"
        elif mnemonic in ("MOVD", "ANLD", "ORLD") and operand in ("P4", "P5", "P6", "P7"):
            values["p"] = int(operand[1])
            operand = "Pp"
        operands.append(operand)
    key = mnemonic if not operands else f"{mnemonic} {','.join(operands)}"
    return key, values


def _expand(template: str, values: dict[str, int]) -> str:
    text = template
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def handler_source(opcode: int) -> str:
    instruction = INSTRUCTIONS[opcode]
    key, values = form_of(instruction)
    body = _expand(SEMANTICS[key], values)
    lines = "\n".join("    " + line for line in body.splitlines())
    return f"def op_{opcode:02X}(pc, cyc):\n{lines}\n"


CYCLES: tuple[int, ...] = tuple(instruction.cycles for instruction in INSTRUCTIONS)
LENGTHS: tuple[int, ...] = tuple(instruction.length for instruction in INSTRUCTIONS)
NEXT_PC: tuple[int, ...] = tuple((pc & 0x800) | ((pc + 1) & 0x7FF) for pc in range(0x1000))
"""PC + 1 inside the current 2 KB half (the 8048 never carries into A11)."""
POLL_MAX_INSTRUCTIONS = 8
POLL_SAFE: dict[int, str] = {0x00: "nop", 0x53: "anl", 0x43: "orl", 0xD3: "xrl", 0xC6: "jz", 0x96: "jnz"}
"""Instructions a skippable polling loop may contain: they only change A and read A or flags."""
POLL_SAFE.update({0xF6: "jc", 0xE6: "jnc", 0xB6: "jf0", 0x76: "jf1"})
POLL_SAFE.update({(bit << 5) | 0x12: "jb" for bit in range(8)})
POLL_SAFE.update({(page << 5) | 0x04: "jmp" for page in range(8)})
_SOURCE = "\n".join(handler_source(opcode) for opcode in range(256))
_CODE = compile(_SOURCE, "<hilbridge 8048 handlers>", "exec")

# -- straight-line blocks -------------------------------------------------------------------------
# The fast loop's cost is mostly its own: a lookup, a call and a stop test per instruction. A run of
# "plain" instructions (no board access, no branch, nothing that touches the stop or the timer)
# followed by any one instruction is compiled into one function, the handlers' statements back to
# back with their PCs and cycles filled in. It runs only when its last instruction ends before the
# stop, so it does exactly what the fast loop would: plain instructions cannot move the stop.
BLOCK_MAX_INSTRUCTIONS = 24
BLOCK_HOT = 64  # visits before a block is compiled: compiling costs ~ 500 plain instruction runs
_IMPURE = re.compile(r"\bB\.|C\.\w+\(|C\.(stop|spin|irq_|last_read_pc|timer|xirq|tirq)")
_PC = re.compile(r"\bpc\b")
_CYC = re.compile(r"\bcyc\b")


def _body(opcode: int) -> str:
    key, values = form_of(INSTRUCTIONS[opcode])
    return _expand(SEMANTICS[key], values)


def _plain_body(opcode: int) -> str | None:
    """The handler's statements without its final `return`, if the instruction is plain."""
    body = _body(opcode)
    lines = body.splitlines()
    if _IMPURE.search(body) or body.count("return") != 1 or lines[-1] not in ("return pc", NEXT):
        return None
    return "\n".join(lines[:-1])


PLAIN_BODIES: tuple[str | None, ...] = tuple(_plain_body(opcode) for opcode in range(256))
Block = tuple[Callable[[int], int], int]
"""A compiled block: the function (start cycle -> next PC) and the cycles it takes."""


def block_source(prog: bytes | bytearray, start: int) -> tuple[str, int] | None:
    """(source of `def block(c0)`, cycles) for the block at `start`, None if it would hold less than
    two instructions (the single-instruction path is as fast)."""
    lines = ["def block(c0):"]
    pc, cycles, count = start, 0, 0
    while count < BLOCK_MAX_INSTRUCTIONS:
        opcode = prog[pc]
        plain = PLAIN_BODIES[opcode]
        following = NEXT_PC[pc]
        cycles += CYCLES[opcode]
        count += 1
        body = _body(opcode) if plain is None else plain
        body = _CYC.sub(f"(c0 + {cycles})", _PC.sub(str(following), body))
        lines.extend("    " + line for line in body.splitlines())
        if plain is None:
            break
        pc = following if LENGTHS[opcode] == 1 else NEXT_PC[following]
    else:
        lines.append(f"    return {pc}")
    if count < 2:
        return None
    return "\n".join(lines) + "\n", cycles


class Cpu:
    """8048 state plus the generated handlers bound to this instance's memories and board."""

    __slots__ = (
        "a",
        "a11",
        "block_hot",
        "block_sets",
        "blocks",
        "board",
        "bus",
        "code_switched",
        "cycle",
        "f1",
        "handlers",
        "irq_in_progress",
        "irq_polled",
        "jump_a11",
        "last_read_pc",
        "namespace",
        "p1",
        "p2",
        "pc",
        "poll_heads",
        "poll_paths",
        "prog",
        "psw",
        "ram",
        "rb",
        "skip_idle",
        "spin",
        "stop",
        "t1_history",
        "target",
        "timer_base",
        "timer_event",
        "timer_flag",
        "timer_mode",
        "timer_overflow",
        "timer_prescaler",
        "timer_start_value",
        "tirq_enabled",
        "trace_fetches",
        "visits",
        "xirq_enabled",
    )

    def __init__(self, board: Board, prog: bytearray) -> None:
        self.board = board
        self.prog = prog
        self.ram = bytearray(64)
        namespace: dict[str, object] = {"P": prog, "M": self.ram, "C": self, "B": board}
        exec(_CODE, namespace)
        self.namespace = namespace
        self.block_sets: dict[object, tuple[list[Block | bool | None], bytearray]] = {}
        self.blocks: list[Block | bool | None] = [None] * 0x1000  # per PC: compiled, none or not yet
        self.visits = bytearray(0x1000)  # per PC while not yet compiled: times run one by one
        self.code_switched = False
        self.block_hot = BLOCK_HOT  # tests set 1 to compile every block at once
        self.handlers: list[Callable[[int, int], int]] = [namespace[f"op_{op:02X}"] for op in range(256)]  # type: ignore[misc]
        self.trace_fetches = False
        self.skip_idle = True
        self.target = NEVER
        self.last_read_pc = -1
        self.spin = -1
        self.poll_paths: dict[tuple[int, ...], tuple[int, int] | None] = {}
        self.poll_heads: dict[int, bool] = {}
        self.cycle = 0
        self.a = 0
        self.psw = 0
        self.reset()

    # -- reset and state --------------------------------------------------------------------------
    def reset(self) -> None:
        """Reset as MAME does: PC 0, ports FFh, interrupts and timer off, A11 = 0; C/AC survive."""
        self.pc = 0
        self.psw &= C_FLAG | AC_FLAG
        self.rb = 0
        self.a11 = 0
        self.jump_a11 = 0
        self.bus = 0xFF
        self.p1 = 0xFF
        self.p2 = 0xFF
        self.f1 = 0
        self.xirq_enabled = False
        self.tirq_enabled = False
        self.irq_in_progress = False
        self.irq_polled = -1
        self.timer_overflow = False
        self.timer_flag = False
        self.timer_mode = TIMER_STOPPED
        self.timer_start_value = 0
        self.timer_prescaler = 0
        self.timer_base = self.cycle
        self.timer_event = NEVER
        self.t1_history = 0
        self.stop = 0
        self.board.bus_write(0xFF, self.cycle)
        self.board.port_write(1, 0xFF, self.cycle)
        self.board.port_write(2, 0xFF, self.cycle)

    STATE_FIELDS = (
        "a",
        "a11",
        "bus",
        "cycle",
        "f1",
        "irq_in_progress",
        "irq_polled",
        "jump_a11",
        "p1",
        "p2",
        "pc",
        "psw",
        "rb",
        "t1_history",
        "timer_base",
        "timer_flag",
        "timer_mode",
        "timer_overflow",
        "timer_prescaler",
        "timer_start_value",
        "tirq_enabled",
        "xirq_enabled",
    )

    def state(self) -> dict[str, object]:
        if self.timer_mode == COUNTER_RUNNING:
            self._fold_counter(self.cycle)
        fields: dict[str, object] = {name: int(getattr(self, name)) for name in self.STATE_FIELDS}
        fields["ram"] = bytes(self.ram)
        return fields

    def load_state(self, state: dict[str, object]) -> None:
        for name in self.STATE_FIELDS:
            value = int(state[name])  # type: ignore[call-overload]
            current = getattr(self, name)
            setattr(self, name, bool(value) if isinstance(current, bool) else value)
        self.ram[:] = state["ram"]  # type: ignore[index]
        self._update_timer_event()
        self.stop = 0

    # -- registers for tests and debuggers --------------------------------------------------------
    def register(self, number: int) -> int:
        return self.ram[self.rb + number]

    def set_register(self, number: int, value: int) -> None:
        self.ram[self.rb + number] = value & 0xFF

    # -- timer/counter (lazy: the value is computed from the cycle, overflow is an event) ----------
    # In counter mode MAME samples T1 once per burnt cycle; the samples at cycles timer_base and
    # later are not counted yet, t1_history holds the last two counted ones (bit 0 the latest).
    def timer_value(self, cycle: int) -> int:
        if self.timer_mode == TIMER_RUNNING:
            ticks = (self.timer_prescaler + cycle - self.timer_base) >> 5
            return (self.timer_start_value + ticks) & 0xFF
        if self.timer_mode == COUNTER_RUNNING:
            self._fold_counter(cycle)
        return self.timer_start_value

    def _settle_timer(self, cycle: int) -> None:
        """Fold the time (or the T1 samples) since `timer_base` into the value and the prescaler."""
        if self.timer_mode == TIMER_RUNNING:
            total = self.timer_prescaler + cycle - self.timer_base
            self.timer_start_value = (self.timer_start_value + (total >> 5)) & 0xFF
            self.timer_prescaler = total & 31
        elif self.timer_mode == COUNTER_RUNNING:
            self._fold_counter(cycle)
        self.timer_base = cycle

    def _fold_counter(self, cycle: int) -> None:
        """Count the falling T1 edges in the samples at cycles timer_base..cycle-1 (the board counts
        them without sampling every cycle); an overflow on the way sets the flags as MAME's would."""
        first, last = self.timer_base, cycle - 1
        if last < first:
            return
        board = self.board
        previous = self.t1_history & 1
        edges = board.t1_falls(previous, first, last)
        before_last = board.t1(last - 1) if last > first else previous
        self.t1_history = (2 if before_last else 0) | (1 if board.t1(last) else 0)
        value = self.timer_start_value + edges
        for _ in range(value >> 8):
            self._overflowed()
        self.timer_start_value = value & 0xFF
        self.timer_base = cycle

    def _update_timer_event(self) -> None:
        """The first end-of-instruction cycle whose burn reaches the overflow."""
        if self.timer_mode == TIMER_RUNNING:
            remaining = (256 - self.timer_start_value) * TIMER_PRESCALE - self.timer_prescaler
            self.timer_event = self.timer_base + remaining
        elif self.timer_mode == COUNTER_RUNNING:
            edges = 256 - self.timer_start_value
            sample = self.board.t1_fall_sample(self.t1_history & 1, self.timer_base, edges)
            self.timer_event = sample + 1
        else:
            self.timer_event = NEVER

    def set_timer(self, value: int, cycle: int) -> None:
        self._settle_timer(cycle)
        self.timer_start_value = value & 0xFF
        self._update_timer_event()
        self.stop = 0

    def start_timer(self, cycle: int) -> None:
        self._settle_timer(cycle)
        self.timer_mode = TIMER_RUNNING
        self.timer_prescaler = 0
        self._update_timer_event()
        self.stop = 0

    def start_counter(self, cycle: int) -> None:
        self._settle_timer(cycle)
        if self.timer_mode != COUNTER_RUNNING:
            self.t1_history = 1 if self.board.t1(cycle) else 0
        self.timer_mode = COUNTER_RUNNING
        self._update_timer_event()
        self.stop = 0

    def stop_timer(self, cycle: int) -> None:
        self._settle_timer(cycle)
        self.timer_mode = TIMER_STOPPED
        self._update_timer_event()
        self.stop = 0

    def _overflowed(self) -> None:
        self.timer_flag = True
        # An overflow with the timer interrupt disabled is not remembered (MAME; Intel manual).
        if self.tirq_enabled:
            self.timer_overflow = True

    def _burn(self, start: int, count: int) -> int:
        """Advance timer or counter over `count` cycles from `start` (MAME burn_cycles); new cycle."""
        end = start + count
        mode = self.timer_mode
        if mode == TIMER_RUNNING:
            if end >= self.timer_event:
                self._settle_timer(end)
                self._overflowed()
                self._update_timer_event()
        elif mode == COUNTER_RUNNING and end >= self.timer_event:
            self._fold_counter(end)
            self._update_timer_event()
        return end

    def expander(self, operation: int, port: int, cycle: int) -> None:
        board = self.board
        self.p2 = (self.p2 & 0xF0) | (operation << 2) | (port & 3)
        board.port_write(2, self.p2, cycle)
        if operation:
            self.p2 = (self.p2 & 0xF0) | (self.a & 0x0F)
            board.port_write(2, self.p2, cycle)
        else:
            self.p2 |= 0x0F
            board.port_write(2, self.p2, cycle)
            self.a = board.port_read(2, cycle) & 0x0F

    # -- execution --------------------------------------------------------------------------------
    def _interrupt_pending(self, cycle: int) -> bool:
        if self.irq_in_progress:
            return False
        if self.xirq_enabled and self.board.irq(cycle):
            return True
        return self.tirq_enabled and self.timer_overflow

    def _refresh_stop(self) -> None:
        """The first end-of-instruction cycle the fast loop must not reach without `step()`."""
        self._refresh_stop_at(self.cycle)

    def _refresh_stop_at(self, cycle: int) -> None:
        """`_refresh_stop` for the end of an instruction at `cycle` (the fast loop keeps the cycle
        in a local, so handlers pass theirs)."""
        if (
            self.trace_fetches
            or self.code_switched  # the fast loop must fetch the new view's blocks first
            or self.irq_polled >= 0  # the next boundary must see (and clear) the JNI hack
            or self.spin >= 0  # a spin loop just branched back: step() may skip it
            or self._interrupt_pending(cycle)
        ):
            self.stop = cycle
        elif self.xirq_enabled and not self.irq_in_progress:
            # only a rising /INT can make an interrupt pending; T1 is sampled where it is tested
            self.stop = min(self.timer_event, self.board.next_irq_event(cycle), self.target)
        else:
            self.stop = min(self.timer_event, self.target)  # the run's end too: one test a loop

    def vdc_written(self, cycle: int) -> None:
        """A MOVX write reached the VDC at `cycle`: it may have moved the next /INT (e.g. an
        interrupt enable), so the fast loop's stop is recomputed there, as `step()` would."""
        self._refresh_stop_at(cycle)

    def vdc_read(self, cycle: int) -> None:
        """A MOVX read reached the VDC at `cycle` (it may clear /INT or move its next rise). If the
        read can head a skippable polling loop, `step()` runs next to try skipping it; otherwise
        the fast loop goes on with its stop recomputed as `step()` would."""
        if self.skip_idle:
            known = self.poll_heads.get(self.last_read_pc)
            if known is None:
                known = self._may_poll(self.last_read_pc)
            if known:
                self.stop = 0
                return
        if self.xirq_enabled and not self.irq_in_progress:
            self._refresh_stop_at(cycle)
        # else nothing a read changes (/INT is masked) moves the stop

    def _may_poll(self, pc: int) -> bool:
        """Whether some path of `POLL_SAFE` instructions leads from `pc` back to the MOVX before it
        within `POLL_MAX_INSTRUCTIONS` (both ways at every branch, both A11 values at every JMP):
        if not, `_poll_path` finds no loop there whatever A, the flags or A11 are. The answer is
        kept in `poll_heads`, which `vdc_read` looks at first."""
        head = (pc & 0x800) | ((pc - 1) & 0x7FF)
        frontier = {pc}
        found = False
        for _ in range(POLL_MAX_INSTRUCTIONS):
            if head in frontier:
                found = True
                break
            following: set[int] = set()
            for here in frontier:
                decoded = self._poll_instruction(here)
                if decoded is None:
                    continue
                kind, opcode, arg, operand_pc, after = decoded
                if kind == "nop":
                    following.add(operand_pc)
                elif kind in ("anl", "orl", "xrl"):
                    following.add(after)
                elif kind == "jmp":
                    following.add(((opcode >> 5) << 8) | arg)
                    following.add(((opcode >> 5) << 8) | arg | 0x800)
                else:
                    following.add((operand_pc & 0xF00) | arg)
                    following.add(after)
            frontier = following
        self.poll_heads[pc] = found
        return found

    def _poll_instruction(self, pc: int) -> tuple[str, int, int, int, int] | None:
        """(POLL_SAFE kind, opcode, operand byte, its address, the address after it) of the
        instruction at `pc`, or None when it may not be part of a polling loop."""
        opcode = self.prog[pc]
        kind = POLL_SAFE.get(opcode)
        if kind is None:
            return None
        operand_pc = NEXT_PC[pc]
        return kind, opcode, self.prog[operand_pc], operand_pc, NEXT_PC[operand_pc]

    def _take_interrupts(self) -> None:
        """MAME check_irqs: external /INT (vector 3) before the timer (vector 7); entry costs 2."""
        if self.irq_in_progress:
            return
        cycle = self.cycle
        external = self.xirq_enabled and self.board.irq(cycle)
        if not external and not (self.tirq_enabled and self.timer_overflow):
            return
        self.cycle = self._burn(cycle, 2)
        self.irq_in_progress = True
        self.jump_a11 = 0
        if external:
            if self.irq_polled >= 0:
                # MAME's JNI hack: the JNI that just fell through is taken after all.
                operand = self.irq_polled
                self.pc = (operand & 0xF00) | self.prog[operand]
            vector = 0x03
        else:
            self.timer_overflow = False
            vector = 0x07
        pc = self.pc
        sp = self.psw & 7
        self.ram[8 + 2 * sp] = pc & 0xFF
        self.ram[9 + 2 * sp] = ((pc >> 8) & 0x0F) | (self.psw & 0xF0)
        self.psw = (self.psw & 0xF0) | ((sp + 1) & 7)
        self.pc = vector

    def step(self) -> None:
        """One MAME execute_run iteration: the interrupt check, then one instruction."""
        if self.skip_idle:
            if self.last_read_pc == self.pc:
                self._skip_polling_loop()
            elif self.spin == self.pc:
                self._skip_spin_loop()
        self.last_read_pc = -1
        self.spin = -1
        self._take_interrupts()
        self.irq_polled = -1
        pc = self.pc
        prog = self.prog
        opcode = prog[pc]
        start = self.cycle
        if self.trace_fetches:
            self._trace_fetch(pc, opcode, start)
        end = self._burn(start, CYCLES[opcode])
        self.cycle = end
        self.pc = self.handlers[opcode]((pc & 0x800) | ((pc + 1) & 0x7FF), end)
        self._refresh_stop()

    def _trace_fetch(self, pc: int, opcode: int, cycle: int) -> None:
        fetch = self.board.program_fetch
        fetch(pc, cycle)
        operand = (pc & 0x800) | ((pc + 1) & 0x7FF)
        if LENGTHS[opcode] == 2:
            fetch(operand, cycle)
        mnemonic = INSTRUCTIONS[opcode].mnemonic
        if mnemonic in ("MOVP", "JMPP"):
            fetch((operand & 0xF00) | self.a, cycle)
        elif mnemonic == "MOVP3":
            fetch(0x300 | self.a, cycle)

    # -- exact idle-loop skipping -------------------------------------------------------------------
    def _skip_polling_loop(self) -> None:
        """Jump over whole iterations of a loop that polls one MOVX address and changes nothing else.

        Called right after `MOVX A,@Ri` at X. If the code from X+1 leads back to X through
        `POLL_SAFE` instructions only (no writes, no ports, no flags), every iteration takes the same
        path as long as the bits of the polled value that the path looks at (`care`) stay the same,
        and A is dead at X (the MOVX overwrites it). The board's `read_horizon(address, cycle, care)`
        says until when that holds; iterations are skipped up to there, the next /INT rise (with
        interrupts enabled), a timer overflow or the run target. A ends as the last skipped read
        would have left it (`peek_read`), and skipped reads are replayed to the bus listeners.
        """
        if self.trace_fetches:
            return
        pc, cycle = self.pc, self.cycle
        movx_pc = (pc & 0x800) | ((pc - 1) & 0x7FF)
        opcode = self.prog[movx_pc]
        if opcode not in (0x80, 0x81) or self._interrupt_pending(cycle):
            return
        key = (movx_pc, self.a, self.psw, self.f1, self.jump_a11)
        path = self.poll_paths.get(key, False)
        if path is False:
            path = self.poll_paths[key] = self._poll_path(pc, movx_pc, self.a)
        if path is None:
            return
        period, care = path
        address = self.ram[self.rb | (opcode & 1)]
        board = self.board
        horizon = min(self.target, self.timer_event, board.read_horizon(address, cycle, care))
        if self.xirq_enabled and not self.irq_in_progress:
            horizon = min(horizon, board.next_irq_event(cycle))
        count = (horizon - 1 - cycle) // period
        if count <= 0:
            return
        board.repeat_reads(address, cycle + period, period, count)
        self.cycle = cycle + count * period
        self.a = board.peek_read(address, self.cycle)

    def code_changed(self, view: object = None) -> None:
        """The program memory changed (bank switch): forget the analysed polling loops, and use the
        compiled blocks of `view` (the cartridge's bytes for this bank; None: compile anew)."""
        self.poll_paths.clear()
        self.poll_heads.clear()
        self.code_switched = True  # the fast loop holds the old lists: it stops at once and takes
        self.stop = 0  # the new ones (_refresh_stop_at keeps the stop there until it has)
        if view is None:
            self.block_sets.clear()
            self.blocks, self.visits = [None] * 0x1000, bytearray(0x1000)
            return
        found = self.block_sets.get(view)
        if found is None:
            if len(self.block_sets) >= 16:
                self.block_sets.clear()
            found = self.block_sets[view] = ([None] * 0x1000, bytearray(0x1000))
        self.blocks, self.visits = found

    def _compile_block(self, pc: int) -> Block | bool:
        """The block starting at `pc` (compiled once per program view), or False."""
        found = block_source(self.prog, pc)
        if found is None:
            self.blocks[pc] = False
            return False
        source, cycles = found
        namespace = dict(self.namespace)
        exec(compile(source, f"<hilbridge 8048 block {pc:03X}>", "exec"), namespace)
        block = self.blocks[pc] = (namespace["block"], cycles)  # type: ignore[assignment]
        return block

    def _skip_spin_loop(self) -> None:
        """Skip iterations of a one-instruction loop (`JMP $`, `DJNZ Rn,$`, `JT1 $`, `JNT1 $`, `JNI $`),
        of a delay loop (`loop: NOP ... / DJNZ Rn,loop`) or of a timer-flag wait
        (`loop: JTF out / JMP loop`, flag clear: it is only set by an overflow).

        Nothing but the cycle count (and the DJNZ register) changes per iteration, so iterations are
        skipped up to the run target, a timer overflow, the next /INT rise (interrupts enabled) and,
        for the T1 tests, the next T1 change; the loop then goes on instruction by instruction.
        """
        if self.trace_fetches:
            return
        cycle = self.cycle
        if self._interrupt_pending(cycle):
            return
        board = self.board
        horizon = min(self.target, self.timer_event)
        if self.xirq_enabled and not self.irq_in_progress:
            horizon = min(horizon, board.next_irq_event(cycle))
        opcode = self.prog[self.pc]
        if opcode in (0x46, 0x56):  # JNT1 / JT1 $: T1 keeps its value until its next change
            horizon = min(horizon, board.next_t1_change(cycle))
        elif opcode == 0x86:  # JNI $ tests /INT whether or not interrupts are enabled
            horizon = min(horizon, board.next_irq_event(cycle))
        if opcode == 0x16:  # JTF + JMP back: 4 cycles an iteration
            if not self.timer_flag:
                self.cycle = cycle + 4 * max(0, (horizon - 1 - cycle) // 4)
            return
        period = 2
        if opcode == 0x00:  # NOPs (1 cycle each), then the DJNZ that jumps back to the first
            end = self.pc
            while self.prog[end] == 0x00:
                end += 1
            period += end - self.pc
            opcode = self.prog[end]
        count = (horizon - 1 - cycle) // period
        if opcode & 0xF8 == 0xE8:  # DJNZ: stop before the iteration that falls through
            register = self.rb | (opcode & 7)
            count = min(count, (self.ram[register] - 1) & 0xFF)
            if count > 0:
                self.ram[register] = (self.ram[register] - count) & 0xFF
        if count > 0:
            self.cycle = cycle + period * count

    def _poll_path(self, pc: int, head: int, a: int) -> tuple[int, int] | None:
        """(cycles per iteration, bits of the polled value the path depends on) for the loop from
        X+1 back to the MOVX at `head`, with A = `a` after the MOVX; None if it is not a pure poll."""
        prog = self.prog
        psw = self.psw
        period = CYCLES[prog[head]]
        live = 0xFF  # bits of A that are still the polled value's own bits
        care = 0
        for _ in range(POLL_MAX_INSTRUCTIONS):
            if pc == head:
                return period, care
            decoded = self._poll_instruction(pc)
            if decoded is None:
                return None
            kind, opcode, arg, operand_pc, after = decoded
            period += CYCLES[opcode]
            if kind == "nop":
                pc = operand_pc
                continue
            if kind == "anl":
                a &= arg
                live &= arg
                pc = after
                continue
            if kind == "orl":
                a |= arg
                live &= ~arg
                pc = after
                continue
            if kind == "xrl":
                a ^= arg
                pc = after
                continue
            if kind == "jmp":
                pc = ((opcode >> 5) << 8) | arg | self.jump_a11
                continue
            # conditional jump on A or on a flag the loop cannot change
            if kind == "jb":
                bit = 1 << (opcode >> 5)
                care |= live & bit
                taken = a & bit
            elif kind == "jz":
                care |= live
                taken = not a
            elif kind == "jnz":
                care |= live
                taken = a
            elif kind == "jc":
                taken = psw & 0x80
            elif kind == "jnc":
                taken = not psw & 0x80
            elif kind == "jf0":
                taken = psw & 0x20
            else:
                taken = self.f1
            pc = (operand_pc & 0xF00) | arg if taken else after
        return None

    def run_until(self, target: int) -> None:
        """Execute whole instructions while the cycle counter is below `target`."""
        self.target = target
        self._refresh_stop()
        prog = self.prog
        handlers = self.handlers
        cycles = CYCLES
        following = NEXT_PC
        pc = self.pc
        cycle = self.cycle
        blocks = self.blocks
        visits = self.visits
        hot = self.block_hot
        while True:
            block = blocks[pc]
            if block:
                end = cycle + block[1]
                if end < self.stop:
                    pc = block[0](cycle)
                    cycle = end
                    continue
            elif block is None:
                count = visits[pc] + 1
                if count < hot:
                    visits[pc] = count
                else:
                    self._compile_block(pc)  # into self.blocks: the loop's list unless code_switched
                    blocks = self.blocks
                    continue
            opcode = prog[pc]
            end = cycle + cycles[opcode]
            if end < self.stop:  # never past `target`: the stop is at or before it
                pc = handlers[opcode](following[pc], end)
                cycle = end
                continue
            if cycle >= target:
                break
            if not self.code_switched:
                self.pc = pc
                self.cycle = cycle
                self.step()
                pc = self.pc
                cycle = self.cycle
            if self.code_switched:  # a bank switch: take the new view's lists, then go on
                self.code_switched = False
                blocks = self.blocks
                visits = self.visits
                self._refresh_stop_at(cycle)
        self.pc = pc
        self.cycle = cycle
