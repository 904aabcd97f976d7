"""The firmware's mapper logic (firmware/src/cart) against the Python cartridge model: for a random
image, mapper and sequence of fetches, MOVX reads and latch writes, the same byte every time."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hilbridge.machine.cartridge import MAPPER_TYPES, PROGRAM_START, Cartridge

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

cart_types = st.sampled_from(sorted(MAPPER_TYPES)).flatmap(
    lambda name: st.tuples(st.just(name), st.sampled_from(MAPPER_TYPES[name].sizes), st.integers(0, 2**32))
)
byte = st.integers(0, 255)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("fetch"), st.integers(0, 0xFFFF), byte),
        st.tuples(st.just("fetch"), st.integers(PROGRAM_START, 0xFFF), byte),
        st.tuples(st.just("read"), st.integers(0, 0xFFFF), byte, byte),
        st.tuples(st.just("write"), st.integers(0, 0xFFFF), byte, byte),
        st.tuples(st.just("bank"), byte),
    ),
    max_size=60,
)


def load(core_test, name: str, size: int, seed: int) -> Cartridge:
    image = random.Random(seed).randbytes(size)
    assert core_test.ask("cart", name, image.hex()) == "OK"
    return Cartridge(image, MAPPER_TYPES[name])


@SETTINGS
@given(cart=cart_types, steps=operations)
def test_every_access_gives_the_byte_of_the_python_model(core_test, cart, steps):
    model = load(core_test, *cart)
    for step in steps:
        kind, *args = step
        if kind == "fetch":
            address, p1 = args
            assert int(core_test.ask("fetch", address, p1)) == model.fetch(address, p1, 0), step
        elif kind == "read":
            address, p1, p2 = args
            assert int(core_test.ask("read", address, p1, p2)) == model.read(address, p1, p2), step
        elif kind == "write":
            address, value, p1 = args
            assert core_test.ask("write", address, value, p1) == "OK"
            model.write(address, value, p1, 0)
        else:
            assert int(core_test.ask("bank", args[0])) == model.bank(args[0] & 0x13)


@pytest.mark.parametrize("name", sorted(MAPPER_TYPES))
def test_program_view_of_every_bank_and_latch_matches(core_test, name):
    for size in MAPPER_TYPES[name].sizes:
        model = load(core_test, name, size, size)
        for latch in (0, 1, 5, 0xFF):
            core_test.ask("write", 0x80, latch, 0)
            model.write(0x80, latch, 0, 0)
            for p1 in (0x00, 0x01, 0x02, 0x03, 0xFC, 0xFE, 0xFF, 0x10):
                assert bytes.fromhex(core_test.ask("view", p1)) == model.program_view(p1), (size, latch, p1)


def test_sizes_outside_the_mapper_table_are_refused(core_test):
    assert core_test.ask("cart", "o2_rom", (b"\x01" * 3000).hex()) == "REFUSED"
    assert core_test.ask("cart", "no_such_mapper", (b"\x01" * 2048).hex()) == "REFUSED"
