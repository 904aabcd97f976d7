"""Issue 13: the open BIOS's input, arithmetic, bit-field, table and interrupt routines keep their
contracts (open_entry_points.tsv, docs/bios.md) on our emulator."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_bios_support import BIOS_FIXTURES, bios_cart, code, run_to_done

from hilbridge.machine.bios import open_bios
from hilbridge.machine.bus import WRITE
from hilbridge.machine.console import JOYSTICK_BITS, KEYBOARD, Console
from hilbridge.toolchain.assembler import assemble_text


class RoutineCaller:
    """One console whose cart calls a BIOS routine from a small stub, run again for every example
    (building a console per example would make exhaustive checks too slow)."""

    def __init__(self, routine: str) -> None:
        image, symbols = bios_cart(code("mov r3,#1", f"call_at: call {routine}"))  # R3 = 0 never divides
        self.console = Console(image, bios=open_bios())
        self.call_at, self.done = symbols["CALL_AT"], symbols["DONE"]
        while self.console.cpu.pc != self.done:
            self.console.step()

    def call(self, **registers: int) -> int:
        """Set R0-R7 (r2=..., a=...), run the call; the cycles from CALL to the next instruction."""
        cpu = self.console.cpu
        for name, value in registers.items():
            if name == "a":
                cpu.a = value
            else:
                cpu.set_register(int(name[1]), value)
        cpu.pc = self.call_at
        start = cpu.cycle
        while cpu.pc != self.done:
            self.console.step()
        return cpu.cycle - start  # the stub's CALL and the routine's RET

    def register(self, number: int) -> int:
        return self.console.cpu.register(number)


DIVIDE = RoutineCaller("divide")
MULTIPLY = RoutineCaller("multiply")


@settings(max_examples=250, deadline=None)
@given(st.integers(0, 255), st.integers(1, 255))
def test_divide(dividend, divisor):
    DIVIDE.call(r2=dividend, r3=divisor, r6=0x5A)
    cpu = DIVIDE.console.cpu
    assert DIVIDE.register(4) == dividend // divisor
    assert DIVIDE.register(5) == cpu.a == dividend % divisor
    assert (DIVIDE.register(2), DIVIDE.register(3), DIVIDE.register(6)) == (dividend, divisor, 0x5A)


@pytest.mark.slow
def test_divide_every_dividend_by_small_and_large_divisors():
    for divisor in (1, 2, 3, 7, 16, 128, 255):
        for dividend in range(256):
            DIVIDE.call(r2=dividend, r3=divisor)
            assert (DIVIDE.register(4), DIVIDE.register(5)) == divmod(dividend, divisor)


@settings(max_examples=250, deadline=None)
@given(st.integers(0, 255), st.integers(0, 255))
def test_multiply(first, second):
    MULTIPLY.call(r2=first, r3=second)
    assert MULTIPLY.console.cpu.a == first * second & 0xFF
    assert MULTIPLY.register(3) == second


def test_divide_and_multiply_take_time_linear_in_the_result():
    # repeated subtraction / addition (g7kbios 17.11, 17.21): each step costs the same
    divide = [DIVIDE.call(r2=q * 3, r3=3) for q in range(4)]
    multiply = [MULTIPLY.call(r2=n, r3=9) for n in range(4)]
    assert len({b - a for a, b in pairwise(divide)}) == 1
    assert len({b - a for a, b in pairwise(multiply)}) == 1


# -- keyboard and joysticks -------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["0", "9", "SPACE", "L", "P", "Q", "K", "A", ".", "ENTER"])
def test_readkey_returns_row_times_8_plus_bit(key):
    console = run_to_done(code("call readkey"), console_setup=lambda c: c.set_key(key, True))
    row, bit = KEYBOARD[key]
    assert console.cpu.a == console.cpu.register(7) == row * 8 + bit
    assert console.p1 & 0x04  # the keyboard decoder is off again


def test_readkey_without_a_key_returns_ff():
    console = run_to_done(code("call readkey"))
    assert console.cpu.a == console.cpu.register(7) == 0xFF


def test_waitforkey_waits_for_release_then_for_a_key():
    image, symbols = bios_cart(code("call waitforkey"))
    console = Console(image, bios=open_bios())
    console.set_key("B", True)
    console.run_frames(3)
    assert console.cpu.pc != symbols["DONE"]  # still held from before: waits for the release
    console.set_key("B", False)
    console.run_frames(3)
    assert console.cpu.pc != symbols["DONE"]
    console.set_key("Z", True)
    console.run_frames(1)
    for _ in range(200):  # the key click enables interrupts: the frame may end inside the handler
        if console.cpu.pc == symbols["DONE"]:
            break
        console.step()
    row, bit = KEYBOARD["Z"]
    assert console.cpu.pc == symbols["DONE"] and console.cpu.a == row * 8 + bit
    click = open_bios_symbols()["TUNE_KEYCLICK"] & 0xFF
    assert console.cpu.ram[0x04] in (click, click + 2)  # RB0's R4: the key click is queued or playing


DIRECTIONS = {  # (dx, dy) -> direction number, counter-clockwise from right; dy < 0 is up
    (1, 0): 0, (1, -1): 1, (0, -1): 2, (-1, -1): 3, (-1, 0): 4, (-1, 1): 5, (0, 1): 6, (1, 1): 7, (0, 0): 8,
}  # fmt: skip


@pytest.mark.parametrize("select", [0, 1])
@pytest.mark.parametrize(
    ("pressed", "dx", "dy", "fire"),
    [((), 0, 0, 0), (("up",), 0, -1, 0), (("down", "left"), -1, 1, 0), (("right", "fire"), 1, 0, 1)],
)
def test_getjoystick(select, pressed, dx, dy, fire):
    def press(console):
        console.set_joystick(select, **dict.fromkeys(pressed, True))

    console = run_to_done(code(f"mov r1,#{select}", "call getjoystick", "clr a", "jf0 fired", "jmp out",
                               "fired: mov a,#1", "out: mov r7,a"), console_setup=press)  # fmt: skip
    cpu = console.cpu
    assert (cpu.register(2), cpu.register(3), cpu.register(7)) == (dx & 0xFF, dy & 0xFF, fire)
    raw = ~sum(JOYSTICK_BITS[name] for name in pressed) & 0xFF  # the stick's bits as read, 0 = pressed
    assert cpu.register(1) == raw  # programs such as spec7er's maze test R1 themselves


@pytest.mark.parametrize(("entry", "prepare"), [
    ("getjoystick", ()),
    ("getjoystick_p17", ("in a,p1", "mov r0,a", "orl p1,#3Ch", "anl p1,#0BBh")),  # as KTAA calls it
])  # fmt: skip
def test_getjoystick_restores_p1_and_getjoystick_p17_continues_its_first_part(entry, prepare):
    def press(console):
        console.set_joystick(1, down=True, fire=True)

    body = code(
        "call extramenable", "anl p1,#7Fh", "mov r1,#1", *prepare, f"call {entry}", "in a,p1", "mov r7,a"
    )
    console = run_to_done(body, console_setup=press)
    cpu = console.cpu
    assert (cpu.register(2), cpu.register(3), bool(cpu.psw & 0x20)) == (0, 1, True)  # F0 = fire
    assert cpu.register(7) == 0x2F  # P1 as before the call: external RAM selected, P17 = 0 (bright)


@pytest.mark.parametrize(("dx", "dy"), sorted(DIRECTIONS))
def test_decodejoystick(dx, dy):
    console = run_to_done(code(f"mov r2,#{dx & 0xFF}", f"mov r3,#{dy & 0xFF}", "call decodejoystick"))
    assert console.cpu.register(1) == DIRECTIONS[dx, dy]


# -- bit fields in external RAM ---------------------------------------------------------------------
@pytest.mark.parametrize("bit", [0, 5, 7, 8, 13, 23])
def test_bittest_bitset_bitclear(bit):
    field_end = 0x30  # bit n lives in byte field_end - n / 8, bit n mod 8
    body = code(
        "call extramenable", f"mov a,#{bit}", f"mov r1,#{field_end}", "call bitset", "mov r7,a",
        f"mov a,#{bit}", f"mov r1,#{field_end}", "call bittest", "mov r6,a",
        f"mov a,#{bit}", f"mov r1,#{field_end}", "call bitset", "mov r5,a",
        f"mov a,#{bit}", f"mov r1,#{field_end}", "call bitclear", "mov r4,a",
    )  # fmt: skip
    console = run_to_done(body)
    cpu = console.cpu
    mask, byte = 1 << (bit % 8), field_end - bit // 8
    assert (cpu.register(1), cpu.register(2)) == (byte, mask)
    assert cpu.register(7) == 0  # was clear
    assert cpu.register(6) == cpu.register(5) == cpu.register(4) == mask  # set, still set, set before clear
    assert console.ram == bytes(128)  # cleared again, nothing else touched


# -- the VDC table, copied at VSYNC -----------------------------------------------------------------
def test_table_routines_queue_characters_that_vsyncirq_copies_into_the_vdc():
    body = code(
        "call extramenable", "mov r0,#7Fh", "mov a,#4", "movx @r0,a", "dec r0", "mov a,#18h", "movx @r0,a",
        "dec r0", "mov r3,#40h", "mov r4,#30h", "mov r5,#1Dh", "mov r6,#06h", "call tableprintchar",
        "call tableput2", "mov a,#1Eh", "movx @r0,a", "dec r0", "mov a,#7", "call tablebcdnibble",
        "call tableend", "call vdcenable", "call gfxon", "call waitvsync", "call waitvsync",
    )  # fmt: skip
    console = run_to_done(body)
    registers = console.vdc.registers
    assert (registers[0x18], registers[0x19]) == (0x30, 0x40)
    assert glyph(registers, 0x18) == 0x1D  # H
    assert registers[0x1B] & 0x0E == 0x06
    assert glyph(registers, 0x18, pointer_at=0x1E) == 0x07  # the digit's bytes 2 and 3, for the same y
    assert console.cpu.ram[0x3F] & 0x80 == 0  # copied once, then disarmed
    assert registers[0xA0] & 0x20  # the display is on again after the copy


def glyph(registers: bytes | bytearray, y_at: int, pointer_at: int | None = None) -> int:
    pointer_at = y_at + 2 if pointer_at is None else pointer_at
    pointer = registers[pointer_at] | (registers[pointer_at + 1] & 1) << 8
    start = (pointer + registers[y_at] // 2) & 0x1FF
    assert start % 8 == 0
    return start // 8


def test_tablebcdbyte_shows_both_digits():
    body = code(
        "mov a,#47h", "mov r1,#20h", "mov r3,#50h", "mov r4,#40h", "mov r6,#0Ch", "call tablebcdbyte",
        "call vdcenable", "call gfxon", "call waitvsync", "call waitvsync",
    )  # fmt: skip
    registers = run_to_done(body).vdc.registers
    assert (glyph(registers, 0x20), glyph(registers, 0x24)) == (4, 7)
    assert (registers[0x21], registers[0x25]) == (0x50, 0x58)


def test_vsyncirq_counts_frames():
    image, _ = bios_cart(code("en i", "loop: jmp loop"))
    console = Console(image, bios=open_bios())
    console.run_frames(3)
    first = console.cpu.ram[0x3E]
    console.run_frames(10)
    assert (console.cpu.ram[0x3E] - first) & 0xFF == 10


def test_a_vsync_hook_that_reads_the_collisions_itself_continues_vsyncirq_at_0030h():
    """The SD-cart menu's hook sets F1, reads A2h and enters vsyncirq at 0030h: waitvsync still returns
    every frame, the frame counter counts and the collision bits land in iram 3Dh."""
    hook = code("hook: clr f1", "cpl f1", "mov r1,#0A2h", "movx a,@r1", "mov r0,#3Fh", "jmp 030h")
    body = code(
        "org 400h", "jmp start", "jmp irq", "jmp timer", "jmp hook", "jmp start", "jmp soundirq",
        "timer: retr", hook, "start: dis i", "call init", "call gfxon", "call waitvsync",
        "mov r0,#3Eh", "mov a,@r0", "mov r7,a", "mov r2,#5", "again: call waitvsync", "djnz r2,again",
        "mov r0,#3Eh", "mov a,@r0", "mov r6,a", "mov r0,#3Dh", "mov a,#5Ah", "mov @r0,a",
        "call waitvsync", "mov a,@r0", "mov r5,a",
    )  # fmt: skip
    image, symbols = bios_cart(body, opening=False)
    console = Console(image, bios=open_bios())
    while console.cpu.pc != symbols["DONE"]:
        console.step()
        assert console.cpu.cycle < 2_000_000, f"waitvsync never returned; PC {console.cpu.pc:03X}h"
    cpu = console.cpu
    assert (cpu.register(6) - cpu.register(7)) & 0x3F == 5  # one count per frame
    assert cpu.register(5) == console.vdc.registers[0xA2] != 0x5A  # vsyncirq stored A2h over 5Ah


def test_irq_returns_a_and_p1_and_leaves_bank_0_alone():
    body = code("mov r0,#11h", "mov r5,#55h", "mov r6,#66h", "call extramenable", "en i", "mov a,#0C3h",
                "mov r3,#30", "outer: mov r2,#0", "wait: djnz r2,wait", "djnz r3,outer", "dis i")  # fmt: skip
    console = run_to_done(body)
    cpu = console.cpu
    assert cpu.ram[0x3E] >= 1  # at least one VSYNC was handled meanwhile
    assert (cpu.a, cpu.register(0), cpu.register(5), cpu.register(6)) == (0xC3, 0x11, 0x55, 0x66)
    assert console.p1 & 0x58 == 0x08  # external RAM still selected


@pytest.mark.parametrize(("routine", "bank"), [("bank02", 2), ("bank01", 1), ("bank0", 0), ("bank3", 3)])
def test_bank_switches_continue_at_0408h(routine, bank):
    image, _ = bios_cart(code("orl p1,#03h", f"jmp {routine}"))
    console = Console(image, bios=open_bios())
    while console.cpu.pc != 0x408:
        console.step()
    assert console.p1 & 3 == bank


# -- the tune player ----------------------------------------------------------------------------------
WAIT_FOR_TUNE = ("wait: mov r0,#3Fh", "mov a,@r0", "anl a,#40h", "jnz wait")
"""Loop while iram 3Fh bit 6 says a tune is playing."""


def open_bios_symbols() -> dict[str, int]:
    source = (BIOS_FIXTURES.parents[1] / "hilbridge" / "machine" / "bios" / "open.asm").read_text()
    return assemble_text(source, name="open.asm").symbols


def test_playsound_plays_each_note_for_its_frames_then_turns_the_sound_off():
    tune = open_bios_symbols()["TUNE_SELECT"] & 0xFF  # three notes: patterns 4, 3, 2 for 6, 6, 12 frames
    image, symbols = bios_cart(code("call gfxon", f"mov a,#{tune}", "call playsound", *WAIT_FOR_TUNE))
    console = Console(image, bios=open_bios())
    sound: list[tuple[int, int, int]] = []
    console.add_bus_listener(
        lambda a: (
            sound.append((console.frame, a.address, a.value))
            if a.kind == WRITE and 0xA7 <= a.address <= 0xAA and not console.p1 & 0x08
            else None
        )
    )
    console.run_frames(60)
    assert reaches(console, symbols["DONE"])
    notes = [(frame, value) for frame, address, value in sound if address == 0xA7][1:]  # after init's 0
    assert [value for _frame, value in notes] == [0xF0, 0xE3, 0xCC]
    assert [b[0] - a[0] for a, b in pairwise(notes)] == [6, 6]
    last = [(frame, value) for frame, address, value in sound if address == 0xAA][-1]
    assert last == (notes[-1][0] + 12, 0)  # the sound goes off when the last note's 12 frames are over
    assert console.cpu.ram[0x3F] & 0x40 == 0  # no tune playing


def reaches(console: Console, address: int, steps: int = 300) -> bool:
    """Whether the CPU gets to `address` within `steps` instructions (past an interrupt handler)."""
    for _ in range(steps):
        if console.cpu.pc == address:
            return True
        console.step()
    return False


def test_every_pointer_into_the_tune_area_plays_and_ends():
    for pointer in range(0x28, 0x6B, 7):
        image, symbols = bios_cart(code("call gfxon", f"mov a,#{pointer}", "call playsound", *WAIT_FOR_TUNE))
        console = Console(image, bios=open_bios())
        console.run_frames(300)
        assert reaches(console, symbols["DONE"]), hex(pointer)
        assert console.vdc.registers[0xAA] == 0


def test_our_tunes_start_at_the_documented_tune_pointers():
    documented = {  # g7000.h's tune_* pointers into page 3
        "TUNE_BEEP_ERROR": 0x28, "TUNE_EXPLODE": 0x2E, "TUNE_ALARM": 0x3C, "TUNE_SELECT": 0x4A,
        "TUNE_KEYCLICK": 0x56, "TUNE_BUZZ": 0x5A, "TUNE_SELECT2": 0x5E, "TUNE_SHOOT": 0x6A,
    }  # fmt: skip
    symbols = open_bios_symbols()
    image = open_bios().image
    for name, pointer in documented.items():
        assert symbols[name] == 0x300 + pointer, name
        assert image[0x300 + pointer] != 0, name  # a real note, not the padding between tunes


NIBBLE_MIXER = RoutineCaller("nibblemixer")
RANDOM = RoutineCaller("random")


def nibble_table() -> bytes:
    return open_bios().image[0x2B3 : 0x2B3 + 16]


def test_the_nibble_table_is_a_permutation():
    assert sorted(nibble_table()) == list(range(16))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 255), st.integers(0, 15))
def test_nibblemixer_gives_the_table_value_reduced_to_the_maximum(nibble, maximum):
    NIBBLE_MIXER.call(r5=nibble, r7=~maximum & 0xFF)
    value = nibble_table()[nibble & 15] % (maximum + 1)
    assert NIBBLE_MIXER.console.cpu.a == NIBBLE_MIXER.register(3) == value


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 255), st.integers(0, 15), st.integers(0, 15))
def test_random_mixes_both_nibbles_of_the_timer(timer, first_max, second_max):
    cpu = RANDOM.console.cpu
    cpu.set_timer(timer, cpu.cycle)  # stopped: T holds `timer` through the call
    RANDOM.call(r2=~first_max & 0xFF, r7=~second_max & 0xFF)
    table = nibble_table()
    assert cpu.a == RANDOM.register(3) == table[timer & 15] % (first_max + 1)
    assert RANDOM.register(2) == table[timer >> 4] % (second_max + 1)


def test_tablebcdbyte_leaves_r0_at_the_end_marker():
    body = code("mov a,#12h", "mov r1,#20h", "mov r3,#50h", "mov r4,#40h", "call tablebcdbyte")
    console = run_to_done(body)
    end = console.cpu.register(0)
    assert end == 0x7F - 2 - 8 and console.ram[end] == 0  # count, address, 2 x 4 bytes, then 0
