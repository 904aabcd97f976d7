"""What each 8048 instruction does, per instruction form, as Python statements (docs/hardware.md, "The 8048").

`SEMANTICS` gives the statements of each form; `EFFECTS` (from `instruction_effects.tsv`) declares
what else a form does (touches the board, branches, may move the fast loop's stop, reads T1...).
The CPU generates one handler per opcode from the statements; the block compiler
(`hilbridge.machine.blocks`) and the idle-loop analysis (`hilbridge.machine.idle`) read the
declarations. Lengths and cycle counts come only from the `hilbridge.mcs48` table.
"""

from __future__ import annotations

from importlib import resources

from hilbridge.mcs48 import INSTRUCTIONS, Instruction

# -- per-form semantics ---------------------------------------------------------------------------
# Python statements in the body of `def handler(pc, cyc)`. Names available: P (program memory),
# M (64-byte internal RAM), C (the Cpu), B (the board) and the `TABLES` (below). `pc` is the
# address after the opcode byte.
# Placeholders: {n} register number, {i} indirect register, {b} bit, {p} expander port, {page}
# (addr11 bits 8-10 from the opcode). Macros: ARG fetches an operand byte into `arg`;
# REG is the register's RAM index; IND the indirect target; NEXT returns the PC after the operand.
ARG = "arg = P[pc]"
NEXT = "return (pc & 0x800) | ((pc + 1) & 0x7FF)"
REG = "(C.rb | {n})"
IND = "(M[C.rb | {i}] & 0x3F)"


ADD_FLAGS: tuple[int, ...] = tuple(((x >> 1) & 0x80) | ((x << 2) & 0x40) for x in range(512))
"""C and AC (PSW bits 7 and 6) of a sum t = a + d (+ C), indexed by a ^ d ^ t: its bit 8 is the
carry out of bit 7, its bit 4 the carry into bit 4. One lookup instead of adding the low nibbles
again (the bitwise operations are the costly part of an ADD)."""
LOW_BYTE: tuple[int, ...] = tuple(x & 0xFF for x in range(512))
"""A sum of two bytes and a carry, wrapped to a byte: a tuple subscript costs less than `& 0xFF`."""
INCREMENTED: tuple[int, ...] = tuple((x + 1) & 0xFF for x in range(256))
DECREMENTED: tuple[int, ...] = tuple((x - 1) & 0xFF for x in range(256))
"""A register byte plus or minus one, wrapped (INC, DEC and DJNZ on registers)."""
TABLES: dict[str, tuple[int, ...]] = {
    "ADD_FLAGS": ADD_FLAGS,
    "LOW_BYTE": LOW_BYTE,
    "INCREMENTED": INCREMENTED,
    "DECREMENTED": DECREMENTED,
}
"""The lookup tables the statements use, by the name they use (in the handlers' and blocks' names)."""


def _add(src: str, carry: bool) -> str:
    carry_in = " + (C.psw >> 7)" if carry else ""
    return (
        f"d = {src}\na = C.a\nt = a + d{carry_in}\n"
        "C.psw = (C.psw & 0x3F) | ADD_FLAGS[a ^ d ^ t]\n"
        "C.a = LOW_BYTE[t]"
    )


