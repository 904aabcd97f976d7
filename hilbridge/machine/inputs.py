"""Input movies: which keys and joystick inputs change before which frame, for every console we drive.

One format for the whole project: our emulator (`InputMovie.apply`), MAME (`InputMovie.mame_changes`,
which MAME's Lua tracer applies at its frame ends) and the simulated adapter's console all read it.
One event per line (or per `;`-separated item, so a movie fits in one table cell), applied before the
given frame runs (frames count from 0, a frame ending where MAME's frame callback fires); `#` starts a
comment:

    10  press   A          # keyboard key by name (keyboard.tsv): 0-9, A-Z, SPACE, ENTER, CLEAR, ...
    14  release A
    30  joy1    up+fire    # joystick select line 0 or 1: exactly these inputs held
    40  joy1    none       # release everything on that stick

A real console's keyboard and joysticks are not on the cartridge slot: a capture of one is input-free.
"""

from __future__ import annotations

from dataclasses import dataclass

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.machine.console import JOYSTICK_BITS, KEYBOARD, Console

JOYSTICK_MASK = sum(JOYSTICK_BITS.values())


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

    @property
    def text(self) -> str:
        return f"{self.frame} {self.action} {self.target}"

    def mame_changes(self) -> list[tuple[bool, str, int]]:
        """(pressed, MAME input port, field mask) changes that do the same in MAME, in order.

        MAME's KEY.r ports are the keyboard rows (mask = bit of the key), JOY.n the stick read with
        select n (mask = JOYSTICK_BITS); a joystick event releases the whole stick, then holds its set.
        """
        if self.action in ("press", "release"):
            row, bit = KEYBOARD[self.target]
            return [(self.action == "press", f"KEY.{row}", 1 << bit)]
        port = f"JOY.{self.action[3]}"
        held = 0 if self.target == "none" else sum(JOYSTICK_BITS[name] for name in self.target.split("+"))
        return [(False, port, JOYSTICK_MASK)] + ([(True, port, held)] if held else [])


@dataclass(frozen=True, slots=True)
class InputMovie:
    """A parsed movie: its events by frame, and the name it was read from (for messages)."""

    events: tuple[InputEvent, ...] = ()
    name: str = ""

    def at(self, frame: int) -> list[InputEvent]:
        return [event for event in self.events if event.frame == frame]

    def apply(self, console: Console, frame: int) -> None:
        """Apply the events of `frame`: call before running that frame."""
        for event in self.events:
            if event.frame == frame:
                event.apply(console)

    @property
    def text(self) -> str:
        """The movie in its canonical form, one event per line ("" for no input)."""
        return "".join(event.text + "\n" for event in self.events)

    def mame_changes(self) -> str:
        """The movie for MAME's tracer: `frame:+|-:port:mask` items joined by `;`, applied before `frame`."""
        return ";".join(
            f"{event.frame}:{'+' if pressed else '-'}:{port}:{mask:02X}"
            for event in self.events
            for pressed, port, mask in event.mame_changes()
        )

    def __bool__(self) -> bool:
        return bool(self.events)


NO_INPUT = InputMovie()


def parse_input_movie(text: str, name: str = "<input>") -> InputMovie:
    return InputMovie(tuple(parse_input_script(text, name)), name)


def read_input_movie(path: str) -> InputMovie:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        raise HilbridgeError(f"cannot read the input movie: {error.strerror}", SourceLocation(path)) from None
    except UnicodeDecodeError:
        raise HilbridgeError("the input movie is not UTF-8 text", SourceLocation(path)) from None
    return parse_input_movie(text, path)


def parse_input_script(text: str, name: str = "<input>") -> list[InputEvent]:
    """The events of a movie, sorted by frame (stable); errors name the file, line and column."""
    events: list[InputEvent] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        offset = 0
        for item in raw.split("#", 1)[0].split(";"):
            events += _parse_item(item, name, number, offset)
            offset += len(item) + 1
    events.sort(key=lambda event: event.frame)
    return events


def _parse_item(line: str, name: str, number: int, offset: int) -> list[InputEvent]:
    fields = line.split()
    if not fields:
        return []
    columns = [line.index(field) + 1 + offset for field in fields]

    def where(index: int) -> SourceLocation:
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
    return [InputEvent(int(frame_text), action, target)]
