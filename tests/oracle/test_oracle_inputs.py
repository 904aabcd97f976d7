"""Input schedules: parsing, and the same key presses reaching our console as reach MAME."""

from __future__ import annotations

import pytest

from hilbridge.errors import HilbridgeError
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.oracle.inputs import InputChange, apply_input, parse_inputs, schedule_text


def test_schedule_round_trip():
    text = "20:+:KEY.4:01;40:-:KEY.4:01;130:+:JOY.0:11"
    changes = parse_inputs(text)
    assert changes[0] == InputChange(20, True, "KEY.4", 0x01)
    assert changes[2] == InputChange(130, True, "JOY.0", 0x11)
    assert schedule_text(changes) == text
    assert parse_inputs("-") == ()


@pytest.mark.parametrize("text", ["20:*:KEY.4:01", "20:+:KEY.9:01", "x:+:JOY.0:01", "20:+:JOY.2:01"])
def test_bad_schedule_is_a_user_error(text):
    with pytest.raises(HilbridgeError, match="bad input change"):
        parse_inputs(text)


def console() -> Console:
    return Console(load_cartridge(b"\xff" * 2048, "o2_rom"))


def test_key_mask_presses_the_keys_of_that_row():
    board = console()
    board.p1 = 0xA8  # P12 = 0: keyboard decoder on
    apply_input(board, InputChange(0, True, "KEY.4", 0x01))  # row 4 bit 0: A
    board.p2 = 0xF4
    assert board.port_read(2, 0) == 0xEF  # P24 = 0, P25-P27 = 7 - 0
    apply_input(board, InputChange(0, False, "KEY.4", 0x01))
    assert board.port_read(2, 0) == 0xFF


def test_joystick_mask_moves_the_stick_on_its_select():
    board = console()
    board.p1 = 0xA8
    apply_input(board, InputChange(0, True, "JOY.1", 0x11))  # up and fire
    board.p2 = 0xF1
    assert board.bus_read(0) == 0xFF & ~0x11
    board.p2 = 0xF0
    assert board.bus_read(0) == 0xFF
