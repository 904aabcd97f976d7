"""Blocks: runs of instructions compiled into one Python function each.

The fast loop's cost is mostly its own: a lookup, a call and a stop test per instruction. A run of
instructions, at most `BLOCK_MAX_INSTRUCTIONS`, is compiled into one function: the handlers'
statements back to back with their PCs and cycles filled in. It ends at a JMP, RET, RETR or JMPP,
and at a CALL unless the routine is short (`routine_length`): then it runs through the routine and
on after the CALL while the RET returns there (a run-time test). A conditional branch becomes a side
exit (`return` of the target), so loops and tests do not end a block. An exit back to the block's
start (a conditional branch, or a JMP whose target is the one expected at compile time: a run-time
test, else the block returns the real target) begins the next pass inside the function after the
test the fast loop would make before running the block again (its start plus its most cycles below
the stop). Blocks do not run on into the code a JMP or a long routine goes to: each entry PC would
compile its own copy of the code after it, and in a 600-frame run compiling those copies cost more
than the calls saved. The function returns the next PC in bits 0-11 and the cycles it ran in the
bits above. The fast loop runs a block only when all of it would end before the stop; an instruction
whose declared effects (`semantics.EFFECTS`) may move the stop (board access, timer, interrupt
enables) is followed by the fast loop's entry test again: the block returns there when the rest of
it might reach the new stop (a VDC write may bring /INT a few cycles close), and the fast loop goes
on instruction by instruction. So a block does exactly what the fast loop would, instruction by
instruction. The register bank is a local of the function (only SEL RB and MOV PSW,A change it, and
they write it back at once; nothing a block calls changes it); A and PSW are locals too (`CACHED`),
written back before a call out and at every exit. The statements are then made cheaper where the
block's straight-line code allows: flags a later ADD overwrites are not computed
(`_drop_overwritten_flags`), such an ADD is one statement (`_fold_adds`), a register written and
read back into A is not read back (`_forward_writes`), and a MOVX read that heads no poll has the
board call `Cpu.vdc_read` only while /INT may interrupt (`QUIET_READ`).

While fetches are traced, a block also knows them statically: its `FetchTable` lists each fetch's
cycle offset in the block, address and byte, so the board is told them in one call per block run
(`Board.program_fetches`) instead of stepping. A block has no table when a fetch depends on A (MOVP,
MOVP3, JMPP) or an instruction writes a port (the board may report the port with later fetches, or
switch banks) or the block runs from the internal ROM into the cartridge (the console reports
cartridge fetches only, with a port change stamped at the first): such blocks are stepped while
tracing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from hilbridge.machine.cartridge import PROGRAM_START
from hilbridge.machine.semantics import (
    ARG,
    CYCLES,
    LENGTHS,
    NEXT,
    NEXT_PC,
    TABLES,
    form_body,
    form_effects,
    form_of,
)
from hilbridge.mcs48 import INSTRUCTIONS

BLOCK_MAX_INSTRUCTIONS = 48
BLOCK_HOT = 64  # visits before a block is compiled: compiling costs ~ 500 plain instruction runs
COVERED_DELAY = 3
"""Times a PC inside a compiled block waits another BLOCK_HOT visits before its own block compiles:
the fast loop comes there one by one after a run's start, an interrupt or a stop near a block's end,
and such entries would compile a copy of the rest of the block at each PC."""
MAY_MOVE_STOP = frozenset({"board", "stop", "timer"})
CYCLE_SHIFT = 12
_PC = re.compile(r"\bpc\b")
_CYC = re.compile(r"\bcyc\b")
WHOLE = "<whole>"
"""Stands for the block's most cycles in a stop test until they are known."""
END = "end"
"""The local that holds the cycle a pass of the block ends at, at most (`c0` plus its most cycles);
a looping block's only cycle count, which each pass moves on by its most cycles."""
PASS_TEST = f"if passes and {END} < C.stop:"
"""The fast loop's entry test before a next pass inside the function (`END` moved on to that pass's)."""
CYCLE = "<cycle {}>"
"""Stands for the cycle an instruction `{}` cycles into the pass ends at until the block is known
to loop or not: `c0 + cycles`, in a looping block `END` - (its most cycles - cycles)."""
_CYCLE = re.compile(CYCLE.format(r"(\d+)"))
OFFSET = "<offset>"
"""Stands for the cycles of the passes before this one in an exit (nothing in a block that does not loop)."""
_BANK_SET = re.compile(r"^(\s*)C\.rb = ")
_BANK = re.compile(r"\bC\.rb\b(?! = rb)")
_REGISTER_0 = re.compile(r"\brb \| 0(?=[)\]])")
"""R0's (and @R0's) index: the bank itself, without the OR."""
_RETURN = re.compile(r"^(\s*)return (.*)$")
_ARG = re.compile(r"\barg\b")
_JUMP_EXIT = re.compile(r"^(\d+) \| (\d+) \| C\.jump_a11$")
"""A JMP's or CALL's exit: its page, its operand and A11 as a SEL MB left it."""
_OPERAND = re.compile(r"\bP\[pc\]")

