"""pio_harness's copying_replace, which pioemu uses in place of dataclasses.replace: the same states."""

from __future__ import annotations

import dataclasses
import importlib
from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st
from pio_harness import PIOEMU_REPLACERS, copying_replace, engine_options, require_module, tool

WORDS = st.integers(0, 0xFFFF_FFFF)


def _snapshot(state: object) -> tuple:
    """A state's fields as they are now (the FIFOs are deques that later steps change in place)."""
    return tuple(
        tuple(value) if isinstance(value, deque) else value
        for value in (getattr(state, f.name) for f in dataclasses.fields(state))
    )


@settings(max_examples=100, deadline=None)
@given(
    fields=st.fixed_dictionaries(
        {},
        optional={
            "clock": st.integers(0, 1 << 40),
            "program_counter": st.integers(0, 31),
            "pin_values": WORDS,
            "pin_directions": WORDS,
            "x_register": WORDS,
            "y_register": WORDS,
        },
    ),
    changes=st.fixed_dictionaries(
        {}, optional={"clock": st.integers(0, 1 << 40), "x_register": WORDS, "pin_values": WORDS}
    ),
    fifo=st.lists(WORDS, max_size=4),
)
def test_copying_replace_makes_what_dataclasses_replace_makes(fields, changes, fifo) -> None:
    pioemu = require_module("pioemu", "rp2040-pio-emulator")
    state = pioemu.State(transmit_fifo=deque(fifo), **fields)
    before = _snapshot(state)
    made, plain = copying_replace(state, **changes), dataclasses.replace(state, **changes)
    assert type(made) is type(plain) and made == plain and made is not state
    for field in dataclasses.fields(plain):  # the same objects, shared as replace shares them
        assert getattr(made, field.name) is getattr(plain, field.name)
    assert _snapshot(state) == before


def _dump_run(pioemu, words: list[int]) -> list[tuple]:
    """Every step of the dump program taking `words` from its TX FIFO, pins from a fixed pattern."""
    program = tool("gen_pio").assemble("dump")
    state = pioemu.State(transmit_fifo=deque(words))
    steps = []
    for before, after in pioemu.emulate(
        program.opcodes,
        stop_when=lambda _opcode, s: s.clock >= 400,
        initial_state=state,
        input_source=lambda clock: (clock * 0x9E3779B1) & 0xFFFF_FFFF,
        **engine_options(program),
    ):
        steps.append((_snapshot(before), _snapshot(after)))
    return steps


def test_a_pio_run_steps_through_the_same_states_with_either_replace() -> None:
    pioemu = require_module("pioemu", "rp2040-pio-emulator")
    require_module("adafruit_pioasm", "adafruit-circuitpython-pioasm")
    words = [0x1234567, 0x0ABCDEF, 0x3FFFFFF, 0x0000400, 0x2000401, 0x0000401]
    fast = _dump_run(pioemu, words)
    modules = [importlib.import_module(name) for name in PIOEMU_REPLACERS]
    assert all(module.replace is copying_replace for module in modules)
    try:
        for module in modules:
            module.replace = dataclasses.replace
        plain = _dump_run(pioemu, words)
    finally:
        for module in modules:
            module.replace = copying_replace
    assert len(plain) > 100 and fast == plain
