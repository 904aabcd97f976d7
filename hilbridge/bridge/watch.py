"""Watching a battle on the bus: when it is over, who won, and the units each side has left.

Two ways to read a result, both from the MOVX writes of a capture:

- the cartridge's RAM record (profile ``record``): complete when its magic byte is written; its
  checksum must hold. Exact, and the first choice.
- the screen (profile ``screen``): the battle is over once the winner field shows a known label,
  unchanged for ``settle_frames`` frames, after it showed none (so the result of the previous battle
  still on screen does not count). The unit fields must then read as numbers.

Anything else (records lost, a console that stops, a battle that never ends, a garbled or
ambiguous screen) raises `BattleNotRead` with the reason, and the resolver falls back to a person.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from hilbridge.bridge.profile import ROLES, Profile, RecordLayout, ScreenField, ScreenLayout
from hilbridge.bridge.screen import (
    CONTROL,
    P1_EXTERNAL_DISABLE,
    P1_RAM_DISABLE,
    BusReplay,
    ScreenChar,
    screen_chars,
    screen_text,
)
from hilbridge.capture.stream import CaptureSource, FrameSync, Gap
from hilbridge.errors import HilbridgeError
from hilbridge.link.adapter import CaptureRecord

SCREEN = "screen"
RECORD = "ram record"


class BattleNotRead(HilbridgeError):
    """The console's result could not be read; the message says why (shown to the players)."""


@dataclass(frozen=True, slots=True)
class Reading:
    winner: str  # "attacker" or "defender"
    units: Mapping[str, int]  # role -> units left
    source: str  # RECORD or SCREEN
    frame: int  # frames watched when it was read
    screen: str  # the text on screen then
    sequence: int | None = None  # the record's sequence number


def decode_record(ram: bytes | bytearray, layout: RecordLayout) -> tuple[str, dict[str, int], int]:
    """(winner, units, sequence) from a complete record; a damaged one raises `BattleNotRead`."""
    record = ram[layout.address : layout.address + layout.length]
    expected = sum(record[layout.checksum_from : layout.checksum]) & 0xFF
    if record[layout.checksum] != expected:
        raise BattleNotRead(
            f"the RAM record's checksum is {record[layout.checksum]:02X}h, its bytes sum to {expected:02X}h"
        )
    winner = layout.winner_values.get(record[layout.winner])
    if winner is None:
        raise BattleNotRead(f"the RAM record names no winner (byte {record[layout.winner]:02X}h)")
    units = {}
    for role, (offset, size) in layout.units.items():
        digits = record[offset : offset + size].hex()
        if not digits.isdigit():
            raise BattleNotRead(f"the RAM record's {role} units are not decimal ({digits})")
        units[role] = int(digits)
    return winner, units, record[layout.sequence]


@lru_cache(maxsize=64)
def _chars_of(objects: bytes, region: str) -> dict[tuple[int, int], ScreenChar]:
    return {(char.y, char.x): char for char in screen_chars(objects, region)}


def _chars(registers: bytes | bytearray, region: str) -> dict[tuple[int, int], ScreenChar]:
    """The characters on screen by cell; a screen that stays the same is decoded once."""
    return _chars_of(bytes(registers[: CONTROL + 1]), region)


def _field_text(chars: Mapping[tuple[int, int], ScreenChar], cells: tuple[tuple[int, int], ...]) -> str:
    return "".join(chars[cell].text if cell in chars else " " for cell in cells)


def _units_value(text: str, role: str) -> int:
    digits = text.strip()
    if not digits.isdigit():
        raise BattleNotRead(f"the screen's units field for the {role} reads {text!r}, not a number")
    return int(digits)


def _units(chars: Mapping[tuple[int, int], ScreenChar], role: str, field: ScreenField) -> int:
    value = _units_value(_field_text(chars, field.cells), role)
    for cells in field.alternatives:
        other = _field_text(chars, cells).strip()
        if not other.isdigit() or int(other) != value:
            raise BattleNotRead(
                f"ambiguous screen: the {role}'s units read {value} at {list(field.cells)} "
                f"but {other!r} at {list(cells)} (both matched every calibration battle)"
            )
    return value


def read_screen(
    registers: bytes | bytearray, layout: ScreenLayout, region: str = "ntsc"
) -> tuple[str, dict[str, int]] | None:
    """(winner, units) on screen, None when no winner is shown; a garbled screen raises."""
    chars = _chars(registers, region)
    label = _field_text(chars, layout.winner.cells).strip()
    winner = layout.labels.get(label)
    if winner is None:
        return None
    for cells in layout.winner.alternatives:
        other = layout.labels.get(_field_text(chars, cells).strip())
        if other != winner:
            raise BattleNotRead(f"ambiguous screen: the winner reads {label!r} but {other!r} elsewhere")
    return winner, {role: _units(chars, role, layout.units[role]) for role in ROLES}


def _screen_key(registers: bytes | bytearray, layout: ScreenLayout, region: str) -> tuple[str, ...]:
    chars = _chars(registers, region)
    fields = [layout.winner, *(layout.units[role] for role in ROLES)]
    return tuple(_field_text(chars, cells) for item in fields for cells in (item.cells, *item.alternatives))


def watch_battle(
    source: CaptureSource, profile: Profile, frames: int, *, use_record: bool = True, region: str = "ntsc"
) -> Reading:
    """Read the battle `source` captures (at most `frames` frames) with `profile`."""
    replay = BusReplay()
    record = profile.record if use_record else None
    layout = profile.screen
    if record is None and layout is None:
        raise BattleNotRead("the profile has no screen layout, and its RAM record is not used")
    seen = 0
    armed = False
    last: tuple[str, ...] | None = None
    stable = 0
    record_problem = ""
    for item in source.items():
        if isinstance(item, Gap):
            raise BattleNotRead(f"the capture lost data after {seen} frames: {item.reason}")
        replay.feed(item)
        if (
            record is not None
            and isinstance(item, CaptureRecord)
            and item.kind == "MOVX_WRITE"
            and item.address == record.address
            and item.value == record.magic
            and not item.p1 & (P1_RAM_DISABLE | P1_EXTERNAL_DISABLE)
        ):
            try:
                winner, units, sequence = decode_record(replay.ram, record)
            except BattleNotRead as error:
                record_problem = f" ({error.message}; reading the screen instead)"
                continue
            return Reading(winner, units, RECORD, seen, screen_text(replay.registers, region), sequence)
        if not isinstance(item, FrameSync):
            continue
        seen += 1
        if layout is None:
            continue
        if not read_screen_label(replay.registers, layout, region):
            armed, last, stable = True, None, 0
            continue
        if not armed:
            continue
        key = _screen_key(replay.registers, layout, region)
        stable = stable + 1 if key == last else 1
        last = key
        if stable >= layout.settle_frames:
            try:
                result = read_screen(replay.registers, layout, region)
            except BattleNotRead as error:
                raise BattleNotRead(error.message + record_problem) from None
            if result is not None:
                return Reading(result[0], result[1], SCREEN, seen, screen_text(replay.registers, region))
    if seen >= frames:
        raise BattleNotRead(f"the battle did not end within {frames} frames{record_problem}")
    raise BattleNotRead(f"the console stopped after {seen} frames, before the battle ended{record_problem}")


def read_screen_label(registers: bytes | bytearray, layout: ScreenLayout, region: str = "ntsc") -> bool:
    """Does the winner field show one of the profile's labels?"""
    chars = _chars(registers, region)
    return _field_text(chars, layout.winner.cells).strip() in layout.labels