BOUND = ", ".join(f"{name}={name}" for name in ("C", "M", "B", "P", *TABLES))
"""The CPU, its RAM, the board, the program memory and the statements' tables as locals of a block
(the fast name lookup)."""

Fetch = tuple[int, int, int]
"""One fetch: (cycle offset of the instruction's start, address, byte)."""


@dataclass(frozen=True, slots=True)
class FetchTable:
    """Fetches in order, with their lowest and highest address (a board can tell at once whether
    it cares about any of them)."""

    entries: tuple[Fetch, ...]
    low: int
    high: int

    @classmethod
    def of(cls, entries: tuple[Fetch, ...]) -> FetchTable:
        addresses = [address for _, address, _ in entries]
        return cls(entries, min(addresses), max(addresses))


Block = tuple[Callable[..., int], int, "FetchTable | None", "FetchTable | None", bool]
"""A compiled block: the function ((start cycle, may start more passes = True) -> next PC | cycles
<< 12), the most cycles one pass may take, its fetches after the first and all of them (None:
not traceable in one call; a traced run runs one pass at a time), and whether every pass takes
those cycles and makes those fetches (a delay loop: a traced run runs all its passes at once)."""


def _falls_through(opcode: int) -> bool:
    return form_body(opcode).splitlines()[-1] in ("return pc", NEXT)


BODIES: tuple[tuple[str, ...], ...] = tuple(tuple(form_body(opcode).splitlines()) for opcode in range(256))
FALLS_THROUGH: tuple[bool, ...] = tuple(_falls_through(opcode) for opcode in range(256))
MOVES_STOP: tuple[bool, ...] = tuple(bool(form_effects(opcode) & MAY_MOVE_STOP) for opcode in range(256))


def _traceable(opcode: int) -> bool:
    """Its fetches are known from the code alone and it leaves the ports as they were."""
    body = form_body(opcode)
    return "C.a]" not in body and "port_write" not in body and "expander" not in body


TRACEABLE: tuple[bool, ...] = tuple(_traceable(opcode) for opcode in range(256))


LOOPS_BACK = "JMP addr11"
"""The form that closes a block's loop when its target is the block's start (and A11 is as it was
when the block was compiled)."""
TAKEN = "    return (pc & 0xF00) | arg"
"""The taken arm of every conditional branch form: its target is the page of the operand and the operand."""
CONDITIONAL: tuple[bool, ...] = tuple(
    FALLS_THROUGH[opcode] and "branch" in form_effects(opcode) for opcode in range(256)
)
if any(CONDITIONAL[opcode] and TAKEN not in form_body(opcode).splitlines() for opcode in range(256)):
    raise RuntimeError("a conditional branch form's taken arm is not TAKEN")
JUMP: tuple[bool, ...] = tuple(form_of(INSTRUCTIONS[opcode])[0] == LOOPS_BACK for opcode in range(256))
CALL: tuple[bool, ...] = tuple(form_of(INSTRUCTIONS[opcode])[0] == "CALL addr11" for opcode in range(256))
RETURN: tuple[bool, ...] = tuple(form_of(INSTRUCTIONS[opcode])[0] == "RET" for opcode in range(256))
NOP = next(opcode for opcode in range(256) if form_of(INSTRUCTIONS[opcode])[0] == "NOP")
MOVX_READ: tuple[bool, ...] = tuple(form_of(INSTRUCTIONS[opcode])[0] == "MOVX A,@Ri" for opcode in range(256))
WATCH_READ = "C.watch_read = True"
"""A MOVX read's statement that has the board call `Cpu.vdc_read` after the read."""
QUIET_READ = "C.watch_read = C.xirq_enabled and not C.irq_in_progress"
"""`WATCH_READ` in a block, at a read that heads no poll (`Cpu.heads_poll`): `vdc_read` then only
recomputes the stop, and only while /INT may interrupt; else the board need not call it."""
if any(MOVX_READ[opcode] and WATCH_READ not in form_body(opcode).splitlines() for opcode in range(256)):
    raise RuntimeError("a MOVX read form does not set C.watch_read as WATCH_READ")
