"""Expressions in the asl dialect: number formats, operators with asl's priorities, functions.

An expression is tokenised and parsed once into a tree of small closures (cached by its text), then
evaluated on every pass against the current symbol table, so a 13,000-line program is parsed once.

Priorities follow asl's operator table (1 binds tightest): ``~`` 1, ``~~`` 2, ``<< >>`` 3, ``><`` 4,
``&`` 5, ``|`` 6, ``!`` (xor) 7, ``^`` (power) 8, ``* / #`` (modulo) 11, ``+ -`` 13 (unary minus
too), ``&&`` 15, ``||`` 16, ``!!`` 17, comparisons 23. Division and modulo truncate toward zero as in C.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Value = int | str


class ExpressionError(Exception):
    """A malformed or unevaluable expression; `offset` is the column inside the expression text."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.message = message
        self.offset = offset


class Context:
    """What an expression needs from the assembler: symbol values and the current address."""

    char_table: list[int] | None = None  # asl CODEPAGE/CHARSET translation, None = identity

    def lookup(self, name: str, offset: int) -> Value:  # pragma: no cover - interface
        raise NotImplementedError

    def pc(self) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def defined(self, name: str) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def evaluate_text(self, text: str) -> Value:  # pragma: no cover - interface
        raise NotImplementedError

    def call_user_function(self, name: str, arguments: list[Value], offset: int) -> Value | None:
        """Value of a FUNCTION-defined function, or None when `name` is not one."""
        return None  # pragma: no cover - interface


Node = Callable[[Context], Value]
MAX_DEPTH = 150  # nesting of parentheses and unary operators; keeps far from Python's recursion limit

# Binary operators: spelling -> (priority, function on two ints). Lower priority binds tighter.
_LOGICAL_SHIFT_BITS = 64
MAX_VALUE_BITS = 64  # asl's integers are 64 bits; a larger value is an error, not an ever-growing number
MAX_NUMBER_DIGITS = 64  # enough for any 64-bit value in binary
MAX_STRING_LENGTH = 4096  # characters in a string value (a line holds at most MAX_LINE_LENGTH)


def _int_div(left: int, right: int) -> int:
    if right == 0:
        raise ExpressionError("division by zero")
    quotient = abs(left) // abs(right)
    return quotient if (left >= 0) == (right >= 0) else -quotient


def _int_mod(left: int, right: int) -> int:
    return left - right * _int_div(left, right)


def _power(left: int, right: int) -> int:
    if right < 0:
        return 0
    if right > 64:
        raise ExpressionError("exponent too large")
    return left**right


def _shift_left(left: int, right: int) -> int:
    if right < 0:
        return left >> -right
    if right > _LOGICAL_SHIFT_BITS:
        raise ExpressionError("shift count too large")
    return left << right


def _shift_right(left: int, right: int) -> int:
    if right < 0:
        return _shift_left(left, -right)
    return left >> right


def _mirror(left: int, right: int) -> int:
    """asl's ``><``: reverse the lowest `right` bits of `left`."""
    if not 1 <= right <= 32:
        raise ExpressionError("bit count for '><' must be 1..32")
    result = (left >> right) << right
    for bit in range(right):
        if left & (1 << (right - 1 - bit)):
            result |= 1 << bit
    return result


