"""Idle loops, found by analysis over decoded instructions (docs/emulator.md, "Idle skipping").

A loop may be skipped iteration by iteration when one iteration, run from the CPU's state at the
loop's *anchor*, comes back to the anchor with the same state and its only inputs are reads with a
known horizon: one MOVX read (VDC status, collisions...), T1, /INT (JNI), the timer flag and the
keyboard and joystick ports (constant within a run; a write to a port must leave it as it is). Then
every further iteration takes the same path and leaves the same state until one of those inputs
may change, and the CPU jumps to there. Anchors are of two kinds:

- a *poll* anchor is the instruction after a MOVX read: the iteration runs from there to the end of
  that same MOVX, so the real read has already happened and each skipped read repeats it (the
  board's `read_horizon` is relative to that read);
- a *spin* anchor is the target of a backward branch whose loop reads no MOVX: delay loops,
  `JMP $`, T1, /INT or timer-flag waits, waits on a RAM flag that an interrupt sets.

What the iteration does is found by `run_iteration`, an interpreter over the decoded forms of
`hilbridge.mcs48` for the instructions a wait loop is made of (moves, logic, tests, branches,
CALL/RET, DJNZ). For a poll it tracks, per bit, which bits of the polled value each value depends
on, so that a loop that tests one status bit is not cut short by another bit changing. The
register a DJNZ counts down is the one state change allowed (a delay loop): its count bounds the
skip. Whatever else changes, or any other instruction, and the loop is not idle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hilbridge.machine.semantics import CYCLES, LENGTHS, NEXT_PC, form_of
from hilbridge.mcs48 import INSTRUCTIONS

MAX_INSTRUCTIONS = 64
"""Instructions one iteration may run (a DJNZ delay inside it counts each pass)."""
STATIC_MAX_INSTRUCTIONS = MAX_INSTRUCTIONS + 1
"""Depth of the static search for a path back to an anchor: as long as the longest iteration
`run_iteration` takes, so that its "no" is never wrong (the search is cached per anchor)."""
STATIC_MAX_PATHS = 16
"""Paths the static search follows at once before it answers "maybe"."""

DECODED: tuple[tuple[str, dict[str, int]], ...] = tuple(form_of(instruction) for instruction in INSTRUCTIONS)
"""Per opcode: its form and placeholder values (as the handlers are generated from)."""

_CONDITIONS = {"JC addr8", "JNC addr8", "JZ addr8", "JNZ addr8", "JF0 addr8", "JF1 addr8", "JBb addr8"}
_INPUT_TESTS = {"JT1 addr8", "JNT1 addr8", "JNI addr8", "JTF addr8"}
_ACCUMULATOR = {"NOP", "CLR A", "CPL A", "INC A", "DEC A", "RL A", "RR A", "SWAP A"}
_FLAGS = {"CLR C", "CPL C", "CLR F0", "CPL F0", "CLR F1", "CPL F1", "SEL RB0", "SEL RB1"}
_MOVES = {
    "MOV A,Rn", "MOV A,@Ri", "MOV A,#imm8", "MOV Rn,A", "MOV @Ri,A", "MOV Rn,#imm8", "MOV @Ri,#imm8",
    "INC Rn", "DEC Rn", "INC @Ri", "XCH A,Rn", "XCH A,@Ri",
}  # fmt: skip
_LOGIC = {f"{op} A,{src}" for op in ("ANL", "ORL", "XRL", "ADD") for src in ("Rn", "@Ri", "#imm8")}
_JUMPS = {"JMP addr11", "CALL addr11", "RET", "DJNZ Rn,addr8"}
_PORT_READS = {"IN A,P1": 1, "IN A,P2": 2, "INS A,BUS": 0}
"""Input reads (keyboard, joysticks): the board answers them the same until the run's end."""
_PORT_WRITES = {
    "OUTL P1,A": 1,
    "OUTL P2,A": 2,
    "ANL P1,#imm8": 1,
    "ORL P1,#imm8": 1,
    "ANL P2,#imm8": 2,
    "ORL P2,#imm8": 2,
}
"""Port writes: idle only when they write the value the port holds (a keyboard poll's row select)."""
IDLE_FORMS = frozenset(
    _CONDITIONS
    | _INPUT_TESTS
    | _ACCUMULATOR
    | _FLAGS
    | _MOVES
    | _LOGIC
    | _JUMPS
    | set(_PORT_READS)
    | set(_PORT_WRITES)
)
"""The forms an idle loop may be made of (besides its one MOVX read)."""
MOVX_READ = "MOVX A,@Ri"
Reaches = Callable[[int], bool]
"""Whether a poll's MOVX may still be reached from a PC (`may_return`, cached by the caller)."""