ROUTINE_MOST = 12
"""Instructions (its RET included) of the longest routine a block runs through from a CALL."""


def routine_length(prog: bytes | bytearray, entry: int) -> int | None:
    """The instructions from `entry` to its RET when they are at most `ROUTINE_MOST` and all fall
    through to the next (side exits allowed), else None."""
    pc = entry
    for length in range(1, ROUTINE_MOST + 1):
        opcode = prog[pc]
        if RETURN[opcode]:
            return length
        if not FALLS_THROUGH[opcode]:
            return None
        pc = NEXT_PC[pc] if LENGTHS[opcode] == 1 else NEXT_PC[NEXT_PC[pc]]
    return None


CACHED = (("C.a", "ca"), ("C.psw", "cpsw"))
"""CPU fields a block keeps in locals (field, local): written back before an instruction that calls
the board or a CPU method (they may read them) and at every exit, read again after a CPU method
(the expander and the timer set A; the board never sets A or PSW, as it never sets the bank)."""
CALLS_OUT: tuple[bool, ...] = tuple(bool(form_effects(opcode) & {"board", "timer"}) for opcode in range(256))
POINTER_WRITE: tuple[bool, ...] = tuple("pointer_write" in form_effects(opcode) for opcode in range(256))
STACK_POINTER: tuple[bool, ...] = tuple("stack_pointer" in form_effects(opcode) for opcode in range(256))
_CPU_CALL = re.compile(r"\bC\.\w+\(")
_CALL = re.compile(rf"\bB\.\w+\(|{_CPU_CALL.pattern}")
if any(_CALL.search(form_body(opcode)) and not CALLS_OUT[opcode] for opcode in range(256)):
    raise RuntimeError("a form calls the board or the CPU but declares neither a board nor a timer effect")
_FIELDS = tuple((re.compile(rf"\b{re.escape(field)}\b"), field, local) for field, local in CACHED)
_ASSIGNED = re.compile(r"^\s*([^=]*?)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)")


class _Locals:
    """Where a block's locals for the `CACHED` fields stand at one point of its straight-line code:
    `valid` fields hold the value in their local, `dirty` ones not yet in the CPU too."""

    def __init__(self) -> None:
        self.valid: set[str] = set()
        self.dirty: set[str] = set()

    def flush(self) -> str:
        """Statements (each ending in '; ') that write the dirty locals back."""
        return "".join(f"{field} = {local}; " for field, local in CACHED if field in self.dirty)


@dataclass(frozen=True, slots=True)
class _Line:
    """One statement of a form as a template (`{pc}`, `{cyc}`, `{arg}`: the address after the
    opcode, the end cycle, the operand byte), as it is (`text`) and on the locals (`held`), with
    the `CACHED` fields it assigns; a `return` keeps its indent and expression apart."""

    text: str
    held: str
    assigns: frozenset[str]
    indent: str | None  # a return's: its line is then `indent` + the exit of the expression
    taken: bool  # the TAKEN arm of a conditional branch


@dataclass(frozen=True, slots=True)
class _Form:
    """An opcode's statements prepared for the block compiler once: its lines but the last (the
    operand fetch dropped: the operand is a constant of the block), its last (a return), whether it
    calls out (`CALLS_OUT`) and whether to a CPU method, and the `CACHED` fields it needs in their
    locals first: those it reads, or assigns other than by a plain statement at its top level."""

    lines: tuple[_Line, ...]
    last: _Line
    calls_out: bool
    calls_cpu: bool  # its statements then work on the fields themselves, not the locals
    loads: tuple[tuple[str, str], ...]
    banked: bool  # uses the register bank (the block's local `rb`)


