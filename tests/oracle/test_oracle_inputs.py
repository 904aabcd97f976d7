"""The input movie as MAME gets it, and the same key presses reaching our console as reach MAME."""

from __future__ import annotations

import pytest

from hilbridge.errors import HilbridgeError
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import parse_input_movie


def test_movie_as_mame_port_changes():
    movie = parse_input_movie("20 press A; 40 release A\n130 joy0 up+fire\n140 joy1 none", "m")
    # A is keyboard row 4, bit 0 (keyboard.tsv); MAME JOY.n fields: 01 up, 02 right, 04 down, 08 left, 10 fire
    assert movie.mame_changes() == "20:+:KEY.4:01;40:-:KEY.4:01;130:-:JOY.0:1F;130:+:JOY.0:11;140:-:JOY.1:1F"
    assert movie.text == "20 press A\n40 release A\n130 joy0 up+fire\n140 joy1 none\n"
    assert parse_input_movie("").mame_changes() == ""


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("20 push A", "m:1:4", "unknown action"),
        ("1 press A; 20 press Ä", "m:1:21", "unknown key"),
        ("x press A", "m:1:1", "frame must be a number"),
        ("1 press A\n\n20 joy2 up", "m:3:4", "unknown action"),
        ("20 joy0 sideways", "m:1:9", "unknown joystick inputs"),
    ],
)
def test_bad_movie_is_a_user_error_with_its_place(text, where, message):
    with pytest.raises(HilbridgeError) as caught:
        parse_input_movie(text, "m")
    assert str(caught.value).startswith(f"{where}: error: {message}")


def console() -> Console:
    return Console(load_cartridge(b"\xff" * 2048, "o2_rom"))


def test_key_presses_the_key_of_that_row():
    board = console()
    board.p1 = 0xA8  # P12 = 0: keyboard decoder on
    movie = parse_input_movie("0 press A\n1 release A")
    movie.apply(board, 0)
    board.p2 = 0xF4
    assert board.port_read(2, 0) == 0xEF  # P24 = 0, P25-P27 = 7 - 0
    movie.apply(board, 1)
    assert board.port_read(2, 0) == 0xFF


def test_joystick_event_holds_exactly_its_inputs_on_its_select():
    board = console()
    board.p1 = 0xA8
    movie = parse_input_movie("0 joy1 up+fire\n1 joy1 left")
    movie.apply(board, 0)
    board.p2 = 0xF1
    assert board.bus_read(0) == 0xFF & ~0x11
    movie.apply(board, 1)
    assert board.bus_read(0) == 0xFF & ~0x08
    board.p2 = 0xF0
    assert board.bus_read(0) == 0xFF
