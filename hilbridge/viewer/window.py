"""A Tk window that runs the console in real time and maps the host keyboard to its inputs.

Tk ships with Python, so the viewer needs no extra package. Frames are shown through a PPM image
(palette lookup and pixel repetition in numpy). Sound is not played.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import numpy as np

from hilbridge.errors import HilbridgeError
from hilbridge.machine.palette import RF_PALETTE


@dataclass(frozen=True, slots=True)
class Input:
    kind: str  # "key" or "joy"
    name: str  # console key name, or joystick direction
    select: int = 0


def parse_keymap(text: str) -> dict[str, Input]:
    keymap: dict[str, Input] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        keysym, target = line.split("\t")
        parts = target.split(":")
        if parts[0] == "key" and len(parts) == 2:
            keymap[keysym] = Input("key", parts[1])
        elif parts[0] == "joy" and len(parts) == 3:
            keymap[keysym] = Input("joy", parts[2], int(parts[1]))
        else:
            raise ValueError(f"keymap.tsv line {number}: bad input {target!r}")
    return keymap


@cache
def keymap() -> dict[str, Input]:
    return parse_keymap(files("hilbridge.viewer").joinpath("keymap.tsv").read_text(encoding="utf-8"))


def input_for(keysym: str) -> Input | None:
    """The console input a host key drives (letters and digits: the key of the same name)."""
    mapped = keymap().get(keysym)
    if mapped is not None:
        return mapped
    if len(keysym) == 1 and keysym.isalnum():
        return Input("key", keysym.upper())
    return None


def ppm_bytes(frame: np.ndarray, scale: int, palette: np.ndarray = RF_PALETTE) -> bytes:
    """A binary PPM of a frame of palette indices, each pixel repeated `scale` times both ways."""
    rgb = palette[frame & 0x0F]
    if scale > 1:
        rgb = np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)
    height, width = rgb.shape[:2]
    return b"P6 %d %d 255\n" % (width, height) + np.ascontiguousarray(rgb).tobytes()


def apply_input(console, item: Input, pressed: bool) -> None:
    if item.kind == "key":
        console.set_key(item.name, pressed)
    else:
        console.set_joystick(item.select, **{item.name: pressed})


def view(console, *, scale: int = 2, title: str = "hilbridge") -> None:
    """Open the window and run `console` at its frame rate until the window is closed."""
    try:
        import tkinter
    except ImportError as error:  # pragma: no cover - depends on the Python build
        raise HilbridgeError("the viewer needs Tk (tkinter)") from error
    try:
        root = tkinter.Tk()
    except tkinter.TclError as error:
        raise HilbridgeError(f"cannot open a window: {error}", hint="is a display available?") from None
    root.title(title)
    label = tkinter.Label(root, borderwidth=0)
    label.pack()
    period = 1.0 / float(console.region.frame_rate_hz)
    state = {"next": time.perf_counter(), "image": None}

    def on_key(event, pressed: bool) -> None:
        item = input_for(event.keysym)
        if item is not None:
            apply_input(console, item, pressed)

    def tick() -> None:
        console.run_frames(1)
        image = tkinter.PhotoImage(data=ppm_bytes(console.vdc.frame(), scale), format="PPM")
        label.configure(image=image)
        state["image"] = image  # keep a reference, or Tk drops the picture
        state["next"] += period
        delay = state["next"] - time.perf_counter()
        if delay < -0.25:  # too slow: do not try to catch up
            state["next"] = time.perf_counter()
        root.after(max(1, int(delay * 1000)), tick)

    root.bind("<KeyPress>", lambda event: on_key(event, True))
    root.bind("<KeyRelease>", lambda event: on_key(event, False))
    root.after(0, tick)
    root.mainloop()
