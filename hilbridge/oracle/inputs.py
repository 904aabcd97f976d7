"""Key and joystick changes made at frame ends, the same in MAME (through its input ports) and in
our console (through `set_key` / `set_joystick`).

A schedule is text: ``frame:+|-:port:mask`` items joined by ``;``, e.g. ``20:+:KEY.4:01`` presses
the key of MAME port KEY.4 with mask 01h (A) when frame 20 ends. KEY.r masks are the bits of
keyboard row r; JOY.n masks are 01h up, 02h right, 04h down, 08h left, 10h fire.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hilbridge.errors import HilbridgeError
from hilbridge.machine.console import JOYSTICK_BITS, KEYBOARD, Console

_ITEM = re.compile(r"(\d+):([+-]):(KEY\.[0-5]|JOY\.[01]):([0-9A-Fa-f]{1,2})")
_KEY_AT = {position: name for name, position in KEYBOARD.items()}
# MAME's JOY.0 port (fields named "P1 ...") answers joystick select 0, JOY.1 select 1 (seen in
# the input_read cart's trace)
JOYSTICK_SELECT = {"JOY.0": 0, "JOY.1": 1}


@dataclass(frozen=True, slots=True)
class InputChange:
    frame: int  # applied when this frame ends
    pressed: bool
    port: str  # MAME input port: KEY.0-KEY.5, JOY.0, JOY.1
    mask: int

    @property
    def text(self) -> str:
        return f"{self.frame}:{'+' if self.pressed else '-'}:{self.port}:{self.mask:02X}"


def parse_inputs(text: str) -> tuple[InputChange, ...]:
    """Parse a schedule; "" or "-" is no input at all."""
    if text in ("", "-"):
        return ()
    changes = []
    for item in text.split(";"):
        found = _ITEM.fullmatch(item.strip())
        if not found:
            raise HilbridgeError(f"bad input change {item!r}: expected frame:+|-:KEY.r|JOY.n:mask")
        frame, sign, port, mask = found.groups()
        changes.append(InputChange(int(frame), sign == "+", port, int(mask, 16)))
    return tuple(changes)


def schedule_text(changes: tuple[InputChange, ...]) -> str:
    return ";".join(change.text for change in changes)


def apply_input(console: Console, change: InputChange) -> None:
    """Press or release what `change` names on our console."""
    kind, number = change.port.split(".")
    for bit in range(8):
        if not change.mask & (1 << bit):
            continue
        if kind == "KEY":
            console.set_key(_KEY_AT[int(number), bit], change.pressed)
        else:
            direction = next(name for name, value in JOYSTICK_BITS.items() if value == 1 << bit)
            console.set_joystick(JOYSTICK_SELECT[change.port], **{direction: change.pressed})
