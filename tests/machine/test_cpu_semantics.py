"""The declared effects of each instruction form (instruction_effects.tsv) agree with its statements."""

from __future__ import annotations

import re

import pytest

from hilbridge.machine.blocks import FALLS_THROUGH, MOVES_STOP
from hilbridge.machine.semantics import EFFECTS, NEXT, SEMANTICS, form_of
from hilbridge.mcs48 import INSTRUCTIONS

# what a statement does -> the effect a form doing it must declare
WITNESSES = {
    "board": r"\bB\.",
    "stop": r"C\.stop\b",
    "timer": r"C\.(timer_value|set_timer|start_timer|start_counter|stop_timer)\(",
    "t1": r"B\.t1\(",
    "irq": r"B\.irq\(",
    "timer_flag": r"C\.timer_flag\b",
    "irq_state": r"C\.irq_in_progress\b",
}


@pytest.mark.parametrize("form", sorted(SEMANTICS))
def test_a_form_declares_every_effect_its_statements_have(form):
    body = SEMANTICS[form]
    for effect, witness in WITNESSES.items():
        if re.search(witness, body):
            assert effect in EFFECTS[form], f"{form} does not declare {effect!r}"
    falls_through = body.count("return") == 1 and body.splitlines()[-1] in ("return pc", NEXT)
    assert ("branch" in EFFECTS[form]) == (not falls_through)


def test_blocks_test_the_stop_after_every_instruction_that_may_move_it():
    for opcode, instruction in enumerate(INSTRUCTIONS):
        body = SEMANTICS[form_of(instruction)[0]]
        if re.search(r"\bB\.|C\.stop\b|C\.\w+\(", body):
            assert MOVES_STOP[opcode], instruction.text
        assert FALLS_THROUGH[opcode] == (body.splitlines()[-1] in ("return pc", NEXT)), instruction.text


def test_the_expander_and_timer_methods_are_declared_as_board_and_timer_effects():
    assert {"board"} <= EFFECTS["MOVD A,Pp"]
    assert {"timer", "stop"} <= EFFECTS["STRT T"]
    assert "t1" in EFFECTS["JNT1 addr8"] and "irq" in EFFECTS["JNI addr8"]
