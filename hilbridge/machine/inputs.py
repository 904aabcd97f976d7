"""Input scripts for unattended runs: which keys and joystick inputs change at which frame.

One event per line, applied before the given frame runs (frames count from 0); `#` starts a comment:

    10  press   A          # keyboard key by name (keyboard.tsv): 0-9, A-Z, SPACE, ENTER, CLEAR, ...
    14  release A
    30  joy1    up+fire    # joystick select line 0 or 1: exactly these inputs held
    40  joy1    none       # release everything on that stick
"""

from __future__ import annotations

from dataclasses import dataclass

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.machine.console import JOYSTICK_BITS, KEYBOARD, Console


@dataclass(frozen=True, slots=True)
class InputEvent:
    frame: int
    action: str  # "press", "release" or "joy0"/"joy1"
    target: str  # key name, or "+"-joined joystick inputs / "none"

    def apply(self, console: Console) -> None:
        if self.action in ("press", "release"):
            console.set_key(self.target, self.action == "press")
            return
        held = set() if self.target == "none" else set(self.target.split("+"))
        console.set_joystick(int(self.action[3]), **{name: name in held for name in JOYSTICK_BITS})


def parse_input_script(text: str, name: str = "<input>") -> list[InputEvent]:
    events: list[InputEvent] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0]
        fields = line.split()
        if not fields:
            continue

        columns = [line.index(field) + 1 for field in fields]

        def where(index: int, number: int = number, columns: list[int] = columns) -> SourceLocation:
            return SourceLocation(name, number, columns[index])

        if len(fields) != 3:
            raise HilbridgeError("expected: FRAME ACTION TARGET (e.g. '10 press A')", where(0))
        frame_text, action, target = fields
        if not frame_text.isdigit():
            raise HilbridgeError(f"frame must be a number, not {frame_text!r}", where(0))
        action = action.lower()
        if action in ("press", "release"):
            target = target.upper()
            if target not in KEYBOARD:
                raise HilbridgeError(f"unknown key {fields[2]!r}", where(2), hint=" ".join(KEYBOARD))
        elif action in ("joy0", "joy1"):
            target = target.lower()
            if target != "none" and not set(target.split("+")) <= set(JOYSTICK_BITS):
                hint = "up, down, left, right, fire, none"
                raise HilbridgeError(f"unknown joystick inputs {fields[2]!r}", where(2), hint=hint)
        else:
            raise HilbridgeError(f"unknown action {fields[1]!r} (press, release, joy0, joy1)", where(1))
        events.append(InputEvent(int(frame_text), action, target))
    events.sort(key=lambda event: event.frame)
    return events
