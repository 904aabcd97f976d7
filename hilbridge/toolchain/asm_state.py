"""The state of one assembler pass: symbols and their scopes, errors, memory, options.

It is also the `Context` expressions are evaluated in. Symbols are keyed by their canonical name
(upper-cased unless case-sensitive) plus the scope they live in: a macro or repetition expansion
(``\x01``), a section (``\x02``) or a ``$$`` generation (``\x03``); global symbols have no suffix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hilbridge.errors import SourceLocation
from hilbridge.toolchain.asm_expr import Context, ExpressionError, Value, compile_expression, to_int
from hilbridge.toolchain.asm_source import NAME, SourceLine

if TYPE_CHECKING:
    from hilbridge.toolchain.assembler import Assembler

MAX_NESTING = 100  # macro/repetition nesting and FUNCTION recursion
MAX_ERRORS = 200  # errors kept per pass; the first 20 are printed
ADDRESS_LIMIT = 0x10000
IDENTITY = list(range(256))  # the STANDARD code page


# asl's constant predefined symbols (MOMCPU is the CPU name read as hex, as asl does).
PREDEFINED: dict[str, Value] = {
    "TRUE": 1, "FALSE": 0, "MOMCPU": 0x8048, "MOMCPUNAME": "8048", "BIGENDIAN": 0, "VERSION": 0x142F,
}  # fmt: skip


def format_hex(value: int) -> str:
    return f"-{-value:#06x}" if value < 0 else f"{value:#06x}"


@dataclass
class Macro:
    name: str
    parameters: list[str]
    defaults: list[str]
    body: list[SourceLine]
    global_symbols: bool = False


@dataclass
class Section:
    name: str
    identity: int
    public: set[str] = field(default_factory=set)
    parent: Section | None = None


@dataclass
class Conditional:
    active: bool  # lines in the current branch are assembled
    done: bool  # some branch was (or must be treated as) taken
    parent_active: bool
    location: SourceLocation | None = None
    else_seen: bool = False


class Fatal(Exception):
    """Stops the current pass at once (missing include, circular include, FATAL...)."""


class PassState(Context):
    """The state of one pass over the source."""

    def __init__(
        self,
        assembler: Assembler,
        previous: dict[str, Value],
        previous_aliases: dict[str, Value | None],
        number: int,
    ):
        self.assembler = assembler
        self.previous = previous
        self.previous_aliases = previous_aliases
        self.aliases: dict[str, Value | None] = {}
        self.number = number
        self.symbols: dict[str, Value] = {}
        self.constants: set[str] = set()
        self.memory = bytearray(ADDRESS_LIMIT)
        self.written = bytearray(ADDRESS_LIMIT)  # 1 where a byte was stored
        self.lowest = ADDRESS_LIMIT
        self.highest = -1
        self.listing: list[list] = []  # [line, address, bytes, note] per assembled line
        self.hard_errors: list[tuple[str, SourceLocation]] = []
        self.soft_errors: list[tuple[str, SourceLocation]] = []
        self.warnings: list[tuple[str, SourceLocation]] = []
        self.messages: list[str] = []
        self.segment = "CODE"
        self.counters: dict[str, int] = {"CODE": 0, "DATA": 0, "IDATA": 0, "XDATA": 0}
        self.phase_delta = 0  # logical PC minus the address bytes are stored at
        self.relaxed = False  # asl starts with RELAXED OFF: 017 is decimal
        self.conditionals: list[Conditional] = []
        self.macros: dict[str, Macro] = {}
        self.registers: dict[str, str] = {}
        self.last_label = ""
        self.temporary_generation = 0
        self.local_spaces: list[int] = []
        self.local_counter = 0
        self.sections: list[Section] = []
        self.section_counter = 0
        self.include_stack: list[str] = []
        self.nesting = 0
        self.ended = False
        self.unknown = False  # set when an expression used a symbol with no value yet
        self.line: SourceLine | None = None
        self.line_start_pc = 0
        self.functions: dict[str, tuple[list[str], str]] = {}
        self.back_count = 0
        self.shared: list[tuple[str, int]] = []
        self.lines_done = 0
        self.forward_count = 0
        self.recent_nameless: list[str] = []  # the last three '-' or '/' labels, newest first
        self.bindings: list[dict[str, Value]] = []
        self.saved_options: list[tuple[bool, str]] = []
        self.code_pages: dict[str, list[int]] = {"STANDARD": list(IDENTITY)}
        self.code_page = "STANDARD"
        self.char_table: list[int] | None = None

    def current_table(self) -> list[int]:
        return self.code_pages[self.code_page]

    # -- Context for expressions ---------------------------------------------------------------

    def pc(self) -> int:
        return self.line_start_pc

    def _key_candidates(self, name: str, composed: bool = True) -> list[str]:
        base = self._canonical(name) if composed else name
        candidates = []
        if self.local_spaces:
            candidates.append(f"{base}\x01{self.local_spaces[-1]}")
        section = self.sections[-1] if self.sections else None
        while section is not None:
            candidates.append(f"{base}\x02{section.identity}")
            section = section.parent
        candidates.append(base)
        return candidates

    def _canonical(self, name: str) -> str:
        if not self.assembler.case_sensitive:
            name = name.upper()
        if name.startswith("."):
            return self.last_label + name
        if name.startswith("$$"):
            return f"{name}\x03{self.temporary_generation}"
        return name

    def _defined(self, key: str) -> Value | None:
        """The symbol's value in this pass, else in the previous one (forward references)."""
        value = self.symbols.get(key)
        return value if value is not None else self.previous.get(key)

    def lookup(self, name: str, offset: int) -> Value:
        if self.bindings:
            bound = self.bindings[-1].get(name if self.assembler.case_sensitive else name.upper())
            if bound is not None:
                return bound
        if not self.local_spaces and not self.sections and not name.startswith((".", "$$")):
            # the common case: one candidate key, no scoping
            value = self._defined(name if self.assembler.case_sensitive else name.upper())
            return value if value is not None else self._undefined(name, offset)
        for key in self._key_candidates(name):
            value = self._defined(key)
            if value is not None:
                return value
        if name.startswith("."):
            plain = name if self.assembler.case_sensitive else name.upper()
            for key in self._key_candidates(plain, composed=False):
                value = self.aliases.get(key, self.previous_aliases.get(key))
                if value is not None:
                    return value
        return self._undefined(name, offset)

    def _undefined(self, name: str, offset: int) -> Value:
        builtin = self.builtin(name.upper())
        if builtin is not None:
            return builtin
        self.unknown = True
        self.soft_error(f"symbol '{name}' is not defined", offset)
        return 0

    def builtin(self, name: str) -> Value | None:
        """asl's predefined symbols, used where the program defines no symbol of that name."""
        if name == "MOMPASS":
            return self.number
        if name == "MOMLINE":
            return self.line.number if self.line else 0
        if name == "MOMFILE":
            return self.line.file if self.line else self.assembler.main_name
        if name == "MOMSECTION":
            return self.sections[-1].name if self.sections else ""
        if name == "MOMSEGMENT":
            return self.segment
        if name == "CASESENSITIVE":
            return int(self.assembler.case_sensitive)
        return PREDEFINED.get(name)

    def defined(self, name: str) -> bool:
        return any(key in self.symbols for key in self._key_candidates(name))

    def evaluate_text(self, text: str) -> Value:
        return compile_expression(text, self.relaxed)(self)

    def call_user_function(self, name: str, arguments: list[Value], offset: int) -> Value | None:
        function = self.functions.get(name if self.assembler.case_sensitive else name.upper())
        if function is None:
            return None
        parameters, body = function
        if len(arguments) != len(parameters):
            raise ExpressionError(f"function {name} takes {len(parameters)} argument(s)", offset)
        if len(self.bindings) > MAX_NESTING:
            raise ExpressionError(f"function {name} calls itself too deeply", offset)
        self.bindings.append(dict(zip(parameters, arguments, strict=True)))
        try:
            return compile_expression(body, self.relaxed)(self)
        finally:
            self.bindings.pop()

    # -- errors ----------------------------------------------------------------------------------

    def location(self, column: int | None = None) -> SourceLocation:
        line = self.line
        if line is None:
            return SourceLocation(self.assembler.main_name)
        return SourceLocation(line.file, line.number, column if column is not None else 1)

    def _with_note(self, message: str) -> str:
        if self.line is not None and self.line.macro_note:
            return f"{message} ({self.line.macro_note})"
        return message

    def hard_error(self, message: str, column: int | None = None) -> None:
        self.hard_errors.append((self._with_note(message), self.location(column)))
        if len(self.hard_errors) >= MAX_ERRORS:
            raise Fatal

    def soft_error(self, message: str, column: int | None = None) -> None:
        if len(self.soft_errors) < MAX_ERRORS:
            self.soft_errors.append((self._with_note(message), self.location(column)))

    def warn(self, message: str, column: int | None = None) -> None:
        self.warnings.append((self._with_note(message), self.location(column)))

    # -- values ----------------------------------------------------------------------------------

    def value(self, text: str, column: int) -> Value | None:
        """Evaluate an expression; None (and an error) when it is malformed."""
        if not text:
            self.hard_error("missing operand", column)
            return None
        if text[0] in "+-" and len(text) <= 3:
            nameless = self.nameless_reference(text)
            if nameless is not None:
                text = nameless
        try:
            node = compile_expression(text, self.relaxed)
        except ExpressionError as error:
            self.hard_error(error.message, column + error.offset)
            return None
        errors_before = len(self.soft_errors)
        try:
            result = node(self)
        except ExpressionError as error:
            self.soft_error(error.message, column + error.offset)
            return None
        except RecursionError:
            self.hard_error("expression too long or nested too deeply", column)
            return None
        if len(self.soft_errors) > errors_before and self.soft_errors[-1][1].column is not None:
            message, location = self.soft_errors[-1]
            self.soft_errors[-1] = (
                message,
                SourceLocation(location.file, location.line, column + location.column),
            )
        return result

    def integer(self, text: str, column: int) -> int | None:
        result = self.value(text, column)
        return None if result is None else to_int(self, result)

    def checked(self, text: str, column: int, low: int, high: int, what: str) -> int | None:
        """An integer expression that must lie in low..high (unknown values are not checked)."""
        self.unknown = False
        result = self.integer(text, column)
        if result is None:
            return None
        if not self.unknown and not low <= result <= high:
            self.soft_error(
                f"{what} {format_hex(result)} is out of range ({format_hex(low)}..{format_hex(high)})", column
            )
            return None
        return result

    # -- symbols ---------------------------------------------------------------------------------

    def define(self, name: str, value: Value, column: int, constant: bool = True, local: bool = True) -> None:
        """Enter a symbol. Line labels in a macro or repetition body are `local` to that expansion;
        EQU, SET and LABEL always define outside it, as in asl."""
        if not NAME.fullmatch(name):
            self.hard_error(f"'{name}' is not a valid symbol name", column)
            return
        canonical = self._canonical(name)
        key = self._scoped(canonical, local)
        if key in self.symbols and (constant or key in self.constants):
            self.hard_error(f"symbol '{name}' is already defined", column)
            return
        self.symbols[key] = value
        if constant:
            self.constants.add(key)
        # asl: every definition except a $$name advances the $$ counter; every definition except
        # a .name becomes the prefix for later .names.
        if not name.startswith("$$"):
            self.temporary_generation += 1
        if name.startswith("."):
            # asl 1.41 stored '.name' as written; remember it so such sources still resolve.
            alias = self._scoped(name if self.assembler.case_sensitive else name.upper(), local)
            self.aliases[alias] = value if self.aliases.get(alias, value) == value else None
        else:
            self.last_label = canonical

    def nameless_label(self, kind: str) -> str:
        """The name asl gives a '-', '+' or '/' label; '-' and '/' can be referenced backwards."""
        if kind == "-":
            name = f"__BACK{self.back_count}"
            self.back_count += 1
        else:
            name = f"__FORW{self.forward_count}"
            self.forward_count += 1
        if kind != "+":
            self.recent_nameless = [name, *self.recent_nameless[:2]]
        return name

    def nameless_reference(self, text: str) -> str | None:
        """The label meant by '-', '--', '---' (backwards) or '+', '++', '+++' (forwards)."""
        count = len(text)
        if count > 3 or text != text[0] * count:
            return None
        if text[0] == "-":
            return self.recent_nameless[count - 1] if count <= len(self.recent_nameless) else None
        if text[0] == "+":
            return f"__FORW{self.forward_count + count - 1}"
        return None

    def _scoped(self, canonical: str, local: bool) -> str:
        if self.local_spaces and local:
            return f"{canonical}\x01{self.local_spaces[-1]}"
        if self.sections and not self._is_public(canonical):
            return f"{canonical}\x02{self.sections[-1].identity}"
        return canonical

    def _is_public(self, canonical: str) -> bool:
        section = self.sections[-1] if self.sections else None
        while section is not None:
            if canonical in section.public:
                return True
            section = section.parent
        return False
