"""capture.lua's numbers read a digit position at a time (`hilbridge.capture.mame._numbers`) against the
plain reading it replaced, on a real MAME capture and on edge cases (errors included)."""

from __future__ import annotations

import numpy as np
import pytest

from hilbridge.capture import mame
from hilbridge.errors import HilbridgeError

DIGITS = np.full(256, 99, dtype=np.int64)
DIGITS[np.frombuffer(b"0123456789", np.uint8)] = range(10)
DIGITS[np.frombuffer(b"ABCDEF", np.uint8)] = range(10, 16)
DIGITS[np.frombuffer(b"abcdef", np.uint8)] = range(10, 16)


def plain_numbers(
    data: np.ndarray, firsts: np.ndarray, lasts: np.ndarray, base: int, most: int
) -> np.ndarray:
    """The reading as it was: an int64 digit gather per position, checked position by position."""
    lengths = lasts - firsts
    if lengths.min() < 1 or lengths.max() > most:
        raise HilbridgeError(f"capture.lua wrote a bad number (an empty one or one of over {most} digits)")
    numbers = np.zeros(len(firsts), np.int64)
    for position in range(int(lengths.max())):
        inside = position < lengths
        digits = DIGITS[data[np.minimum(firsts + position, len(data) - 1)]]
        if (digits[inside] >= base).any():
            raise HilbridgeError(f"capture.lua wrote a bad number (not base {base})")
        numbers = np.where(inside, numbers * base + digits, numbers)
    return numbers


def outcome(read, text: bytes, fields: list[tuple[int, int]], base: int, most: int) -> object:
    """The numbers `read` gives (as a list) or the message of its error."""
    data = np.frombuffer(text, np.uint8)
    firsts = np.array([first for first, _ in fields], np.int64)
    lasts = np.array([last for _, last in fields], np.int64)
    try:
        return read(data, firsts, lasts, base, most).tolist()
    except HilbridgeError as error:
        return str(error)


def fields_of(text: bytes) -> list[tuple[int, int]]:
    """Where the space-separated words of `text` are."""
    out, at = [], 0
    for word in text.split(b" "):
        out.append((at, at + len(word)))
        at += len(word) + 1
    return out


@pytest.mark.parametrize(
    ("text", "base", "most"),
    [
        (b"0 7 12 999999999999999999 123456789012345678", 10, 18),
        (b"F fF 0 abc ABC 12345678 FFFFFFFF", 16, 8),
        (b"1 2 3 4 5 6 7 8 9 10 11 123 1234 12345", 10, 5),
        (b"12 3G 4", 16, 8),  # not a hex digit
        (b"12 39 A", 10, 8),  # hex in a decimal field
        (b"12 3-4 5", 10, 8),
        (b"123456789 1", 10, 8),  # too long
        (b"1 2 3", 16, 2),
        (b"1 2 3x", 16, 2),  # the last field ends with the block
    ],
)
def test_numbers_read_as_the_plain_reading(text: bytes, base: int, most: int) -> None:
    fields = fields_of(text)
    expected = outcome(plain_numbers, text, fields, base, most)
    assert outcome(mame._numbers, text, fields, base, most) == expected


def test_numbers_an_empty_field_and_a_field_past_the_block_end_are_errors_of_both() -> None:
    text = b"12 34"
    for fields in ([(0, 2), (3, 3)], [(0, 2), (3, 7)]):
        expected = outcome(plain_numbers, text, fields, 16, 2)
        assert isinstance(expected, str) and outcome(mame._numbers, text, fields, 16, 2) == expected


def test_numbers_of_random_fields_with_bad_digits_here_and_there() -> None:
    generator = np.random.default_rng(3)
    alphabet = np.frombuffer(b"0123456789abcdefABCDEF", np.uint8)
    for trial in range(200):
        lengths = generator.integers(1, 10, 50)
        words = [bytes(generator.choice(alphabet, length)) for length in lengths]
        if trial % 3 == 0:
            word = generator.integers(0, len(words))
            words[word] = words[word][:-1] + b"g"
        text = b" ".join(words)
        fields = fields_of(text)
        for base, most in ((10, 18), (16, 8), (16, 9)):
            assert outcome(mame._numbers, text, fields, base, most) == outcome(
                plain_numbers, text, fields, base, most
            )


@pytest.mark.mame
@pytest.mark.slow
def test_numbers_of_a_real_mame_capture_are_the_plain_readings(monkeypatch: pytest.MonkeyPatch) -> None:
    from test_capture_mame import mame_items

    read = mame._numbers
    calls = []

    def both(data: np.ndarray, firsts: np.ndarray, lasts: np.ndarray, base: int, most: int) -> np.ndarray:
        numbers = read(data, firsts, lasts, base, most)
        assert np.array_equal(numbers, plain_numbers(data, firsts, lasts, base, most))
        calls.append(len(numbers))
        return numbers

    monkeypatch.setattr(mame, "_numbers", both)
    items = mame_items("cpu_alu", 20, ("FETCH", "MOVX_READ", "MOVX_WRITE", "P1"))
    assert items and len(calls) >= 4 and sum(calls) >= 4 * 10_000
