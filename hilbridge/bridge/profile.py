"""Cartridge profiles: where a cartridge shows (and perhaps stores) the result of a battle.

A profile is a JSON file keyed by the cartridge's SHA-1 (`profiles/*.json` ship with hilbridge;
`hilbridge bridge calibrate` writes learned ones). Its parts, all optional but one of the first two:

- ``record``: a result record the cartridge writes to external RAM (address, magic byte, offsets of
  sequence number, winner, units, checksum): read exactly from the MOVX writes;
- ``screen``: the screen fields (character positions) that show the winner and each side's units;
- ``keys``: how scripted players enter a battle (only for a cartridge whose controls we know);
- ``calibration``: how a learned profile was learned and how sure it is.

The format is documented in docs/bridge.md.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib.resources import files
from pathlib import Path
from typing import Any

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.files import write_atomic

PROFILE_FORMAT = "hilbridge-bridge-profile"
PROFILE_VERSION = 1
ROLES = ("attacker", "defender")
Cell = tuple[int, int]  # (Y line, X in register units) of a character


class ProfileError(HilbridgeError):
    """A profile file that does not parse, is malformed, or belongs to another cartridge."""


@dataclass(frozen=True, slots=True)
class ScreenField:
    """Characters read left to right; `alternatives`: other cells that matched every calibration
    battle as well (a reading where they disagree is ambiguous)."""

    cells: tuple[Cell, ...]
    alternatives: tuple[tuple[Cell, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class ScreenLayout:
    winner: ScreenField
    labels: Mapping[str, str]  # winner field text -> "attacker" / "defender"
    units: Mapping[str, ScreenField]  # role -> field
    settle_frames: int = 8  # the winner shown, unchanged, for this many frames: the battle is over


@dataclass(frozen=True, slots=True)
class RecordLayout:
    address: int  # external RAM address of the magic byte (the record's first byte)
    length: int
    magic: int  # written last; 00h while the record is written
    sequence: int  # offsets from `address`
    winner: int
    winner_values: Mapping[int, str]  # byte -> role
    units: Mapping[str, tuple[int, int]]  # role -> (offset, bytes of packed BCD, most significant first)
    checksum: int  # offset of the byte that holds the sum of the bytes checksum_from .. checksum - 1
    checksum_from: int


@dataclass(frozen=True, slots=True)
class KeyScript:
    """How scripted players enter a battle: steps are key names, ``units:ROLE`` or ``weapon:ROLE``."""

    sequence: tuple[str, ...]
    weapons: Mapping[str, str]  # weapon -> key
    max_units: int
    boot_frames: int  # frames after power-on before the cartridge reads keys
    hold_frames: int  # each key is held this long, then released as long


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    sha1: str
    screen: ScreenLayout | None
    record: RecordLayout | None = None
    keys: KeyScript | None = None
    battle_frames: int = 1200  # after the last key: a battle that lasts longer has hung
    calibration: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""  # the file it was read from

    def check_cartridge(self, image: bytes) -> None:
        """Refuse a profile made for another cartridge."""
        actual = hashlib.sha1(image).hexdigest()
        if actual != self.sha1:
            raise ProfileError(
                f"profile {self.name!r} is for the cartridge with SHA-1 {self.sha1}, not {actual}",
                SourceLocation(self.origin) if self.origin else None,
            )

    def without_record(self) -> Profile:
        """The same profile reading the screen only."""
        return replace(self, record=None)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": PROFILE_FORMAT,
            "version": PROFILE_VERSION,
            "cartridge": {"name": self.name, "sha1": self.sha1},
            "battle_frames": self.battle_frames,
        }
        if self.screen is not None:
            data["screen"] = {
                "winner": _field_json(self.screen.winner),
                "labels": dict(self.screen.labels),
                "units": {role: _field_json(item) for role, item in self.screen.units.items()},
                "settle_frames": self.screen.settle_frames,
            }
        if self.record is not None:
            record = self.record
            data["record"] = {
                "address": record.address,
                "length": record.length,
                "magic": record.magic,
                "sequence": record.sequence,
                "winner": record.winner,
                "winner_values": {str(value): role for value, role in record.winner_values.items()},
                "units": {role: list(place) for role, place in record.units.items()},
                "checksum": record.checksum,
                "checksum_from": record.checksum_from,
            }
        if self.keys is not None:
            data["keys"] = {
                "sequence": list(self.keys.sequence),
                "weapons": dict(self.keys.weapons),
                "max_units": self.keys.max_units,
                "boot_frames": self.keys.boot_frames,
                "hold_frames": self.keys.hold_frames,
            }
        if self.calibration:
            data["calibration"] = dict(self.calibration)
        return data

    def save(self, path: str | Path) -> None:
        write_atomic(path, (json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n").encode("utf-8"))


def _field_json(item: ScreenField) -> dict[str, Any]:
    data: dict[str, Any] = {"cells": [list(cell) for cell in item.cells]}
    if item.alternatives:
        data["alternatives"] = [[list(cell) for cell in cells] for cells in item.alternatives]
    return data


class _Reader:
    """Typed access to the parsed JSON with messages that name the file and the field."""

    def __init__(self, origin: str):
        self.where = SourceLocation(origin)

    def fail(self, path: str, message: str) -> ProfileError:
        return ProfileError(f"{path}: {message}", self.where)

    def obj(self, data: Any, path: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(path, "must be an object")
        return data

    def get(self, data: dict[str, Any], key: str, kind: type, path: str) -> Any:
        if key not in data:
            raise self.fail(f"{path}.{key}", "is missing")
        value = data[key]
        if kind is int and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise self.fail(f"{path}.{key}", f"must be a whole number >= 0, not {value!r}")
        if not isinstance(value, kind):
            raise self.fail(f"{path}.{key}", f"must be a {kind.__name__}, not {value!r}")
        return value

    def cells(self, data: Any, path: str) -> tuple[Cell, ...]:
        if not isinstance(data, list) or not data:
            raise self.fail(path, "must be a non-empty list of [Y, X] cells")
        cells = []
        for index, cell in enumerate(data):
            if (
                not isinstance(cell, list)
                or len(cell) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in cell)
            ):
                raise self.fail(f"{path}[{index}]", f"must be [Y, X] with values 0-255, not {cell!r}")
            cells.append((cell[0], cell[1]))
        return tuple(cells)

    def field(self, data: Any, path: str) -> ScreenField:
        data = self.obj(data, path)
        alternatives = data.get("alternatives", [])
        if not isinstance(alternatives, list):
            raise self.fail(f"{path}.alternatives", "must be a list of cell lists")
        return ScreenField(
            self.cells(data.get("cells"), f"{path}.cells"),
            tuple(self.cells(item, f"{path}.alternatives[{n}]") for n, item in enumerate(alternatives)),
        )

    def roles(self, data: dict[str, Any], path: str) -> None:
        if sorted(data) != sorted(ROLES):
            raise self.fail(path, f"must name exactly {' and '.join(ROLES)}, not {sorted(data)}")


def parse_profile(data: Any, origin: str = "<profile>") -> Profile:
    read = _Reader(origin)
    data = read.obj(data, "profile")
    if data.get("format") != PROFILE_FORMAT:
        raise read.fail("format", f"not a hilbridge bridge profile (format must be {PROFILE_FORMAT!r})")
    if data.get("version") != PROFILE_VERSION:
        raise read.fail("version", f"version {data.get('version')!r} is not supported (this reads 1)")
    cart = read.obj(data.get("cartridge"), "cartridge")
    sha1 = read.get(cart, "sha1", str, "cartridge")
    if len(sha1) != 40 or set(sha1) - set("0123456789abcdef"):
        raise read.fail("cartridge.sha1", f"must be 40 lower-case hex digits, not {sha1!r}")
    name = read.get(cart, "name", str, "cartridge")
    screen = record = keys = None
    if "screen" in data:
        raw = read.obj(data["screen"], "screen")
        labels = read.obj(raw.get("labels"), "screen.labels")
        if set(labels.values()) != set(ROLES):
            raise read.fail("screen.labels", f"must map texts to both {' and '.join(ROLES)}")
        units = read.obj(raw.get("units"), "screen.units")
        read.roles(units, "screen.units")
        screen = ScreenLayout(
            read.field(raw.get("winner"), "screen.winner"),
            {str(text): role for text, role in labels.items()},
            {role: read.field(units[role], f"screen.units.{role}") for role in ROLES},
            read.get(raw, "settle_frames", int, "screen") if "settle_frames" in raw else 8,
        )
    if "record" in data:
        raw = read.obj(data["record"], "record")
        numbers = {
            key: read.get(raw, key, int, "record")
            for key in ("address", "length", "magic", "sequence", "winner", "checksum", "checksum_from")
        }
        values = read.obj(raw.get("winner_values"), "record.winner_values")
        if set(values.values()) != set(ROLES) or not all(key.isdigit() for key in values):
            raise read.fail("record.winner_values", "must map byte values to both roles")
        places = read.obj(raw.get("units"), "record.units")
        read.roles(places, "record.units")
        units_at: dict[str, tuple[int, int]] = {}
        for role in ROLES:
            place = places[role]
            if not isinstance(place, list) or len(place) != 2 or not all(isinstance(v, int) for v in place):
                raise read.fail(f"record.units.{role}", "must be [offset, bytes]")
            units_at[role] = (place[0], place[1])
        offsets = [numbers[k] for k in ("sequence", "winner", "checksum", "checksum_from")]
        offsets += [offset + size - 1 for offset, size in units_at.values()]
        if numbers["address"] + numbers["length"] > 128 or max(offsets) >= numbers["length"]:
            raise read.fail("record", "the record must fit its length and the 128-byte external RAM")
        record = RecordLayout(
            numbers["address"],
            numbers["length"],
            numbers["magic"],
            numbers["sequence"],
            numbers["winner"],
            {int(key): role for key, role in values.items()},
            units_at,
            numbers["checksum"],
            numbers["checksum_from"],
        )
    if "keys" in data:
        raw = read.obj(data["keys"], "keys")
        sequence = read.get(raw, "sequence", list, "keys")
        weapons = read.obj(raw.get("weapons"), "keys.weapons")
        keys = KeyScript(
            tuple(str(step) for step in sequence),
            {str(k): str(v) for k, v in weapons.items()},
            read.get(raw, "max_units", int, "keys"),
            read.get(raw, "boot_frames", int, "keys"),
            max(1, read.get(raw, "hold_frames", int, "keys")),
        )
    if screen is None and record is None:
        raise read.fail("profile", "needs a screen layout or a record layout (or both)")
    battle_frames = read.get(data, "battle_frames", int, "profile") if "battle_frames" in data else 1200
    calibration = read.obj(data.get("calibration", {}), "calibration")
    return Profile(name, sha1, screen, record, keys, battle_frames, calibration, origin)


def load_profile(path: str | Path) -> Profile:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ProfileError(f"cannot read the profile: {error}", SourceLocation(str(path))) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ProfileError(
            f"the profile is not valid JSON: {error.msg}",
            SourceLocation(str(path), error.lineno, error.colno),
        ) from None
    return parse_profile(data, str(path))


def builtin_profiles() -> list[Profile]:
    """The profiles shipped in hilbridge/bridge/profiles/."""
    found = []
    for entry in sorted(files(__package__).joinpath("profiles").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            data = json.loads(entry.read_text(encoding="utf-8"))
            found.append(parse_profile(data, f"hilbridge/bridge/profiles/{entry.name}"))
    return found


def profile_for(image: bytes, path: str | Path | None = None) -> Profile:
    """The profile for this cartridge image: the file `path` (which must match it), or a shipped one."""
    if path is not None:
        profile = load_profile(path)
        profile.check_cartridge(image)
        return profile
    sha1 = hashlib.sha1(image).hexdigest()
    for profile in builtin_profiles():
        if profile.sha1 == sha1:
            return profile
    raise ProfileError(
        f"no profile for the cartridge with SHA-1 {sha1}",
        hint="learn one with `hilbridge bridge calibrate -d DEVICE --cart CART -o profile.json`, "
        "then give it with --profile",
    )
