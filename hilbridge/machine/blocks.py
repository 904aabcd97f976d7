"""Straight-line blocks: runs of instructions compiled into one Python function each.

The fast loop's cost is mostly its own: a lookup, a call and a stop test per instruction. A run of
*plain* instructions followed by any one instruction is compiled into one function, the handlers'
statements back to back with their PCs and cycles filled in. A form is plain when its declared
effects (`semantics.EFFECTS`) include none of `NOT_PLAIN`: no board access, no branch, nothing that
moves the stop or reads the timer or an input. A block runs only when its last instruction ends
before the stop, so it does exactly what the fast loop would: plain instructions cannot move it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hilbridge.machine.semantics import CYCLES, LENGTHS, NEXT, NEXT_PC, form_body, form_effects

BLOCK_MAX_INSTRUCTIONS = 24
BLOCK_HOT = 64  # visits before a block is compiled: compiling costs ~ 500 plain instruction runs
NOT_PLAIN = frozenset({"board", "branch", "stop", "timer", "t1", "irq", "timer_flag", "irq_state"})
_PC = re.compile(r"\bpc\b")
_CYC = re.compile(r"\bcyc\b")

Block = tuple[Callable[[int], int], int]
"""A compiled block: the function (start cycle -> next PC) and the cycles it takes."""


def _plain_body(opcode: int) -> str | None:
    """The handler's statements without its final `return`, if the instruction is plain."""
    if form_effects(opcode) & NOT_PLAIN:
        return None
    lines = form_body(opcode).splitlines()
    if lines[-1] not in ("return pc", NEXT):
        raise RuntimeError(f"opcode {opcode:02X} is declared without 'branch' but does not fall through")
    return "\n".join(lines[:-1])


PLAIN_BODIES: tuple[str | None, ...] = tuple(_plain_body(opcode) for opcode in range(256))


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
        body = form_body(opcode) if plain is None else plain
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
