"""Run a few lines of cartridge code that call the open BIOS, on our emulator, up to a `done` label."""

from __future__ import annotations

from pathlib import Path

from hilbridge.machine.bios import open_bios
from hilbridge.machine.console import Console
from hilbridge.toolchain.assembler import assemble_text

BIOS_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "bios"


def code(*lines: str) -> str:
    """Assembly lines, indented as instructions (a line with a colon is a label line)."""
    return "\n".join(line if ":" in line else f"        {line}" for line in lines)


def bios_cart(body: str, opening: bool = True) -> tuple[bytes, dict[str, int]]:
    """A 2 KB cart: the standard opening of bios.inc (init called), then `body`, then `done: jmp done`."""
    lines = ['        include "bios.inc"']
    if opening:
        lines.append("        bios_opening")
    lines += [body, "done:   jmp     done", ""]
    result = assemble_text("\n".join(lines), name="probe.asm", include_dirs=[BIOS_FIXTURES])
    image = bytearray(b"\xff" * 2048)
    image[result.origin - 0x400 : result.origin - 0x400 + len(result.image)] = result.image
    return bytes(image), result.symbols


def run_to_done(body: str, *, console_setup=None, max_cycles: int = 2_000_000) -> Console:
    """Run the cart made of `body` until the CPU reaches `done` (an AssertionError if it never does)."""
    image, symbols = bios_cart(body)
    console = Console(image, bios=open_bios())
    if console_setup is not None:
        console_setup(console)
    done = symbols["DONE"]
    while console.cpu.pc != done:
        console.step()
        assert console.cpu.cycle < max_cycles, f"never reached done; PC {console.cpu.pc:03X}h"
    return console


def cycles_of_call(body_before: str, routine: str, *, console_setup=None) -> int:
    """Machine cycles from the CALL of `routine` to the instruction after it (CALL and RET included)."""
    image, symbols = bios_cart(f"{body_before}\ncall_at: call {routine}\nafter_call:\n")
    console = Console(image, bios=open_bios())
    if console_setup is not None:
        console_setup(console)
    start = None
    while console.cpu.pc != symbols["AFTER_CALL"]:
        if console.cpu.pc == symbols["CALL_AT"]:
            start = console.cpu.cycle
        console.step()
        assert console.cpu.cycle < 2_000_000
    assert start is not None
    return console.cpu.cycle - start
