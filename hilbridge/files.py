"""File helpers shared by every capability that writes user files.

The one rule for outputs (docs/usage.md), checked by `check_outputs` before any work starts:
an output is never one of the command's inputs, two outputs never name the same file, its folder
must exist, and an existing output is replaced only with `--force`. Outputs are written by
`write_atomic`: a crash leaves the old file or the new one, never half of one; a symlink is followed
(the file it points to is replaced, the link stays, and a `FollowedSymlink` notice names that file),
and temporaries a killed save left are removed.
"""

from __future__ import annotations

import glob
import itertools
import json
import os
import re
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hilbridge.errors import HilbridgeError, HilbridgeWarning, SourceLocation

PathLike = str | os.PathLike[str]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(
    outputs: Mapping[str, PathLike | None], *, inputs: Iterable[PathLike | None] = (), force: bool = False
) -> None:
    """Refuse outputs that would overwrite an input, each other, or (without `force`) an existing file.

    `outputs` maps the option that names a file (e.g. "-o", "--png") to its path (None: not asked for).
    Everything is checked before the command does its work, so no finished work is thrown away.
    """
    given = [Path(path) for path in inputs if path is not None]
    seen: dict[str, str] = {}
    for option, value in outputs.items():
        if value is None:
            continue
        path = Path(value)
        where = SourceLocation(str(path))
        resolved = os.path.realpath(path)
        if resolved in seen:
            raise HilbridgeError(f"{seen[resolved]} and {option} name the same file", where)
        seen[resolved] = option
        for source in given:
            if resolved == os.path.realpath(source) or _same_file(path, source):
                raise HilbridgeError(
                    f"{option} would overwrite the input {source}", where, hint="choose another output file"
                )
        if path.is_dir():
            raise HilbridgeError(f"{option} names a folder, not a file", where)
        folder = Path(resolved).parent
        if not folder.is_dir():
            raise HilbridgeError(f"{option}: no such folder: {path.parent}", where)
        if not os.access(folder, os.W_OK):
            raise HilbridgeError(f"{option}: the folder {path.parent} is not writable", where)
        if path.exists() and not force:
            raise HilbridgeError(f"{path} exists; use --force to replace it", where)


MAX_JSON_BYTES = 64 * 1024 * 1024  # a save or board file larger than this is not one of ours
MAX_JSON_DEPTH = 200  # nesting deeper than any save or board we write


def read_json(path: PathLike, what: str, error: type[HilbridgeError] = HilbridgeError) -> Any:
    """Parse the JSON file `path` (a `what`: "save file", "board file"); any bad content is `error`.

    Binary junk, truncation, 5,000 nested brackets or a 5,000-digit number give one clean message
    with the file (and line:column where JSON has one), never a traceback; size and depth are bounded.
    """
    source = str(path)
    try:
        size = os.path.getsize(path)
        if size > MAX_JSON_BYTES:
            raise error(
                f"{what} is {size} bytes, more than {MAX_JSON_BYTES} (not a {what})", SourceLocation(source)
            )
        text = Path(path).read_text(encoding="utf-8")
    except OSError as problem:
        raise error(f"cannot read {what}: {problem.strerror or problem}", SourceLocation(source)) from None
    except UnicodeDecodeError as problem:
        raise error(
            f"{what} is not UTF-8 text (byte {problem.start}); a binary file?", SourceLocation(source)
        ) from None
    depth = _nesting_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise error(f"{what} nests {depth} levels deep, more than {MAX_JSON_DEPTH}", SourceLocation(source))
    try:
        return json.loads(text)
    except json.JSONDecodeError as problem:
        raise error(
            f"{what} is not valid JSON (truncated?): {problem.msg}",
            SourceLocation(source, problem.lineno, problem.colno),
        ) from None
    except (ValueError, RecursionError) as problem:  # e.g. an integer of more than 4300 digits
        raise error(f"{what} is not valid JSON: {problem}", SourceLocation(source)) from None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _nesting_depth(text: str) -> int:
    """Deepest bracket nesting outside strings (a cheap bound checked before the parser recurses)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    steps = (1 if char in "[{" else -1 for char in brackets)
    return max(itertools.accumulate(steps), default=0)


class FollowedSymlink(HilbridgeWarning):
    """An output was a symlink, so the file it points to was replaced: said aloud, because that file
    may lie anywhere (another folder, a shared file) and the user typed only the link's name."""


class AtomicOutput:
    """A file written piece by piece that appears at `path` complete (`commit`) or not at all.

    The bytes go to a temporary `.NAME.XXXXXXXX.tmp` in the target's folder, are flushed to disk and
    renamed over the target (atomic on POSIX within one file system). A symlink is followed: the file
    it points to is replaced, the link stays, and a `FollowedSymlink` warning names that file. Used as
    a context manager, it commits on success and discards on an exception. `mode` fixes the file's
    permissions (a private file: 0o600); by default they are an ordinary open()'s, or the replaced file's.
    """

    def __init__(self, path: PathLike, mode: int | None = None):
        self.path = Path(path)
        self.target = Path(os.path.realpath(path))
        fd, self._temporary = tempfile.mkstemp(
            prefix=f".{self.target.name}.", suffix=".tmp", dir=self.target.parent
        )
        try:
            # mkstemp creates the file 0600; give it the mode an ordinary open() would (or keep the old one).
            os.fchmod(fd, _mode_for(self.target) if mode is None else mode)
            self._handle = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            Path(self._temporary).unlink(missing_ok=True)
            raise

    def write(self, data: bytes) -> None:
        self._handle.write(data)

    def commit(self) -> None:
        try:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            os.replace(self._temporary, self.target)
        except BaseException:
            self.discard()
            raise
        _remove_stale_temporaries(self.target)
        if self.path.is_symlink():
            warnings.warn(
                FollowedSymlink(f"{self.path}: a symlink; wrote the file it points to, {self.target}"),
                stacklevel=2,
            )

    def discard(self) -> None:
        self._handle.close()
        Path(self._temporary).unlink(missing_ok=True)

    def __enter__(self) -> AtomicOutput:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def write_atomic(path: PathLike, data: bytes, mode: int | None = None) -> None:
    """Write `data` to `path` so that a crash leaves either the old file or the new one, never half."""
    with AtomicOutput(path, mode) as output:
        output.write(data)


def _remove_stale_temporaries(target: Path) -> None:
    """Remove `.NAME.XXXXXXXX.tmp` files an interrupted `write_atomic` of `target` left behind."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.[A-Za-z0-9_]{{8}}\.tmp")
    for candidate in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        if pattern.fullmatch(candidate.name):
            candidate.unlink(missing_ok=True)


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