NONE = (0,) * 8  # taint of a value that does not depend on the polled read
FULL = tuple(1 << bit for bit in range(8))  # taint of the polled value itself


@dataclass(frozen=True, slots=True)
class Ports:
    """The ports as an iteration finds them: the latches and what the inputs answer."""

    p1: int
    p2: int
    in_p1: int
    """`port_read(1)` (before the AND with the latch), likewise `in_p2`; `bus` is `bus_read()`."""
    in_p2: int
    bus: int


@dataclass(frozen=True, slots=True)
class Loop:
    """One iteration of an idle loop, as found from one state at its anchor."""

    period: int
    """Cycles per iteration."""
    care: int
    """Bits of the polled value the iteration depends on (poll anchors)."""
    t1: bool
    irq: bool
    """The iteration tests T1 / /INT: skipping stops at their next change."""
    delay_register: int
    """Internal RAM index of the register a DJNZ counts down each iteration, or -1."""
    fetches: tuple[tuple[int, int], ...]
    """(address, cycle offset from the iteration's start) of each program fetch, in order."""
    ports: bool = False
    """The iteration reads or writes ports: skipping stops where the inputs may change."""


@dataclass(slots=True)
class _State:
    a: int
    a_taint: tuple[int, ...]
    psw: int
    carry_taint: int
    f1: int
    rb: int
    timer_flag: bool
    ram: bytearray
    ram_taint: dict[int, tuple[int, ...]]
    touched: set[int]
    """Internal RAM bytes the iteration read or wrote: the result holds while they are the same."""
    tested_t1: bool = False
    tested_irq: bool = False
    used_ports: bool = False


@dataclass(frozen=True, slots=True)
class Analysis:
    """What `run_iteration` found, and what the answer depends on besides the registers."""

    loop: Loop | None
    touched: tuple[int, ...]
    """The internal RAM bytes it read or wrote (the rest may be anything)."""
    t1: bool
    irq: bool
    """Whether it looked at T1 / /INT (the answer holds for their values at the start)."""
    ports: bool = False
    """Whether it read or wrote a port (the answer holds for the same `Ports`)."""


def _union(taint: tuple[int, ...]) -> int:
    result = 0
    for bits in taint:
        result |= bits
    return result


def _rotate(taint: tuple[int, ...], left: int) -> tuple[int, ...]:
    """Taint of a value rotated left by `left` bits."""
    return tuple(taint[(bit - left) % 8] for bit in range(8))


def run_iteration(
    prog: bytes | bytearray,
    anchor: int,
    movx_pc: int,
    state: tuple[int, int, int, int, bool, bytes, bool, bool],
    ports: Ports | None = None,
    reaches: Reaches | None = None,
) -> Analysis:
    """The loop from `anchor` back to it (poll: `movx_pc` >= 0, the iteration ends with that MOVX)
    for the CPU state (a, psw, f1, jump_a11, timer_flag, ram, t1, irq), or None if it is not
    idle from that state, with what that answer depends on. T1 and /INT are taken at their
    values at the start. An iteration that comes back to an instruction other than the anchor
    (an inner loop) is not idle: the inner loop is an anchor of its own. Without `ports`, a port
    read or write is not idle. With `reaches` (a poll's), the iteration stops as not idle at the
    first PC from which no static path leads back to the MOVX: the answer is the same, but it
    depends on less (a loop's exit path, which may count a frame in RAM, is not followed on to
    where it fails), so a cached failure holds from one exit to the next."""
    s, loop = _iterate(prog, anchor, movx_pc, state, ports, reaches)
    return Analysis(loop, tuple(sorted(s.touched)), s.tested_t1, s.tested_irq, s.used_ports)


