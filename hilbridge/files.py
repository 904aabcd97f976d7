"""File helpers shared by every capability that writes user files."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: bytes, mode: int | None = None) -> None:
    """Write `data` to `path` so that a crash leaves either the old file or the new one, never half.

    The bytes go to a temporary file in the same directory, are flushed to disk, and the temporary
    file is renamed over the target (rename is atomic on POSIX within one file system). `mode`
    fixes the file's permissions (a private file: 0o600); by default they are an ordinary open()'s.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        # mkstemp creates the file 0600; give it the mode an ordinary open() would (or keep the old one).
        os.fchmod(fd, _mode_for(target) if mode is None else mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