def _line(line: str) -> _Line:
    if "{" in line or "}" in line:
        raise RuntimeError(f"a form's statement has a brace, which its template cannot keep: {line}")
    text = _PC.sub("{pc}", _CYC.sub("{cyc}", _OPERAND.sub("{arg}", _ARG.sub("{arg}", line))))
    text = _BANK.sub("rb", _BANK_SET.sub(r"\1C.rb = rb = ", text))  # the bank's local
    text = _REGISTER_0.sub("rb", text)
    held = text
    assigned = _ASSIGNED.match(line)
    assigns = []
    for pattern, field, local in _FIELDS:
        if assigned and pattern.search(assigned[1]):
            assigns.append(field)
        held = pattern.sub(local, held)
    returned = _RETURN.match(text)
    if returned:
        text, held = returned[2], _RETURN.match(held)[2]  # type: ignore[index]
    return _Line(text, held, frozenset(assigns), returned[1] if returned else None, line == TAKEN)


def _form(opcode: int) -> _Form:
    body = [line for line in BODIES[opcode] if line != ARG]
    loads = []
    for pattern, field, local in _FIELDS:
        for line in body:
            plain = line.startswith(f"{field} = ")
            if pattern.search(line[len(field) + 3 :] if plain else line):
                loads.append((field, local))
                break
    lines = tuple(_line(line) for line in body)
    banked = any("C.rb" in line for line in body)
    calls_cpu = any(_CPU_CALL.search(line) for line in body)
    return _Form(lines[:-1], lines[-1], CALLS_OUT[opcode], calls_cpu, tuple(loads), banked)


FORMS: tuple[_Form, ...] = tuple(_form(opcode) for opcode in range(256))


_FLAGS_WRITE = re.compile(r"^(\s*)cpsw = \(cpsw & 0x3F\) \| ")
"""An ADD's or ADDC's statement that sets C and AC in the PSW local (bits 0-5 kept)."""
_FLOW = re.compile(r"(if|elif|else|while|for|return|continue|break)\b")


def _drop_overwritten_flags(lines: list[str]) -> list[str]:
    """The block's statements without the C/AC writes that a later one overwrites unread: a chain
    of ADDs computes its flags once. Only within a straight run at one indentation in which no
    statement mentions the PSW local (it is written back before every exit and call out, so a
    dirty one is always mentioned there) or branches."""
    kept = []
    for index, line in enumerate(lines):
        found = _FLAGS_WRITE.match(line)
        if not (found and _flags_overwritten(lines, index + 1, found[1])):
            kept.append(line)
    return kept


def _flags_overwritten(lines: list[str], start: int, indent: str) -> bool:
    for line in lines[start:]:
        later = _FLAGS_WRITE.match(line)
        if later and later[1] == indent and "cpsw" not in line[later.end() :]:
            return True
        body = line[len(indent) :]
        if "cpsw" in line or not line.startswith(indent) or body.startswith(" ") or _FLOW.match(body):
            return False
    return False


_ADD_OPERAND = re.compile(r"^(\s*)d = (.+)$")
_ADD_SUM = re.compile(r"^(\s*)t = a \+ (d|\d+)( \+ \(cpsw >> 7\))?$")
"""An ADD's or ADDC's sum of A (its copy `a`) and the operand (`d`, or a number folded into it)."""


def _fold_adds(lines: list[str]) -> list[str]:
    """The block's statements with each ADD or ADDC whose flags a later one overwrites
    (`_drop_overwritten_flags`) as one statement on the A local: `d = X`, `a = ca`, `t = a + d`,
    `ca = LOW_BYTE[t]` (the operand line gone when a number) become `ca = LOW_BYTE[ca + X]`. The
    form's own locals `d`, `a` and `t` are dead after it: every form assigns them before use."""
    folded: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.strip() != "a = ca" or index + 1 >= len(lines):  # the copy an ADD starts with
            folded.append(line)
            continue
        indent = line[: len(line) - len("a = ca")]
        found = _ADD_SUM.match(lines[index])
        if not (found and found[1] == indent and lines[index + 1] == f"{indent}ca = LOW_BYTE[t]"):
            folded.append(line)
            continue
        value = found[2]
        if value == "d":  # the operand's statement came before the copy
            operand = _ADD_OPERAND.match(folded[-1]) if folded else None
            if not (operand and operand[1] == indent):
                folded.append(line)
                continue
            value = operand[2]
            folded.pop()
        folded.append(f"{indent}ca = LOW_BYTE[ca + {value}{found[3] or ''}]")
        index += 2
    return folded