def _iterate(
    prog: bytes | bytearray,
    anchor: int,
    movx_pc: int,
    state: tuple[int, int, int, int, bool, bytes, bool, bool],
    ports: Ports | None = None,
    reaches: Reaches | None = None,
) -> tuple[_State, Loop | None]:
    a, psw, f1, jump_a11, timer_flag, ram, t1, irq = state
    rb = 24 if psw & 0x10 else 0
    poll = movx_pc >= 0
    if reaches is not None and not poll:
        raise ValueError("`reaches` is a poll's: a spin loop may come back to its anchor by falling through")
    s = _State(a, FULL if poll else NONE, psw, 0, f1, rb, timer_flag, bytearray(ram), {}, set())
    visited: set[int] = set()
    care = 0
    tests_t1 = tests_irq = False
    read_registers: set[int] = set()
    counted: dict[int, int] = {}
    fetches: list[tuple[int, int]] = []
    pc, cycles = anchor, 0
    for _ in range(MAX_INSTRUCTIONS):
        if pc in visited or (reaches is not None and not reaches(pc)):
            return s, None
        visited.add(pc)
        opcode = prog[pc]
        key, values = DECODED[opcode]
        fetches.append((pc, cycles))
        operand_pc = NEXT_PC[pc]
        if LENGTHS[opcode] == 2:
            fetches.append((operand_pc, cycles))
        cycles += CYCLES[opcode]
        after = NEXT_PC[operand_pc] if LENGTHS[opcode] == 2 else operand_pc
        arg = prog[operand_pc]
        if key == MOVX_READ:
            if pc != movx_pc:
                return s, None
            s.touched.add(rb | values["i"])
            if s.ram_taint.get(rb | values["i"], NONE) != NONE:
                return s, None  # the polled address depends on the read
            care |= s.carry_taint
            for taint in s.ram_taint.values():
                care |= _union(taint)
            if (s.psw, s.f1, s.rb, s.timer_flag) != (psw, f1, rb, timer_flag) or any(
                s.ram[index] != ram[index] for index in s.touched
            ):
                return s, None
            return s, Loop(cycles, care, tests_t1, tests_irq, -1, tuple(fetches), s.used_ports)
        if key not in IDLE_FORMS:
            return s, None
        if key in _PORT_READS or key in _PORT_WRITES:
            if ports is None or not _port_access(s, key, arg, ports):
                return s, None
            step: tuple[int, int] | None = (-1, 0)
        else:
            step = _execute(s, key, values, arg, read_registers, counted)
        if step is None:
            return s, None
        target, tested = step
        care |= tested
        if key in ("JT1 addr8", "JNT1 addr8"):
            tests_t1 = s.tested_t1 = True
            taken = t1 if key == "JT1 addr8" else not t1
            target = (operand_pc & 0xF00) | arg if taken else -1
        elif key == "JNI addr8":
            # Falling through arms MAME's JNI hack for the next interrupt check, which only matters
            # if /INT is requested there: the skip ends before /INT can rise (the loop tests it).
            tests_irq = s.tested_irq = True
            target = (operand_pc & 0xF00) | arg if irq else -1
        elif key == "JTF addr8":
            if s.timer_flag:
                return s, None
            target = -1
        elif key == "JMP addr11":
            target = ((opcode >> 5) << 8) | arg | jump_a11
        elif key == "CALL addr11":
            ret = after
            sp = s.psw & 7
            s.ram[8 + 2 * sp] = ret & 0xFF
            s.ram[9 + 2 * sp] = (ret >> 8) | (s.psw & 0xF0)
            s.touched.update((8 + 2 * sp, 9 + 2 * sp))
            s.ram_taint.pop(8 + 2 * sp, None)
            s.ram_taint.pop(9 + 2 * sp, None)
            care |= s.carry_taint
            s.psw = (s.psw & 0xF0) | ((sp + 1) & 7)
            target = ((opcode >> 5) << 8) | arg | jump_a11
        elif key == "RET":
            sp = (s.psw - 1) & 7
            s.touched.update((8 + 2 * sp, 9 + 2 * sp))
            if (8 + 2 * sp) in s.ram_taint or (9 + 2 * sp) in s.ram_taint:
                return s, None
            s.psw = (s.psw & 0xF0) | sp
            target = (s.ram[8 + 2 * sp] | (s.ram[9 + 2 * sp] << 8)) & 0xFFF
        elif target == -2:  # a conditional jump, taken
            target = (operand_pc & 0xF00) | arg
        pc = after if target < 0 else target
        if pc == anchor and not poll:
            return s, _spin_end(s, state, care, tests_t1, tests_irq, cycles, fetches, read_registers, counted)
    return s, None


def _port_access(s: _State, key: str, arg: int, ports: Ports) -> bool:
    """Run a port read or write on `s`; False if it is a write that would change the port."""
    s.used_ports = True
    if key in _PORT_READS:
        port = _PORT_READS[key]
        if port == 0:
            s.a = ports.bus
        else:
            s.a = ports.in_p1 & ports.p1 if port == 1 else ports.in_p2 & ports.p2
        s.a_taint = NONE
        return True
    latch = ports.p1 if _PORT_WRITES[key] == 1 else ports.p2
    if key.startswith("OUTL"):
        if s.a_taint != NONE:
            return False
        written = s.a
    else:
        written = latch & arg if key.startswith("ANL") else latch | arg
    return written == latch


