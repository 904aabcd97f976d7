"""MCS-48 assembler for the asl dialect used by Videopac homebrew.

The source is assembled in passes until every symbol keeps its value from one pass to the next
(normally two); value-dependent errors (undefined symbols, ranges, page rules) are reported only
from that last, settled pass. Lines are split once and cached by their text, expressions are
compiled once (`asm_expr`), so later passes only evaluate.

asl behaviour reproduced on purpose (so asl sources give byte-identical images):
- a non-blank character in column 1 starts a label; a colon is optional;
- symbols are case-insensitive unless `case_sensitive=True` (asl's ``-U``);
- ``JMP``/``CALL`` to the other 2K bank get an automatic ``SEL MB0``/``SEL MB1`` in front (a warning);
- conditional jumps and ``DJNZ`` must land in the page of their operand byte (PC+1);
- line labels inside a macro, ``REPT``, ``IRP``, ``IRPC`` or ``WHILE`` body are local to that
  expansion (``EQU``/``SET`` there are global); ``.name`` labels are composed with the last symbol;
- ``DW`` is little-endian; the image covers the lowest to the highest byte written.

This module holds the passes, directives and instructions; `asm_source` cuts lines and substitutes
macro text, `asm_state` keeps one pass's symbols, scopes and errors, `asm_expr` evaluates
expressions and `asm_encode` finds encodings in the shared opcode table. Directives are found by
name in `_DIRECTIVE_METHODS`. See docs/assembler.md.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from hilbridge.errors import HilbridgeError, SourceLocation
from hilbridge.toolchain import asm_encode
from hilbridge.toolchain.asm_expr import ExpressionError, Value, compile_expression, to_int
from hilbridge.toolchain.asm_source import (
    NAME,
    SourceLine,
    SplitLine,
    split_line,
    substitute,
    top_level_index,
    unquote,
    upper_outside_quotes,
)
from hilbridge.toolchain.asm_state import (
    ADDRESS_LIMIT,
    IDENTITY,
    MAX_NESTING,
    Conditional,
    Fatal,
    Macro,
    PassState,
    Section,
    format_hex,
)

MAX_PASSES = 12
MAX_LINE_LENGTH = 4096  # characters in one source line (also after macro substitution)
MAX_INCLUDE_DEPTH = 64  # INCLUDE files within INCLUDE files
MAX_LINES_PER_PASS = 1_000_000  # source plus expanded lines; stops runaway REPT/WHILE/macros
PROGRAM_LIMIT = 0x1000  # 4K: the 8048's 12-bit program counter

# asl directives this assembler does not implement; each gives a clear error naming it.
UNSUPPORTED_DIRECTIVES = frozenset(
    resources.files(__package__).joinpath("asm_unsupported.txt").read_text(encoding="utf-8").split()
)


# Include files that asl ships and sources expect; hilbridge has its own versions of them.
BUILTIN_INCLUDES = {"bitfuncs.inc": "asm_bitfuncs.inc"}


class AssemblyError(HilbridgeError):
    """One or more errors in an assembly source; `errors` holds every (message, location) found."""

    def __init__(self, errors: Sequence[tuple[str, SourceLocation | None]]):
        first_message, first_location = errors[0]
        super().__init__(first_message, first_location)
        self.errors = list(errors)

    def __str__(self) -> str:
        lines = []
        for message, location in self.errors[:20]:
            prefix = f"{location}: " if location else ""
            lines.append(f"{prefix}error: {message}")
        if len(self.errors) > 20:
            lines.append(f"... and {len(self.errors) - 20} more errors")
        return "\n".join(lines)


@dataclass
class AssemblyResult:
    """The assembled program: `image` holds bytes `origin`..`origin + len(image) - 1`."""

    image: bytes
    origin: int
    symbols: dict[str, int]
    listing: str
    warnings: list[str]
    passes: int = 0
    shared: list[tuple[str, int]] = field(default_factory=list)
    written: bytes = b""  # per byte of `image`: 1 where the program stored it, 0 for a fill gap

    def symbol_file(self) -> str:
        """One ``NAME VALUE`` line per symbol, sorted by name (values in hex)."""
        return "".join(f"{name}\t{value & 0xFFFFFFFF:04X}\n" for name, value in sorted(self.symbols.items()))

    def share_file(self, source_name: str) -> str:
        """The symbols named by SHARED as EQUs another source can include (asl's ``-a`` file)."""
        lines = [f"; {source_name}: shared symbols, for inclusion in assembler programs\n"]
        lines.extend(f"{name} equ {_intel_hex(value)}\n" for name, value in self.shared)
        return "".join(lines)


# Directives whose label field names what they define, instead of labelling the current address.
_LABEL_DIRECTIVES = frozenset({"EQU", "=", ":=", "SET", "EVAL", "MACRO", "REG", "FUNCTION", "LABEL"})


class Assembler:
    """Assembles one program; see `assemble` for the parameters."""

    def __init__(
        self,
        include_dirs: Sequence[str | os.PathLike[str]] = (),
        defines: dict[str, int] | None = None,
        fill: int = 0xFF,
        case_sensitive: bool = False,
        auto_bank_select: bool = True,
    ):
        self.include_dirs = [Path(directory) for directory in include_dirs]
        self.defines = dict(defines or {})
        self.fill = fill
        self.case_sensitive = case_sensitive
        self.auto_bank_select = auto_bank_select
        self.main_name = "<string>"
        self.files: dict[str, list[str]] = {}
        self.directives: dict[str, Callable[[PassState, SplitLine, Sequence[SourceLine], int], int]] = {
            name: getattr(self, method) for name, method in _DIRECTIVE_METHODS.items()
        }

    # -- entry points ----------------------------------------------------------------------------

    def assemble_source(self, text: str, name: str, directory: Path | None) -> AssemblyResult:
        self.main_name = name
        self.base_directory = directory if directory is not None else Path.cwd()
        lines = [SourceLine(line, name, number) for number, line in enumerate(text.splitlines(), 1)]
        previous: dict[str, Value] = {}
        previous_aliases: dict[str, Value | None] = {}
        state: PassState | None = None
        for number in range(1, MAX_PASSES + 1):
            state = PassState(self, previous, previous_aliases, number)
            self._predefine(state)
            with contextlib.suppress(Fatal):
                self._run(state, lines)
            if state.hard_errors:
                raise AssemblyError(state.hard_errors)
            stable = state.symbols == previous
            if stable or number == MAX_PASSES:
                break
            previous = state.symbols
            previous_aliases = state.aliases
        assert state is not None
        if state.conditionals and not state.soft_errors:
            raise AssemblyError([("IF without ENDIF", state.conditionals[-1].location)])
        if state.soft_errors:
            raise AssemblyError(_unique(state.soft_errors))
        return self._result(state)

    def _predefine(self, state: PassState) -> None:
        for name, value in self.defines.items():
            key = name if self.case_sensitive else name.upper()
            state.symbols[key] = value
            state.constants.add(key)

    def _result(self, state: PassState) -> AssemblyResult:
        if state.highest >= 0:
            origin = state.lowest
            end = state.highest + 1
            image = bytearray(state.memory[origin:end])
            written = state.written
            written_flags = bytes(written[origin:end])
            fill = self.fill & 0xFF
            for address in range(origin, end):
                if not written[address]:
                    image[address - origin] = fill
        else:
            origin, image, written_flags = 0, bytearray(), b""
        symbols = {}
        for key, value in state.symbols.items():
            if "\x01" in key or "\x03" in key or not isinstance(value, int):
                continue
            if "\x02" in key:
                continue
            symbols[key] = value
        warnings = [f"{location}: warning: {message}" for message, location in _unique(state.warnings)]
        warnings.extend(state.messages)
        return AssemblyResult(
            bytes(image),
            origin,
            symbols,
            _format_listing(state.listing),
            warnings,
            state.number,
            state.shared,
            written_flags,
        )

    # -- line processing -------------------------------------------------------------------------

    def _run(self, state: PassState, lines: Sequence[SourceLine]) -> None:
        """Assemble a block of lines (a file, or a macro expansion)."""
        index = 0
        count = len(lines)
        directives = self.directives
        while index < count and not state.ended:
            line = lines[index]
            index += 1
            state.line = line
            state.lines_done += 1
            if state.lines_done > MAX_LINES_PER_PASS:
                state.hard_error(
                    f"more than {MAX_LINES_PER_PASS} lines in one pass (an endless REPT or macro?)"
                )
                raise Fatal
            if len(line.text) > MAX_LINE_LENGTH:
                state.hard_error(f"line is {len(line.text)} characters long; at most {MAX_LINE_LENGTH}", 1)
                continue
            split = split_line(line.text)
            operation = split.keyword
            force_instruction = operation.startswith("!")
            if force_instruction:
                # asl: '!mnemonic' means the machine instruction even where a macro has its name.
                operation = operation[1:]
            if state.conditionals and not state.conditionals[-1].active:
                if operation in _CONDITIONAL_DIRECTIVES:
                    directives[operation](state, split, lines, index)
                continue
            state.line_start_pc = state.counters[state.segment]
            state.listing.append([line, state.line_start_pc, b"", ""])
            if not operation and not split.label:
                continue
            handler = directives.get(operation)
            if handler is not None:
                if split.label and operation not in _LABEL_DIRECTIVES:
                    self._define_label(state, split)
                index = handler(state, split, lines, index)
                continue
            macro = (
                None
                if force_instruction
                else state.macros.get(operation if not self.case_sensitive else split.operation)
            )
            if macro is not None:
                if split.label:
                    self._define_label(state, split)
                self._expand_macro(state, macro, split)
                continue
            if split.label:
                self._define_label(state, split)
            if not operation:
                continue
            if operation in asm_encode.MNEMONICS:
                self._instruction(state, split, operation)
            elif operation in UNSUPPORTED_DIRECTIVES:
                state.hard_error(
                    f"asl directive '{split.operation}' is not supported", split.operation_column
                )
            else:
                state.hard_error(f"unknown instruction or macro '{split.operation}'", split.operation_column)

    def _define_label(self, state: PassState, split: SplitLine) -> None:
        name = split.label
        if name in ("-", "+", "/"):
            name = state.nameless_label(name)
        state.define(name, state.counters[state.segment], split.label_column)

    def _emit(self, state: PassState, data: bytes | bytearray | list[int]) -> None:
        """Store bytes at the current address (the physical one, under PHASE) and list them."""
        if state.segment != "CODE":
            state.hard_error(f"code or data bytes in segment {state.segment}")
            return
        size = len(data)
        if not size:
            return
        pc = state.counters["CODE"]
        end_pc = pc + size
        state.counters["CODE"] = end_pc
        if end_pc > PROGRAM_LIMIT:
            # As asl ("address overflow"): the 8048 cannot fetch beyond 0FFFh. Bank images for
            # larger cartridges are assembled per bank, or PHASEd into the 4K space.
            first = format_hex(max(pc, PROGRAM_LIMIT))
            state.soft_error(f"address {first} is beyond the 8048's 4K program space (0x0000-0x0fff)")
        address = pc - state.phase_delta
        end = address + size
        if address < 0 or end > ADDRESS_LIMIT:
            state.soft_error(f"address {format_hex(address)} is outside the 64K address space")
            return
        written = state.written
        if written.find(1, address, end) >= 0:
            state.warn(f"address {format_hex(address)} is written twice")
        state.memory[address:end] = data
        written[address:end] = _WRITTEN[size] if size < len(_WRITTEN) else b"\x01" * size
        if address < state.lowest:
            state.lowest = address
        if end > state.highest:
            state.highest = end - 1
        listing = state.listing
        row = listing[-1] if listing else None
        if row is not None and row[0] is state.line and row[1] + len(row[2]) == pc:
            row[2] = row[2] + bytes(data)
        else:
            listing.append([state.line, pc, bytes(data), ""])

    # -- instructions ----------------------------------------------------------------------------

    def _instruction(self, state: PassState, split: SplitLine, mnemonic: str) -> None:
        arguments = split.arguments
        if state.registers:
            arguments = [state.registers.get(arg.upper(), arg) for arg in arguments]
        if mnemonic == "JB":
            self._jb(state, split, arguments)
            return
        form = asm_encode.resolve(mnemonic, tuple(arguments))
        if form is None:
            written = ",".join(arguments)
            state.hard_error(
                f"'{split.operation} {written}' is not an MCS-48 instruction form", split.operation_column
            )
            return
        kind = form.value_kind
        pc = state.line_start_pc
        if kind is None:
            self._emit(state, [form.opcode])
            if form.opcode in _TABLE_READS and pc & 0xFF == 0xFF:
                state.warn(f"{mnemonic} at the last byte of a page reads from the next page")
            return
        index = form.value_index
        text = arguments[index]
        column = split.argument_columns[index]
        if kind == asm_encode.IMMEDIATE:
            value = state.checked(text[1:], column + 1, -128, 255, "immediate value")
            self._emit(state, [form.opcode, (value or 0) & 0xFF])
        elif kind == asm_encode.PAGE_TARGET:
            self._page_jump(state, form.opcode, text, column, 0xFFFF if mnemonic == "DJNZ" else 0xFFF)
        else:
            self._bank_jump(state, form.opcode, text, column)

    def _page_jump(self, state: PassState, opcode: int, text: str, column: int, high: int) -> None:
        pc = state.line_start_pc
        target = state.checked(text, column, 0, high, "jump target")
        if target is not None and not state.unknown and (target >> 8) != ((pc + 1) >> 8):
            page = (pc + 1) & 0xFF00
            span = f"{format_hex(page)}-{format_hex(page + 0xFF)}"
            state.soft_error(f"jump target {format_hex(target)} is outside the current page {span}", column)
        self._emit(state, [opcode, (target or 0) & 0xFF])

    def _bank_jump(self, state: PassState, opcode: int, text: str, column: int) -> None:
        pc = state.line_start_pc
        if pc & 0x7FE == 0x7FE:
            state.soft_error(
                f"JMP/CALL cannot start at {format_hex(pc)}: it would straddle the 2K bank boundary"
            )
        target = state.checked(text, column, 0, PROGRAM_LIMIT - 1, "jump target")
        if target is None:
            target = 0
        prefix: list[int] = []
        if not state.unknown and (target & 0x800) != (pc & 0x800):
            bank = (target >> 11) & 1
            if self.auto_bank_select:
                prefix = [asm_encode.SEL_MB[bank]]
                where = format_hex(target)
                state.warn(f"target {where} is in the other 2K bank: inserted SEL MB{bank} (as asl does)")
            else:
                state.soft_error(f"target {format_hex(target)} is outside the current 2K bank", column)
        self._emit(state, [*prefix, opcode | ((target & 0x700) >> 3), target & 0xFF])

    def _jb(self, state: PassState, split: SplitLine, arguments: list[str]) -> None:
        if len(arguments) != 2:
            state.hard_error("JB needs a bit number and a target", split.operation_column)
            return
        bit = state.checked(arguments[0], split.argument_columns[0], 0, 7, "bit number")
        opcode = asm_encode.JB_BASE_OPCODE + ((bit or 0) << 5)
        self._page_jump(state, opcode, arguments[1], split.argument_columns[1], 0xFFF)

    # -- directives: symbols ---------------------------------------------------------------------

    def _equ(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not split.label:
            state.hard_error(f"{split.operation.upper()} needs a symbol name in the label field", 1)
            return index
        if not 1 <= len(split.arguments) <= 2:  # asl allows a segment name after the value
            state.hard_error(f"{split.operation.upper()} takes one value", split.operation_column)
            return index
        state.unknown = False
        value = state.value(split.arguments[0], split.argument_columns[0])
        if value is None or state.unknown:
            # As asl: a value that is not known yet defines nothing in this pass, so circular
            # definitions stay undefined instead of settling at 0.
            return index
        constant = split.operation.upper() in ("EQU", "=", "LABEL")
        state.define(split.label, value, split.label_column, constant, local=False)
        if state.listing and isinstance(value, int):
            state.listing[-1][3] = f"={value & 0xFFFFFFFF:X}h"
        return index

    def _reg(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not split.label or len(split.arguments) != 1:
            state.hard_error("REG needs a name and one register", split.operation_column)
            return index
        state.registers[split.label.upper()] = split.arguments[0]
        return index

    # -- directives: location --------------------------------------------------------------------

    def _org(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if len(split.arguments) != 1:
            state.hard_error("ORG takes one address", split.operation_column)
            return index
        address = state.checked(
            split.arguments[0], split.argument_columns[0], 0, ADDRESS_LIMIT - 1, "address"
        )
        if address is not None:
            state.counters[state.segment] = address + (state.phase_delta if state.segment == "CODE" else 0)
            if state.segment == "CODE":
                state.counters["CODE"] = address
                state.phase_delta = 0
        return index

    def _phase(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if len(split.arguments) != 1:
            state.hard_error("PHASE takes one address", split.operation_column)
            return index
        address = state.checked(
            split.arguments[0], split.argument_columns[0], 0, ADDRESS_LIMIT - 1, "address"
        )
        if address is not None:
            physical = state.counters["CODE"] - state.phase_delta
            state.phase_delta = address - physical
            state.counters["CODE"] = address
        return index

    def _dephase(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        state.counters["CODE"] -= state.phase_delta
        state.phase_delta = 0
        return index

    def _align(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not split.arguments:
            state.hard_error("ALIGN needs a boundary", split.operation_column)
            return index
        boundary = state.checked(split.arguments[0], split.argument_columns[0], 1, ADDRESS_LIMIT, "alignment")
        if boundary:
            pc = state.counters[state.segment]
            state.counters[state.segment] = (pc + boundary - 1) // boundary * boundary
        return index

    def _segment(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        name = split.arguments[0].upper() if split.arguments else ""
        if name not in state.counters:
            state.hard_error(f"unknown segment '{name}' (CODE, DATA, IDATA or XDATA)", split.operation_column)
        else:
            state.segment = name
        return index

    def _ds(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if len(split.arguments) != 1:
            state.hard_error(f"{split.operation.upper()} takes one count", split.operation_column)
            return index
        count = state.checked(split.arguments[0], split.argument_columns[0], 0, ADDRESS_LIMIT, "count")
        state.counters[state.segment] += count or 0
        return index

    # -- directives: data ------------------------------------------------------------------------

    def _data(self, state: PassState, split: SplitLine, width: int) -> None:
        if not split.arguments:
            state.hard_error(f"{split.operation.upper()} needs at least one value", split.operation_column)
            return
        if all(argument == "?" for argument in split.arguments):
            # 'DB ?,?': reserve space without writing it, like DS.
            state.counters[state.segment] += width * len(split.arguments)
            return
        out = bytearray()
        low = -(1 << (8 * width - 1))
        high = (1 << (8 * width)) - 1
        for argument, column in zip(split.arguments, split.argument_columns, strict=True):
            self._data_item(state, argument, column, width, low, high, out)
        self._emit(state, out)

    def _data_item(
        self, state: PassState, argument: str, column: int, width: int, low: int, high: int, out: bytearray
    ) -> None:
        if not argument:
            state.hard_error("empty value", column)
            return
        dup = _DUP.match(argument)
        if dup:
            count = state.checked(dup.group(1), column, 0, ADDRESS_LIMIT, "repeat count") or 0
            inner = dup.group(2).strip()
            if inner.startswith("(") and inner.endswith(")"):
                inner = inner[1:-1]
            part = bytearray()
            for item in inner.split(",") if inner.strip() != "?" else ["0"]:
                self._data_item(state, item.strip(), column, width, low, high, part)
            if len(part) * count > ADDRESS_LIMIT:
                state.hard_error(
                    f"{count} DUP of {len(part)} bytes makes {len(part) * count} bytes, more than the "
                    f"{ADDRESS_LIMIT} bytes of the address space",
                    column,
                )
                return
            out.extend(bytes(part) * count)
            return
        literal = unquote(argument)
        # "..." is a string (one item per character); '...' is a character constant that asl packs
        # into one number, except that DB takes its characters one by one as well.
        if literal is not None and (width == 1 or argument[0] == '"'):
            for char in literal:
                out.extend(self._charset_code(state, char).to_bytes(width, "little"))
            return
        state.unknown = False
        value = state.value(argument, column)
        if value is None:
            out.extend(bytes(width))
            return
        if isinstance(value, str):
            for char in value:
                out.extend(self._charset_code(state, char).to_bytes(width, "little"))
            return
        if not state.unknown and not low <= value <= high:
            state.soft_error(f"value {format_hex(value)} does not fit in {8 * width} bits", column)
        out.extend((value & high).to_bytes(width, "little"))

    def _charset_code(self, state: PassState, char: str) -> int:
        code = ord(char) & 0xFF
        return code if state.char_table is None else state.char_table[code]

    def _codepage(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        """CODEPAGE name[,source]: switch to a character translation table, creating it if new."""
        if not 1 <= len(split.arguments) <= 2 or not NAME.fullmatch(split.arguments[0]):
            state.hard_error("CODEPAGE takes a name and optionally a table to copy", split.operation_column)
            return index
        name = split.arguments[0].upper()
        if name not in state.code_pages:
            source = state.current_table()
            if len(split.arguments) == 2:
                source_name = split.arguments[1].upper()
                if source_name not in state.code_pages:
                    state.hard_error(f"unknown code page '{split.arguments[1]}'", split.argument_columns[1])
                    return index
                source = state.code_pages[source_name]
            state.code_pages[name] = list(source)
        state.code_page = name
        table = state.code_pages[name]
        state.char_table = None if table == IDENTITY else table
        return index

    def _charset(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        """CHARSET: reset the table; CHARSET c,code; CHARSET first,last,code; CHARSET c,"string"."""
        table = state.code_pages.setdefault(state.code_page, list(IDENTITY))
        arguments, columns = split.arguments, split.argument_columns
        if not arguments:
            table[:] = IDENTITY
        elif len(arguments) in (2, 3):
            start = state.checked(arguments[0], columns[0], 0, 255, "character")
            second = state.value(arguments[1], columns[1])
            if start is None or second is None:
                return index
            if len(arguments) == 2 and isinstance(second, str) and len(second) != 1:
                if start + len(second) > 256:
                    state.soft_error("translation string runs past character 255", columns[1])
                    return index
                for offset, char in enumerate(second):
                    table[start + offset] = ord(char) & 0xFF
            else:
                stop = start
                code: int | None = to_int(state, second)
                if len(arguments) == 3:
                    stop = to_int(state, second)
                    if not start <= stop <= 255:
                        state.soft_error("CHARSET range must run upwards within 0..255", columns[1])
                        return index
                    code = state.checked(arguments[2], columns[2], 0, 255, "character code")
                if code is None or not 0 <= code <= 255:
                    state.soft_error("character code out of range 0..255", columns[-1])
                    return index
                for char in range(start, stop + 1):
                    table[char] = (code + char - start) & 0xFF
        else:
            state.hard_error("CHARSET takes 0, 2 or 3 arguments", split.operation_column)
            return index
        state.char_table = None if table == IDENTITY else table
        return index

    def _db(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        self._data(state, split, 1)
        return index

    def _dw(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        self._data(state, split, 2)
        return index

    def _dd(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        self._data(state, split, 4)
        return index

    # -- directives: files -----------------------------------------------------------------------

    def _resolve(self, state: PassState, name: str, column: int) -> Path:
        including = Path(state.line.file).parent if state.line and state.line.file != self.main_name else None
        candidates = []
        if including is not None:
            candidates.append(including / name)
        candidates.append(self.base_directory / name)
        candidates.append(Path.cwd() / name)
        candidates.extend(directory / name for directory in self.include_dirs)
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        builtin = BUILTIN_INCLUDES.get(name.lower())
        if builtin is not None:
            return Path(str(resources.files(__package__).joinpath(builtin)))
        state.hard_error(f"cannot find include file '{name}'", column)
        raise Fatal

    def _file_argument(self, state: PassState, split: SplitLine) -> tuple[str, int] | None:
        if not split.arguments:
            state.hard_error(f"{split.operation.upper()} needs a file name", split.operation_column)
            return None
        argument = split.arguments[0]
        name = unquote(argument)
        if name is None:
            name = argument
        return name, split.argument_columns[0]

    def _read_lines(self, state: PassState, path: Path, column: int) -> list[str]:
        key = str(path)
        lines = self.files.get(key)
        if lines is None:
            try:
                lines = path.read_bytes().decode("latin-1").splitlines()
            except OSError as error:
                state.hard_error(f"cannot read '{path}': {error.strerror}", column)
                raise Fatal from None
            self.files[key] = lines
        return lines

    def _include(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        found = self._file_argument(state, split)
        if found is None:
            return index
        name, column = found
        path = self._resolve(state, name, column)
        key = str(path.resolve())
        if key in state.include_stack:
            state.hard_error(f"circular include of '{name}'", column)
            raise Fatal
        if len(state.include_stack) >= MAX_INCLUDE_DEPTH:
            state.hard_error(f"includes nested more than {MAX_INCLUDE_DEPTH} deep", column)
            raise Fatal
        display = str(path)
        block = [
            SourceLine(text, display, number)
            for number, text in enumerate(self._read_lines(state, path, column), 1)
        ]
        state.include_stack.append(key)
        saved = state.line
        try:
            self._run(state, block)
        finally:
            state.include_stack.pop()
            state.line = saved
        return index

    def _binclude(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        found = self._file_argument(state, split)
        if found is None:
            return index
        name, column = found
        path = self._resolve(state, name, column)
        try:
            data = path.read_bytes()
        except OSError as error:
            state.hard_error(f"cannot read '{name}': {error.strerror}", column)
            return index
        offset = 0
        length = len(data)
        if len(split.arguments) > 1:
            offset = state.checked(split.arguments[1], split.argument_columns[1], 0, len(data), "offset") or 0
            length = len(data) - offset
        if len(split.arguments) > 2:
            length = (
                state.checked(split.arguments[2], split.argument_columns[2], 0, len(data) - offset, "length")
                or 0
            )
        self._emit(state, data[offset : offset + length])
        return index

    # -- directives: conditionals ----------------------------------------------------------------

    def _if_common(self, state: PassState, split: SplitLine, condition: Callable[[], bool]) -> None:
        enclosing = not state.conditionals or state.conditionals[-1].active
        location = state.location(split.operation_column)
        if not enclosing:
            state.conditionals.append(Conditional(False, True, False, location))
            return
        taken = condition()
        state.conditionals.append(Conditional(taken, taken, True, location))

    def _condition_value(self, state: PassState, split: SplitLine) -> bool:
        if len(split.arguments) != 1:
            state.hard_error(f"{split.operation.upper()} takes one condition", split.operation_column)
            return False
        value = state.value(split.arguments[0], split.argument_columns[0])
        return bool(to_int(state, value)) if value is not None else False

    def _if(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        self._if_common(state, split, lambda: self._condition_value(state, split))
        return index

    def _ifdef(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        wanted = split.operation.upper() == "IFDEF"
        self._if_common(state, split, lambda: self._is_defined(state, split) == wanted)
        return index

    def _is_defined(self, state: PassState, split: SplitLine) -> bool:
        if len(split.arguments) != 1:
            state.hard_error(f"{split.operation.upper()} takes one symbol name", split.operation_column)
            return False
        return state.defined(split.arguments[0])

    def _ifb(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        blank = not split.argument_text.strip()
        wanted = split.operation.upper() == "IFB"
        self._if_common(state, split, lambda: blank == wanted)
        return index

    def _ifexist(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        wanted = split.operation.upper() == "IFEXIST"

        def exists() -> bool:
            found = self._file_argument(state, split)
            if found is None:
                return False
            try:
                self._resolve(state, found[0], found[1])
            except Fatal:
                state.hard_errors.pop()
                return not wanted
            return wanted

        self._if_common(state, split, exists)
        return index

    def _elseif(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not state.conditionals:
            state.hard_error("ELSEIF without IF", split.operation_column)
            return index
        top = state.conditionals[-1]
        if top.else_seen:
            state.hard_error("ELSEIF after ELSE", split.operation_column)
        if not top.parent_active or top.done:
            top.active = False
            return index
        taken = self._condition_value(state, split) if split.arguments else True
        top.active = taken
        top.done = taken
        return index

    def _else(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not state.conditionals:
            state.hard_error("ELSE without IF", split.operation_column)
            return index
        top = state.conditionals[-1]
        if top.else_seen:
            state.hard_error("second ELSE for one IF", split.operation_column)
        top.else_seen = True
        top.active = top.parent_active and not top.done
        top.done = True
        return index

    def _endif(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not state.conditionals:
            state.hard_error("ENDIF without IF", split.operation_column)
            return index
        state.conditionals.pop()
        return index

    # -- directives: macros and repetition -------------------------------------------------------

    def _collect_body(
        self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int
    ) -> int:
        """Index of the ENDM closing the block that starts at `index` (nested blocks counted)."""
        depth = 1
        position = index
        while position < len(lines):
            operation = split_line(lines[position].text).operation.upper()
            if operation in _BLOCK_OPENERS:
                depth += 1
            elif operation == "ENDM":
                depth -= 1
                if depth == 0:
                    return position
            position += 1
        state.hard_error(f"{split.operation.upper()} without ENDM", split.operation_column)
        raise Fatal

    def _macro(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        end = self._collect_body(state, split, lines, index)
        if not split.label:
            state.hard_error("MACRO needs a name in the label field", split.operation_column)
            return end + 1
        parameters: list[str] = []
        defaults: list[str] = []
        global_symbols = False
        for argument, column in zip(split.arguments, split.argument_columns, strict=True):
            if argument.startswith("{") and argument.endswith("}"):
                option = argument[1:-1].strip().upper()
                if option == "GLOBALSYMBOLS":
                    global_symbols = True
                elif option not in _IGNORED_MACRO_OPTIONS:
                    state.hard_error(f"unknown macro option '{argument}'", column)
                continue
            name, _, default = argument.partition("=")
            name = name.strip()
            if not NAME.fullmatch(name):
                state.hard_error(f"'{name}' is not a valid macro parameter name", column)
                continue
            parameters.append(name)
            defaults.append(default.strip())
        name = split.label if self.case_sensitive else split.label.upper()
        state.macros[name] = Macro(name, parameters, defaults, list(lines[index:end]), global_symbols)
        return end + 1

    def _expand_macro(self, state: PassState, macro: Macro, split: SplitLine) -> None:
        """Bind arguments as asl does, then assemble the substituted body.

        Positional arguments fill parameters in order (an empty one keeps the default); `name=value`
        sets a parameter by name, after which no positional argument may follow; arguments beyond
        the parameters are allowed (they count in ARGCOUNT and ALLARGS).
        """
        arguments = list(split.arguments)
        if not self.case_sensitive:
            arguments = [upper_outside_quotes(argument) for argument in arguments]
        keys = [name if self.case_sensitive else name.upper() for name in macro.parameters]
        values: list[str | None] = [None] * len(macro.parameters)
        named = False
        for position, (argument, column) in enumerate(zip(arguments, split.argument_columns, strict=True)):
            equals = top_level_index(argument, "=")
            if equals >= 0:
                name = argument[:equals].strip()
                key = name if self.case_sensitive else name.upper()
                if key not in keys:
                    written = split.arguments[position][:equals].strip()
                    state.hard_error(f"macro {macro.name} has no parameter '{written}'", column)
                    return
                values[keys.index(key)] = argument[equals + 1 :].strip()
                named = True
            elif named:
                state.hard_error("a positional argument cannot follow name=value arguments", column)
                return
            elif position < len(values) and argument:
                values[position] = argument
        bound = [
            value if value is not None else default
            for value, default in zip(values, macro.defaults, strict=True)
        ]
        replacements = dict(zip(macro.parameters, bound, strict=True))
        replacements["ARGCOUNT"] = str(len(arguments))
        replacements["ALLARGS"] = ",".join(arguments)
        replacements["__LABEL__"] = split.label
        assert state.line is not None
        note = f"in macro {macro.name} called at {state.line.file}:{state.line.number}"
        body = substitute(macro.body, replacements, self.case_sensitive, note)
        self._run_block(state, body, macro.global_symbols)

    def _run_block(self, state: PassState, body: list[SourceLine], global_symbols: bool) -> None:
        state.nesting += 1
        if state.nesting > MAX_NESTING:
            state.hard_error("macros or repetitions nested too deeply (recursive macro?)")
            raise Fatal
        saved_line = state.line
        saved_conditionals = len(state.conditionals)
        if not global_symbols:
            state.local_counter += 1
            state.local_spaces.append(state.local_counter)
        try:
            self._run(state, body)
        except _ExitMacro:
            del state.conditionals[saved_conditionals:]
        finally:
            if not global_symbols:
                state.local_spaces.pop()
            state.nesting -= 1
            state.line = saved_line
        if len(state.conditionals) != saved_conditionals:
            state.hard_error("IF without ENDIF inside a macro or repetition")
            del state.conditionals[saved_conditionals:]

    def _exitm(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if state.nesting == 0:
            state.hard_error("EXITM outside a macro", split.operation_column)
            return index
        raise _ExitMacro

    def _endm(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        state.hard_error("ENDM without MACRO, REPT, IRP, IRPC or WHILE", split.operation_column)
        return index

    def _rept(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        end = self._collect_body(state, split, lines, index)
        options = [a for a in split.arguments if a.startswith("{")]
        plain = [a for a in split.arguments if not a.startswith("{")]
        if len(plain) != 1:
            state.hard_error("REPT takes one count", split.operation_column)
            return end + 1
        count = state.checked(plain[0], split.argument_columns[0], 0, 1_000_000, "repeat count") or 0
        body = list(lines[index:end])
        global_symbols = any(o.upper() == "{GLOBALSYMBOLS}" for o in options)
        for _ in range(count):
            self._run_block(state, body, global_symbols)
        return end + 1

    def _irp(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        end = self._collect_body(state, split, lines, index)
        arguments = [a for a in split.arguments if not a.startswith("{")]
        global_symbols = any(a.upper() == "{GLOBALSYMBOLS}" for a in split.arguments)
        if len(arguments) < 1 or not NAME.fullmatch(arguments[0]):
            state.hard_error(f"{split.operation.upper()} needs a parameter name", split.operation_column)
            return end + 1
        parameter = arguments[0]
        if split.operation.upper() == "IRPC":
            text = ",".join(arguments[1:])
            unquoted = unquote(text)
            items = list(unquoted if unquoted is not None else text)
        else:
            items = arguments[1:]
            if not self.case_sensitive:
                items = [upper_outside_quotes(item) for item in items]  # as macro arguments
        body = list(lines[index:end])
        note = f"in {split.operation.upper()} at {state.line.file}:{state.line.number}" if state.line else ""
        for item in items:
            self._run_block(
                state, substitute(body, {parameter: item}, self.case_sensitive, note), global_symbols
            )
        return end + 1

    def _while(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        end = self._collect_body(state, split, lines, index)
        body = list(lines[index:end])
        saved = state.line
        for _ in range(100_000):
            state.line = saved
            if not self._condition_value(state, split):
                break
            self._run_block(state, body, False)
            if state.hard_errors:
                break
        else:
            state.hard_error("WHILE did not end after 100000 iterations", split.operation_column)
        return end + 1

    # -- directives: sections --------------------------------------------------------------------

    def _section(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if len(split.arguments) != 1 or not NAME.fullmatch(split.arguments[0]):
            state.hard_error("SECTION needs a name", split.operation_column)
            return index
        state.section_counter += 1
        parent = state.sections[-1] if state.sections else None
        state.sections.append(Section(split.arguments[0].upper(), state.section_counter, parent=parent))
        return index

    def _endsection(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not state.sections:
            state.hard_error("ENDSECTION without SECTION", split.operation_column)
            return index
        section = state.sections.pop()
        if split.arguments and split.arguments[0].upper() != section.name:
            state.hard_error(
                f"ENDSECTION {split.arguments[0]} closes section {section.name}", split.argument_columns[0]
            )
        return index

    def _public(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not state.sections:
            return index
        for argument in split.arguments:
            name = argument.split(":")[0].strip()
            state.sections[-1].public.add(name if self.case_sensitive else name.upper())
        return index

    # -- directives: messages, options, no-ops ---------------------------------------------------

    def _message(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        parts = []
        for argument, column in zip(split.arguments, split.argument_columns, strict=True):
            literal = unquote(argument)
            if literal is not None:
                parts.append(literal)
            else:
                value = state.value(argument, column)
                parts.append(str(value) if value is not None else "?")
        text = "".join(parts)
        kind = split.operation.upper()
        if kind == "MESSAGE":
            state.messages.append(text)
        elif kind == "WARNING":
            state.warn(text)
        elif kind == "ERROR":
            state.soft_error(text, split.operation_column)
        else:
            state.hard_error(text, split.operation_column)
            raise Fatal
        return index

    def _cpu(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        name = split.arguments[0].upper() if split.arguments else ""
        if name not in _MCS48_CPUS:
            state.hard_error(
                f"CPU '{name}' is not supported (this assembler knows the 8048 family)",
                split.operation_column,
            )
        return index

    def _relaxed(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        setting = split.arguments[0].upper() if split.arguments else ""
        if setting not in ("ON", "OFF"):
            state.hard_error("RELAXED takes ON or OFF", split.operation_column)
        else:
            state.relaxed = setting == "ON"
        return index

    def _end(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        state.ended = True
        return index

    def _function(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not split.label or not split.arguments:
            state.hard_error("FUNCTION needs a name, parameters and an expression", split.operation_column)
            return index
        parameters = split.arguments[:-1]
        for parameter, column in zip(parameters, split.argument_columns, strict=False):
            if not NAME.fullmatch(parameter):
                state.hard_error(f"'{parameter}' is not a valid parameter name", column)
                return index
        if not self.case_sensitive:
            parameters = [parameter.upper() for parameter in parameters]
        body = split.arguments[-1]
        try:
            compile_expression(body, state.relaxed)
        except ExpressionError as error:
            state.hard_error(error.message, split.argument_columns[-1] + error.offset)
            return index
        name = split.label if self.case_sensitive else split.label.upper()
        state.functions[name] = (parameters, body)
        return index

    def _shared(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        """SHARED name,...: export symbols to the share file (written with --share-file)."""
        for argument, column in zip(split.arguments, split.argument_columns, strict=True):
            if not NAME.fullmatch(argument):
                state.hard_error(f"'{argument}' is not a symbol name", column)
                continue
            value = state.value(argument, column)
            if isinstance(value, int):
                state.shared.append((argument, value))
        return index

    def _save(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        state.saved_options.append((state.relaxed, state.segment))
        return index

    def _restore(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        if not state.saved_options:
            state.hard_error("RESTORE without SAVE", split.operation_column)
            return index
        state.relaxed, state.segment = state.saved_options.pop()
        return index

    def _ignored(self, state: PassState, split: SplitLine, lines: Sequence[SourceLine], index: int) -> int:
        return index


class _ExitMacro(Exception):
    """EXITM: leave the innermost macro expansion."""


_WRITTEN = [b"\x01" * size for size in range(17)]  # "written" marks for short stores
_DUP = re.compile(r"^(.+?)\s+DUP\s*(\(.*\)|\?|\S.*)$", re.IGNORECASE)
_TABLE_READS = frozenset({0xA3, 0xE3, 0xB3})  # MOVP A,@A; MOVP3 A,@A; JMPP @A
_MCS48_CPUS = frozenset({"8035", "8039", "8040", "8048", "8049", "8050", "80C39", "80C48", "8748", "8749"})
_BLOCK_OPENERS = frozenset({"MACRO", "REPT", "IRP", "IRPC", "WHILE"})
_CONDITIONAL_DIRECTIVES = frozenset(
    {"IF", "IFDEF", "IFNDEF", "IFB", "IFNB", "IFEXIST", "IFNEXIST", "ELSEIF", "ELSE", "ENDIF"}
)
_IGNORED_MACRO_OPTIONS = frozenset({"EXPAND", "NOEXPAND", "EXPIF", "NOEXPIF", "EXPMACRO", "NOEXPMACRO",
                                    "INTLABEL", "EXPORT", "NOEXPORT"})  # fmt: skip

# Directive spelling -> Assembler method (data, so every directive is found by its name).
_DIRECTIVE_METHODS: dict[str, str] = {
    "EQU": "_equ", "=": "_equ", ":=": "_equ", "SET": "_equ", "EVAL": "_equ", "LABEL": "_equ", "REG": "_reg",
    "ORG": "_org", "PHASE": "_phase", "DEPHASE": "_dephase", "ALIGN": "_align", "SEGMENT": "_segment",
    "DS": "_ds", "DEFS": "_ds", "RMB": "_ds", "RES": "_ds",
    "DB": "_db", "BYT": "_db", "BYTE": "_db", "FCB": "_db", "DEFB": "_db", "DEFM": "_db", "FCC": "_db",
    "DW": "_dw", "WORD": "_dw", "FDB": "_dw", "DEFW": "_dw", "ADR": "_dw", "DD": "_dd",
    "INCLUDE": "_include", "BINCLUDE": "_binclude",
    "IF": "_if", "IFDEF": "_ifdef", "IFNDEF": "_ifdef", "IFB": "_ifb", "IFNB": "_ifb",
    "IFEXIST": "_ifexist", "IFNEXIST": "_ifexist", "ELSEIF": "_elseif", "ELSE": "_else", "ENDIF": "_endif",
    "MACRO": "_macro", "ENDM": "_endm", "EXITM": "_exitm", "REPT": "_rept", "IRP": "_irp", "IRPC": "_irp",
    "WHILE": "_while",
    "SECTION": "_section", "ENDSECTION": "_endsection", "PUBLIC": "_public", "GLOBAL": "_public",
    "FORWARD": "_ignored", "SHARED": "_shared",
    "MESSAGE": "_message", "WARNING": "_message", "ERROR": "_message", "FATAL": "_message",
    "CPU": "_cpu", "RELAXED": "_relaxed", "END": "_end", "FUNCTION": "_function",
    "SAVE": "_save", "RESTORE": "_restore", "CODEPAGE": "_codepage", "CHARSET": "_charset",
    "PAGE": "_ignored", "NEWPAGE": "_ignored", "TITLE": "_ignored", "LISTING": "_ignored",
    "MACEXP": "_ignored", "PRTINIT": "_ignored", "PRTEXIT": "_ignored", "SUPMODE": "_ignored",
}  # fmt: skip


def _unique(errors: list[tuple[str, SourceLocation]]) -> list[tuple[str, SourceLocation]]:
    seen = set()
    result = []
    for error in errors:
        if error not in seen:
            seen.add(error)
            result.append(error)
    return result


def _intel_hex(value: int) -> str:
    """A number as asl writes it in Intel syntax: hex digits, H, a leading 0 before A-F."""
    digits = f"{value:X}" if value >= 0 else f"-{-value:X}"
    sign = "-" if value < 0 else ""
    digits = digits.lstrip("-")
    return f"{sign}{'0' if digits[0] in 'ABCDEF' else ''}{digits}H"


def _format_listing(rows: list[list]) -> str:
    """Line number, address, bytes (or an EQU's value) and source text, like asl's listing.

    Lines produced by a macro or repetition are marked with '+'; long data continues on extra lines.
    """
    out = []
    for line, address, data, note in rows:
        shown = note or data[:4].hex(" ").upper()
        marker = "+" if line.macro_note else " "
        out.append(f"{line.number:6d}{marker} {address:04X}  {shown:<12s}  {line.text.rstrip()}")
        for start in range(4, len(data), 4):
            out.append(f"{'':6s}  {address + start:04X}  {data[start : start + 4].hex(' ').upper()}")
    return "\n".join(out) + ("\n" if out else "")


def assemble(
    source: str | os.PathLike[str],
    *,
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    defines: dict[str, int] | None = None,
    fill: int = 0xFF,
    case_sensitive: bool = False,
    auto_bank_select: bool = True,
    text: str | None = None,
) -> AssemblyResult:
    """Assemble the file at `source`, or source text: `source` itself when it contains a line
    break, or `text` (then reported under the name `source`).

    Raises `AssemblyError` (a `HilbridgeError`) with file:line:column for every user mistake.
    """
    assembler = Assembler(include_dirs, defines, fill, case_sensitive, auto_bank_select)
    name = os.fspath(source)
    if text is None and isinstance(source, str) and "\n" in source:
        # Source text passed directly (a path never contains a line break).
        name, text = "<string>", source
    if text is None:
        path = Path(name)
        try:
            text = path.read_bytes().decode("latin-1")
        except OSError as error:
            raise AssemblyError([(f"cannot read source: {error.strerror}", SourceLocation(name))]) from None
        return assembler.assemble_source(text, name, path.parent)
    return assembler.assemble_source(text, name, None)


def assemble_text(text: str, name: str = "<string>", **options: object) -> AssemblyResult:
    """Assemble source text held in memory (test cartridges, examples)."""
    return assemble(name, text=text, **options)  # type: ignore[arg-type]