def _jcc(condition: str) -> str:
    return f"{ARG}\nif {condition}:\n    return (pc & 0xF00) | arg\n{NEXT}"


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
    # DA A as MAME 0.251 runs it (docs/hardware.md, "The 8048"): +06h may set C, never clears it.
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
    # PSW bit 3 reads as 1 and is not stored (docs/hardware.md, "The 8048").
    "MOV A,PSW": "C.a = C.psw | 0x08\nreturn pc",
    "MOV PSW,A": "C.psw = C.a & 0xF7\nC.rb = 24 if C.psw & 0x10 else 0\nreturn pc",
    "XCH A,Rn": f"r = {REG}\nC.a, M[r] = M[r], C.a\nreturn pc",
    "XCH A,@Ri": f"r = {IND}\nC.a, M[r] = M[r], C.a\nreturn pc",
    "XCHD A,@Ri": (
        f"r = {IND}\nold = M[r]\na = C.a\nM[r] = (old & 0xF0) | (a & 0x0F)\nC.a = (a & 0xF0) | (old & 0x0F)\n"
        "return pc"
    ),
    "INC Rn": f"r = {REG}\nM[r] = INCREMENTED[M[r]]\nreturn pc",
    "INC @Ri": f"r = {IND}\nM[r] = INCREMENTED[M[r]]\nreturn pc",
    "DEC Rn": f"r = {REG}\nM[r] = DECREMENTED[M[r]]\nreturn pc",
    "DJNZ Rn,addr8": (
        f"r = {REG}\nv = DECREMENTED[M[r]]\nM[r] = v\n{ARG}\nif v:\n    return (pc & 0xF00) | arg\n{NEXT}"
    ),
    "JMP addr11": f"{ARG}\nreturn {{page}} | arg | C.jump_a11",
    "CALL addr11": (
        f"{ARG}\nret = (pc & 0x800) | ((pc + 1) & 0x7FF)\nsp = C.psw & 7\n"
        "M[8 + 2 * sp] = ret & 0xFF\nM[9 + 2 * sp] = (ret >> 8) | (C.psw & 0xF0)\n"
        "C.psw = (C.psw & 0xF0) | ((sp + 1) & 7)\nreturn {page} | arg | C.jump_a11"
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
    "JT1 addr8": _jcc("B.t1(cyc)"),
    "JNT1 addr8": _jcc("not B.t1(cyc)"),
    # JTF reads and clears the timer flag. JNI tests MAME's latched /INT state, which only changes
    # between instructions, so it sees the level at the instruction's start; when it falls through
    # it arms MAME's JNI hack for the next interrupt check (handled in Cpu.step).
    "JTF addr8": (
        f"{ARG}\nflag = C.timer_flag\nC.timer_flag = False\nif flag:\n    return (pc & 0xF00) | arg\n{NEXT}"
    ),
    "JNI addr8": (
        f"{ARG}\nif B.irq(cyc - 2):\n    return (pc & 0xF00) | arg\nC.irq_polled = pc\nC.stop = 0\n{NEXT}"
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
    # moved); last_read_pc is set first so that vdc_read knows which MOVX it was, and watch_read
    # whether vdc_read may do anything (a block sets it false where it cannot: `blocks.QUIET_READ`).
    "MOVX A,@Ri": "C.last_read_pc = pc\nC.watch_read = True\nC.a = B.movx_read(M[C.rb | {i}], cyc)\n"
    "return pc",
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
"""PC + 1 inside the current 2 KB half (the 8048 never carries into A11)."""
HANDLERS_SOURCE = "\n".join(handler_source(opcode) for opcode in range(256))
HANDLERS_CODE = compile(HANDLERS_SOURCE, "<hilbridge 8048 handlers>", "exec")

EFFECT_NAMES = frozenset(
    {"board", "branch", "stop", "timer", "t1", "irq", "timer_flag", "irq_state"}
    | {"pointer_write", "stack_pointer"}
)


def _load_effects() -> dict[str, frozenset[str]]:
    text = resources.files(__package__).joinpath("instruction_effects.tsv").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    effects = {form: frozenset() if names == "-" else frozenset(names.split(",")) for form, names in rows[1:]}
    unknown = set().union(*effects.values()) - EFFECT_NAMES
    if unknown or set(effects) != set(SEMANTICS):
        raise RuntimeError(f"instruction_effects.tsv: effects {unknown} unknown, or forms not SEMANTICS'")
    return effects


EFFECTS: dict[str, frozenset[str]] = _load_effects()
"""Instruction form -> its declared effects (see instruction_effects.tsv)."""


def form_effects(opcode: int) -> frozenset[str]:
    return EFFECTS[form_of(INSTRUCTIONS[opcode])[0]]


def form_body(opcode: int) -> str:
    """The statements of the opcode's handler, placeholders filled in."""
    key, values = form_of(INSTRUCTIONS[opcode])
    return _expand(SEMANTICS[key], values)