_RAM_WRITE = re.compile(r"^(\s*)M\[\(?(\d+)\)?\] = (.+)$")
"""A write to internal RAM at an address known at compile time (a register in a known bank)."""


def _forward_writes(lines: list[str]) -> list[str]:
    """The block's statements with a register write followed by a read of that register into the
    A local (`INC R0` then `MOV A,R0`: `M[0] = X`, `ca = M[(0)]`) as one `M[0] = ca = X`: the
    value goes to both without reading RAM back."""
    forwarded: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        write = _RAM_WRITE.match(line) if index + 1 < len(lines) else None
        if write and lines[index + 1] in (f"{write[1]}ca = M[({write[2]})]", f"{write[1]}ca = M[{write[2]}]"):
            forwarded.append(f"{write[1]}M[{write[2]}] = ca = {write[3]}")
            index += 2
            continue
        forwarded.append(line)
        index += 1
    return forwarded


_BANK_LOCAL_SET = re.compile(r"^(\s*)C\.rb = rb = (.*)$")
_REGISTER = re.compile(r"(?<![.\w])rb \| (\d)\b")
_BANK_LOCAL = re.compile(r"(?<![.\w])rb\b")
_POPPED = re.compile(r"\((?:cpsw|C\.psw) - 1\) & 7\b")
_STACK_POINTER = re.compile(r"(?<![.\w])(?:cpsw|C\.psw) & 7\b")


class _Static:
    """What a block knows at compile time at one point of its code: the register bank (None: only
    the local `rb` knows it) and the stack pointer (None: unknown), and whether its code relies on
    the values it was compiled for at its entry (it then begins with a guard on them)."""

    def __init__(self, bank: int | None, stack: int | None) -> None:
        self.bank = bank
        self.stack = stack
        self.bank_from_entry = bank is not None
        self.guards_bank = False
        self.guards_stack = False

    def fill_in(self, text: str) -> str:
        """`text` with the bank and the stack pointer as numbers where they are known; a statement
        that sets the bank makes it known (a number) or unknown (from data)."""
        if "rb" not in text and "& 7" not in text:  # most statements: nothing to fill in
            return text
        setting = _BANK_LOCAL_SET.match(text)
        if setting:
            if setting[2].isdigit():
                self.bank, self.bank_from_entry = int(setting[2]), False
                return f"{setting[1]}C.rb = {setting[2]}"
            self.bank = None
            return text
        bank = self.bank
        if bank is not None and _BANK_LOCAL.search(text):
            text = _BANK_LOCAL.sub(str(bank), _REGISTER.sub(lambda found: str(bank | int(found[1])), text))
            self.guards_bank = self.guards_bank or self.bank_from_entry
        if self.stack is not None and "& 7" in text:
            text, popped = _POPPED.subn(str((self.stack - 1) & 7), text)
            text, read = _STACK_POINTER.subn(str(self.stack), text)
            self.guards_stack = self.guards_stack or bool(popped or read)
        return text

    def after(self, opcode: int) -> None:
        """The stack pointer after the instruction (CALL pushes, RET pops, others set it from data)."""
        if self.stack is not None and STACK_POINTER[opcode]:
            self.stack = (
                (self.stack + 1) & 7 if CALL[opcode] else (self.stack - 1) & 7 if RETURN[opcode] else None
            )


_SCRATCH = re.compile(r"^(\w+) = (.+)$")
"""A statement of an instruction's own that sets a local (not a `CACHED` field's, not the bank's)."""
_NAME = re.compile(r"(?<!\w)[A-Za-z_]")
"""A name in an expression (hexadecimal digits follow a 0x): the expression is not a number."""


def _fold_constants(lines: list[str], start: int) -> dict[str, str]:
    """Fold the locals that an instruction's statements (`lines[start:]`) set once, unconditionally,
    to a number known at compile time (a return address, a register's index, the stack pointer):
    the statement is dropped and the number written where the local is read. The locals it set so."""
    known: dict[str, str] = {}
    index = start
    while index < len(lines):
        found = _SCRATCH.match(lines[index])
        name = found[1] if found else ""
        if (
            found
            and not _NAME.search(found[2])
            and name not in ("ca", "cpsw", "rb")
            and _assigned_once(lines, start, name)
        ):
            value = _number(found[2])
            if value is not None:
                known[name] = value
                del lines[index]
                local = _local(name)
                lines[start:] = [local.sub(known[name], line) for line in lines[start:]]
                continue
        index += 1
    return known


