"""The consoles a battle can be fought on, each seen through a `CaptureSource`.

| device | console |
|---|---|
| `sim` | our emulator on the host, playing the resolver's keys (the console the simulated adapter runs) |
| `mame` | MAME 0.251 (one run per battle, keys through its input ports) |
| `sim?OPTIONS` | the simulated adapter serving the cartridge, its console playing the keys |
| other names | a real console behind an adapter (`open_capture`): the players press the keys |

A battle's keys are an input movie (`hilbridge.machine.inputs.InputMovie`: events applied before a
frame runs), the same for our emulator, MAME and the simulated adapter. Every source yields the MOVX
writes (with P1) and a `FrameSync` per frame, which is all `hilbridge.bridge.watch` needs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Protocol

from hilbridge.capture.stream import CaptureHeader, CaptureItem, CaptureSource, FrameSync
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import CaptureRecord
from hilbridge.machine.cartridge import load_cartridge
from hilbridge.machine.console import Console
from hilbridge.machine.inputs import InputMovie

Movie = InputMovie


class BattleConsole(Protocol):
    """Where battles are fought. `scripted`: it plays the movie the resolver gives; otherwise
    people press the keys and `battle` gets no movie."""

    name: str
    scripted: bool
    cart: bytes

    def battle(self, movie: Movie, frames: int) -> CaptureSource:
        """A capture of the next `frames` frames, with `movie` (frames counted from now) played."""
        ...


class _ListSource:
    """A finished capture held in memory (a MAME run)."""

    def __init__(self, header: CaptureHeader, items: list[CaptureItem]):
        self._header = header
        self._items = items

    @property
    def header(self) -> CaptureHeader:
        return self._header

    def items(self) -> Iterator[CaptureItem]:
        yield from self._items

    def close(self) -> None:
        self._items = []


class _WriteTap(Console):
    """A console that hands its MOVX writes (with P1) to `tap`. A bus listener would do, but it also
    gets every polling read the CPU skips, which costs far more than the battle itself."""

    tap: list[CaptureItem] | None = None

    def movx_write(self, address: int, value: int, cycle: int) -> None:
        super().movx_write(address, value, cycle)
        if self.tap is not None:
            self.tap.append(CaptureRecord(cycle, "MOVX_WRITE", address, value, self.p1))


class EmulatorConsole:
    """Our emulator, powered on once: battles follow each other on the same running console."""

    scripted = True

    def __init__(self, cart: bytes, region: str = "ntsc", name: str = "sim"):
        self.cart = cart
        self.name = name
        self.region = region
        self.console = _WriteTap(load_cartridge(cart), region=region)
        self.sha1 = hashlib.sha1(cart).hexdigest()

    def battle(self, movie: Movie, frames: int) -> CaptureSource:
        return _EmulatorBattle(self, movie, frames)


class _EmulatorBattle:
    def __init__(self, owner: EmulatorConsole, movie: Movie, frames: int):
        self.owner = owner
        self.movie = movie
        self.frames = frames
        self._header = CaptureHeader(
            source="sim",
            cart_sha1=owner.sha1,
            region=owner.region,
            bios=owner.console.bios.name,
            kinds=("MOVX_WRITE",),
            inputs=movie.text,
        )

    @property
    def header(self) -> CaptureHeader:
        return self._header

    def items(self) -> Iterator[CaptureItem]:
        console = self.owner.console
        pending: list[CaptureItem] = []

        console.tap = pending
        try:
            for frame in range(self.frames):
                self.movie.apply(console, frame)
                console.run_frames(1)
                yield from pending
                pending.clear()
                yield FrameSync(console.frame, console.cycle)
        finally:
            console.tap = None
            console.keys = [0] * len(console.keys)  # a battle abandoned mid-movie leaves no key down

    def close(self) -> None:
        pass


class MameConsole:
    """MAME 0.251 with our default (open) BIOS: a fresh power-on per battle (the cartridge's sequence number
    starts again), the whole battle run at once, then read."""

    scripted = True
    name = "mame"

    def __init__(self, cart: bytes, region: str = "ntsc"):
        self.cart = cart
        self.region = region

    def battle(self, movie: Movie, frames: int) -> CaptureSource:
        from hilbridge.oracle.mame import run_mame

        run = run_mame(self.cart, frames=frames, region=self.region, inputs=movie)
        items: list[tuple[int, int, CaptureItem]] = [
            (access.cycle, 0, CaptureRecord(access.cycle, "MOVX_WRITE", access.addr, access.data, access.p1))
            for access in run.trace.writes()
        ]
        items += [(end.cycle, 1, FrameSync(end.frame + 1, end.cycle)) for end in run.trace.frames]
        items.sort(key=lambda entry: (entry[0], entry[1]))
        header = CaptureHeader(
            source="mame",
            cart_sha1=hashlib.sha1(self.cart).hexdigest(),
            region=self.region,
            kinds=("MOVX_WRITE",),
            inputs=movie.text,
        )
        return _ListSource(header, [item for _, _, item in items])


class CaptureConsole:
    """A console seen through `hilbridge.capture.sources.open_capture`, one capture per battle: a
    real console behind an adapter (people press the keys), or the simulated adapter (``sim?...``:
    it serves our image to its console from power-on and plays the battle's keys)."""

    def __init__(self, device: str, cart: bytes, region: str = "ntsc"):
        self.name = device
        self.cart = cart
        self.region = region
        self.scripted = device.startswith("sim?")

    def battle(self, movie: Movie, frames: int) -> CaptureSource:
        from hilbridge.capture.sources import open_capture

        if movie and not self.scripted:
            raise HilbridgeError(f"{self.name}: the players press the keys on a real console")
        return open_capture(
            self.name,
            self.cart,
            frames=frames,
            region=self.region,
            inputs=movie if movie else None,
            serve=self.scripted,  # a real adapter sniffs the cartridge in the slot
            kinds=("MOVX_WRITE",),
        )


def open_console(device: str, cart: bytes, region: str = "ntsc") -> BattleConsole:
    """The console `device` names (module table)."""
    if device == "sim":
        return EmulatorConsole(cart, region)
    if device == "mame":
        return MameConsole(cart, region)
    return CaptureConsole(device, cart, region)