def _spin_end(
    s: _State,
    state: tuple[int, int, int, int, bool, bytes, bool, bool],
    care: int,
    tests_t1: bool,
    tests_irq: bool,
    cycles: int,
    fetches: list[tuple[int, int]],
    read_registers: set[int],
    counted: dict[int, int],
) -> Loop | None:
    """The spin loop's iteration if it left the state as it found it (but for a delay register)."""
    a, psw, f1, _jump_a11, timer_flag, ram, _t1, _irq = state
    rb = 24 if psw & 0x10 else 0
    if (s.a, s.psw, s.f1, s.rb, s.timer_flag) != (a, psw, f1, rb, timer_flag):
        return None
    changed = [index for index in s.touched if s.ram[index] != ram[index]]
    if not changed:
        return Loop(cycles, care, tests_t1, tests_irq, -1, tuple(fetches), s.used_ports)
    if len(changed) != 1:
        return None
    register = changed[0]
    if (
        counted.get(register) != 1
        or register in read_registers
        or s.ram[register] != (ram[register] - 1) & 0xFF
    ):
        return None
    return Loop(cycles, care, tests_t1, tests_irq, register, tuple(fetches), s.used_ports)


def _execute(
    s: _State,
    key: str,
    values: dict[str, int],
    arg: int,
    read_registers: set[int],
    counted: dict[int, int],
) -> tuple[int, int] | None:
    """Run one idle form on `s`: (-1 fall through / -2 conditional jump taken / 0 for the caller to
    decide, bits of the polled value tested), or None if it cannot be part of an idle loop."""
    ram, taint = s.ram, s.ram_taint

    def register(index: int) -> int:
        read_registers.add(index)
        s.touched.add(index)
        return index

    def pointer() -> int | None:
        index = register(s.rb | values["i"])
        if index in taint:
            return None
        return register(ram[index] & 0x3F)

    if key in _CONDITIONS:
        tested = 0
        if key == "JBb addr8":
            bit = 1 << values["b"]
            taken = s.a & bit
            tested = s.a_taint[values["b"]]
        elif key in ("JZ addr8", "JNZ addr8"):
            taken = not s.a if key == "JZ addr8" else s.a
            tested = _union(s.a_taint)
        elif key in ("JC addr8", "JNC addr8"):
            taken = s.psw & 0x80 if key == "JC addr8" else not s.psw & 0x80
            tested = s.carry_taint
        elif key == "JF0 addr8":
            taken = s.psw & 0x20
        else:
            taken = s.f1
        return (-2 if taken else -1), tested
    if key in _INPUT_TESTS or key in ("JMP addr11", "CALL addr11", "RET"):
        return 0, 0
    if key == "DJNZ Rn,addr8":
        index = s.rb | values["n"]
        if index in taint:
            return None
        s.touched.add(index)
        counted[index] = counted.get(index, 0) + 1
        ram[index] = (ram[index] - 1) & 0xFF
        return (-2 if ram[index] else -1), 0
    if key in _ACCUMULATOR:
        if key == "CLR A":
            s.a, s.a_taint = 0, NONE
        elif key == "CPL A":
            s.a ^= 0xFF
        elif key in ("INC A", "DEC A"):
            s.a = (s.a + (1 if key == "INC A" else -1)) & 0xFF
            s.a_taint = (_union(s.a_taint),) * 8
        elif key == "RL A":
            s.a = ((s.a << 1) | (s.a >> 7)) & 0xFF
            s.a_taint = _rotate(s.a_taint, 1)
        elif key == "RR A":
            s.a = ((s.a >> 1) | (s.a << 7)) & 0xFF
            s.a_taint = _rotate(s.a_taint, 7)
        elif key == "SWAP A":
            s.a = ((s.a << 4) | (s.a >> 4)) & 0xFF
            s.a_taint = _rotate(s.a_taint, 4)
        return -1, 0
    if key in _FLAGS:
        if key == "CLR C":
            s.psw &= 0x7F
            s.carry_taint = 0
        elif key == "CPL C":
            s.psw ^= 0x80
        elif key == "CLR F0":
            s.psw &= 0xDF
        elif key == "CPL F0":
            s.psw ^= 0x20
        elif key == "CLR F1":
            s.f1 = 0
        elif key == "CPL F1":
            s.f1 ^= 1
        elif key == "SEL RB0":
            s.psw &= 0xEF
            s.rb = 0
        else:
            s.psw |= 0x10
            s.rb = 24
        return -1, 0
    if key in ("MOV Rn,A", "MOV @Ri,A", "MOV Rn,#imm8", "MOV @Ri,#imm8"):
        target = s.rb | values["n"] if "Rn" in key else pointer()
        if target is None:
            return None
        s.touched.add(target)
        if key.endswith(",A"):
            ram[target] = s.a
            _set_taint(taint, target, s.a_taint)
        else:
            ram[target] = arg
            taint.pop(target, None)
        return -1, 0
    operand = key.split(",")[-1] if "," in key else key.split(" ")[-1]
    if operand == "#imm8":
        index = -1
        value, value_taint = arg, NONE
    else:
        found = register(s.rb | values["n"]) if operand == "Rn" else pointer()
        if found is None:
            return None
        index = found
        value, value_taint = ram[index], taint.get(index, NONE)
    if key in _MOVES:
        if key.startswith("MOV A,"):
            s.a, s.a_taint = value, value_taint
        elif key.startswith("XCH"):
            ram[index], s.a = s.a, value
            _set_taint(taint, index, s.a_taint)
            s.a_taint = value_taint
        else:  # INC/DEC Rn, INC @Ri
            ram[index] = (value + (-1 if key.startswith("DEC") else 1)) & 0xFF
            _set_taint(taint, index, (_union(value_taint),) * 8)
        return -1, 0
    operation = key.split(" ")[0]
    if operation == "ANL":
        s.a &= value
        s.a_taint = tuple(
            (s.a_taint[bit] if value_taint != NONE or value >> bit & 1 else 0) | value_taint[bit]
            for bit in range(8)
        )
    elif operation == "ORL":
        s.a |= value
        s.a_taint = tuple(
            (s.a_taint[bit] if value_taint != NONE or not value >> bit & 1 else 0) | value_taint[bit]
            for bit in range(8)
        )
    elif operation == "XRL":
        s.a ^= value
        s.a_taint = tuple(s.a_taint[bit] | value_taint[bit] for bit in range(8))
    else:  # ADD: every bit and both carries may depend on every tainted bit
        total = s.a + value
        half = (s.a & 15) + (value & 15)
        s.psw = (s.psw & 0x3F) | ((total >> 1) & 0x80) | ((half << 2) & 0x40)
        s.a = total & 0xFF
        everything = _union(s.a_taint) | _union(value_taint)
        s.a_taint = (everything,) * 8
        s.carry_taint = everything
    return -1, 0


