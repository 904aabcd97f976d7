"""Machine cycles of the open BIOS's routines, measured on our emulator, and docs/bios.md built from them
and the entry-point table (`python -m hilbridge.machine.bios_cycles > docs/bios.md`).

Each routine is called from a tiny cartridge after a fixed setup; the count runs from the CALL to the
instruction after it, so it includes the CALL (2 cycles) and the routine's RET. Routines whose time
depends on their input (divide, multiply) are measured at two inputs and given as a formula.
"""

from __future__ import annotations

from hilbridge.machine.bios import open_bios
from hilbridge.machine.console import Console

# routine -> setup lines run before the CALL (the cart has called init already)
SETUPS: dict[str, tuple[str, ...]] = {
    "vdcenable": (),
    "extramenable": (),
    "init": (),
    "gfxoff": (),
    "gfxon": ("dis i",),
    "clearchar": (),
    "readkey": (),
    "calcchar23": ("mov r4,#40h", "mov r5,#20h", "mov r6,#0Eh"),
    "printchar": ("mov r0,#10h", "mov r3,#20h", "mov r4,#40h", "mov r5,#20h", "mov r6,#0Eh"),
    "putchar23": ("mov r0,#12h", "mov r4,#40h", "mov r5,#20h", "mov r6,#0Eh"),
    "tableprintchar": ("call extramenable", "mov r0,#7Dh", "mov r3,#20h", "mov r4,#40h", "mov r5,#1"),
    "tablechar23": ("call extramenable", "mov r0,#7Dh", "mov r4,#40h", "mov r5,#1"),
    "tablebcdnibble": ("call extramenable", "mov r0,#7Dh", "mov r4,#40h", "mov a,#5"),
    "tableput2": ("call extramenable", "mov r0,#7Fh"),
    "tableend": ("mov r0,#7Fh",),
    "tablebcdbyte": ("mov a,#42h", "mov r1,#10h", "mov r3,#20h", "mov r4,#40h", "mov r6,#0Eh"),
    "bittest": ("call extramenable", "mov a,#5", "mov r1,#40h"),
    "bitset": ("call extramenable", "mov a,#5", "mov r1,#40h"),
    "bitclear": ("call extramenable", "mov a,#5", "mov r1,#40h"),
    "getjoystick": ("mov r1,#0",),
    "decodejoystick": ("mov r2,#1", "mov r3,#0"),
    "playsound": ("mov a,#28h",),
    "nibblemixer": ("mov r5,#3", "mov r7,#0F8h"),
    "random": ("mov r2,#0F8h", "mov r7,#0F0h"),
    "initclock": ("mov r3,#20h", "mov r4,#40h", "mov r6,#0Eh"),
    "doclock": ("mov r0,#3Eh", "mov @r0,#59", "mov r4,#40h", "mov r6,#0Eh"),  # one second down
}
# routine -> (setup for input 0, setup for input 1, the input's name): cycles = a + b * input
LINEAR: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "divide": (("mov r2,#0", "mov r3,#1"), ("mov r2,#1", "mov r3,#1"), "quotient"),
    "multiply": (("mov r2,#0", "mov r3,#3"), ("mov r2,#1", "mov r3,#3"), "R2"),
}


def call_cycles(routine: str, setup: tuple[str, ...]) -> int:
    """Cycles from `call routine` to the instruction after it, after `setup`."""
    return call_routine(routine, setup)[0]


def call_routine(routine: str, setup: tuple[str, ...]) -> tuple[int, bytes, bytes]:
    """(cycles, R0-R7 at the CALL, R0-R7 after it) for `call routine` after `setup`, run as programs
    run, in register bank 1; R0-R7 hold 0D0h-0D7h before the setup, so a register the routine leaves
    alone keeps its value."""
    from hilbridge.toolchain.assembler import assemble_text

    vectors = ("org 400h", "jmp start", "jmp 0009h", "retr", "nop", "jmp 001Ah", "jmp start")
    body = (*(f"mov r{n},#0D{n}h" for n in range(8)), *setup)
    opening = ("start:  dis i", "        call 00F1h", "        sel rb1")  # init, then the programs' bank
    lines = [_equates(), *(f"        {line}" for line in vectors), *opening]
    lines += [*(f"        {line}" for line in body), f"at:     call {routine}", "after:  jmp after", ""]
    text = "\n".join(lines)
    result = assemble_text(text, name="cycles.asm")
    image = bytearray(b"\xff" * 2048)
    image[result.origin - 0x400 : result.origin - 0x400 + len(result.image)] = result.image
    console = Console(bytes(image), bios=open_bios())
    at, after = result.symbols["AT"], result.symbols["AFTER"]
    start, before = -1, b""
    while console.cpu.pc != after:
        if console.cpu.pc == at:
            start, before = console.cpu.cycle, bytes(console.cpu.ram[24:32])
        console.step()
        if console.cpu.cycle > 200_000:
            raise RuntimeError(f"{routine} did not return")
    return console.cpu.cycle - start, before, bytes(console.cpu.ram[24:32])


def _equates() -> str:
    from hilbridge.machine.bios import entry_points

    return "\n".join(f"{entry.name} equ {entry.address:04X}h" for entry in entry_points())


def routine_cycles() -> dict[str, str]:
    """Routine name -> its cycles as docs/bios.md prints them."""
    cycles = {name: str(call_cycles(name, setup)) for name, setup in SETUPS.items()}
    for name, (first, second, variable) in LINEAR.items():
        base = call_cycles(name, first)
        step = call_cycles(name, second) - base
        cycles[name] = f"{base} + {step} × {variable}"
    return cycles


