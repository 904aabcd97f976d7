"""The items of a bus capture and the interface every capture source offers.

A capture is a header followed by items in bus order: `CaptureRecord`s (one bus access each, as the
adapter protocol's CAPTURE_CHUNK carries them), `ResetDetected` and `FrameSync` markers (the protocol's
events) and `Gap`s, which say that records are missing (chunks lost on the link, dropped by the adapter,
or a damaged chunk of a file) so a consumer can never mistake missing data for agreement.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from hilbridge.link.adapter import CaptureRecord


@dataclass(frozen=True, slots=True)
class ResetDetected:
    """The console fetched 0400h from reset."""

    cycle: int


@dataclass(frozen=True, slots=True)
class FrameSync:
    """The console fetched the VSYNC hook 0406h: the start of frame `frame`."""

    frame: int
    cycle: int


@dataclass(frozen=True, slots=True)
class Gap:
    """Records are missing here: `chunks` chunks and/or `records` records lost, and why."""

    reason: str
    chunks: int = 0
    records: int = 0


CaptureItem = CaptureRecord | ResetDetected | FrameSync | Gap


@dataclass(frozen=True, slots=True)
class CaptureHeader:
    """What is known about a capture before its first item: who captured what, on which console."""

    source: str  # "adapter", "sim", "mame", "file"
    adapter: str = ""  # adapter name and firmware info, "" when not captured through an adapter
    cart_sha1: str = ""  # SHA-1 of the cartridge image (hex), "" when unknown (sniffing an unknown cart)
    mapper: str = ""
    region: str = "ntsc"
    bios: str = ""  # BIOS identity (name or SHA-1), "" when unknown
    kinds: tuple[str, ...] = ("FETCH", "MOVX_WRITE")  # the CAPTURE_* kinds recorded
    inputs: str = ""  # the input movie applied, as text; "" for none
    notes: tuple[str, ...] = field(default_factory=tuple)


@runtime_checkable
class CaptureSource(Protocol):
    """A device or file that yields a capture: its header, then its items in bus order.

    `items()` may be called once; it streams (constant memory) and ends when the source has no more
    (a file's end, the requested frames captured, or a device that stopped, which ends with a `Gap`).
    """

    @property
    def header(self) -> CaptureHeader: ...

    def items(self) -> Iterator[CaptureItem]: ...

    def close(self) -> None: ...