BINARY_OPERATORS: dict[str, tuple[int, Callable[[int, int], int]]] = {
    "<<": (3, _shift_left),
    ">>": (3, _shift_right),
    "><": (4, _mirror),
    "&": (5, lambda a, b: a & b),
    "|": (6, lambda a, b: a | b),
    "!": (7, lambda a, b: a ^ b),
    "^": (8, _power),
    "*": (11, lambda a, b: a * b),
    "/": (11, _int_div),
    "#": (11, _int_mod),
    "MOD": (11, _int_mod),
    "+": (13, lambda a, b: a + b),
    "-": (13, lambda a, b: a - b),
    "&&": (15, lambda a, b: int(bool(a) and bool(b))),
    "||": (16, lambda a, b: int(bool(a) or bool(b))),
    "!!": (17, lambda a, b: int(bool(a) != bool(b))),
    "=": (23, lambda a, b: int(a == b)),
    "==": (23, lambda a, b: int(a == b)),
    "<>": (23, lambda a, b: int(a != b)),
    "!=": (23, lambda a, b: int(a != b)),
    "<": (23, lambda a, b: int(a < b)),
    ">": (23, lambda a, b: int(a > b)),
    "<=": (23, lambda a, b: int(a <= b)),
    ">=": (23, lambda a, b: int(a >= b)),
}
_COMPARISONS = frozenset({"=", "==", "<>", "!=", "<", ">", "<=", ">="})
_LOWEST_PRIORITY = 23
# Unary operators: spelling -> (priority of the operand it takes, function).
UNARY_OPERATORS: dict[str, tuple[int, Callable[[int], int]]] = {
    "~": (1, lambda a: ~a),
    "~~": (2, lambda a: int(not a)),
    "-": (13, lambda a: -a),
    "+": (13, lambda a: a),
}

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "a": "\a", "e": "\x1b", "h": "'", "i": '"'}
_NUMERIC_ESCAPE = re.compile(r"[xX][0-9A-Fa-f]{1,2}|0[0-7]{0,3}|[1-9][0-9]{0,2}")

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
    |(?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    |(?P<number>[0-9][0-9A-Za-z_]*)
    |(?P<moto>[$%@][0-9A-Za-z]+)
    |(?P<name>(?:\$\$|[A-Za-z_.])[A-Za-z0-9_.]*)
    |(?P<op><<|>>|><|<=|>=|<>|!=|==|&&|\|\||!!|~~|[-+*/#~&|!^=<>(),$%])
    """,
    re.VERBOSE,
)


def unescape(body: str) -> str:
    r"""Resolve asl's backslash escapes.

    ``\n \r \t \b \a \e``, ``\\ \' \"`` as themselves, ``\h`` for ``'`` and ``\i`` for
    ``"``, ``\xHH`` (up to two hex digits), ``\0ooo`` octal (a leading 0, up to four digits) and
    ``\ddd`` decimal (up to three digits). An unknown escape stands for its character.
    """
    if "\\" not in body:
        return body
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\" or index + 1 == len(body):
            out.append(char)
            index += 1
            continue
        following = body[index + 1]
        numeric = _NUMERIC_ESCAPE.match(body, index + 1)
        if numeric:
            text = numeric.group()
            if text[0] in "xX":
                value = int(text[1:], 16)
            elif text[0] == "0":
                value = int(text, 8)
            else:
                value = int(text)
            if value > 0xFF:
                raise ExpressionError(f"escape '\\{text}' is larger than 255")
            out.append(chr(value))
            index += 1 + len(text)
            continue
        out.append(_ESCAPES.get(following.lower(), following))
        index += 2
    return "".join(out)


_SUFFIX_BASES = {"H": 16, "B": 2, "O": 8, "Q": 8}
_DIGIT_VALUES = {char: int(char, 16) for char in "0123456789ABCDEF"}


def parse_number(text: str, relaxed: bool = False) -> int:
    """One integer constant in any asl spelling; raises ExpressionError when it is not one.

    Intel suffixes (``0FFh``, ``1010b``, ``17o``/``17q``) and Motorola prefixes (``$FF``, ``%1010``,
    ``@17``) and C prefixes (``0x1F``, ``0b101``) are always accepted; a C leading-zero octal
    (``017``) only in ``RELAXED ON`` mode, as in asl (otherwise ``017`` is decimal 17).
    """
    upper = text.upper().replace("_", "") if "_" in text else text.upper()
    candidates: list[tuple[int, str]] = []
    if upper[0] in "$%@":
        candidates.append(({"$": 16, "%": 2, "@": 8}[upper[0]], upper[1:]))
    else:
        if upper[-1] in _SUFFIX_BASES:
            candidates.append((_SUFFIX_BASES[upper[-1]], upper[:-1]))
        if upper.startswith("0X"):
            candidates.append((16, upper[2:]))
        elif upper.startswith("0B"):
            candidates.append((2, upper[2:]))
        if relaxed and len(upper) > 1 and upper[0] == "0":
            candidates.append((8, upper[1:]))
        candidates.append((10, upper))
    if len(upper) > MAX_NUMBER_DIGITS + 2:
        raise ExpressionError(f"number with {len(upper)} digits; at most {MAX_NUMBER_DIGITS} (64-bit values)")
    for base, digits in candidates:
        if digits and all(_DIGIT_VALUES.get(char, 99) < base for char in digits):
            return int(digits, base)
    raise ExpressionError(f"bad number '{text}'")


def string_to_int(text: str) -> int:
    """asl's conversion of a character string in an integer context: big-endian bytes."""
    value = 0
    for char in text:
        value = (value << 8) | (ord(char) & 0xFF)
    return value


def to_int(context: Context, value: Value) -> int:
    """An integer operand; a string becomes its characters, translated by the current code page."""
    if isinstance(value, int):
        return value
    table = context.char_table
    if table is not None:
        value = "".join(chr(table[ord(char) & 0xFF]) for char in value)
    return string_to_int(value)


@dataclass(slots=True)
class _Token:
    kind: str
    text: str
    offset: int
    value: Value = 0


def tokenize(text: str, relaxed: bool = False) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    length = len(text)
    while position < length:
        match = _TOKEN.match(text, position)
        if match is None:
            if text[position] in "'\"":
                raise ExpressionError("string or character constant without its closing quote", position)
            raise ExpressionError(f"unexpected character '{text[position]}'", position)
        kind = match.lastgroup
        token_text = match.group()
        assert kind is not None
        if kind == "number":
            tokens.append(_Token("value", token_text, position, parse_number(token_text, relaxed)))
        elif kind == "moto":
            previous = tokens[-1] if tokens else None
            operand_expected = previous is None or (previous.kind == "op" and previous.text not in ")")
            if token_text[0] == "$" and not re.fullmatch(r"\$[0-9A-Fa-f]+", token_text):
                # `$label`-style names do not exist in asl; `$` followed by a name is an error.
                raise ExpressionError(f"bad number '{token_text}'", position)
            if token_text[0] in "%@" and not operand_expected:
                tokens.append(_Token("op", token_text[0], position))
                position += 1
                continue
            tokens.append(_Token("value", token_text, position, parse_number(token_text, relaxed)))
        elif kind == "name":
            tokens.append(_Token("name", token_text, position))
        elif kind == "string":
            tokens.append(_Token("string", token_text, position, unescape(token_text[1:-1])))
        elif kind == "op":
            tokens.append(_Token("op", token_text, position))
        position = match.end()
    return tokens


Functions = dict[str, Callable[[Context, list[Value]], Value]]


def _need_string(value: Value) -> str:
    if not isinstance(value, str):
        raise ExpressionError("this function needs a string argument")
    return value


def _first_bit(value: int) -> int:
    return (value & -value).bit_length() - 1 if value else -1


def _bitpos(value: int) -> int:
    if value <= 0 or value & (value - 1):
        raise ExpressionError("BITPOS needs a value with exactly one bit set")
    return value.bit_length() - 1


FUNCTIONS: dict[str, tuple[int, Callable[[Context, list[Value]], Value]]] = {
    # name: (argument count, implementation)
    "HI": (1, lambda c, a: (to_int(c, a[0]) >> 8) & 0xFF),
    "HIGH": (1, lambda c, a: (to_int(c, a[0]) >> 8) & 0xFF),
    "LO": (1, lambda c, a: to_int(c, a[0]) & 0xFF),
    "LOW": (1, lambda c, a: to_int(c, a[0]) & 0xFF),
    "STRLEN": (1, lambda c, a: len(_need_string(a[0]))),
    "VAL": (1, lambda c, a: c.evaluate_text(_need_string(a[0]))),
    "UPSTRING": (1, lambda c, a: _need_string(a[0]).upper()),
    "LOWSTRING": (1, lambda c, a: _need_string(a[0]).lower()),
    "SUBSTR": (
        3,
        lambda c, a: (
            _need_string(a[0])[to_int(c, a[1]) : to_int(c, a[1]) + max(to_int(c, a[2]), 0)]
            if to_int(c, a[2])
            else _need_string(a[0])[to_int(c, a[1]) :]
        ),
    ),
    "STRSTR": (2, lambda c, a: _need_string(a[0]).find(_need_string(a[1]))),
    "CHARFROMSTR": (
        2,
        lambda c, a: (
            ord(_need_string(a[0])[to_int(c, a[1])]) if 0 <= to_int(c, a[1]) < len(_need_string(a[0])) else -1
        ),
    ),
    "TOUPPER": (1, lambda c, a: ord(chr(to_int(c, a[0]) & 0xFF).upper()[0]) & 0xFF),
    "TOLOWER": (1, lambda c, a: ord(chr(to_int(c, a[0]) & 0xFF).lower()[0]) & 0xFF),
    "BITCNT": (1, lambda c, a: bin(to_int(c, a[0]) & 0xFFFFFFFFFFFFFFFF).count("1")),
    "FIRSTBIT": (1, lambda c, a: _first_bit(to_int(c, a[0]))),
    "LASTBIT": (1, lambda c, a: to_int(c, a[0]).bit_length() - 1 if to_int(c, a[0]) > 0 else -1),
    "BITPOS": (1, lambda c, a: _bitpos(to_int(c, a[0]))),
    "ABS": (1, lambda c, a: abs(to_int(c, a[0]))),
    "SGN": (1, lambda c, a: (to_int(c, a[0]) > 0) - (to_int(c, a[0]) < 0)),
}


class _Parser:
    """Precedence climbing over asl's priority numbers (smaller number = binds tighter)."""

    def __init__(self, tokens: list[_Token], text: str):
        self.tokens = tokens
        self.index = 0
        self.depth = 0
        self.text = text

    def peek(self) -> _Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def end_offset(self) -> int:
        return len(self.text)

    def parse(self) -> Node:
        if not self.tokens:
            raise ExpressionError("missing expression", 0)
        node = self.expression(_LOWEST_PRIORITY)
        leftover = self.peek()
        if leftover is not None:
            raise ExpressionError(f"unexpected '{leftover.text}' in expression", leftover.offset)
        return node

    def binary_operator(self) -> tuple[str, int] | None:
        token = self.peek()
        if token is None:
            return None
        spelling = token.text.upper() if token.kind == "name" else token.text
        if token.kind == "name" and spelling != "MOD":
            return None
        if token.kind not in ("op", "name") or spelling not in BINARY_OPERATORS:
            return None
        return spelling, BINARY_OPERATORS[spelling][0]

    def expression(self, max_priority: int) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            token = self.peek()
            raise ExpressionError("expression nested too deeply", token.offset if token else 0)
        try:
            return self._expression(max_priority)
        finally:
            self.depth -= 1

    def _expression(self, max_priority: int) -> Node:
        left = self.unary(max_priority)
        while True:
            found = self.binary_operator()
            if found is None or found[1] > max_priority:
                return left
            spelling, priority = found
            self.index += 1
            # Left-associative: the right operand binds strictly tighter.
            right = self.expression(priority - 1)
            left = _binary(spelling, left, right)

    def unary(self, max_priority: int) -> Node:
        token = self.peek()
        if token is None:
            raise ExpressionError("expression ends where an operand is expected", self.end_offset())
        if token.kind == "op" and token.text in UNARY_OPERATORS:
            priority, function = UNARY_OPERATORS[token.text]
            self.index += 1
            # The operand may contain operators that bind tighter than this unary operator.
            return _unary(function, self.expression(priority - 1))
        return self.primary()

    def primary(self) -> Node:
        token = self.peek()
        assert token is not None
        self.index += 1
        if token.kind == "value":
            value = token.value
            return lambda context: value
        if token.kind == "string":
            string_value = token.value
            if token.text[0] == "'":
                # A character constant: a number, through the current CODEPAGE translation.
                return lambda context: to_int(context, string_value)
            return lambda context: string_value
        if token.kind == "op" and token.text == "(":
            inner = self.expression(_LOWEST_PRIORITY)
            closing = self.peek()
            if closing is None or closing.text != ")":
                raise ExpressionError("missing ')'", closing.offset if closing else self.end_offset())
            self.index += 1
            return inner
        if token.kind == "op" and token.text in ("$", "*"):
            return lambda context: context.pc()
        if token.kind == "name":
            following = self.peek()
            upper = token.text.upper()
            if following is not None and following.text == "(":
                return self.call(token, upper)
            name = token.text
            offset = token.offset
            return lambda context: context.lookup(name, offset)
        raise ExpressionError(f"unexpected '{token.text}' where an operand is expected", token.offset)

    def call(self, token: _Token, upper: str) -> Node:
        self.index += 1  # the '('
        if upper == "DEFINED":
            name_token = self.peek()
            if name_token is None or name_token.kind != "name":
                raise ExpressionError("DEFINED needs a symbol name", token.offset)
            self.index += 1
            self.expect_closing(token)
            name = name_token.text
            return lambda context: int(context.defined(name))
        arguments: list[Node] = []
        closing = self.peek()
        if closing is not None and closing.text == ")":
            self.index += 1
        else:
            while True:
                arguments.append(self.expression(_LOWEST_PRIORITY))
                separator = self.peek()
                if separator is not None and separator.text == ",":
                    self.index += 1
                    continue
                self.expect_closing(token)
                break
        builtin = FUNCTIONS.get(upper)
        if builtin is not None and len(arguments) != builtin[0]:
            raise ExpressionError(
                f"{upper} takes {builtin[0]} argument(s), not {len(arguments)}", token.offset
            )
        offset = token.offset
        name = token.text

        def evaluate(context: Context) -> Value:
            values = [argument(context) for argument in arguments]
            user = context.call_user_function(name, values, offset)
            if user is not None:
                return user
            if builtin is None:
                raise ExpressionError(f"unknown function '{name}'", offset)
            function = builtin[1]
            try:
                return function(context, values)
            except ExpressionError as error:
                raise ExpressionError(error.message, offset) from None
            except (ValueError, IndexError, OverflowError):
                raise ExpressionError(f"bad argument to {upper}", offset) from None

        return evaluate

    def expect_closing(self, token: _Token) -> None:
        closing = self.peek()
        if closing is None or closing.text != ")":
            raise ExpressionError("missing ')' after function arguments", token.offset)
        self.index += 1


def bounded(value: Value) -> Value:
    """`value` if it is within asl's limits (64-bit integers, strings of MAX_STRING_LENGTH)."""
    if isinstance(value, int):
        if value.bit_length() > MAX_VALUE_BITS:
            raise ExpressionError(f"value larger than {MAX_VALUE_BITS} bits")
    elif len(value) > MAX_STRING_LENGTH:
        raise ExpressionError(f"string of {len(value)} characters; at most {MAX_STRING_LENGTH}")
    return value


def _binary(spelling: str, left: Node, right: Node) -> Node:
    node = _unbounded_binary(spelling, left, right)
    return lambda context: bounded(node(context))


def _unbounded_binary(spelling: str, left: Node, right: Node) -> Node:
    function = BINARY_OPERATORS[spelling][1]
    if spelling in _COMPARISONS:

        def compare(context: Context) -> Value:
            a, b = left(context), right(context)
            if isinstance(a, str) and isinstance(b, str):
                return function(a, b)  # type: ignore[arg-type]
            return function(to_int(context, a), to_int(context, b))

        return compare
    if spelling == "+":

        def add(context: Context) -> Value:
            a, b = left(context), right(context)
            if isinstance(a, str) and isinstance(b, str):
                return a + b
            return to_int(context, a) + to_int(context, b)

        return add
    return lambda context: function(to_int(context, left(context)), to_int(context, right(context)))


def _unary(function: Callable[[int], int], operand: Node) -> Node:
    return lambda context: bounded(function(to_int(context, operand(context))))


_CACHES: tuple[dict[str, Node], dict[str, Node]] = ({}, {})  # RELAXED OFF, RELAXED ON


def compile_expression(text: str, relaxed: bool = False) -> Node:
    """Parse `text` once into an evaluator; raises ExpressionError with an offset into `text`."""
    cache = _CACHES[relaxed]
    node = cache.get(text)
    if node is None:
        node = _Parser(tokenize(text, relaxed), text).parse()
        if len(cache) > 200_000:
            cache.clear()
        cache[text] = node
    return node