INTRO = """# The open BIOS

`hilbridge/machine/bios/open.asm` is our own 1024-byte replacement for the Videopac G7000 /
Odyssey² console BIOS, built by our assembler into `open.bin` (a test rebuilds it byte for byte).
It is the default BIOS of the emulator and of the MAME oracle; `--bios boot` selects the 16-line
stub that only hands reset and the interrupts to the cartridge, `--bios FILE` a dump of your own.

It was written from the documented entry points and register contracts (the "source" column) and
from black-box behaviour, never from the copyrighted BIOS image. Every entry point keeps its
documented address; routines that do not fit their slot continue in a gap. Where the documents give
no detail, the open BIOS defines its own (marked "ours"):

- Register banks as g7kbios 1.3 documents them: the interrupt runs in bank 0 (RB0), programs in
  bank 1. `selectgame` starts the cartridge in RB1, and the routines that switch banks (`gfxoff`,
  `gfxon`, `playsound`, `waitforkey`) return in RB1. In the interrupt, RB0's R5 = the interrupted
  A, R6 = the interrupted P1, R4 = the next tune command, R3 = frames left of the current one;
  `vsyncirq` and `copyregs` also use its R0, R1, R2 and R7. `RETR` restores the interrupted bank.
- Internal RAM 3Dh: collision bits (VDC A2) read at the last VSYNC; 3Eh: the clock, bits 0-5 count
  frames 0-59, bit 6 = count up, bit 7 = stopped; 3Fh bit 7: copy the VDC table at the next VSYNC
  (cleared once copied), bit 6: a tune is playing. `init` clears 20h-3Fh.
- The VDC table is in external RAM from 7Fh downwards: blocks of [count n][VDC address][n bytes
  for address, address + 1, ...]; a count of 0 ends it. `copyregs` copies it in "copy mode"
  (reads from RAM, writes to the VDC) with objects and grid off, then restores A0.
- `vsyncirq` clears F1; `waitvsync` sets F1, enables interrupts and waits for that.
- `selectgame` shows SELECT GAME in white on black (our screen) and, once a key is pressed, clears
  the characters again: games start on an initialised screen (g7kbios 2.5).
- The tune player runs the documented commands (g7kbios 12.3): `playsound` puts the tune pointer
  into RB0's R4 and sets iram 3Fh bit 6; each VSYNC counts R3 down, and at 0 `vsyncirq` continues
  at the cartridge's 040Ah, whose `jmp soundirq` reads the command at R4 into R1 and the next byte
  into R2 (a cartridge's own sound hook reads its own tunes the same way) and runs `parsesnd`:
  command bit 7 = a tone of (R1 AND 7Fh) frames, R2 = the offset in page 3 of its four bytes for
  A7-AA; bit 6 = AA = R2 for (R1 AND 3Fh) frames; bit 5 = silence for (R1 AND 1Fh) frames, no
  parameter; bit 4 = go on at R2; anything else ends the tune. The ten tones at 0300h-0327h and
  our tunes, at the `tune_*` pointers of g7000.h (`tune_beep_error` 28h, `tune_explode` 2Eh,
  `tune_alarm` 3Ch, `tune_select` 4Ah, `tune_keyclick` 56h, the click of `waitforkey`,
  `tune_buzz` 5Ah, `tune_select2` 5Eh, `tune_shoot` 6Ah), are ours.
- The clock (g7kbios 7): `vsyncirq` counts frames 0-59 in iram 3Eh; `doclock`, called every frame,
  counts a second when the counter is at 59 and the clock runs, in BCD in external RAM 01h
  (minutes) and 02h (seconds), and stops the clock at 00:00 counting down. The display is ours:
  `initclock` places quad 0 at x and quad 1 at x + 8, so their characters (16 units apart)
  interleave into "MM:SS"; `doclock` queues the four digits in the VDC table.
- `random` and `nibblemixer` are ours: a fixed permutation of 0-15 at 02B3h, reduced to 0..maximum;
  `random` mixes the two nibbles of the timer T.

**Unimplemented entry points** ("trap") hold `jmp $`: a cartridge that calls one stops there, and
the emulator warns once, naming the routine (`UnimplementedBiosRoutineWarning`). "inside" entries
(the G7400-only routines) fall inside other routines of this BIOS, as they do in the G7000's.

Cycles are machine cycles from the `CALL` to the instruction after it (the `CALL` and the routine's
`RET` included), measured on our emulator (`hilbridge.machine.bios_cycles`); the test carts of
`fixtures/bios/` give identical bus traces on MAME 0.251 (tests/oracle/test_oracle_open_bios.py).
"Source" names Sören Gust's *Videopac G7000 BIOS* manual as g7kbios chapter.section and his
`g7000.h`; docs/accuracy.md and docs/emulator.md describe the hardware the emulator models.

This file is generated: `python -m hilbridge.machine.bios_cycles > docs/bios.md`.

"""


def bios_markdown() -> str:
    """docs/bios.md: the introduction and one table row per entry point."""
    from hilbridge.machine.bios import entry_points

    cycles = routine_cycles()
    rows = [
        "| address | name | implemented | inputs | outputs | clobbers | cycles | source | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in entry_points():
        cells = (
            f"{entry.address:04X}h", f"`{entry.name}`", entry.implemented, entry.inputs, entry.outputs,
            entry.clobbers, cycles.get(entry.name, "-"), entry.source, entry.notes or "-",
        )  # fmt: skip
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return INTRO + "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(bios_markdown(), end="")
