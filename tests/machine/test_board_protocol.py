"""The console is a Board: it answers every pin and fast-forward call the CPU makes."""

from __future__ import annotations

import inspect
import re

from machine_doubles import ScriptedVdc, assemble_cart

from hilbridge.machine import console as console_module
from hilbridge.machine.board import Board, FastForward, Pins
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.timing import NTSC
from hilbridge.machine.vdc import Vdc
from hilbridge.machine.video_chip import VideoChip


def protocol_methods(protocol: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(protocol, inspect.isfunction) if not name.startswith("_")}


def test_board_is_pins_and_fast_forward_and_nothing_else():
    assert protocol_methods(Board) == protocol_methods(Pins) | protocol_methods(FastForward)
    assert not protocol_methods(Pins) & protocol_methods(FastForward)


def test_the_console_has_every_board_method_with_the_same_parameters():
    console = Console(
        load_cartridge(assemble_cart("        org 400h\n        jmp $\n"), "o2_rom"), vdc=ScriptedVdc()
    )
    for name in protocol_methods(Board):
        declared = list(inspect.signature(getattr(Board, name)).parameters)[1:]
        assert list(inspect.signature(getattr(console, name)).parameters) == declared, name


def test_the_vdc_and_the_scripted_double_have_every_video_chip_method_with_the_same_parameters():
    """Whatever the console calls on its chip is declared in VideoChip, and both chips answer it."""
    for chip in (Vdc(NTSC), ScriptedVdc()):
        for name in protocol_methods(VideoChip):
            declared = list(inspect.signature(getattr(VideoChip, name)).parameters)[1:]
            assert list(inspect.signature(getattr(chip, name)).parameters) == declared, (type(chip), name)


def test_the_console_calls_nothing_on_its_chip_that_video_chip_does_not_declare():
    source = inspect.getsource(console_module)
    called = set(re.findall(r"self\.vdc\.(\w+)", source))
    assert called <= protocol_methods(VideoChip), called - protocol_methods(VideoChip)


def test_the_chip_signals_answer_the_cpu_directly_unless_a_subclass_answers_them():
    """`Console.t1` and the other forwarding signals are the chip's own bound methods (no call in
    between), but a console subclass that answers one itself keeps its answer."""

    class LateIrq(Console):
        def irq(self, cycle: int) -> bool:
            return True

    cart = load_cartridge(assemble_cart("        org 400h\n        jmp $\n"), "o2_rom")
    plain, late = Console(cart, vdc=ScriptedVdc()), LateIrq(cart, vdc=ScriptedVdc())
    for name in console_module.CHIP_SIGNALS:
        assert getattr(plain, name) == getattr(plain.vdc, name), name
    assert late.irq(0) is True and late.cpu.board.irq(0) is True
    assert late.t1 == late.vdc.t1
