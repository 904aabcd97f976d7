"""Blocks: runs of instructions compiled into one Python function each.

The fast loop's cost is mostly its own: a lookup, a call and a stop test per instruction. A run of
instructions up to the first one that does not fall through (JMP, CALL, RET, RETR, JMPP), at most
`BLOCK_MAX_INSTRUCTIONS`, is compiled into one function: the handlers' statements back to back
with their PCs and cycles filled in. A conditional branch becomes a side exit (`return` of the
target), so loops and tests do not end a block. The function returns the next PC in bits 0-11 and
the cycles it ran in the bits above. The fast loop runs a block only when all of it would end
before the stop; an instruction whose declared effects (`semantics.EFFECTS`) may move the stop
(board access, timer, interrupt enables) is followed by the test the fast loop would make, and the
block returns there when the next instruction would reach the new stop. So a block does exactly
what the fast loop would, instruction by instruction.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hilbridge.machine.semantics import CYCLES, LENGTHS, NEXT, NEXT_PC, form_body, form_effects

BLOCK_MAX_INSTRUCTIONS = 24
BLOCK_HOT = 64  # visits before a block is compiled: compiling costs ~ 500 plain instruction runs
MAY_MOVE_STOP = frozenset({"board", "stop", "timer"})
CYCLE_SHIFT = 12
_PC = re.compile(r"\bpc\b")
_CYC = re.compile(r"\bcyc\b")
_RETURN = re.compile(r"^(\s*)return (.*)$")

Block = tuple[Callable[[int], int], int]
"""A compiled block: the function (start cycle -> next PC | cycles << 12) and the most cycles it
may take."""


def _falls_through(opcode: int) -> bool:
    return form_body(opcode).splitlines()[-1] in ("return pc", NEXT)


FALLS_THROUGH: tuple[bool, ...] = tuple(_falls_through(opcode) for opcode in range(256))
MOVES_STOP: tuple[bool, ...] = tuple(bool(form_effects(opcode) & MAY_MOVE_STOP) for opcode in range(256))


def block_source(prog: bytes | bytearray, start: int) -> tuple[str, int] | None:
    """(source of `def block(c0)`, most cycles) for the block at `start`, None if it would hold less
    than two instructions (the single-instruction path is as fast)."""
    lines = ["def block(c0):"]
    pc, cycles, count = start, 0, 0
    check_stop = False
    while count < BLOCK_MAX_INSTRUCTIONS:
        opcode = prog[pc]
        following = NEXT_PC[pc]
        before, cycles = cycles, cycles + CYCLES[opcode]
        count += 1
        if check_stop:  # the instruction before may have moved the stop: the fast loop's test
            lines.append(f"    if c0 + {cycles} >= C.stop:")
            lines.append(f"        return {pc | before << CYCLE_SHIFT}")
        body = form_body(opcode).splitlines()
        through = FALLS_THROUGH[opcode]
        if through:
            body = body[:-1]
        for line in body:
            line = _CYC.sub(f"(c0 + {cycles})", _PC.sub(str(following), line))
            line = _RETURN.sub(
                lambda found, ran=cycles << CYCLE_SHIFT: f"{found[1]}return ({found[2]}) | {ran}", line
            )
            lines.append("    " + line)
        if not through:
            break
        check_stop = MOVES_STOP[opcode]
        pc = following if LENGTHS[opcode] == 1 else NEXT_PC[following]
    else:
        lines.append(f"    return {pc | cycles << CYCLE_SHIFT}")
    if count < 2:
        return None
    return "\n".join(lines) + "\n", cycles