@cache
def _number(expression: str) -> str | None:
    """The number an expression without names (our own template text) comes to, else None."""
    try:
        value = eval(expression, {"__builtins__": {}})
    except NameError:
        return None
    return str(value) if isinstance(value, int) else None


@cache
def _local(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![.\w]){name}\b")


@cache
def _assignment(name: str) -> re.Pattern[str]:
    return re.compile(rf"\s*{name}\b[^=]*(?<![=!<>])=(?!=)")


def _assigned_once(lines: list[str], start: int, name: str) -> bool:
    target = _assignment(name)
    return sum(1 for line in lines[start:] if target.match(line)) == 1


def _substituted(known: dict[str, str], text: str) -> str:
    for name, value in known.items():
        text = _local(name).sub(value, text)
    return text


@dataclass(frozen=True, slots=True)
class BlockSource:
    """A block's `def block(c0, passes=True)` source, its most cycles in one pass and its fetches
    (None: not traceable in one call)."""

    source: str
    cycles: int
    fetches: tuple[Fetch, ...] | None
    pcs: tuple[int, ...]  # the instructions' addresses, in the order the block runs them
    alike: bool = False  # every pass takes `cycles` and makes `fetches` (`Block`)


COUNTDOWN = "DJNZ Rn,addr8"
"""The form that closes a delay loop: `DJNZ Rn` back to the loop's start, maybe after NOPs."""
COUNTDOWN_MOST_NOPS = 8
"""NOPs a delay loop may hold before its DJNZ (a longer one is an ordinary looping block)."""


@dataclass(frozen=True, slots=True)
class Countdown:
    """A delay loop: NOPs, then a DJNZ that counts `register` down and goes back to the first."""

    register: int
    pcs: tuple[int, ...]  # the NOPs' addresses, then the DJNZ's


def countdown_at(prog: bytes | bytearray, start: int) -> Countdown | None:
    """The delay loop starting at `start` (`DJNZ Rn,$`, or NOPs then `DJNZ Rn` to `start`), else None."""
    pc, pcs = start, []
    while prog[pc] == NOP and len(pcs) < COUNTDOWN_MOST_NOPS:
        pcs.append(pc)
        pc = NEXT_PC[pc]
    form, values = form_of(INSTRUCTIONS[prog[pc]])
    operand = NEXT_PC[pc]
    if form != COUNTDOWN or (operand & 0xF00) | prog[operand] != start:
        return None
    return Countdown(values["n"], (*pcs, pc))


def countdown_source(prog: bytes | bytearray, start: int, loop: Countdown) -> BlockSource:
    """The block of the delay loop at `start`, all its passes at once: as many as the register
    counts, at most as many as the fast loop would start below the stop (the first always runs;
    pass k from the block's start `c0` needs c0 + k * w < stop - w, w the cycles of one pass, as
    `PASS_TEST`), one pass when `passes` is false. The register keeps the passes left. Nothing in
    a pass reads or moves the stop, so a pass is whole or not run."""
    fetches: list[Fetch] = []
    pass_cycles = 0
    for pc in loop.pcs:
        fetches.append((pass_cycles, pc, prog[pc]))
        pass_cycles += CYCLES[prog[pc]]
    djnz = loop.pcs[-1]
    operand = NEXT_PC[djnz]
    fetches.append((fetches[-1][0], operand, prog[operand]))
    after = NEXT_PC[operand]
    source = (
        f"def block(c0, passes=True, {BOUND}):\n"
        f"    r = C.rb | {loop.register}\n"
        "    left = M[r] or 256\n"
        f"    room = (C.stop - 1 - c0) // {pass_cycles} if passes else 1\n"
        "    if left <= room:\n"
        "        M[r] = 0\n"
        f"        return {after} | (left * {pass_cycles} << {CYCLE_SHIFT})\n"
        "    M[r] = left - room\n"
        f"    return {start} | (room * {pass_cycles} << {CYCLE_SHIFT})\n"
    )
    return BlockSource(source, pass_cycles, tuple(fetches), loop.pcs, alike=True)


