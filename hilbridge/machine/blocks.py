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
from hilbridge.machine.semantics import CYCLES, LENGTHS, NEXT, NEXT_PC, form_body, form_effects

BLOCK_MAX_INSTRUCTIONS = 24
BLOCK_HOT = 64  # visits before a block is compiled: compiling costs ~ 500 plain instruction runs
MAY_MOVE_STOP = frozenset({"board", "stop", "timer"})
CYCLE_SHIFT = 12
_PC = re.compile(r"\bpc\b")
_CYC = re.compile(r"\bcyc\b")
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


Block = tuple[Callable[[int], int], int, "FetchTable | None"]
"""A compiled block: the function (start cycle -> next PC | cycles << 12), the most cycles it may
take, and its fetches (None: not traceable in one call)."""


def _falls_through(opcode: int) -> bool:
    return form_body(opcode).splitlines()[-1] in ("return pc", NEXT)


FALLS_THROUGH: tuple[bool, ...] = tuple(_falls_through(opcode) for opcode in range(256))
MOVES_STOP: tuple[bool, ...] = tuple(bool(form_effects(opcode) & MAY_MOVE_STOP) for opcode in range(256))


def _traceable(opcode: int) -> bool:
    """Its fetches are known from the code alone and it leaves the ports as they were."""
    body = form_body(opcode)
    return "C.a]" not in body and "port_write" not in body and "expander" not in body


TRACEABLE: tuple[bool, ...] = tuple(_traceable(opcode) for opcode in range(256))


def block_source(prog: bytes | bytearray, start: int) -> tuple[str, int, tuple[Fetch, ...] | None] | None:
    """(source of `def block(c0)`, most cycles, fetch table) for the block at `start`, None if it
    would hold less than two instructions (the single-instruction path is as fast)."""
    lines = ["def block(c0):"]
    pc, cycles, count = start, 0, 0
    check_stop = False
    fetches: list[Fetch] | None = []
    while count < BLOCK_MAX_INSTRUCTIONS:
        opcode = prog[pc]
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
    return "\n".join(lines) + "\n", cycles, None if fetches is None else tuple(fetches)
