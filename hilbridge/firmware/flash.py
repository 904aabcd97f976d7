"""Copying a UF2 onto an RP2040 in USB boot mode (its RPI-RP2 mass-storage drive).

Holding BOOTSEL while plugging the board in makes the boot ROM show a small FAT drive with
INFO_UF2.TXT (whose `Board-ID: RPI-RP2` names the chip) and INDEX.HTM. Copying a UF2 file onto it
flashes the board, which then reboots into the new firmware. Everything is checked before anything is
written: the UF2 (family, blocks, boot2 CRC) and the drive (its INFO_UF2.TXT).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.firmware.uf2 import Uf2Image, read_uf2

INFO_FILE = "INFO_UF2.TXT"
BOARD_ID = "RPI-RP2"
VOLUME_NAME = "RPI-RP2"
MOUNT_TABLE = Path("/proc/mounts")
MOUNT_ROOTS = ("/media", "/run/media", "/mnt", "/Volumes")
HOW_TO_MOUNT = (
    "unplug the adapter, hold its BOOTSEL button while plugging it back in, and wait for the RPI-RP2 "
    "drive to be mounted (or mount it yourself and pass --drive PATH)"
)


class FlashError(HilbridgeError):
    """No drive, a drive that is not an RP2040's, or a UF2 the board would not take."""


def board_id(drive: Path) -> str | None:
    """The Board-ID line of the drive's INFO_UF2.TXT, or None when there is no such file."""
    try:
        text = (drive / INFO_FILE).read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "board-id":
            return value.strip()
    return ""


def is_rp2040_drive(drive: Path) -> bool:
    return board_id(drive) == BOARD_ID


def _mounted_paths(mount_table: Path) -> list[Path]:
    try:
        lines = mount_table.read_text().splitlines()
    except OSError:
        return []
    paths = []
    for line in lines:
        fields = line.split()
        if len(fields) >= 2:
            paths.append(Path(fields[1].replace("\\040", " ")))
    return paths


def candidate_drives(roots: Iterable[str] | None = None, mount_table: Path | None = None) -> list[Path]:
    """Mounted directories that could be an RPI-RP2 drive: named so under the usual mount roots, or
    listed in the mount table with that name."""
    found: list[Path] = []
    for root in MOUNT_ROOTS if roots is None else roots:
        base = Path(root)
        for pattern in (VOLUME_NAME, f"*/{VOLUME_NAME}"):
            found += sorted(base.glob(pattern)) if base.is_dir() else []
    table = MOUNT_TABLE if mount_table is None else mount_table
    found += [path for path in _mounted_paths(table) if path.name == VOLUME_NAME]
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def find_drive(roots: Iterable[str] | None = None, mount_table: Path | None = None) -> Path:
    """The one mounted RPI-RP2 drive; FlashError saying what to do when there is none (or several)."""
    drives = [drive for drive in candidate_drives(roots, mount_table) if is_rp2040_drive(drive)]
    if not drives:
        raise FlashError("no RPI-RP2 drive is mounted", hint=HOW_TO_MOUNT)
    if len(drives) > 1:
        listed = ", ".join(str(drive) for drive in drives)
        raise FlashError(
            f"several RPI-RP2 drives are mounted ({listed})", hint="choose one with --drive PATH"
        )
    return drives[0]


def check_uf2(path: Path) -> Uf2Image:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise FlashError(f"cannot read the UF2: {error.strerror}", SourceLocation(str(path))) from None
    return read_uf2(data, str(path))


def flash(uf2: Path, drive: Path | None = None) -> Path:
    """Copy `uf2` onto the RP2040 drive (found, or `drive`); returns the file written.

    Refuses, writing nothing, a UF2 that fails validation and a drive without an RP2040's INFO_UF2.TXT.
    """
    check_uf2(uf2)
    if drive is None:
        drive = find_drive()
    elif not drive.is_dir():
        raise FlashError(f"{drive} is not a mounted drive (no such directory)", hint=HOW_TO_MOUNT)
    identity = board_id(drive)
    if identity != BOARD_ID:
        what = (
            f"its {INFO_FILE} says Board-ID {identity!r}"
            if identity is not None
            else f"it has no {INFO_FILE}"
        )
        raise FlashError(
            f"{drive} is not an RP2040 in USB boot mode: {what}",
            hint=f"an RP2040 boot drive is called {VOLUME_NAME}; " + HOW_TO_MOUNT,
        )
    target = drive / uf2.name
    data = uf2.read_bytes()
    with open(target, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    return target
