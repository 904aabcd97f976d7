"""`MameSource`: MAME 0.251 as the console, its Lua tracer writing the capture items (see docs/capture.md)."""

from __future__ import annotations

from collections.abc import Iterator

from hilbridge.capture.stream import CaptureHeader, CaptureItem
from hilbridge.errors import HilbridgeError
from hilbridge.machine.cartridge import Cartridge
from hilbridge.machine.inputs import InputMovie


class MameSource:
    def __init__(
        self,
        cart: Cartridge,
        *,
        frames: int | None,
        seconds: float | None,
        region: str,
        movie: InputMovie,
        kinds: tuple[str, ...],
        options: str = "mame",
    ):
        raise HilbridgeError("the mame capture device is not built yet")

    @property
    def header(self) -> CaptureHeader: ...

    def items(self) -> Iterator[CaptureItem]: ...

    def close(self) -> None: ...