def _set_taint(taint: dict[int, tuple[int, ...]], index: int, value: tuple[int, ...]) -> None:
    if value == NONE:
        taint.pop(index, None)
    else:
        taint[index] = value


def may_return(prog: bytes | bytearray, start: int, goal: int, allow_movx: bool) -> bool:
    """Whether some path of idle forms leads from `start` to `goal` within
    `STATIC_MAX_INSTRUCTIONS` (both ways at every test, both A11 values at every JMP and CALL; a RET
    that no CALL on the path explains may return anywhere, so it counts as a yes, and so do more
    than `STATIC_MAX_PATHS` paths at once). False means
    `run_iteration` finds no loop there from any state: the CPU need not try."""
    frontier: set[tuple[int, tuple[int, ...]]] = {(start, ())}
    seen: set[tuple[int, tuple[int, ...]]] = set()
    for depth in range(STATIC_MAX_INSTRUCTIONS):
        following: set[tuple[int, tuple[int, ...]]] = set()
        for pc, stack in frontier:
            if pc == goal and depth:
                return True
            if (pc, stack) in seen:
                continue
            seen.add((pc, stack))
            opcode = prog[pc]
            key, _values = DECODED[opcode]
            operand_pc = NEXT_PC[pc]
            after = NEXT_PC[operand_pc] if LENGTHS[opcode] == 2 else operand_pc
            arg = prog[operand_pc]
            if key == MOVX_READ:
                if allow_movx and pc == goal:
                    return True
                continue
            if key not in IDLE_FORMS:
                continue
            far = ((opcode >> 5) << 8) | arg
            if key == "JMP addr11":
                following.update({(far, stack), (far | 0x800, stack)})
            elif key == "CALL addr11":
                deeper = (*stack, after)[-4:]
                following.update({(far, deeper), (far | 0x800, deeper)})
            elif key == "RET":
                if not stack:
                    return True
                following.add((stack[-1], stack[:-1]))
            elif key in _CONDITIONS or key in _INPUT_TESTS or key == "DJNZ Rn,addr8":
                following.update({((operand_pc & 0xF00) | arg, stack), (after, stack)})
            elif not allow_movx and after == goal:
                continue  # a spin loop's anchor is where a branch goes back to, not the next line
            else:
                following.add((after, stack))
        frontier = following
        if not frontier:
            return False
        if len(frontier) > STATIC_MAX_PATHS:
            return True  # too many paths to follow cheaply: maybe (the CPU then tries and sees)
    return False
