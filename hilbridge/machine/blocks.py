"""Blocks: runs of instructions compiled into one Python function each.

The fast loop's cost is mostly its own: a lookup, a call and a stop test per instruction. A run of
instructions, at most `BLOCK_MAX_INSTRUCTIONS`, is compiled into one function: the handlers'
statements back to back with their PCs and cycles filled in. It ends at a JMP, CALL, RET, RETR or
JMPP. A conditional branch becomes a side exit (`return` of the target), so loops and tests do not
end a block. An exit back to the block's start (a conditional branch, or a JMP whose target is the
one expected at compile time: a run-time test, else the block returns the real target) begins the
next pass inside the function after the test the fast loop would make before running the block
again (its start plus its most cycles below the stop). Blocks do not run on into the code a JMP,
CALL or RET goes to: each entry PC would compile its own copy of the code after it, and in a
600-frame run compiling those copies cost more than the calls saved. The function returns the next
PC in bits 0-11 and the cycles it ran in the bits above. The fast loop runs a block only when all of
it would end before the stop; an instruction whose declared effects (`semantics.EFFECTS`) may move the stop
(board access, timer, interrupt enables) is followed by the fast loop's entry test again: the block
returns there when the rest of it might reach the new stop (a VDC write may bring /INT a few cycles
close), and the fast loop goes on instruction by instruction. So a block does exactly what the fast
loop would, instruction by instruction. The register bank is a local of the function (only SEL RB
and MOV PSW,A change it, and they write it back at once; nothing a block calls changes it).

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

from hilbridge.machine.cartridge import PROGRAM_START
from hilbridge.machine.semantics import ARG, CYCLES, LENGTHS, NEXT, NEXT_PC, form_body, form_effects, form_of
from hilbridge.mcs48 import INSTRUCTIONS

BLOCK_MAX_INSTRUCTIONS = 48
BLOCK_HOT = 64  # visits before a block is compiled: compiling costs ~ 500 plain instruction runs
MAY_MOVE_STOP = frozenset({"board", "stop", "timer"})
CYCLE_SHIFT = 12
_PC = re.compile(r"\bpc\b")
_CYC = re.compile(r"\bcyc\b")
WHOLE = "<whole>"
"""Stands for the block's most cycles in a stop test until they are known."""
PASS_TEST = f"if passes and c0 + {WHOLE} < C.stop:"
"""The fast loop's entry test before a next pass inside the function."""
OFFSET = "<offset>"
"""Stands for the cycles of the passes before this one in an exit (nothing in a block that does not loop)."""
_BANK_SET = re.compile(r"^(\s*)C\.rb = ")
_BANK = re.compile(r"\bC\.rb\b(?! = rb)")
_RETURN = re.compile(r"^(\s*)return (.*)$")

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


Block = tuple[Callable[..., int], int, "FetchTable | None", "FetchTable | None"]
"""A compiled block: the function ((start cycle, may start more passes = True) -> next PC | cycles
<< 12), the most cycles one pass may take, and its fetches after the first and all of them (None:
not traceable in one call; a traced run runs one pass at a time)."""


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


@dataclass(frozen=True, slots=True)
class BlockSource:
    """A block's `def block(c0, passes=True)` source, its most cycles in one pass and its fetches
    (None: not traceable in one call)."""

    source: str
    cycles: int
    fetches: tuple[Fetch, ...] | None


def block_source(
    prog: bytes | bytearray,
    start: int,
    jump_a11: int = 0,
) -> BlockSource | None:
    """The block at `start`, None if it would hold less than two instructions and not loop on
    itself (the single-instruction path is as fast). A JMP to `start` (A11 guessed as `jump_a11`)
    or any other exit back to `start` starts the next pass inside the
    function when the fast loop would run the block again there (the same stop test) and the caller
    allows it (`passes`); a block whose conditional branch goes back to `start` ends after it."""
    lines: list[str] = []
    pc, cycles, count = start, 0, 0
    check_stop = False
    fetches: list[Fetch] | None = []
    loops = False  # exits to `start` begin the next pass here
    moves_stop = False  # an instruction of the block may move the stop

    def leave(target: str, ran: int) -> str:
        return f"return ({target}) | ({ran << CYCLE_SHIFT}{OFFSET})"

    def again(indent: str, ran: int) -> list[str]:
        return [
            f"{indent}c0 += {ran}",
            f"{indent}{PASS_TEST}",
            f"{indent}    continue",
            f"{indent}return {start} | ((c0 - first) << {CYCLE_SHIFT})",
        ]

    while count < BLOCK_MAX_INSTRUCTIONS:
        opcode = prog[pc]
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
            lines.append(f"if c0 + {WHOLE} >= C.stop:")
            lines.append("    " + leave(str(pc), before))
        body = list(BODIES[opcode])
        through = FALLS_THROUGH[opcode]
        last = body.pop()
        taken = (following & 0xF00) | prog[following]
        closes = CONDITIONAL[opcode] and taken == start
        for line in body:
            if closes and line == TAKEN:
                lines.extend(again("    ", cycles))
                loops = True
                continue
            if closes and line == ARG:  # only the taken arm, now the next pass, read the operand
                continue
            line = _CYC.sub(f"(c0 + {cycles})", _PC.sub(str(following), line))
            lines.append(_RETURN.sub(lambda found, ran=cycles: found[1] + leave(found[2], ran), line))
        if through:
            check_stop = MOVES_STOP[opcode]
            pc = following if LENGTHS[opcode] == 1 else NEXT_PC[following]
            if closes:  # the loop ends here: the code after it would only lengthen each pass's test
                lines.append(leave(str(pc), cycles))
                break
            continue
        exit_to = _CYC.sub(f"(c0 + {cycles})", _PC.sub(str(following), last)).removeprefix("return ")
        target = ((opcode >> 5) << 8) | prog[following] | jump_a11 if JUMP[opcode] else -1
        if target != start:
            lines.append(leave(exit_to, cycles))
            break
        lines.append(f"to = {exit_to}")
        lines.append(f"if to != {target}:")
        lines.append("    " + leave("to", cycles))
        lines.extend(again("", cycles))
        loops = True
        break
    else:
        lines.append(leave(str(pc), cycles))
    if count < 2 and not loops:  # a one-instruction loop gains from its passes inside
        return None
    head = ["def block(c0, passes=True):"]
    if any("C.rb" in line for line in lines):  # the register bank in a local, kept up to date
        lines = [_BANK.sub("rb", _BANK_SET.sub(r"\1C.rb = rb = ", line)) for line in lines]
        head.append("    rb = C.rb")
    if loops:
        head += ["    first = c0", "    while True:"]
        if not moves_stop:  # the stop stays as it is: read it once
            head.insert(-2, f"    last = C.stop - {WHOLE} if passes else -1")
            lines = [line.replace(PASS_TEST, "if c0 < last:") for line in lines]
    indent = "        " if loops else "    "
    text = "\n".join(head + [indent + line for line in lines]) + "\n"
    text = text.replace(WHOLE, str(cycles)).replace(
        OFFSET, f" + ((c0 - first) << {CYCLE_SHIFT})" if loops else ""
    )
    return BlockSource(text, cycles, None if fetches is None else tuple(fetches))
