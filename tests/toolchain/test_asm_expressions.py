"""Expressions: random trees written with asl's priorities evaluate like a reference evaluator.

The reference below is written from asl's operator table (priority 1 binds tightest): `~` 1,
`<< >>` 3, `><` 4, `&` 5, `|` 6, `!` (xor) 7, `^` (power) 8, `* / #` 11, `+ -` 13, `&&` 15,
`||` 16, `!!` 17, comparisons 23; equal priorities group to the left; `/` and `#` truncate toward
zero as in C. Trees are printed with only the parentheses those rules need.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilbridge.toolchain.asm_expr import Context, ExpressionError, compile_expression
from hilbridge.toolchain.assembler import assemble_text


def c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def mirror(value: int, bits: int) -> int:
    low = value & ((1 << bits) - 1)
    reversed_low = int(format(low, f"0{bits}b")[::-1], 2)
    return (value >> bits << bits) | reversed_low


REFERENCE = {
    "<<": (3, lambda a, b: a << b),
    ">>": (3, lambda a, b: a >> b),
    "><": (4, mirror),
    "&": (5, lambda a, b: a & b),
    "|": (6, lambda a, b: a | b),
    "!": (7, lambda a, b: a ^ b),
    "^": (8, lambda a, b: a**b),
    "*": (11, lambda a, b: a * b),
    "/": (11, c_div),
    "#": (11, lambda a, b: a - b * c_div(a, b)),
    "+": (13, lambda a, b: a + b),
    "-": (13, lambda a, b: a - b),
    "&&": (15, lambda a, b: int(bool(a) and bool(b))),
    "||": (16, lambda a, b: int(bool(a) or bool(b))),
    "!!": (17, lambda a, b: int(bool(a) != bool(b))),
    "=": (23, lambda a, b: int(a == b)),
    "<>": (23, lambda a, b: int(a != b)),
    "<": (23, lambda a, b: int(a < b)),
    ">=": (23, lambda a, b: int(a >= b)),
}


@dataclass
class Leaf:
    value: int

    def text(self) -> str:
        return str(self.value) if self.value >= 0 else f"({self.value})"

    def evaluate(self) -> int:
        return self.value

    priority = 0


@dataclass
class Binary:
    operator: str
    left: object
    right: object

    @property
    def priority(self) -> int:
        return REFERENCE[self.operator][0]

    def text(self) -> str:
        left = self.left.text()
        right = self.right.text()
        if self.left.priority > self.priority or isinstance(self.left, Unary):
            left = f"({left})"
        if self.right.priority >= self.priority or isinstance(self.right, Unary):
            right = f"({right})"
        return f"{left}{self.operator}{right}"

    def evaluate(self) -> int:
        a, b = self.left.evaluate(), self.right.evaluate()
        if self.operator in ("/", "#") and b == 0:
            raise ZeroDivisionError
        if self.operator in ("<<", ">>") and not 0 <= b <= 16:
            raise ValueError
        if self.operator == "^" and not 0 <= b <= 4:
            raise ValueError
        if self.operator == "><" and not 1 <= b <= 16:
            raise ValueError
        return REFERENCE[self.operator][1](a, b)


@dataclass
class Unary:
    operator: str
    operand: object

    priority = 0

    def text(self) -> str:
        inner = self.operand.text()
        limit = 0 if self.operator == "~" else 12
        if self.operand.priority > limit or isinstance(self.operand, Unary):
            inner = f"({inner})"
        return f"{self.operator}{inner}"

    def evaluate(self) -> int:
        value = self.operand.evaluate()
        return ~value if self.operator == "~" else -value


leaves = st.integers(-300, 300).map(Leaf)
trees = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.builds(Binary, st.sampled_from(sorted(REFERENCE)), children, children),
        st.builds(Unary, st.sampled_from(["~", "-"]), children),
    ),
    max_leaves=8,
)


class _NoSymbols(Context):
    def lookup(self, name, offset):
        raise AssertionError(name)

    def pc(self):
        return 0

    def defined(self, name):
        return False

    def evaluate_text(self, text):
        return compile_expression(text)(self)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(trees)
def test_random_expressions_match_reference(tree):
    text = tree.text()
    try:
        expected = tree.evaluate()
    except (ZeroDivisionError, ValueError):
        return
    if abs(expected) > 1 << 60:
        return
    assert compile_expression(text)(_NoSymbols()) == expected, text


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF))
def test_expressions_inside_programs(a, b):
    result = assemble_text(f"va equ {a}\nvb equ 0{b:X}h\n\tdw (va+vb) & 0ffffh, va ! vb, hi(va), lo(vb)\n")
    assert result.image == bytes(
        [*((a + b) & 0xFFFF).to_bytes(2, "little"), *(a ^ b).to_bytes(2, "little"), a >> 8, 0, b & 0xFF, 0]
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [  # checked against asl 1.42
        ("-2*3+10", 4),
        ("1<<4+1", 17),
        ("7&3|8", 11),
        ("5!3", 6),
        ("2^3^2", 64),
        ("0ffh#10h", 15),
        ("-7/2", -3),
        ("-7#2", -1),
        ("-1&0ffh", -1),
        ("6><3", 3),
        ("12&10!6", 14),
        ("1&&0||1", 1),
        ("~~0", 1),
        ("5-3-1", 1),
        ("100/7/2", 7),
        ("'AB'", 0x4142),
        ('strlen("hello")', 5),
        ('val("1+2")', 3),
    ],
)
def test_asl_checked_values(text, value):
    assert compile_expression(text)(_NoSymbols()) == value


@pytest.mark.parametrize("text", ["1+", "(1", "1)", "0FGh", "12xh", "'ab", "1 2", "$zz", "strlen(1,2)", ""])
def test_malformed_expressions_raise_expression_error(text):
    with pytest.raises(ExpressionError):
        compile_expression(text)(_NoSymbols())
