"""Errors a user can cause. The CLI prints them as ``file:line:col: error: message`` and exits 2.

Everything a user can get wrong (a bad file, a bad option, a device that does not answer) raises a
subclass of `HilbridgeError`; anything else escaping is a bug in hilbridge and keeps its traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLocation:
    file: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        text = self.file
        if self.line is not None:
            text += f":{self.line}"
            if self.column is not None:
                text += f":{self.column}"
        return text


class HilbridgeError(Exception):
    """A user-facing error: what went wrong, where, and (optionally) what to do about it."""

    def __init__(self, message: str, location: SourceLocation | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def __str__(self) -> str:
        prefix = f"{self.location}: " if self.location else ""
        text = f"{prefix}error: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


class HilbridgeWarning(UserWarning):
    """Something a user should know that does not stop the work; the CLI prints it as `file: warning: ...`.

    The message starts with the file it is about (``"game.bin: unknown BIOS image..."``).
    """
