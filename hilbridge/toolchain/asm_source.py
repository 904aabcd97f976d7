"""Source text for the assembler: lines cut into asl's fields, quoted strings, macro substitution.

asl's rules: a non-blank character in column 1 starts a label (a colon is optional); elsewhere a
word ending in ':' is a label; ';' outside quotes starts a comment; arguments are separated by
commas outside quotes and parentheses. Lines are cut once and cached by their text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hilbridge.toolchain.asm_expr import ExpressionError, unescape


@dataclass(frozen=True, slots=True)
class SourceLine:
    text: str
    file: str
    number: int
    macro_note: str = ""


@dataclass(slots=True)
class SplitLine:
    """One source line cut into asl's fields; columns are 1-based positions in the text."""

    label: str
    label_column: int
    operation: str
    operation_column: int
    arguments: list[str]
    argument_columns: list[int]
    argument_text: str
    keyword: str = ""  # the operation upper-cased, for directive and instruction lookup


_SPLIT_CACHE: dict[str, SplitLine] = {}
NAME = re.compile(r"(?:\$\$|[A-Za-z_.])[A-Za-z0-9_.]*")


def _top_level(text: str, wanted: str, nested: bool = True) -> Iterator[int]:
    """Indices of `wanted` outside quotes (a backslash escapes the next quoted character) and, when
    `nested`, outside parentheses: the one scanner behind comments, argument commas and QuotPos."""
    depth = 0
    quote = ""
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == wanted and depth <= 0:
            yield index
        elif nested and char == "(":
            depth += 1
        elif nested and char == ")":
            depth -= 1
        index += 1


def _find_comment(text: str) -> int:
    """Index of the ';' that starts a comment (outside quotes, even inside parentheses), or len(text)."""
    if ";" not in text:
        return len(text)
    if "'" not in text and '"' not in text:
        return text.index(";")
    return next(_top_level(text, ";", nested=False), len(text))


def _split_arguments(text: str, offset: int) -> tuple[list[str], list[int]]:
    """Split at top-level commas (outside quotes and parentheses); columns are 1-based."""
    arguments: list[str] = []
    columns: list[int] = []
    if not text.strip():
        return arguments, columns
    if "," not in text:
        stripped = text.strip()
        return [stripped], [offset + len(text) - len(text.lstrip()) + 1]
    pieces: list[tuple[int, int]] = []
    start = 0
    for index in _top_level(text, ","):
        pieces.append((start, index))
        start = index + 1
    pieces.append((start, len(text)))
    for begin, end in pieces:
        piece = text[begin:end]
        stripped = piece.strip()
        arguments.append(stripped)
        columns.append(offset + begin + len(piece) - len(piece.lstrip()) + 1)
    return arguments, columns


def split_line(text: str) -> SplitLine:
    """Cut a line into label, operation and arguments the way asl does (cached by text)."""
    cached = _SPLIT_CACHE.get(text)
    if cached is not None:
        return cached
    end = _find_comment(text)
    body = text[:end].rstrip()
    label = ""
    label_column = 0
    position = 0
    length = len(body)
    if body and not body[0].isspace():
        stop = 0
        while stop < length and not body[stop].isspace() and body[stop] != ":":
            stop += 1
        label = body[:stop]
        label_column = 1
        position = stop + 1 if stop < length else stop
    operation = ""
    operation_column = 0
    argument_text = ""
    argument_start = position
    while True:
        while position < length and body[position].isspace():
            position += 1
        if position >= length:
            argument_start = position
            break
        if body[position] == ",":
            argument_start = position
            break
        stop = position
        while stop < length and not body[stop].isspace():
            stop += 1
        word = body[position:stop]
        if not label and word.endswith(":"):
            label = word[:-1]
            label_column = position + 1
            position = stop
            continue
        operation = word
        operation_column = position + 1
        argument_start = stop
        break
    argument_text = body[argument_start:]
    arguments, columns = _split_arguments(argument_text, argument_start)
    result = SplitLine(
        label, label_column, operation, operation_column, arguments, columns, argument_text, operation.upper()
    )
    if len(_SPLIT_CACHE) > 500_000:
        _SPLIT_CACHE.clear()
    _SPLIT_CACHE[text] = result
    return result


def top_level_index(text: str, wanted: str) -> int:
    """Index of the first `wanted` character outside quotes and parentheses, or -1 (asl's QuotPos)."""
    return next(_top_level(text, wanted), -1)


def unquote(text: str) -> str | None:
    """The contents of a quoted string argument, or None when `text` is not one well-formed quoted
    string (callers then evaluate it as an expression, which reports what is wrong)."""
    if len(text) >= 2 and text[0] in "'\"" and text[-1] == text[0]:
        inner = text[1:-1]
        quote = text[0]
        index = 0
        while index < len(inner):
            if inner[index] == "\\":
                index += 2
                continue
            if inner[index] == quote:
                return None
            index += 1
        try:
            return unescape(inner)
        except ExpressionError:
            return None
    return None


def substitute(
    body: Sequence[SourceLine], replacements: dict[str, str], case_sensitive: bool, note: str
) -> list[SourceLine]:
    """Replace macro parameters as asl does: whole words, where a word is letters and digits."""
    if not replacements:
        return [SourceLine(line.text, line.file, line.number, note) for line in body]
    names = sorted(replacements, key=len, reverse=True)
    flags = 0 if case_sensitive else re.IGNORECASE
    pattern = re.compile(
        r"(?<![A-Za-z0-9])(" + "|".join(re.escape(name) for name in names) + r")(?![A-Za-z0-9])", flags
    )
    lookup = replacements if case_sensitive else {name.upper(): value for name, value in replacements.items()}

    def replace(match: re.Match[str]) -> str:
        key = match.group(1) if case_sensitive else match.group(1).upper()
        return lookup[key]

    return [SourceLine(pattern.sub(replace, line.text), line.file, line.number, note) for line in body]


def upper_outside_quotes(text: str) -> str:
    """asl upper-cases macro arguments (when not case-sensitive) except inside quotes."""
    if "'" not in text and '"' not in text:
        return text.upper()
    out = []
    quote = ""
    for char in text:
        if quote:
            if char == quote:
                quote = ""
            out.append(char)
        elif char in "'\"":
            quote = char
            out.append(char)
        else:
            out.append(char.upper())
    return "".join(out)