def block_source(
    prog: bytes | bytearray,
    start: int,
    jump_a11: int = 0,
    bank: int | None = None,
    stack: int | None = None,
    heads_poll: Callable[[int], bool] | None = None,
) -> BlockSource | None:
    """The block at `start`, None if it would hold less than two instructions and not loop on
    itself (the single-instruction path is as fast). A JMP to `start` (A11 guessed as `jump_a11`)
    or any other exit back to `start` starts the next pass inside the
    function when the fast loop would run the block again there (the same stop test) and the caller
    allows it (`passes`); a block whose conditional branch goes back to `start` ends after it. (A
    delay loop at `start`, `countdown_at`, is `countdown_source`'s.)

    Compiled for a register `bank` and a `stack` pointer (None: read at run time), the block has
    its registers' and the stack's RAM addresses as numbers: it then begins with a guard that hands
    a run in another bank or at another stack depth to `Cpu.block_variant`, and it loops back to
    `start` only where both are as at its entry. A RET back from a routine run inline does not read
    the return address back when nothing on the way can have changed it (no write through R0/R1,
    no change of the stack pointer). A MOVX read after which `heads_poll` (given the address after
    it; None: after every read) says no poll is tried has `WATCH_READ` as `QUIET_READ`."""
    lines: list[str] = []
    pc, cycles, count = start, 0, 0
    check_stop = False
    fetches: list[Fetch] | None = []
    loops = False  # exits to `start` begin the next pass here
    moves_stop = False  # an instruction of the block may move the stop

    held = _Locals()
    banked = False  # an instruction uses the register bank
    pcs: list[int] = []
    returns: list[int] = []  # the return address of the CALL whose routine the block runs through
    pushed_intact = False  # nothing since that CALL can have changed the address it pushed
    static = _Static(bank, stack)
    tests_stop = False  # the fast loop's entry test is made inside (after a stop may have moved)

    def leave(target: str, ran: int) -> str:
        return f"{held.flush()}return ({target}) | ({ran << CYCLE_SHIFT}{OFFSET})"

    def go_on_at(exit_to: str, expected: int, ran: int) -> list[str]:
        """Go on at `expected` when the instruction's exit is there (a run-time test), else leave."""
        jump = _JUMP_EXIT.match(exit_to)
        if (
            jump and int(jump[1]) | int(jump[2]) | jump_a11 == expected
        ):  # a JMP's or CALL's: only A11 can differ
            return [f"if C.jump_a11 != {jump_a11}:", "    " + leave(exit_to, ran)]
        return [f"to = {exit_to}", f"if to != {expected}:", "    " + leave("to", ran)]

    def again(indent: str, ran: int) -> list[str]:
        flush = held.flush()  # the next pass starts with the locals not yet read
        return [
            *([f"{indent}{flush.removesuffix('; ')}"] if flush else []),
            f"{indent}{END} += {ran}",
            f"{indent}{PASS_TEST}",
            f"{indent}    continue",
            f"{indent}return {start} | (({END} - first) << {CYCLE_SHIFT})",
        ]

    while count < BLOCK_MAX_INSTRUCTIONS:
        opcode = prog[pc]
        pcs.append(pc)
        moves_stop = moves_stop or MOVES_STOP[opcode]
        following = NEXT_PC[pc]
        before, cycles = cycles, cycles + CYCLES[opcode]
        count += 1
        if fetches is not None:
            fetches.append((before, pc, opcode))
            if LENGTHS[opcode] == 2:
                fetches.append((before, following, prog[following]))
            if not TRACEABLE[opcode] or (pc >= PROGRAM_START) != (start >= PROGRAM_START):
                fetches = None
        if check_stop:  # the instruction before may have moved the stop: the fast loop's test
            lines.append(f"if {END} >= C.stop:")
            tests_stop = True
            lines.append("    " + leave(str(pc), before))
        through = FALLS_THROUGH[opcode]
        taken = (following & 0xF00) | prog[following]
        closes = CONDITIONAL[opcode] and taken == start
        form = FORMS[opcode]
        banked = banked or form.banked
        values = {"pc": following, "cyc": f"({CYCLE.format(cycles)})", "arg": prog[following]}
        on_fields = form.calls_cpu
        if form.calls_out and held.dirty:  # the board and the CPU's methods see the fields as they are
            lines.append(held.flush().removesuffix("; "))
            held.dirty.clear()
        if not on_fields:
            for field, local in form.loads:
                if field not in held.valid:
                    lines.append(f"{local} = {field}")
                    held.valid.add(field)
        mark = len(lines)
        quiet = MOVX_READ[opcode] and heads_poll is not None and not heads_poll(following)
        for line in form.lines:
            text = static.fill_in((line.text if on_fields else line.held).format_map(values))
            if quiet and text == WATCH_READ:
                text = QUIET_READ
            if closes and line.taken and (static.bank, static.stack) == (bank, stack):
                lines.extend(again("    ", cycles))
                loops = True
                continue
            if line.indent is not None:
                text = line.indent + leave(text, cycles)
            lines.append(text)
            if not on_fields:
                held.valid |= line.assigns
                held.dirty |= line.assigns
        if on_fields:
            held.valid.clear()
        known = _fold_constants(lines, mark)
        exit_to = _substituted(
            known, static.fill_in((form.last.text if on_fields else form.last.held).format_map(values))
        )
        static.after(opcode)
        if through:
            check_stop = MOVES_STOP[opcode]
            pushed_intact = pushed_intact and not (POINTER_WRITE[opcode] or STACK_POINTER[opcode])
            pc = following if LENGTHS[opcode] == 1 else NEXT_PC[following]
            if closes:  # the loop ends here: the code after it would only lengthen each pass's test
                lines.append(leave(str(pc), cycles))
                break
            continue
        target = ((opcode >> 5) << 8) | prog[following] | jump_a11 if JUMP[opcode] or CALL[opcode] else -1
        if CALL[opcode] and not returns and (target >= PROGRAM_START) == (start >= PROGRAM_START):
            length = routine_length(prog, target)  # a short routine in the same memory runs inline
            if length is not None and count + length <= BLOCK_MAX_INSTRUCTIONS:
                returns.append(NEXT_PC[following])
                lines.extend(go_on_at(exit_to, target, cycles))
                check_stop = False
                pushed_intact = True
                pc = target
                continue
        if RETURN[opcode] and returns:  # back from the routine, if the stack still says so
            back = returns.pop()
            if not pushed_intact:
                lines.extend(go_on_at(exit_to, back, cycles))
            check_stop = False
            pc = back
            continue
        if target != start or not JUMP[opcode] or (static.bank, static.stack) != (bank, stack):
            lines.append(leave(exit_to, cycles))
            break
        lines.extend(go_on_at(exit_to, target, cycles))
        lines.extend(again("", cycles))
        loops = True
        break
    else:
        lines.append(leave(str(pc), cycles))
    if count < 2 and not loops:  # a one-instruction loop gains from its passes inside
        return None
    lines = _forward_writes(_fold_adds(_drop_overwritten_flags(lines)))
    head = [f"def block(c0, passes=True, {BOUND}):"]
    guards = [f"C.rb != {bank}"] if static.guards_bank else []
    guards += [f"C.psw & 7 != {stack}"] if static.guards_stack else []
    if guards:  # run elsewhere: the variant for the bank and stack pointer there
        head.append(f"    if {' or '.join(guards)}:")
        head.append(f"        return C.block_variant({start}, c0, passes)")
    if banked and bank is None:  # the register bank in a local, kept up to date
        head.append("    rb = C.rb")
    if loops:  # the passes count the cycles in `END`, the first pass's end is `first`
        head.append(f"    first = {END} = c0 + {WHOLE}")
        if not moves_stop:  # the stop stays as it is: read it once
            head.append("    last = C.stop if passes else -1")
            lines = [line.replace(PASS_TEST, f"if {END} < last:") for line in lines]
        head.append("    while True:")
    elif tests_stop:  # the pass's end below the stop
        head.append(f"    {END} = c0 + {WHOLE}")
    indent = "        " if loops else "    "
    text = "\n".join(head + [indent + line for line in lines]) + "\n"
    text = text.replace(WHOLE, str(cycles)).replace(
        OFFSET, f" + (({END} - first) << {CYCLE_SHIFT})" if loops else ""
    )

    def cycle_at(found: re.Match[str]) -> str:
        into = int(found[1])
        if not loops:
            return f"c0 + {into}"
        return END if into == cycles else f"{END} - {cycles - into}"

    text = _CYCLE.sub(cycle_at, text)
    return BlockSource(text, cycles, None if fetches is None else tuple(fetches), tuple(pcs))
