"""Fuzzing: whatever the text, the assembler either succeeds or raises AssemblyError."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hilbridge.errors import HilbridgeError
from hilbridge.toolchain.assembler import AssemblyError, assemble_text

VALID = """\
\tcpu 8048
\torg 400h
value\tequ 12h
twice\tmacro reg,n
\tmov reg,#n
.l\tdjnz reg,.l
\tendm
start:\tmov a,#value
\tjmp later
\ttwice r2,3
\tsection inner
\tpublic later
loop\tdjnz r3,loop
later\tmovp a,@a
\tendsection
\tif value > 10h
\tdb "text",0,hi(start)
\telse
\tdw start
\tendif
\trept 2
\tnop
\tendm
\tcodepage vp
\tcharset 'A',1
\tdb "A"
\tcall start
\tjb 3,$
"""

TOKENS = [
    "mov", "a", ",", "#", "@r0", "r7", "jmp", "djnz", "db", "dw", "equ", "set", "macro", "endm", "if",
    "else", "endif", "rept", "irp", "section", "endsection", "public", "org", "$", "*", "(", ")", "+",
    "-", "<<", "><", "!", "~", "#", "'", '"', ";", ":", ".x", "$$y", "0FFh", "%101", "@7", "0x1g",
    "hi(", "strlen(", "include", "binclude", "phase", "dephase", "align", "function", "charset",
    "codepage", "exitm", "while", "label", "\t", " ", "\n", "x", "1", "!jmp",
]  # fmt: skip


def assemble_or_error(text: str) -> None:
    try:
        assemble_text(text, "fuzz.a48")
    except AssemblyError as error:
        assert isinstance(error, HilbridgeError)
        assert str(error).startswith("fuzz.a48") or ": error: " in str(error)


@pytest.mark.slow  # 300 examples: 3-6 s, nearly all of it Hypothesis drawing the text
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec="latin-1"), max_size=200))
def test_random_text(text):
    assemble_or_error(text)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_random_token_soup(tokens):
    assemble_or_error(" ".join(tokens))


@st.composite
def mutated_programs(draw) -> str:
    lines = VALID.splitlines()
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "cut", "token"]))
        line = lines[index]
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, line)
        elif action == "insert":
            position = draw(st.integers(0, len(line)))
            lines[index] = line[:position] + draw(st.sampled_from(TOKENS)) + line[position:]
        elif action == "cut" and line:
            position = draw(st.integers(0, len(line) - 1))
            lines[index] = line[:position] + line[position + 1 :]
        else:
            lines.insert(index, " ".join(draw(st.lists(st.sampled_from(TOKENS), max_size=6))))
        if not lines:
            break
    return "\n".join(lines) + "\n"


def test_the_seed_program_is_valid():
    assert len(assemble_text(VALID).image) > 20


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_programs())
def test_mutated_valid_programs(text):
    assemble_or_error(text)
